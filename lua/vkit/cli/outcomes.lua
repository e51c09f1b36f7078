--- What the command line prints of a run: a certification's summary in
-- words, external checks as what they established.  Their exit statuses
-- are vkit.cli.exit's.
local json = require "vkit.json"
local store_mod = require "vkit.store"
local methods = require "vkit.change.methods"
local coverage = require "vkit.change.coverage"
local claims = require "vkit.protocol.claims"
local exit = require "vkit.cli.exit"
local causes = require "vkit.report.causes"

local M = {}

--- Prints the human summary; `print` (optional) receives each line.  dir
--  (optional): the run's attempt directory, whose retained records give
--  each method's cause lines, as the text report shows them (why inputs
--  could not be checked; vkit.report.causes).
function M.print_change(shadow, print, dir)
  print = print or _G.print
  print(("run %s: %s%s"):format(shadow.run_id, shadow.status,
    shadow.outcome ~= json.null and ("  " .. tostring(shadow.outcome)) or ""))
  if shadow.outcome_meaning and shadow.outcome_meaning ~= json.null then print("  " .. shadow.outcome_meaning) end
  if shadow.coverage and shadow.coverage ~= json.null then print("  " .. shadow.coverage.statement) end
  if shadow.requirement and shadow.requirement ~= json.null then
    print(("requirement %s: %s"):format(shadow.requirement.source, shadow.requirement.statement))
    print("intent " .. shadow.intent_digest)
  end
  local a = shadow.candidate_admission
  if a and a ~= json.null then
    if a.admitted then
      print(("candidate admitted: %s is inside the %s profile"):format(a.source, a.profile))
    else
      print(("candidate not admitted: %s at %s: %s"):format(a.rule, a.at, a.message))
    end
  end
  if shadow.trust_candidate_code then print("--trust-candidate-code: the host accepts a candidate outside the pure profile") end
  if shadow.blocked and shadow.blocked ~= json.null then
    print(("blocked at %s: %s (%s)"):format(shadow.blocked.stage, shadow.blocked.message, shadow.blocked.reason))
  end
  for _, m in ipairs(shadow.methods) do
    print(("  %-16s %-24s report %s"):format(m.method, m.result, m.report))
    if json.kind(m.coverage) == "object" then print("    " .. m.coverage.statement) end
    if type(m.message) == "string" then print(("    %s: %s"):format(tostring(m.reason), m.message)) end
    for _, cut in ipairs(json.kind(m.cuts) == "array" and m.cuts or {}) do print("    " .. coverage.cut_sentence(cut)) end
    for _, c in ipairs(causes.of_method(dir, m)) do print("    " .. causes.line(c)) end
  end
  if shadow.error ~= json.null and shadow.error then print("error: " .. shadow.error) end
  print("source_proof: false  approval_authority: false")
  for _, line in ipairs(json.kind(shadow.not_established) == "array" and shadow.not_established or {}) do
    print("Not established: " .. line)
  end
  for _, m in ipairs(shadow.methods) do
    local known = methods.LIST[m.method]
    if known then print("Not established (" .. m.method .. "): " .. known.not_established) end
  end
  print(methods.NEVER_PASSING)
end

--- Prints external check runs as what they established (the report's text
--  view, with the PASS paragraph only for a PASS), one still going as its
--  status; `--json`: their summaries and the claims.  Returns the exit
--  status.
function M.print_external(store, runs, opts)
  local report = require "vkit.report"
  if opts.json then
    local out = json.array()
    for i, r in ipairs(runs) do out[i] = store:summary(r) end
    print(json.encode({ runs = out, establishes = claims.ESTABLISHES, does_not_establish = claims.DOES_NOT,
                        warnings = json.array(opts.warnings or {}) }, { indent = 2 }))
    return exit.external_exit(runs)
  end
  local style = require("vkit.terminal").style(io.stdout, false)
  for _, r in ipairs(runs) do
    local model = store_mod.TERMINAL[r.state.status] and report.model(store, r)
    if model then
      io.stdout:write(report.render(model, "text", style))
    else
      print(("%s  %s  %s: queued or running; `vkit run wait --run %s` follows it"):format(r.state.status:upper(), r.id,
        r.job.payload.check_id or "", r.id))
    end
  end
  return exit.external_exit(runs)
end

return M
