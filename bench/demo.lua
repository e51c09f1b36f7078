--- The main job's cost: `make demo` (examples/certify.lua: nine
--  certifications with auto, Rust, Python and TypeScript, through the job
--  store), timed whole, then broken down per certification and method
--  from the retained reports: builds, runs, and the rest (hashing pinned
--  toolchains before each launch, captures, drivers, reports).
--  Target (issue 15): the whole demo under a minute on the 2-core machine.
local vkit = require "vkit"
local json = vkit.json

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
