--- examples/certify.lua: certify a proposed change against its accepted intent.
--
--   vkit script examples/certify.lua
--       the bundled demo (what `make demo` runs): builds a repository with
--       an accepted intent and, in Rust, Python and TypeScript, a conforming
--       candidate and one with a planted violation, and certifies all six
--   vkit script examples/certify.lua --project DIR --request REQUEST.json \
--       --trusted-target COMMIT [--method auto|finite_paired|rust_exhaustive|rust_kani]
--       one certification of your own
--
-- Copy it and adapt it: everything below is the public Lua API.  Each
-- certification is a durable job in DIR/.vkit/runs (`vkit run show --run ID`).
local vkit = require "vkit"
local json = vkit.json
local args = require "vkit.args"
local store_mod = require "vkit.store"
local change_cli = require "vkit.change.cli"

local MAX_WAIT_SECONDS = 600

local function read_json(path)
  return assert(json.decode(assert(vkit.fs.read(path, 1 << 20))))
end

local function say(fmt, ...) io.stdout:write(fmt:format(...), "\n") end

--- Submits one certification, shows its progress on stderr, returns the run.
local function certify(store, request_path, target, method, label)
  local id = assert(change_cli.submit(store, { request = read_json(request_path), trusted_target = target,
                                               method = method or "auto" }))
  local run = change_cli.wait(store, id, MAX_WAIT_SECONDS, function(text)
    io.stderr:write((text:gsub("[^\n]+", function(line) return ("[%s] %s"):format(label, line) end)))
  end)
  return run
end

--- A plain-language account of one certification.
local function explain(store, run, label)
  local shadow = change_cli.shadow(store, run)
  say("== %s  (run %s)", label, run.id)
  if shadow.blocked ~= json.null then
    say("   BLOCKED at %s: %s", shadow.blocked.stage, shadow.blocked.message)
    return shadow.outcome
  end
  if run.state.status ~= "done" then
    say("   the job is %s: %s", run.state.status, tostring(run.state.error))
    return run.state.status
  end
  say("   requirement %s: %s", shadow.requirement.source, shadow.requirement.statement)
  say("   intent %s, candidate %s", shadow.intent_digest:sub(1, 16), shadow.candidate:sub(1, 12))
  local attempt = ("%s/attempts/%d"):format(run.dir, run.attempts[#run.attempts])
  for _, m in ipairs(shadow.methods) do
    say("   method %s: %s", m.method, m.result)
    if m.method == "finite_paired" then
      local analysis = read_json(attempt .. "/" .. m.report)
      local paired = read_json(attempt .. "/finite_paired/paired-execution-report.v1.json")
      local c = analysis.coverage
      if paired.selection then
        say("     checked %d of %d accepted inputs (%d omitted), each side %d times, %d process runs (%s)",
          c.observed, c.domain, c.omitted, paired.selection.repetitions, paired.invocations, paired.language)
      end
      say("     paired execution: %s (%s); change analysis: %s", paired.status, paired.reason, analysis.status)
      if paired.message ~= json.null then say("     %s", paired.message) end
      if paired.shrinking.smallest_violation ~= json.null then
        say("     shrinking: from input %d to the smallest violating input %d (tried %s; limit %d)",
          paired.shrinking.from, paired.shrinking.smallest_violation,
          table.concat(paired.shrinking.tried, ", "), paired.shrinking.limit)
      end
      for i, f in ipairs(analysis.findings) do
        if i > 3 then
          say("     ... %d more findings in %s", #analysis.findings - 3, m.report)
          break
        end
        say("     - %s", f.message)
      end
    end
  end
  say("   not established: source proof, native compiler correspondence, behaviour on omitted inputs, approval")
  return shadow.outcome
end

local function demo()
  local dir = vkit.root .. "/build/demo"
  if vkit.fs.lstat(dir) then assert(vkit.fs.remove_tree(dir)) end
  io.stderr:write("building the demo repository in ", dir, "\n")
  local built = dofile(vkit.root .. "/examples/demo/build.lua")
  local d = built.build(dir)
  local store = store_mod.open(d.path)
  local expected = { conforming = "observed_conformance", violating = "observed_violation" }
  local rows, ok = {}, true
  local started = vkit.sys.monotonic_ms()
  for _, language in ipairs(built.LANGUAGES) do
    for _, variant in ipairs(built.VARIANTS) do
      local label = language .. "/" .. variant
      local run = certify(store, d.requests[language][variant], d.target, "auto", label)
      local outcome = explain(store, run, label)
      local as_expected = outcome == expected[variant]
      ok = ok and as_expected
      rows[#rows + 1] = ("%-22s %-22s %s"):format(label, tostring(outcome), as_expected and "as expected" or "UNEXPECTED")
    end
  end
  say("")
  say("%-22s %-22s %s", "candidate", "outcome", "")
  for _, r in ipairs(rows) do say("%s", r) end
  say("six certifications in %.1f s; runs are kept in %s/.vkit/runs", (vkit.sys.monotonic_ms() - started) / 1000, d.path)
  return ok and 0 or 1
end

local function main(argv)
  if #argv == 0 then return demo() end
  local opts, err = args.parse(argv, { options = { project = "string", request = "string", trusted_target = "string",
                                                   method = "string" } })
  if not opts or not (opts.project and opts.request and opts.trusted_target) then
    io.stderr:write("usage: vkit script examples/certify.lua [--project DIR --request REQUEST.json --trusted-target COMMIT"
      .. " [--method M]]\n", err and (err .. "\n") or "")
    return 2
  end
  local store = store_mod.open(opts.project)
  local run = certify(store, opts.request, opts.trusted_target, opts.method, "certify")
  local outcome = explain(store, run, "certify")
  return outcome == "observed_conformance" and 0 or 1
end

os.exit(main({ ... }))
