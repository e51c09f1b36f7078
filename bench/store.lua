--- The job store's throughput and claim latency: PostgreSQL against the
--  file store, with 1, 2 and 4 workers, in one run.
--
--  For each backend and worker count: N probe jobs (payload ms = 0, so the
--  handler does almost nothing and the store is what is measured) are
--  queued, then that many `vkit run worker --concurrency 1 --until-idle`
--  processes are started at once and the wall time until every run is done
--  is taken (jobs/s = N / wall).  Claim latency is what each worker logs
--  for each claim: the time from asking the store for work to holding a
--  run under its lease (the PostgreSQL claim transaction; the file store's
--  scan, flock and state writes), median and 95th percentile.  The
--  contenders alternate round by round (files, postgresql, files, ...) so
--  that the load of a shared machine falls on both alike; the best round
--  of each is reported, and the ratio PostgreSQL / files beside it.
--
--  VKIT_BENCH_STORE_N (default 300) jobs, VKIT_BENCH_STORE_ROUNDS (default 2).
--  PostgreSQL is a real server started here (tests/support/postgres.lua).
local vkit = require "vkit"
local json = vkit.json
local postgres = require "tests.support.postgres"
local store_mod = require "vkit.store"

local N = tonumber(os.getenv "VKIT_BENCH_STORE_N") or 300
local ROUNDS = tonumber(os.getenv "VKIT_BENCH_STORE_ROUNDS") or 2

if not postgres.available() then
  print("bench/store.lua: PostgreSQL 15 is not installed; nothing measured")
  return
end

local server = postgres.start()
local scratch = assert(vkit.fs.mkdtemp "/tmp/vkit-bench-store-")

local function percentile(sorted, q)
  if #sorted == 0 then return 0 end
  return sorted[math.max(1, math.ceil(q * #sorted))]
end

-- One measurement: {seconds, jobs_per_s, claim_p50_ms, claim_p95_ms}.
local function measure(backend, workers, round)
  local dir = ("%s/%s-%d-%d"):format(scratch, backend, workers, round)
  assert(vkit.fs.mkdirs(dir .. "/project"))
  local store, argv_store
  if backend == "files" then
    store = store_mod.open(dir .. "/project")
    argv_store = { "--project", dir .. "/project" }
  else
    local db = server:database()
    store = store_mod.open { store = db.url, project = dir .. "/project", cache = dir .. "/cache" }
    argv_store = { "--store", db.url }
  end
  for _ = 1, N do store:submit("probe", { ms = 0 }) end
  local pids, logs = {}, {}
  local start = vkit.sys.monotonic_ms()
  for w = 1, workers do
    logs[w] = ("%s/worker-%d.log"):format(dir, w)
    local argv = { vkit.exe, "run", "worker" }
    for _, a in ipairs(argv_store) do argv[#argv + 1] = a end
    for _, a in ipairs { "--concurrency", "1", "--until-idle" } do argv[#argv + 1] = a end
    pids[w] = assert(vkit.sys.spawn_detached { exe = vkit.exe, argv = argv, cwd = dir, log = logs[w],
      env = { "PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" .. dir, "VKIT_CACHE=" .. dir .. "/cache" } })
  end
  for _, pid in ipairs(pids) do
    while vkit.sys.alive(pid) do vkit.sys.sleep(0.005) end
  end
  local seconds = (vkit.sys.monotonic_ms() - start) / 1000
  local done = 0
  for _, entry in ipairs(store:entries()) do
    if entry.run and entry.run.state.status == "done" then done = done + 1 end
  end
  assert(done == N, ("%s with %d workers: %d of %d runs done"):format(backend, workers, done, N))
  local claims = {}
  for _, log in ipairs(logs) do
    local f = assert(io.open(log))
    for ms in f:read("a"):gmatch "claimed in (%d+) ms" do claims[#claims + 1] = tonumber(ms) end
    f:close()
  end
  table.sort(claims)
  store:close()
  return { seconds = seconds, jobs_per_s = N / seconds, claim_p50_ms = percentile(claims, 0.5),
           claim_p95_ms = percentile(claims, 0.95) }
end

local best = {}
for round = 1, ROUNDS do
  for _, workers in ipairs { 1, 2, 4 } do
    for _, backend in ipairs { "files", "postgresql" } do
      local m = measure(backend, workers, round)
      local key = backend .. workers
      if not best[key] or m.jobs_per_s > best[key].jobs_per_s then best[key] = m end
    end
  end
end

print(("job store: %d probe jobs (ms = 0) per measurement, best of %d rounds, contenders alternating"):format(N, ROUNDS))
print(("%-8s %-11s %9s %9s %14s %14s"):format("workers", "backend", "seconds", "jobs/s", "claim p50 ms", "claim p95 ms"))
local rows = {}
for _, workers in ipairs { 1, 2, 4 } do
  for _, backend in ipairs { "files", "postgresql" } do
    local m = best[backend .. workers]
    print(("%-8d %-11s %9.2f %9.1f %14d %14d"):format(workers, backend, m.seconds, m.jobs_per_s, m.claim_p50_ms,
      m.claim_p95_ms))
    rows[#rows + 1] = { workers = workers, backend = backend, seconds = m.seconds, jobs_per_s = m.jobs_per_s,
                        claim_p50_ms = m.claim_p50_ms, claim_p95_ms = m.claim_p95_ms }
  end
  print(("         postgresql / files throughput: %.2fx"):format(best["postgresql" .. workers].jobs_per_s
    / best["files" .. workers].jobs_per_s))
end
if os.getenv "VKIT_BENCH_JSON" then print(json.encode(rows)) end

server:stop()
vkit.fs.remove_tree(scratch)
