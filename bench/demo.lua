--- The main job's cost: `make demo` (examples/certify.lua: nine
--  certifications with auto, Rust, Python and TypeScript, through the job
--  store, then nine of the three-parameter clamp in build/demo/clamp,
--  which the per-certification table below leaves out), timed whole, then broken down per certification and method
--  from the retained reports: builds, runs, and the rest (hashing the
--  toolchain once, identities before each launch, captures, drivers,
--  admission, reports).  Then what issue 29's wave costs, per language, in
--  the same run: admission (the separate tree-sitter process, one source),
--  and the sandbox (one launch of the demo's driver with and without its
--  namespaces and private root, best of 15), times the launches a
--  certification makes.
--  Targets: the whole demo under a minute on the 2-core machine (issue 15);
--  admission well under a second; a certification no more than 20% slower
--  than before the wave (issue 29: 4.3 s Rust, 2.3 s Python, 7.5 s
--  TypeScript per certification with auto, measured at 04c905f).
local vkit = require "vkit"
local json = vkit.json
local support = require "bench.support"

local t0 = vkit.sys.monotonic_ms()
local ok = os.execute(("%q script %q > /dev/null 2>&1"):format(vkit.exe, vkit.root .. "/examples/certify.lua"))
local total = (vkit.sys.monotonic_ms() - t0) / 1000
assert(ok, "the demo failed")

local store = require("vkit.store").open(vkit.root .. "/build/demo/project")
local ids = store:list()
print(("%-14s %-15s %8s %9s %8s %8s %6s"):format("candidate", "method", "total s", "builds s", "runs s", "other s", "procs"))
local sums = {}
for i = #ids, 1, -1 do
  local run = assert(store:get(ids[i]))
  local attempt = ("%s/attempts/%d"):format(run.dir, run.state.attempts)
  for _, m in ipairs(run.state.summary.methods) do
    local path = m.method == "finite_paired" and "finite_paired/paired-execution-report.v1.json" or m.report
    local report = json.decode(assert(vkit.fs.read(attempt .. "/" .. path, 1 << 26)))
    local builds, runs = 0, 0
    for _, r in ipairs(report.invocation_records or {}) do
      local s = (r.wall_ms ~= json.null and r.wall_ms or 0) / 1000
      if r.label:match "^build" then builds = builds + s else runs = runs + s end
    end
    local elapsed = m.budget.elapsed_ms / 1000
    print(("%-14s %-15s %8.2f %9.2f %8.2f %8.2f %6d"):format(run.state.summary.candidate:sub(1, 12), m.method, elapsed,
      builds, runs, elapsed - builds - runs, report.invocations or 0))
    local key = (report.language or "?") .. " " .. m.method
    sums[key] = (sums[key] or 0) + elapsed
  end
end
local keys = {}
for k in pairs(sums) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do print(("%-30s %8.2f s"):format(k, sums[k])) end
print(("whole demo (%d certifications, repository set-up included): %.1f s (target < 60 s)"):format(#ids, total))

-- Issue 29's costs, per language.
local EXT = { rust = "rs", python = "py", typescript = "ts" }
local per_language = {}
for i = #ids, 1, -1 do
  local run = assert(store:get(ids[i]))
  local attempt = ("%s/attempts/%d"):format(run.dir, run.state.attempts)
  local lang, launches, elapsed, sample = nil, 0, 0, nil
  for _, m in ipairs(run.state.summary.methods) do
    local path = m.method == "finite_paired" and "finite_paired/paired-execution-report.v1.json" or m.report
    local report = json.decode(assert(vkit.fs.read(attempt .. "/" .. path, 1 << 26)))
    lang = report.language
    launches = launches + (report.invocations or 0)
    elapsed = elapsed + m.budget.elapsed_ms / 1000
    if m.method == "finite_paired" then sample = { attempt = attempt, report = report } end
  end
  local p = per_language[lang] or { certifications = 0, launches = 0, elapsed = 0, sample = sample }
  p.certifications, p.launches, p.elapsed = p.certifications + 1, p.launches + launches, p.elapsed + elapsed
  per_language[lang] = p
end
print()
print(("%-11s %11s %12s %14s %12s %14s"):format("language", "cert. s", "admission s", "sandbox/launch", "launches",
  "sandbox/cert."))
for _, lang in ipairs { "rust", "python", "typescript" } do
  local p = per_language[lang]
  if p then
    local source = assert(vkit.fs.read(("%s/examples/demo/%s/conforming.%s"):format(vkit.root, lang, EXT[lang]), 1 << 20))
    local adm = support.admission_seconds(lang, source, "level")
    -- one launch of the language's runtime doing nothing (the candidate's
    -- built driver with no input for Rust), with the sandbox the
    -- certification gave it and without: what the sandbox adds to a launch
    local dir = p.sample.attempt .. "/finite_paired"
    local identity = p.sample.report.runtime_identity
    local tools = identity.tools
    local exe, argv, inside
    if lang == "rust" then
      exe, argv, inside = dir .. "/build/candidate/driver", { "driver" }, "/vkit/build/driver"
    elseif lang == "python" then
      exe, argv = tools.python3.path, { tools.python3.path, "-I", "-c", "pass" }
    else
      exe, argv = tools.node.path, { tools.node.path, "-e", "0" }
    end
    local driver = assert(vkit.fs.list(dir .. "/drivers/candidate"))[1]
    local built = lang ~= "python" and assert(vkit.fs.list(dir .. "/build/candidate"))[1] or nil
    local side = { capture = p.sample.report.source_captures.candidate, capture_dir = dir .. "/captures/candidate",
                   driver_path = dir .. "/drivers/candidate/" .. driver, out_dir = dir .. "/build/candidate",
                   built = built and { path = dir .. "/build/candidate/" .. built } or nil }
    local with, without = support.sandbox_seconds(exe, argv, identity.env, side,
      { tools = tools, dependencies = identity.dependencies }, inside)
    local per_launch = with - without
    print(("%-11s %11.2f %12.3f %13.1f ms %12.1f %13.2f s"):format(lang, p.elapsed / p.certifications, adm,
      per_launch * 1000, p.launches / p.certifications, per_launch * p.launches / p.certifications))
  end
end
print("cert. s: one certification with auto, both methods (average over the demo's three per language);")
print("sandbox/launch: a launch of the runtime doing nothing, best of 15, with the sandbox minus without.")
