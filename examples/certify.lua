--- examples/certify.lua: certify a proposed change against its accepted intent.
--
--   vkit script examples/certify.lua [--dir DIR]
--       the bundled demo (what `make demo` runs): builds a repository (in
--       DIR; default build/demo in a build tree, else a temporary directory) with
--       an accepted intent and, in Rust, Python and TypeScript, a conforming
--       candidate, one with a planted violation and one wrong at a single
--       input that sampling never runs, and certifies all nine with auto;
--       then the same three per language for clamp(x, lo, hi), a function
--       of three i32 parameters over 44,541 inputs (examples/demo/multi.lua,
--       in DIR/clamp), certified by the exhaustive method alone
--   vkit script examples/certify.lua --project DIR --request REQUEST.json \
--       --trusted-target COMMIT [--method auto|finite_paired|exhaustive|rust_exhaustive|rust_kani]
--       one certification of your own
--
-- Copy it and adapt it: everything below is the public Lua API.  Each
-- certification is a durable job in DIR/.vkit/runs (`vkit run show --run ID`).
local vkit = require "vkit"
local json = vkit.json

local MAX_WAIT_SECONDS = 600

local function read_json(path)
  return assert(json.decode(assert(vkit.fs.read(path))))
end

local function say(fmt, ...) io.stdout:write(fmt:format(...), "\n") end

--- Submits one certification, shows its progress on stderr, returns the run.
local function certify(store, request_path, target, method, label)
  local id = assert(vkit.change.certify(store, { request = read_json(request_path), trusted_target = target,
                                                 method = method or "auto" }))
  return assert(store:wait(id, MAX_WAIT_SECONDS, { progress = function(text)
    io.stderr:write((text:gsub("[^\n]+", function(line) return ("[%s] %s"):format(label, line) end)))
  end }))
end

