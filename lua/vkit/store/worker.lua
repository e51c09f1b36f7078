--- The job-store worker: claims runnable runs under a lease and executes
-- them, whichever backend the store is.
--
-- A claim is the oldest runnable run (queued, or running under a lease
-- that lapsed because its worker died); the backend records the earlier
-- attempt abandoned and settles a run that is cancelled or out of attempts
-- (vkit.store.files, vkit.store.postgresql).  While a handler runs, its
-- ctx.cancelled() renews the lease every heartbeat_ms and reports true
-- when the run's cancellation was requested or the lease was lost; then
-- the handler stops its processes and the result is offered to
-- store:complete, which discards it unless the lease is still held.
--
-- A handler is a module named in policies/store.lua with
--   run(job, ctx) -> { outcome = "...", summary = {...} }
-- where ctx = { store, run_id, attempt, attempt_dir, cancelled(), log(text),
-- progress(text) (a line for whoever waits on the run, live: Store:progress),
-- run_process(spec) (vkit.proc, stopped on cancellation),
-- retained(run_id, attempt, rel) (a local directory holding a retained
-- subtree of another run, for replays) }.
-- A handler that raises is an infrastructure failure: the run is "failed"
-- with the error (a lost worker is retried; a crashing handler is not).
local boot = require "vkit.boot"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local json = require "vkit.json"
local proc = require "vkit.proc"
local common = require "vkit.store.common"
local policy = require("vkit.policy").store

local M = {}

--- This worker's name in attempt records: host, pid and a random part.
function M.identity()
  local host = (fs.read("/proc/sys/kernel/hostname", 256) or "host"):gsub("%s+$", "")
  return ("%s:%d:%s"):format(host, sys.pid(), sys.random_hex(3))
end

