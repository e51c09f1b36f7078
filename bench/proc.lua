--- Process launch overhead: 1,000 sequential launches of /bin/true through
--  vkit.proc.run against posix_spawn + waitpid in C (bench/spawn_baseline.c,
--  compiled here with gcc), in one run.  The launches go in batches of 100,
--  the contenders taking turns batch by batch, so that the load of a shared
--  machine falls on all of them alike; the ratio is of the totals, and the
--  median of the per-batch ratios is printed beside it.
--  vkit runs with its defaults (a per-run cgroup when writable, pipes, the
--  executable opened and hashed at its held first instruction), and once
--  more with cgroup = "off", where each run gets a keeper: a forked
--  subreaper process between vkit and the root.  That mode is measured
--  against the same shape in C (a forked subreaper per launch), so that the
--  ratio is vkit's overhead, not the price of the extra fork, which on a
--  machine with slow forks is most of the launch.
--  Target (issue 3): vkit.proc.run <= 1.5x posix_spawn, with its defaults.
--  The keeper mode has no target yet: it is measured against its own
--  baseline and reported (docs/proc.md, Costs).
local vkit = require "vkit"
local b = require "bench.support"

local n = tonumber(os.getenv "VKIT_BENCH_PROC_N") or 1000
local batch = 100
local exe = "/bin/true"

local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-bench-proc-")
local baseline = dir .. "/spawn_baseline"
b.sh(("gcc -O2 -o %s %s/bench/spawn_baseline.c"):format(b.quote(baseline), b.quote(vkit.root)))

local function c_baseline(mode)
  return function(count)
    local out = io.popen(("%s %d %s %s"):format(b.quote(baseline), count, exe, mode)):read "a"
    local seconds = tonumber(out)
    if not seconds then error("baseline failed: " .. out) end
    return seconds
  end
end

local contenders = {
  { name = "posix_spawn+waitpid (C)", run = c_baseline "" },
  { name = "  same, via a keeper (C)", run = c_baseline "keeper" },
}
for _, cgroup in ipairs { "auto", "off" } do
  contenders[#contenders + 1] = { name = "vkit.proc.run (cgroup=" .. cgroup .. ")", cgroup = cgroup, run = function(count)
    local t0 = vkit.sys.monotonic_ms()
    for _ = 1, count do
      local r = vkit.proc.run { exe = exe, argv = { "true" }, cgroup = cgroup }
      if r.status ~= "exited" or r.code ~= 0 then error("launch failed: " .. (r.message or r.status)) end
    end
    return (vkit.sys.monotonic_ms() - t0) / 1000
  end }
end

for _, c in ipairs(contenders) do c.run(batch // 2); c.total, c.batches = 0, {} end -- warm up
for _ = 1, n // batch do
  for _, c in ipairs(contenders) do
    local t = c.run(batch)
    c.total = c.total + t
    c.batches[#c.batches + 1] = t
  end
end
vkit.fs.remove_tree(dir)

local base, keeper_base = contenders[1], contenders[2]
local containment = vkit.proc.run { exe = exe, argv = { "true" } }.containment
print(("%d launches of %s each, in batches of %d taken in turns (default containment: %s)"):format(
  n, exe, batch, containment))
local against = { [3] = base, [4] = keeper_base }
for i, c in ipairs(contenders) do
  local line = ("  %-28s %.3fs  %5.0f us/launch"):format(c.name, c.total, c.total / n * 1e6)
  local ref = against[i]
  if ref then
    local ratios = {}
    for k, t in ipairs(c.batches) do ratios[k] = t / ref.batches[k] end
    table.sort(ratios)
    line = line .. ("   %.2fx %s (median batch %.2fx)"):format(c.total / ref.total, ref == base and "baseline" or "keeper baseline",
      ratios[(#ratios + 1) // 2])
  end
  print(line)
end
print(("ratio vkit/baseline: %.2fx default (target <= 1.50x); cgroup=off %.2fx the keeper baseline, %.2fx posix_spawn"):format(
  contenders[3].total / base.total, contenders[4].total / keeper_base.total, contenders[4].total / base.total))
