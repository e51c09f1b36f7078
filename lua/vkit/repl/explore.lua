--- Helpers that `vkit repl --project DIR` preloads for walking runs.
--
--   runs([n])   the n most recent runs (default 20), as summaries; the REPL
--               prints the list as a compact table like `vkit run list`
--               (runs()[1] is still the whole summary)
--   run(name)   one run, named by its whole id, a unique prefix of it or of
--               its hex tail, or `latest` (vkit.runs.named; an unknown or
--               ambiguous name raises an error naming why, and the
--               candidates): state, job, coverage and findings (certifications),
--               report (vkit.report's model), and per attempt its record,
--               result, checker request, receipt, evidence digests and logs,
--               or its preflight, certification and method reports (read
--               through the store, so a shared store's runs read the same
--               from any machine)
--   pp(value)   pretty-prints any value
--   store       the project's job store
local json = require "vkit.json"
local pretty = require "vkit.pretty"
local store_mod = require "vkit.store"
local coverage_mod = require "vkit.change.coverage"
local report = require "vkit.report"
local named = require "vkit.runs.named"

local M = {}

local CAP = require("vkit.policy").store.read_artifact_bytes

-- The method reports a certification attempt retains, per method.
local METHOD_REPORTS = {
  finite_paired = { analysis = "finite_paired/change-analysis.v1.json",
                    paired = "finite_paired/paired-execution-report.v1.json" },
  exhaustive = { report = "exhaustive/exhaustive-report.v1.json" },
  rust_exhaustive = { report = "rust_exhaustive/rust-exhaustive-report.v1.json" },
  rust_kani = { report = "rust_kani/kani-report.v1.json" },
}

--- Everything retained by attempt n of a run, read through the store (the
--  attempt directory, or the evidence store, verified): an external
--  check's result, request, receipt, evidence and logs; a certification's
--  preflight, certification record and each method's reports.
function M.attempt(store, run, n)
  local function text(rel) return store:read_artifact(run, n, rel, CAP) end
  local function doc(rel)
    local bytes = text(rel)
    return bytes and json.decode(bytes) or nil
  end
  local a = {
    record = store:attempt_record(run, n),
    result = doc "result.json",
    job = doc "job.json",
    request = doc "checker/request.json",
    receipt = doc "checker/receipt.json",
    preflight = doc "preflight.json",
    certification = doc "certification.v1.json",
    reports = {},
    logs = {},
  }
  if run.dir then a.dir = ("%s/attempts/%d"):format(run.dir, n) end
  a.evidence = a.result and a.result.evidence or nil
  for method, files in pairs(METHOD_REPORTS) do
    for key, rel in pairs(files) do
      local report = doc(rel)
      if report then
        a.reports[method] = a.reports[method] or {}
        a.reports[method][key] = report
      end
    end
  end
  for _, artifact in ipairs(store:artifacts(run, n)) do
    local role, stream = artifact.path:match "^logs/(%w+)%.(%w+)$"
    if role then
      a.logs[role] = a.logs[role] or {}
      a.logs[role][stream] = stream == "json" and doc(artifact.path) or text(artifact.path)
    end
  end
  return a
end

-- How the REPL prints a runs() list: one row per run, as `vkit run list`.
local RUNS_VIEW = {
  __pretty = function(list)
    if #list == 0 then return "(no runs)" end
    local rows = {}
    for i, r in ipairs(list) do
      if r.status == "corrupt" then
        rows[i] = ("%2d  %s  CORRUPT  %s: %s"):format(i, r.run_id, r.corrupt.file, r.corrupt.reason)
      else
        rows[i] = ("%2d  %s  %-15s %-9s %-22s attempts %d"):format(i, r.run_id, r.kind, r.status,
          r.outcome ~= json.null and tostring(r.outcome) or "-", r.attempts)
      end
    end
    return table.concat(rows, "\n")
  end,
}

function M.helpers(store)
  local h = { store = store }
  function h.runs(n)
    local out = {}
    for i, entry in ipairs(store:entries()) do
      if i > (n or 20) then break end
      out[#out + 1] = entry.run and store:summary(entry.run) or store_mod.corrupt_summary(entry.corrupt)
    end
    return setmetatable(out, RUNS_VIEW)
  end
  function h.run(name)
    local id, why, code = named.resolve(store, name)
    if not id then error(("%s (%s)"):format(why, code), 2) end
    local r, message = store:get(id)
    if not r then return nil, message end
    local attempts = {}
    for _, n in ipairs(r.attempts) do attempts[n] = M.attempt(store, r, n) end
    -- A certification's coverage, one line per method ("checked N of M accepted inputs (method)").
    local coverage = coverage_mod.lines(r.state.summary)
    -- What the run established, as `vkit run show` says it: the methods,
    -- their findings (violating inputs, both outputs, the rule) and coverage.
    local model = report.model(store, r)
    local findings = {}
    for _, m in ipairs(model and model.methods or {}) do
      for _, f in ipairs(m.findings) do
        findings[#findings + 1] = { method = m.name, title = f.title, detail = f.detail, input = f.input }
      end
    end
    return { id = r.id, state = r.state, job = r.job, attempts = attempts, stale = r.stale,
             coverage = #coverage > 0 and coverage or nil, report = model, findings = findings }
  end
  function h.pp(value) print(pretty.format(value)) end
  return h
end

return M
