--- Process launch overhead: N sequential launches of /bin/true through
--  vkit.proc.run against posix_spawn + waitpid in C (bench/spawn_baseline.c,
--  compiled here with gcc), in one run.  Rounds alternate between the
--  contenders so both see the same machine load; the best round counts.
--  vkit runs with its defaults (cgroup when writable, pipes, the pinned-exe
--  hold and hash) and once more with cgroup = "off".
--  Target (issue 3): vkit.proc.run <= 1.5x the baseline.
local vkit = require "vkit"
local b = require "bench.support"

local n = tonumber(os.getenv "VKIT_BENCH_PROC_N") or 1000
local rounds = tonumber(os.getenv "VKIT_BENCH_PROC_ROUNDS") or 3
local exe = "/bin/true"

local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-bench-proc-")
local baseline = dir .. "/spawn_baseline"
b.sh(("gcc -O2 -o %s %s/bench/spawn_baseline.c"):format(b.quote(baseline), b.quote(vkit.root)))

local function run_baseline()
  local out = io.popen(("%s %d %s"):format(b.quote(baseline), n, exe)):read "a"
  local seconds = tonumber(out)
  if not seconds then error("baseline failed: " .. out) end
  return seconds
end

local function run_vkit(cgroup)
  local t0 = vkit.sys.monotonic_ms()
  for _ = 1, n do
    local r = vkit.proc.run { exe = exe, argv = { "true" }, cgroup = cgroup }
    if r.status ~= "exited" or r.code ~= 0 then error("launch failed: " .. (r.message or r.status)) end
  end
  return (vkit.sys.monotonic_ms() - t0) / 1000
end

local caps = vkit.proc.capabilities()
local containment = vkit.proc.run { exe = exe, argv = { "true" } }.containment
local best = { baseline = math.huge, auto = math.huge, off = math.huge }
run_baseline() -- warm the page cache and the allocator
run_vkit "auto"
for _ = 1, rounds do
  best.baseline = math.min(best.baseline, run_baseline())
  best.auto = math.min(best.auto, run_vkit "auto")
  best.off = math.min(best.off, run_vkit "off")
end
vkit.fs.remove_tree(dir)

local function per(s) return s / n * 1e6 end
print(("%d launches of %s, best of %d rounds (cgroup %s%s)"):format(n, exe, rounds,
  caps.cgroup and "available" or "unavailable", caps.cgroup and "" or (": " .. tostring(caps.cgroup_reason))))
print(("  posix_spawn+waitpid (C)   %.3fs  %.0f us/launch"):format(best.baseline, per(best.baseline)))
print(("  vkit.proc.run (%s)  %.3fs  %.0f us/launch"):format(containment == "cgroup" and "cgroup " or "default",
  best.auto, per(best.auto)))
print(("  vkit.proc.run (cgroup=off) %.3fs  %.0f us/launch"):format(best.off, per(best.off)))
print(("ratio vkit/baseline: %.2fx default (%s), %.2fx cgroup=off (target <= 1.50x)"):format(
  best.auto / best.baseline, containment, best.off / best.baseline))