--- Called by a backend when it abandons an attempt whose worker is gone,
--  before the run is retried: record = {attempt, worker_pid, worker?
--  ("host:pid:nonce", PostgreSQL: the worker may have been on another
--  machine)}.  The process supervisor's clean-up of a dead worker's
--  leftovers (its processes' cgroups) hooks in here.
function M.abandoned(run_id, attempt, record)
  -- What the lost worker ran may live on in its cgroup: killed, and what
  -- was found recorded, before any retry.
  record.left_behind = M.left_behind()
end

--- Kills and removes the cgroups of dead vkit processes (a lost worker's
--  among them): what the abandoned attempt's record says was found.
function M.left_behind()
  local found, killed, surviving = json.array(), 0, 0
  for _, cg in ipairs(proc.reap_stale_cgroups()) do
    found[#found + 1] = cg
    killed, surviving = killed + cg.killed, surviving + cg.surviving
  end
  local record = { stale_cgroups = found, processes_killed = killed, processes_surviving = surviving }
  if not proc.capabilities().cgroup then
    record.note = "no writable cgroup v2 here: what a lost worker's runs left running cannot be found"
  end
  return record
end

-- worker.log in the attempt directory, written whole beneath a handle
-- (never appended through a path a process of the attempt could replace).
local function logger(attempt_dir)
  local lines = {}
  return function(text)
    lines[#lines + 1] = common.now() .. " " .. text .. "\n"
    local h <close> = fs.opendir(attempt_dir)
    if h then h:write_atomic("worker.log", table.concat(lines)) end
  end
end

-- progress.log in the attempt directory: each line appended beneath a
-- handle (O_NOFOLLOW on every component), never through a link that a
-- process of the attempt put in its place.
local function progress_writer(attempt_dir)
  return function(text)
    local h <close> = fs.opendir(attempt_dir)
    if h then h:append(common.PROGRESS, text .. "\n") end
  end
end

-- A lease that expires (PostgreSQL's: store.lease_seconds) is lost, on this
-- worker's own clock, once no heartbeat has renewed it for that long: the
-- database set each expiry before its answer arrived here, so by then it
-- has lapsed there too, and another worker may hold the run.  A worker cut
-- off from the database (a partition: every heartbeat fails) thus stops
-- its handler and offers the result, which completion discards once the
-- database answers again, instead of running on as if the lease were held
-- (issue 30).
local function context(store, claim, job)
  local lease = { lost = false, cancel = false, next_beat = 0, renewed = sys.monotonic_ms() }
  local function cancelled()
    local now = sys.monotonic_ms()
    if now >= lease.next_beat then
      lease.next_beat = now + policy.heartbeat_ms
      local ok, held, cancel = pcall(store.heartbeat, store, claim)
      -- A heartbeat that could not reach the store leaves the lease as it
      -- was until the lease's own length has passed; completion decides
      -- whether it held.
      if ok then
        if held == false then lease.lost = true end
        if held then lease.renewed = sys.monotonic_ms() end
        if cancel then lease.cancel = true end
      elseif store.lease_seconds and sys.monotonic_ms() - lease.renewed > store.lease_seconds * 1000 then
        lease.lost = true
      end
    end
    return lease.cancel or lease.lost
  end
  local ctx = {
    store = store,
    run_id = claim.run.id,
    attempt = claim.attempt,
    attempt_dir = claim.attempt_dir,
    cancelled = cancelled,
    run_process = function(spec) return proc.run_cancellable(spec, cancelled) end,
    log = logger(claim.attempt_dir),
    progress = progress_writer(claim.attempt_dir),
    retained = function(run_id, attempt, rel)
      local run = assert(store:get(run_id))
      return store:retained_dir(run, attempt, rel, claim.attempt_dir .. "/.retained")
    end,
  }
  return ctx, lease
end

--- Executes one claimed attempt and offers its result to the store.
--  Returns the fields recorded and whether the store accepted them.
function M.execute(store, claim)
  local job = claim.job or claim.run.job
  local handler = require(policy.handlers[job.kind])
  local ctx, lease = context(store, claim, job)
  if claim.refusal then return claim.refusal, store:complete(claim, claim.refusal) end
  -- A claim recovered after its answer was lost (vkit.store.postgresql:
  -- a claim in doubt) may have lost its lease meanwhile: asked first, and
  -- offered without running when it is gone (or the run was cancelled).
  if claim.recovered and ctx.cancelled() then
    local fields = { status = "cancelled", outcome = "cancelled", summary = json.null,
                     error = lease.lost and "the lease was lost before the attempt could run"
                       or "cancelled before the attempt could run" }
    return fields, store:complete(claim, fields)
  end
  local ok, result = xpcall(handler.run, debug.traceback, job, ctx)
  local fields
  if not ok then
    ctx.log("handler failed: " .. tostring(result))
    fields = { status = "failed", error = tostring(result):match "^[^\n]*" }
  elseif result.outcome == "cancelled" then
    fields = { status = "cancelled", outcome = "cancelled", summary = result.summary or json.null,
               error = lease.lost and "the lease was lost while running" or "cancelled while running" }
  else
    fields = { status = "done", outcome = result.outcome, summary = result.summary or json.null }
  end
  return fields, store:complete(claim, fields)
end

--- Claims and executes runs until none is runnable; returns how many
--  attempts ran.  opts.on_attempt(claim, fields, accepted) sees each.
function M.scan(store, opts)
  opts = opts or {}
  local who = opts.identity or M.identity()
  local ran = 0
  while true do
    local started = sys.monotonic_ms()
    local claim = store:claim(who, { abandoned = M.abandoned })
    if not claim then return ran end
    claim.claim_ms = sys.monotonic_ms() - started
    local fields, accepted = M.execute(store, claim)
    ran = ran + 1
    if opts.on_attempt then opts.on_attempt(claim, fields, accepted) end
  end
end

local function report(claim, fields, accepted)
  io.stderr:write(("%s worker %d: run %s attempt %d %s: %s (claimed in %d ms%s)\n"):format(common.now(), sys.pid(),
    claim.run.id, claim.attempt, fields.status, accepted and "completed" or "discarded (lease lost)", claim.claim_ms or 0,
    claim.recovered and "; recovered: the claim's answer had been lost" or ""))
end

--- The worker loop of `vkit run worker`.  opts.until_idle: exit once no
--  run needs a worker; with opts.exclusive (an on-demand worker, one per
--  store and machine) it holds the store's scanner lock while it scans,
--  then looks once more after releasing it.  Otherwise it serves until
--  killed, waiting for work between scans; a store it cannot reach is
--  retried.
function M.work(store, opts)
  opts = opts or {}
  local scan_opts = { identity = M.identity(), on_attempt = report }
  if opts.until_idle then
    while true do
      local lock
      if opts.exclusive then
        lock = store:scanner_lock()
        if not lock then return 0 end
      end
      M.scan(store, scan_opts)
      if lock then lock:unlock() end
      if not store:has_work() then return 0 end
    end
  end
  local backoff = policy.poll_ms
  while true do
    local ok, ran = pcall(M.scan, store, scan_opts)
    if ok then
      backoff = policy.poll_ms
      if ran == 0 then store:wait_for_work(policy.idle_wait_ms) end
    else
      io.stderr:write(("%s worker %d: %s; retrying in %d ms\n"):format(common.now(), sys.pid(), tostring(ran), backoff))
      sys.sleep(backoff / 1000)
      backoff = math.min(backoff * 2, policy.reconnect_max_ms)
    end
  end
end

--- A usage problem with `vkit run ACTION`'s worker options, or nil.
function M.check_options(action, opts)
  local worker_only = { concurrency = "--concurrency", until_idle = "--until-idle", lease_seconds = "--lease-seconds" }
  for key, flag in pairs(worker_only) do
    if opts[key] ~= nil and action ~= "worker" then return flag .. " is only for `vkit run worker`" end
  end
  local n = opts.concurrency
  if n and (math.type(n) ~= "integer" and n ~= math.floor(n) or n < 1 or n > policy.max_concurrency) then
    return ("--concurrency must be a whole number from 1 to %d"):format(policy.max_concurrency)
  end
  local lease = opts.lease_seconds
  if lease and (lease < policy.min_lease_seconds or lease > policy.max_lease_seconds) then
    return ("--lease-seconds must be between %d and %d"):format(policy.min_lease_seconds, policy.max_lease_seconds)
  end
end

--- `vkit run worker`: N workers on this machine (this process and N-1
--  detached ones, each an ordinary worker claiming one run at a time: kill
--  any of them and the others go on).  The file store's worker always
--  exits once idle (it is started on demand); a PostgreSQL worker serves
--  until killed unless --until-idle.
function M.serve(store, opts)
  local n = math.tointeger(opts.concurrency or 1)
  if n > 1 then
    local _, log, cwd, env = store:worker_argv(boot.exe)
    local argv = { boot.exe, "run", "worker" }
    if store.backend == "files" then
      for _, a in ipairs { "--project", store.project } do argv[#argv + 1] = a end
    else
      for _, a in ipairs { "--store", store.url } do argv[#argv + 1] = a end
    end
    argv[#argv + 1] = "--concurrency"
    argv[#argv + 1] = "1"
    if opts.until_idle then argv[#argv + 1] = "--until-idle" end
    if opts.lease_seconds then
      argv[#argv + 1] = "--lease-seconds"
      argv[#argv + 1] = tostring(opts.lease_seconds)
    end
    for _ = 2, n do
      assert(sys.spawn_detached { exe = boot.exe, argv = argv, env = common.worker_env(env), cwd = cwd, log = log })
    end
  end
  return M.work(store, { until_idle = opts.until_idle or store.backend == "files",
                        exclusive = opts.concurrency == nil })
end

return M
