--- The durable job store: runs, their state and their attempts.
--
-- Layout under a verified project (ignored by Git through .vkit/.gitignore):
--
--   .vkit/runs/<run-id>/job.json        immutable: what to do (written once)
--   .vkit/runs/<run-id>/state.json      replaced atomically on every transition
--   .vkit/runs/<run-id>/lock            flock held by the worker executing the run
--   .vkit/runs/<run-id>/cancel          present when cancellation was requested
--   .vkit/runs/<run-id>/attempts/<n>/   one directory per attempt (its run_dir)
--   .vkit/worker.lock                   held while a worker is scanning for work
--
-- state.json: { schema_version = 1, status = queued|running|done|failed|cancelled,
--   attempts = n, outcome = <handler's verdict>|null, summary = {...}|null,
--   error = <sentence>|null, worker_pid, created_at, updated_at }
-- A run whose state is "running" while nobody holds its lock lost its worker
-- (e.g. to SIGKILL): the next worker retries it as a new attempt, up to
-- policies/store.lua max_attempts.  Nothing is ever deleted by the store.
local vkit_fs = require "vkit.fs"
local sys = require "vkit.sys"
local json = require "vkit.json"
local records = require "vkit.store.records"
local policy = require("vkit.policy").store

local M = {}
local Store = {}
Store.__index = Store

M.TERMINAL = { done = true, failed = true, cancelled = true }

local function now()
  return os.date("!%Y-%m-%dT%H:%M:%SZ")
end
M.now = now

local function read_json(path)
  local bytes, message, code = vkit_fs.read(path, 16 * 1024 * 1024, { nofollow = true })
  if not bytes then return nil, message, code end
  return json.decode(bytes)
end
M.read_json = read_json

local function write_json(path, value)
  return assert(vkit_fs.write_atomic(path, json.encode(value, { indent = 2 }) .. "\n"))
end
M.write_json = write_json

--- Opens the store of a project directory, creating it unless
--  opts.create == false (read-only commands never make a .vkit/: such a
--  store simply has no runs until something is queued).
function M.open(project, opts)
  local root = assert(vkit_fs.realpath(project))
  local dir = root .. "/.vkit"
  if not (opts and opts.create == false) then
    assert(vkit_fs.mkdirs(dir .. "/runs"))
    if not vkit_fs.lstat(dir .. "/.gitignore") then assert(vkit_fs.write_atomic(dir .. "/.gitignore", "*\n")) end
  end
  return setmetatable({ project = root, dir = dir, runs = dir .. "/runs" }, Store)
end

function Store:run_dir(id)
  if type(id) ~= "string" or not id:match "^r%-%d+T%d+Z%-%x+$" then return nil end
  return self.runs .. "/" .. id
end

--- Queues a job; returns its run id.  The run appears whole: its
--  directory is made under a hidden name and renamed into place once job.json
--  and state.json are written, so a reader never sees half a run.
function Store:submit(kind, payload)
  assert(records.KINDS[kind], "unknown job kind " .. tostring(kind))
  local id = ("r-%s-%s"):format(os.date "!%Y%m%dT%H%M%SZ", sys.random_hex(6))
  local staging = self.runs .. "/.new-" .. id
  assert(vkit_fs.mkdirs(staging .. "/attempts"))
  local created = now()
  write_json(staging .. "/job.json", { schema_version = 1, run_id = id, kind = kind, created_at = created, payload = payload })
  write_json(staging .. "/state.json", M.state_record { status = "queued", attempts = 0, created_at = created })
  assert(os.rename(staging, self.runs .. "/" .. id))
  return id
end

--- The state record of the given fields (the others null), stamped now.
function M.state_record(fields)
  local state = { schema_version = 1, outcome = json.null, summary = json.null, error = json.null }
  for k, v in pairs(fields) do state[k] = v end
  state.updated_at = now()
  return state
end

function Store:write_state(id, fields)
  local state = M.state_record(fields)
  write_json(self:run_dir(id) .. "/state.json", state)
  return state
end

