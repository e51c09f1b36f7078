--- The job-store worker: executes queued runs and retries lost ones.
--
-- A worker holds .vkit/worker.lock while it scans, and each run's lock while
-- it executes that run, so two workers never run one job at once.  After a
-- scan it releases the worker lock and looks once more: a job queued while
-- it was finishing is either seen here or by the worker its submitter starts.
--
-- A handler is a module named in policies/store.lua with
--   run(job, ctx) -> { outcome = "...", summary = {...} }
-- where ctx = { store, run_id, attempt, attempt_dir, cancelled(), log(text),
-- run_process(spec) (vkit.proc, stopped on cancellation) }.
-- A handler that raises is an infrastructure failure: the run is "failed"
-- with the error (a lost worker is retried; a crashing handler is not).
local vkit_fs = require "vkit.fs"
local sys = require "vkit.sys"
local json = require "vkit.json"
local store_mod = require "vkit.store"
local policy = require("vkit.policy").store

local M = {}

local function attempt_record(dir, fields)
  local path = dir .. "/attempt.json"
  local record = store_mod.read_json(path) or {}
  for k, v in pairs(fields) do record[k] = v end
  store_mod.write_json(path, record)
end

--- Runs a process for a job, stopping it (and its whole tree) when the
--  run's cancellation is requested: vkit.proc.spawn, polled.
function M.run_process(spec, cancelled)
  local proc = require "vkit.proc"
  local handle <close> = proc.spawn(spec)
  while true do
    local result = handle:wait(policy.poll_ms)
    if result then return result end
    if cancelled() then handle:cancel() end
  end
end

--- Kills and removes the cgroups of dead vkit processes (a lost worker's
--  among them): what the lost attempt's record says was found.
function M.left_behind()
  local proc = require "vkit.proc"
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

local function context(store, run, attempt, attempt_dir)
  local function cancelled() return vkit_fs.lstat(run.dir .. "/cancel") ~= nil end
  return {
    store = store,
    run_id = run.id,
    attempt = attempt,
    attempt_dir = attempt_dir,
    cancelled = cancelled,
    run_process = function(spec) return M.run_process(spec, cancelled) end,
    log = function(text)
      local f = io.open(attempt_dir .. "/worker.log", "a")
      if f then
        f:write(store_mod.now(), " ", text, "\n")
        f:close()
      end
    end,
  }
end

local function finish(store, run, attempt, fields)
  fields.attempts = attempt
  fields.created_at = run.state.created_at
  return store:write_state(run.id, fields)
end

--- Executes one attempt of a run whose lock the caller holds.  The
--  attempt's own record (attempt.json) says how it ended before state.json
--  does: a reader never sees a state its attempt does not bear out.
function M.execute(store, run, attempt)
  local attempt_dir = ("%s/attempts/%d"):format(run.dir, attempt)
  assert(vkit_fs.mkdirs(attempt_dir))
  attempt_record(attempt_dir, { attempt = attempt, worker_pid = sys.pid(), started_at = store_mod.now(), status = "running" })
  store:write_state(run.id, { status = "running", attempts = attempt, worker_pid = sys.pid(),
                              created_at = run.state.created_at })
  local handler = require(policy.handlers[run.job.kind])
  local ctx = context(store, run, attempt, attempt_dir)
  local ok, result = xpcall(handler.run, debug.traceback, run.job, ctx)
  local fields
  if not ok then
    ctx.log("handler failed: " .. tostring(result))
    fields = { status = "failed", error = tostring(result):match "^[^\n]*" }
  elseif result.outcome == "cancelled" then
    fields = { status = "cancelled", outcome = "cancelled", summary = result.summary or json.null,
               error = "cancelled while running" }
  else
    fields = { status = "done", outcome = result.outcome, summary = result.summary or json.null }
  end
  attempt_record(attempt_dir, { finished_at = store_mod.now(), status = fields.status, outcome = fields.outcome or json.null })
  return finish(store, run, attempt, fields)
end

--- Decides and performs what a claimed run needs.  Returns true if it ran.
function M.step(store, id)
  local lock = store:claim(id)
  if not lock then return false end
  local run = store:get(id)
  local did = false
  if run and not store_mod.TERMINAL[run.state.status] then
    local attempts = run.state.attempts
    if run.state.status == "running" then
      -- We hold the lock of a run marked running: its worker is gone, and
      -- what it ran may live on in its cgroup: killed before any retry.
      attempt_record(("%s/attempts/%d"):format(run.dir, attempts),
        { status = "lost", lost_at = store_mod.now(), note = "the worker stopped before finishing this attempt",
          left_behind = M.left_behind() })
    end
    if run.cancel_requested then
      finish(store, run, attempts, { status = "cancelled", error = "cancelled before the attempt could run" })
    elseif attempts >= policy.max_attempts then
      finish(store, run, attempts, { status = "failed",
        error = ("the worker stopped during attempt %d and no attempts remain (max %d)"):format(attempts, policy.max_attempts) })
    else
      M.execute(store, run, attempts + 1)
      did = true
    end
  end
  lock:unlock()
  return did
end

--- Runs everything runnable, oldest first; returns how many attempts ran.
function M.scan(store)
  local ids = store:list()
  local ran = 0
  for i = #ids, 1, -1 do
    if M.step(store, ids[i]) then ran = ran + 1 end
  end
  return ran
end

--- The worker loop of `vkit run worker`.
function M.work(store)
  while true do
    local worker_lock = vkit_fs.lock(store.dir .. "/worker.lock")
    if not worker_lock then return 0 end
    M.scan(store)
    worker_lock:unlock()
    if not store:has_work() then return 0 end
  end
end

return M
