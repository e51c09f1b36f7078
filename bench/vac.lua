--- VAC structural verification: vkit against the reference verifier
--  (egnaro9/vac-protocol, stdlib Python) in one run.
--
--   VAC_REFERENCE=/path/to/vac-protocol ./vkit script bench/vac.lua
--
-- The reference runs as `$VAC_PYTHON -m vac.verify <bundle>` from the
-- checkout; VAC_PYTHON defaults to /usr/bin/python3 and must be a real
-- interpreter: a version-manager shim (pyenv) is a shell script that costs
-- more than the verification itself and would inflate every ratio.
-- VAC_VKIT times another vkit binary (e.g. a build of main) in place of this
-- tree's ./vkit, for before/after figures.
--
-- 1. cold verification of every conformance case, one process per case
--    (target, issue 31: >= 10x faster than the reference per case; issue
--    20's 20x, which a second executable was built to reach, is withdrawn);
-- 2. a generated fleet bundle with 1,000,000 raw rows (target: >= 30x the
--    reference, within 2x of the machine's limit, peak <= 64 MiB) and a
--    crashkit bundle with 200,000 cases (target: >= 20x); the limit is
--    `openssl dgst -sha256` of the bundle's bytes, timed in the same run;
-- 3. a registry-sized batch: 4,096 bundles (copies of the corpus cases) in
--    one `vkit vac verify` process, in bundles per second (the reference
--    verifies one bundle per process: its rate is 1 / its cold per-case
--    time from 1.; target >= 500 bundles per second).
-- Without VAC_REFERENCE the reference is "skipped" and vkit's absolute
-- figures are printed.  Each run is timed by bench/spawn_time.c
-- (posix_spawn, wait4: wall, CPU and peak memory of the one process);
-- VAC_BENCH_TIMER=bash uses bash's `time` and /usr/bin/time instead.
local vkit = require "vkit"
local b = require "bench.support"
local json, fs, hash = vkit.json, vkit.fs, vkit.hash

local REF = os.getenv "VAC_REFERENCE"
local REF_PER_CASE -- the reference's cold seconds per corpus case, when measured
local PYTHON = os.getenv "VAC_PYTHON" or "/usr/bin/python3"
-- the command a user runs: a build tree's ./vkit
local VKIT = os.getenv "VAC_VKIT" or (fs.lstat(vkit.root .. "/vkit") and vkit.root .. "/vkit") or vkit.exe
local CORPUS = os.getenv "VAC_CORPUS" or (vkit.root .. "/fixtures/conformance/vac")
local FLEET_ROWS = tonumber(os.getenv "VAC_BENCH_FLEET_ROWS") or 1000000
local CRASH_CASES = tonumber(os.getenv "VAC_BENCH_CRASH_CASES") or 200000
local TIME = "/usr/bin/time"
local have_time = fs.lstat(TIME) ~= nil

if REF and not fs.lstat(REF .. "/vac/verify.py") then
  io.stderr:write("VAC_REFERENCE=", REF, " has no vac/verify.py\n")
  os.exit(2)
end
if REF then
  local f = io.open(PYTHON, "rb")
  local head = f and f:read(2)
  if f then f:close() end
  if head ~= "\127E" then
    io.stderr:write("VAC_PYTHON=", PYTHON, " is not an interpreter binary (a shim or script would inflate the ratios)\n")
    os.exit(2)
  end
end

local function loadavg()
  local f = io.open "/proc/loadavg"
  local text = f and f:read "l" or "n/a"
  if f then f:close() end
  return text:match "^(%S+ %S+ %S+)" or text
end
print(("load average %s; vkit %s%s"):format(loadavg(), VKIT,
  REF and ("; reference %s with %s"):format(REF, PYTHON) or ""))

local dir = assert(fs.mkdtemp "/tmp/vkit-bench-vac-")

-- The timer: bench/spawn_time.c (posix_spawn, wait4's rusage, the wall
-- clock to the microsecond), built here; VAC_BENCH_TIMER=bash times with
-- bash's `time` instead (to the millisecond, with bash's own fork in every
-- figure: how the figures before 2026-12-03 were taken) and /usr/bin/time
-- for peak memory.
local TIMER = os.getenv "VAC_BENCH_TIMER" or "spawn"
if TIMER ~= "spawn" and TIMER ~= "bash" then
  io.stderr:write("VAC_BENCH_TIMER=", TIMER, ": spawn or bash\n")
  os.exit(2)
end
local SPAWN_TIME = TIMER == "spawn" and b.spawn_timer(dir)
print(("timer: %s"):format(TIMER == "spawn" and "posix_spawn + wait4 (bench/spawn_time.c), to the microsecond"
  or "bash's time, to the millisecond, bash's fork included; peak memory from /usr/bin/time"))

local function slurp(path)
  local f = io.open(path)
  local text = f and f:read "a" or ""
  if f then f:close() end
  return text
end

-- Runs a command once; returns wall seconds, peak RSS in MiB (or nil), exit
-- code and CPU seconds (user + system).  CPU time is reported beside wall
-- time because the machine is shared: it moves less with the load.
-- cmd = { env = "NAME=value " or "", run = "program args" } (shell words).
local function measure(cmd, want_rss)
  local tfile, rfile = dir .. "/time.out", dir .. "/rss.out"
  if TIMER == "spawn" then
    local _, _, status = os.execute(("%s %s%s > %s"):format(b.quote(SPAWN_TIME), cmd.env, cmd.run, b.quote(tfile)))
    local wall, cpu, kib, code = slurp(tfile):match "^([%d.]+) ([%d.]+) (%d+) (%d+)"
    if not wall then error(("spawn_time failed (%s) on: %s"):format(tostring(status), cmd.run)) end
    return tonumber(wall), want_rss and tonumber(kib) / 1024 or nil, tonumber(code), tonumber(cpu)
  end
  local run = (want_rss and have_time) and ("%s -f %%M -o %s %s"):format(TIME, b.quote(rfile), cmd.run) or cmd.run
  local script = ("TIMEFORMAT='%%3R %%3U %%3S'; { time %s%s > /dev/null 2>&1 ; } 2> %s"):format(cmd.env, run,
    b.quote(tfile))
  local _, _, code = os.execute("bash -c " .. b.quote(script))
  local wall, user, sys = slurp(tfile):match "([%d.]+)%s+([%d.]+)%s+([%d.]+)%s*$"
  local kib = (want_rss and have_time) and slurp(rfile):match "(%d+)%s*$"
  return tonumber(wall), kib and tonumber(kib) / 1024, code, user and (tonumber(user) + tonumber(sys))
end

local function vkit_cmd(bundle) return { env = "", run = ("%s vac verify %s"):format(b.quote(VKIT), b.quote(bundle)) } end
-- `python -m vac.verify` from the checkout, without a `cd`: the checkout goes
-- on PYTHONPATH and -P keeps the working directory off sys.path.
local function ref_cmd(bundle)
  return { env = ("PYTHONPATH=%s "):format(b.quote(REF)),
    run = ("%s -P -m vac.verify %s"):format(b.quote(PYTHON), b.quote(bundle)) }
end

local function best(n, cmd, want_rss)
  local t, rss, code, cpu = math.huge, nil, nil, nil
  for _ = 1, n do
    local w, r, c, u = measure(cmd, want_rss)
    if w < t then t = w end
    if u and (cpu == nil or u < cpu) then cpu = u end
    rss = math.max(rss or 0, r or 0)
    code = c
  end
  return t, (want_rss and (have_time or TIMER == "spawn") and rss or nil), code, cpu
end

local function secs(x) return x and ("%.2fs"):format(x) or "n/a" end

local function mib(x) return x and ("%.0f MiB"):format(x) or "n/a" end

-- ---------------------------------------------------------------------
-- 1. the conformance corpus, cold
if os.getenv "VAC_BENCH_SKIP_CORPUS" then
  print "corpus: skipped (VAC_BENCH_SKIP_CORPUS)"
elseif fs.lstat(CORPUS .. "/cases") then
  local cases = assert(fs.list(CORPUS .. "/cases"))
  local expected = assert(json.decode(assert(fs.read(CORPUS .. "/expected.json", 16 * 1024 * 1024))))
  -- vkit and the reference alternate case by case, so both see the same
  -- load; each must exit as expected.json says, or its time means nothing.
  local function totals()
    local sums = { vkit = { 0, 0, 0 }, ref = { 0, 0, 0 } }
    for _, name in ipairs(cases) do
      local bundle = CORPUS .. "/cases/" .. name
      for side, cmd_of in pairs { vkit = vkit_cmd, ref = REF and ref_cmd or nil } do
        local w, _, code, u = best(3, cmd_of(bundle))
        local s = sums[side]
        s[1], s[2] = s[1] + w, s[2] + (u or 0)
        if code ~= expected[name].exit then
          s[3] = s[3] + 1
          print(("corpus: WARNING: %s exited %d on %s, expected %d"):format(side, code, name, expected[name].exit))
        end
      end
    end
    return sums
  end
  -- the verifier's own work, without process start (os.clock is CPU time)
  local c0 = os.clock()
  for _ = 1, 5 do
    for _, name in ipairs(cases) do vkit.vac.verify(CORPUS .. "/cases/" .. name) end
  end
  print(("corpus: in-process, vkit %.2f ms CPU per case (process start excluded)"):format(
    (os.clock() - c0) / (5 * #cases) * 1000))
  local sums = totals()
  local tv, cv = sums.vkit[1], sums.vkit[2]
  REF_PER_CASE = REF and sums.ref[1] / #cases or nil
  print(("corpus: %d cases cold (best of 3 each), vkit %.3fs wall (%.1f ms per case), %.3fs CPU (%.1f ms per case)")
    :format(#cases, tv, tv / #cases * 1000, cv, cv / #cases * 1000))
  if REF then
    local tr, cr = sums.ref[1], sums.ref[2]
    print(("corpus: reference %.3fs wall (%.1f ms per case), %.3fs CPU (%.1f ms per case); "
      .. "ratio %.1fx wall, %.1fx CPU (target >= 10x)")
      :format(tr, tr / #cases * 1000, cr, cr / #cases * 1000, tr / tv, cv > 0 and cr / cv or 0))
  else
    print "corpus: reference skipped (set VAC_REFERENCE=/path/to/vac-protocol)"
  end
else
  print("corpus: skipped (no corpus at " .. CORPUS .. ")")
end

-- ---------------------------------------------------------------------
-- 2. large generated bundles

local bundles = require "bench.vac_bundles"

-- A size of 0 skips the bundle (VAC_BENCH_FLEET_ROWS=0, VAC_BENCH_CRASH_CASES=0).
-- The machine's limit for a bundle: one pass over its bytes, as
-- `openssl dgst -sha256` of every file in it (best of runs): seconds, MB.
local function limit(root, runs)
  local files, bytes = {}, 0
  for _, e in ipairs(assert(fs.walk(root))) do
    if e.kind == "file" then
      files[#files + 1] = b.quote(root .. "/" .. e.path)
      bytes = bytes + fs.lstat(root .. "/" .. e.path).size
    end
  end
  local t = best(runs, { env = "", run = "openssl dgst -sha256 " .. table.concat(files, " ") })
  return t, bytes / 1e6
end

local function large(label, size, root, build, targets)
  if size <= 0 then return print(label .. ": skipped (size 0)") end
  build(root)
  -- The bundle was just written: its dirty pages are flushed before any
  -- timing (writeback during vkit's runs, which come first, made them up to
  -- 60% slower), and each side reads it once untimed.
  os.execute "sync"
  measure(vkit_cmd(root))
  if REF then measure(ref_cmd(root)) end
  local runs = tonumber(os.getenv "VAC_BENCH_RUNS") or 3
  local vt, vr, vcode, vc = best(runs, vkit_cmd(root), true)
  print(("%s: vkit %.3fs wall, %s CPU, peak %s, exit %d"):format(label, vt, secs(vc), mib(vr), vcode))
  local lt, mb = limit(root, runs)
  print(("%s: the machine's limit, openssl dgst -sha256 of its %.0f MB: %.3fs; vkit takes %.2fx it (target %s)")
    :format(label, mb, lt, vt / lt, targets.limit and ("<= %gx"):format(targets.limit) or "none"))
  if targets.peak and vr then
    print(("%s: peak %s (target <= %d MiB)"):format(label, mib(vr), targets.peak))
  end
  if vcode ~= 0 then print(label .. ": WARNING: vkit did not pass the generated bundle") end
  if REF then
    local rt, rr, rcode, rc = best(runs, ref_cmd(root), true)
    print(("%s: reference %.2fs wall, %s CPU, peak %s, exit %d; ratio %.1fx wall, %s CPU (target >= %dx), memory %s")
      :format(label, rt, secs(rc), mib(rr), rcode, rt / vt,
        (vc and rc and vc > 0) and ("%.1fx"):format(rc / vc) or "n/a", targets.ratio,
        (vr and rr) and ("%.2fx of the reference's"):format(vr / rr) or "n/a"))
    if rcode ~= 0 then print(label .. ": WARNING: the reference did not pass the generated bundle") end
  else
    print(label .. ": reference skipped (set VAC_REFERENCE=/path/to/vac-protocol)")
  end
end

large(("fleet %d raw rows"):format(FLEET_ROWS), FLEET_ROWS, dir .. "/fleet", function(root) bundles.fleet(root, FLEET_ROWS) end,
  { ratio = 30, limit = 2, peak = 64 })
large(("crashkit %d cases"):format(CRASH_CASES), CRASH_CASES, dir .. "/crashkit",
  function(root) bundles.crashkit(root, CRASH_CASES) end, { ratio = 20 })

-- ---------------------------------------------------------------------
-- 3. a registry-sized batch in one process
local BATCH = tonumber(os.getenv "VAC_BENCH_BATCH") or 4096
if BATCH <= 0 or not fs.lstat(CORPUS .. "/cases") then
  print "batch: skipped"
else
  local cases = assert(fs.list(CORPUS .. "/cases"))
  assert(fs.mkdirs(dir .. "/batch"))
  for i = 1, BATCH do
    local name = cases[(i - 1) % #cases + 1]
    assert(os.execute(("cp -r %s %s/batch/%05d"):format(b.quote(CORPUS .. "/cases/" .. name), b.quote(dir), i)))
  end
  os.execute "sync"
  -- the shell expands the glob into the one process's argv (one `bash -c`
  -- string of 4,096 paths would pass the kernel's 128 KiB per argument)
  local cmd = { env = "", run = ("%s vac verify %s/batch/*"):format(b.quote(VKIT), b.quote(dir)) }
  measure(cmd) -- once untimed: the copies into the page cache
  local t, rss, code, cpu = best(2, cmd, true)
  print(("batch: %d bundles in one process: %.2fs wall, %s CPU, peak %s, exit %d (1 is right: the corpus holds "
    .. "tampered cases): %.0f bundles per second (target >= 500)"):format(BATCH, t, secs(cpu), mib(rss), code, BATCH / t))
  if code ~= 1 then print "batch: WARNING: vkit did not exit 1 (it must verify every bundle and refuse the tampered ones)" end
  if REF_PER_CASE then
    print(("batch: the reference, one process per bundle: %.1f bundles per second (1 / %.1f ms); ratio %.1fx")
      :format(1 / REF_PER_CASE, REF_PER_CASE * 1000, (BATCH / t) * REF_PER_CASE))
  end
end
print(("load average %s at the end"):format(loadavg()))
if os.getenv "VAC_BENCH_KEEP" then print("bundles kept in " .. dir) else fs.remove_tree(dir) end