--- {job, state, attempts = {n...}} or nil, message, code [, corruption]:
--  code unknown-run, or corrupt-run with corruption = {run_id, file,
--  reason, message} naming the file that cannot be believed (unreadable,
--  not a regular file, not strict JSON, not the record's schema, or a state
--  the attempts on disk do not bear out).
function Store:get(id)
  local dir = self:run_dir(id)
  if not dir or not vkit_fs.lstat(dir) then return nil, ("no run %s in %s"):format(tostring(id), self.runs), "unknown-run" end
  local function corrupt(file, reason, message)
    return nil, ("run %s is corrupt: %s: %s (%s)"):format(id, file, message, reason), "corrupt-run",
      { run_id = id, file = file, reason = reason, message = message }
  end
  local docs = {}
  for _, name in ipairs { "job", "state" } do
    local doc, message, code = read_json(("%s/%s.json"):format(dir, name))
    if doc == nil then return corrupt(name .. ".json", code, message) end
    local ok, reason, why = records[name](doc, id)
    if not ok then return corrupt(name .. ".json", reason, why) end
    docs[name] = doc
  end
  local job, state = docs.job, docs.state
  local attempts = {}
  for _, name in ipairs(vkit_fs.list(dir .. "/attempts") or {}) do
    if name:match "^%d+$" then attempts[#attempts + 1] = tonumber(name) end
  end
  table.sort(attempts)
  local last = state.attempts > 0 and read_json(("%s/attempts/%d/attempt.json"):format(dir, state.attempts)) or nil
  local ok, file, reason, why = records.consistent(state, attempts, { [state.attempts] = last })
  if not ok then return corrupt(file, reason, why) end
  return { id = id, dir = dir, job = job, state = state, attempts = attempts,
           cancel_requested = vkit_fs.lstat(dir .. "/cancel") ~= nil,
           stale = state.status == "running" and not self:is_locked(id) }
end

--- All run ids, newest first.
function Store:list()
  local ids = {}
  for _, name in ipairs(vkit_fs.list(self.runs) or {}) do
    if self:run_dir(name) then ids[#ids + 1] = name end
  end
  table.sort(ids, function(a, b) return a > b end)
  return ids
end

--- Every run, newest first, as {run = <get's record>} or {corrupt =
--  {run_id, file, reason, message}}: a run that cannot be read is listed,
--  never skipped.
function Store:entries()
  local out = {}
  for _, id in ipairs(self:list()) do
    local run, message, code, corruption = self:get(id)
    out[#out + 1] = run and { run = run }
      or { corrupt = corruption or { run_id = id, file = "?", reason = code, message = message } }
  end
  return out
end

--- The corrupt entry's summary row (what --json lists for it).
function M.corrupt_summary(corruption)
  return { run_id = corruption.run_id, status = "corrupt", corrupt = corruption }
end

--- The run's lock if nobody else holds it, else nil.
function Store:claim(id)
  return vkit_fs.lock(self:run_dir(id) .. "/lock")
end

function Store:is_locked(id)
  local lock = vkit_fs.lock(self:run_dir(id) .. "/lock")
  if lock then
    lock:unlock()
    return false
  end
  return true
end

--- Requests cancellation.  A queued run is cancelled at once; a running
--  one is stopped by its worker, which watches for the request.
function Store:cancel(id)
  local run, message, code = self:get(id)
  if not run then return nil, message, code end
  if M.TERMINAL[run.state.status] then return run end
  assert(vkit_fs.write_atomic(run.dir .. "/cancel", now() .. "\n"))
  local lock = self:claim(id)
  if lock then
    local fresh = self:get(id)
    if fresh.state.status == "queued" then
      self:write_state(id, { status = "cancelled", attempts = fresh.state.attempts, created_at = fresh.state.created_at,
                             error = "cancelled before it started" })
    end
    lock:unlock()
  end
  return self:get(id)
end

--- The compact, stable summary of a run (what --json prints).
function Store:summary(run)
  local s = run.state
  return {
    run_id = run.id,
    kind = run.job.kind,
    status = s.status,
    outcome = s.outcome,
    attempts = s.attempts,
    created_at = s.created_at,
    updated_at = s.updated_at,
    error = s.error,
    summary = s.summary,
    cancel_requested = run.cancel_requested,
  }
end

--- Waits up to `seconds` (0..max_wait_seconds) for a terminal state.
function Store:wait(id, seconds)
  local deadline = sys.monotonic_ms() + math.floor(seconds * 1000)
  while true do
    local run, message, code = self:get(id)
    if not run then return nil, message, code end
    if M.TERMINAL[run.state.status] or sys.monotonic_ms() >= deadline then return run end
    sys.sleep(policy.poll_ms / 1000)
  end
end

--- Whether some run still needs a worker (queued, or running without one).
function Store:has_work()
  for _, id in ipairs(self:list()) do
    local run = self:get(id)
    if run and (run.state.status == "queued" or run.stale) then return true end
  end
  return false
end

--- Starts a detached worker unless one is already scanning.  The worker
--  rescans after releasing its lock, so a job queued just before it exits
--  is still seen (see vkit.store.worker).
function Store:ensure_worker()
  local lock = vkit_fs.lock(self.dir .. "/worker.lock")
  if not lock then return true end
  lock:unlock()
  local vkit = require "vkit"
  return sys.spawn_detached {
    exe = vkit.exe,
    argv = { vkit.exe, "run", "worker", "--project", self.project },
    env = { "PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" .. (os.getenv "HOME" or "/") },
    cwd = self.project,
    log = self.dir .. "/worker.log",
  }
end

return M
