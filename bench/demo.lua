--- The main job's cost: the six demo certifications (Rust, Python,
--  TypeScript; conforming and planted-violation candidates), with the
--  breakdown the issue asks for: builds vs runs, per language.
--  Target (issue 9): the whole demo under a minute on the 2-core machine.
local vkit = require "vkit"
local json = vkit.json
local worker = require "vkit.store.worker"
local analysis = require "vkit.change.analysis"

local built = dofile(vkit.root .. "/examples/demo/build.lua")
local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-bench-demo-")
local t0 = vkit.sys.monotonic_ms()
local d = built.build(dir)
local t_setup = vkit.sys.monotonic_ms() - t0
local never = function() return false end
local ctx = { cancelled = never, run_process = function(s) return worker.run_process(s, never) end }

print(("%-24s %8s %10s %10s %10s %8s"):format("certification", "total s", "builds s", "runs s", "other s", "procs"))
local sum = { total = 0, builds = 0, runs = 0 }
for _, language in ipairs(built.LANGUAGES) do
  for _, variant in ipairs(built.VARIANTS) do
    local request = assert(json.decode(assert(vkit.fs.read(d.requests[language][variant], 1 << 20))))
    local start = vkit.sys.monotonic_ms()
    local bound = assert(vkit.change.preflight(d.repo, request, d.target))
    local result, report = analysis.run(bound, { repo = d.repo, dir = ("%s/%s-%s"):format(dir, language, variant), ctx = ctx,
                                                 deadline_at = vkit.sys.monotonic_ms() + 300000 })
    local total = (vkit.sys.monotonic_ms() - start) / 1000
    local builds, runs = 0, 0
    for _, r in ipairs(report.invocation_records) do
      local ms = (r.wall_ms ~= json.null and r.wall_ms or 0) / 1000
      if r.label:match "^build" then builds = builds + ms else runs = runs + ms end
    end
    print(("%-24s %8.2f %10.2f %10.2f %10.2f %8d   %s"):format(language .. "/" .. variant, total, builds, runs,
      total - builds - runs, report.invocations, result.status))
    sum.total, sum.builds, sum.runs = sum.total + total, sum.builds + builds, sum.runs + runs
  end
end
vkit.fs.remove_tree(dir)
print(("%-24s %8.2f %10.2f %10.2f %10.2f"):format("all six", sum.total, sum.builds, sum.runs, sum.total - sum.builds - sum.runs))
print(("demo repository set-up %.2f s; whole demo %.1f s (target < 60 s)"):format(t_setup / 1000, sum.total + t_setup / 1000))
print("'other' is hashing pinned toolchains, captures, drivers and reports; 'runs' includes each launch's pin hashing")