-- What one method's report says, in a few lines; reports = store:reports(id), by name.
local function explain_method(reports, m)
  local c = m.coverage ~= json.null and m.coverage or nil
  say("   method %-14s %-22s %s", m.method, m.result, c and c.statement or "")
  for _, cut in ipairs(m.cuts or {}) do say("     %s", vkit.change.cut_sentence(cut)) end
  if m.method == "finite_paired" then
    local analysis = assert(reports[m.report], m.report)
    local paired = assert(reports["finite_paired/paired-execution-report.v1.json"])
    if paired.selection then
      say("     sampled %d inputs (%s), each side %d times, %d process runs (%s)", paired.selection.selected,
        paired.selection.how, paired.selection.repetitions, paired.invocations, paired.language)
    end
    -- a run that ended before shrinking (unknown, blocked) has no shrinking record
    if type(paired.shrinking) == "table" and paired.shrinking.smallest_violation ~= json.null then
      say("     shrinking: from input %d to the smallest violating input %d (tried %s; limit %d)",
        paired.shrinking.from, paired.shrinking.smallest_violation,
        table.concat(paired.shrinking.tried, ", "), paired.shrinking.limit)
    end
    for i, f in ipairs(analysis.findings) do
      if i > 2 then
        say("     ... %d more findings in %s", #analysis.findings - 2, m.report)
        break
      end
      say("     - %s", f.message)
    end
  elseif m.method == "exhaustive" then
    local x = assert(reports[m.report], m.report)
    if x.batches then
      say("     every input in %d batch process(es) per side and pass, %d passes (ascending, run-id order), %d process runs",
        #x.batches.ran, x.passes.count, x.invocations)
    end
    if x.violations and x.violations.total > 0 and x.violations.boxes then
      -- a function of several parameters: violating inputs grouped into boxes
      local boxes = x.violations.boxes
      say("     %d violating input(s) in %d box(es); the first: %s (%d input(s)), e.g. %s", x.violations.total,
        #boxes.items, boxes.items[1].call, boxes.items[1].count, boxes.items[1].example)
    elseif x.violations and x.violations.total > 0 then
      local v = x.violations.smallest
      say("     %d violating input(s); the smallest: input %d, base %s, candidate %s (%s)", x.violations.total, v.input,
        tostring(v.base), tostring(v.candidate), v.rule)
    elseif x.message ~= json.null then
      say("     %s", x.message)
    end
  end
end

--- A plain-language account of one certification.
local function explain(store, run, label)
  local result = vkit.change.result(store, run)
  say("== %s  (run %s)", label, run.id)
  if result.blocked ~= json.null then
    say("   BLOCKED at %s: %s", result.blocked.stage, result.blocked.message)
    return result.outcome, result
  end
  if run.state.status ~= "done" then
    say("   the job is %s: %s", run.state.status, tostring(run.state.error))
    return run.state.status, result
  end
  say("   requirement %s: %s", result.requirement.source, result.requirement.statement)
  say("   intent %s, candidate %s", result.intent_digest:sub(1, 16), result.candidate:sub(1, 12))
  local reports = {}
  for _, r in ipairs(assert(store:reports(run.id))) do
    assert(not r.changed, r.name .. " changed since the run recorded it")
    reports[r.name] = r.document
  end
  local a = result.candidate_admission
  if a ~= json.null and a.admitted then
    say("   admitted: %s is inside the %s profile (no state, no I/O, nothing that reports its value)", a.source, a.profile)
  elseif a ~= json.null then
    say("   NOT admitted: %s at %s: %s", a.rule, a.at, a.message)
  end
  for _, m in ipairs(result.methods) do explain_method(reports, m) end
  say("   outcome %s: %s", result.outcome, tostring(result.outcome_meaning))
  say("   not established: source proof, native compiler correspondence, behaviour outside the accepted inputs, approval")
  return result.outcome, result
end

-- --name value pairs into a table (the options this example takes).
local function options(argv, known)
  local opts = {}
  for i = 1, #argv, 2 do
    local name = argv[i]:match "^%-%-([%w-]+)$"
    local key = name and name:gsub("-", "_")
    if not (key and known[key]) or argv[i + 1] == nil or opts[key] then return nil, "bad argument " .. argv[i] end
    opts[key] = argv[i + 1]
  end
  return opts
end

-- Where the demo builds its repository: build/demo in a build tree, a
-- fresh temporary directory for an installed vkit (its tree is read-only).
local function demo_dir(opts)
  if opts.dir then return opts.dir end
  local build = vkit.fs.lstat(vkit.root .. "/build")
  if build and build.kind == "dir" then return vkit.root .. "/build/demo" end
  return assert(vkit.fs.mkdtemp((os.getenv "TMPDIR" or "/tmp") .. "/vkit-demo-"))
end

-- one_input is wrong at one input only (1337; clamp's (7, 3, -2)): the sample never runs it, the exhaustive method does.
local EXPECTED = { conforming = "all_inputs_conform", violating = "observed_violation", one_input = "observed_violation" }

-- Builds one demo repository and certifies each language's candidates,
-- adding a summary row each to `rows`: whether all were as expected, and
-- the repository's path.
local function certify_suite(suite, rows)
  local built, ok = suite.built, true
  local d = built.build(suite.dir)
  local store = assert(vkit.store.open(d.path))
  for _, language in ipairs(built.LANGUAGES) do
    for _, variant in ipairs(built.VARIANTS) do
      local label = suite.label .. language .. "/" .. variant
      local run = certify(store, d.requests[language][variant], d.target, "auto", label)
      local outcome, result = explain(store, run, label)
      local as_expected = outcome == EXPECTED[variant]
      local results = {}
      for _, m in ipairs(result.methods or {}) do
        results[#results + 1] = ("%s %s (%d of %d)"):format(m.method, m.result,
          m.coverage ~= json.null and m.coverage.checked or 0, m.coverage ~= json.null and m.coverage.accepted or 0)
      end
      ok = ok and as_expected
      rows[#rows + 1] = ("%-28s %-20s %-12s %s"):format(label, tostring(outcome), as_expected and "as expected" or "UNEXPECTED",
        table.concat(results, "; "))
    end
  end
  return ok, d.path
end

local function demo(opts)
  local dir = demo_dir(opts)
  if vkit.fs.lstat(dir) then assert(vkit.fs.remove_tree(dir)) end
  io.stderr:write("building the demo repository in ", dir, "\n")
  -- level(points), one u32 (build.lua), and clamp(x, lo, hi), three i32 (multi.lua), each in its own repository
  local suites = {
    { built = dofile(vkit.root .. "/examples/demo/build.lua"), dir = dir, label = "" },
    { built = dofile(vkit.root .. "/examples/demo/multi.lua"), dir = dir .. "/clamp", label = "clamp " },
  }
  local rows, ok, paths = {}, true, {}
  local started = vkit.sys.monotonic_ms()
  for _, suite in ipairs(suites) do
    local suite_ok, path = certify_suite(suite, rows)
    ok, paths[#paths + 1] = ok and suite_ok, path
  end
  say("")
  say("%-28s %-20s %-12s %s", "candidate", "outcome", "", "methods (checked of accepted inputs)")
  for _, r in ipairs(rows) do say("%s", r) end
  say("%d certifications in %.1f s; runs are kept in %s/.vkit/runs", #rows, (vkit.sys.monotonic_ms() - started) / 1000,
    table.concat(paths, "/.vkit/runs and "))
  say("Sampling alone (finite_paired) reports the one_input candidates as conforming on the inputs it ran;")
  say("only the exhaustive method, which runs every accepted input, finds input 1337. Exit 0 needs that,")
  say("a candidate inside its language's pure-function profile, and every process in its own sandbox.")
  say("clamp(x, lo, hi) takes three i32 parameters: auto samples a few, then exhaustive runs all 44,541 inputs and")
  say("names every parameter of the one input the clamp one_input candidates get wrong, clamp(x=7, lo=3, hi=-2).")
  return ok and 0 or 1
end

local USAGE = "usage: vkit script examples/certify.lua [--dir DIR]\n"
  .. "       vkit script examples/certify.lua --project DIR --request REQUEST.json --trusted-target COMMIT [--method M]\n"

local function main(argv)
  local opts, err = options(argv, { dir = true, project = true, request = true, trusted_target = true, method = true })
  if not opts then
    io.stderr:write(USAGE, err, "\n")
    return 2
  end
  if not (opts.project or opts.request or opts.trusted_target) then return demo(opts) end
  if not (opts.project and opts.request and opts.trusted_target) then
    io.stderr:write(USAGE)
    return 2
  end
  local store = assert(vkit.store.open(opts.project))
  local run = certify(store, opts.request, opts.trusted_target, opts.method, "certify")
  explain(store, run, "certify")
  return vkit.change.exit_code(run)
end

os.exit(main({ ... }))
