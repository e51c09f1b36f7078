--- The file backend of the job store: the embedded default, one machine.
--
-- Layout under a verified project (ignored by Git through .vkit/.gitignore):
--
--   .vkit/runs/<run-id>/job.json        immutable: what to do (written once)
--   .vkit/runs/<run-id>/state.json      replaced atomically on every transition
--   .vkit/runs/<run-id>/lock            flock held by the worker executing the run
--   .vkit/runs/<run-id>/cancel          present when cancellation was requested
--   .vkit/runs/<run-id>/attempts/<n>/   one directory per attempt (its run_dir)
--   .vkit/worker.lock                   held while an on-demand worker scans
--
-- The lease of a claim is the run's flock: the kernel drops it the moment
-- its worker dies (SIGKILL included), so a run left "running" with a free
-- lock lost its worker and the next claim records that attempt abandoned
-- and retries it.  Heartbeats have nothing to renew.
--
-- Every record (job.json, state.json, attempt.json, cancel) is written
-- beneath a directory handle (vkit.fs.opendir): each path component is
-- resolved with O_NOFOLLOW, so a link planted in a run directory, or in an
-- attempt directory the attempt's processes can write, is refused, never
-- followed.  Records are never read back to be merged: a process of the
-- attempt could have planted fields in attempt.json.
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local json = require "vkit.json"
local common = require "vkit.store.common"
local records = require "vkit.store.records"
local policy = require("vkit.policy").store

local M = {}
local Store = setmetatable({}, { __index = common.Store })
Store.__index = Store

local RECORD_BYTES = policy.max_record_bytes

local function encode(value)
  return json.encode(value, { indent = 2 }) .. "\n"
end

--- Opens the file store of a project directory, creating it unless
--  opts.create == false (read-only commands never make a .vkit/: such a
--  store simply has no runs until something is queued).
function M.open(project, opts)
  local root = assert(fs.realpath(project))
  local dir = root .. "/.vkit"
  if not (opts and opts.create == false) then
    assert(fs.mkdirs(dir .. "/runs"))
    if not fs.lstat(dir .. "/.gitignore") then assert(fs.write_atomic(dir .. "/.gitignore", "*\n")) end
  end
  return setmetatable({ backend = "files", project = root, dir = dir, runs = dir .. "/runs", finished = {} }, Store)
end

--- Where this store came from, when that is not simply "made here": nil,
--  or {reason, message}.  A .vkit/ that is a link, or that the project's
--  Git HEAD tracks (it arrived with a clone), holds records this machine's
--  vkit did not necessarily write.  Run commands say so; its runs are
--  believed only as far as their retained evidence verifies, as every run
--  is (vkit.store.common.check_evidence), so such a store can never gate CI
--  with a record alone.
function Store:provenance()
  local st = fs.lstat(self.dir)
  if st and st.kind == "link" then
    return { reason = "store-is-link",
             message = ("the store %s is a link to %s: its records were not necessarily written by vkit on this "
               .. "machine"):format(self.dir, tostring(st.target)) }
  end
  local ok, repo = pcall(require("vkit.git").open, self.project)
  if not ok or not repo then return nil end
  local head = repo:head()
  -- not `head and repo:read(...)`: an `and` keeps only the first result
  local code
  if head then code = select(3, repo:read(head, ".vkit", 0)) end
  repo:close()
  if head and code ~= "missing-path" then
    return { reason = "store-tracked-by-git",
             message = ("the store %s is tracked by Git at HEAD %s: it arrived with the repository, not from runs on "
               .. "this machine"):format(self.dir, head:sub(1, 12)) }
  end
end

function Store:describe()
  return "file store " .. self.dir
end

function Store:location()
  return self.project
end

function Store:run_dir(id)
  if type(id) ~= "string" or not id:match "^r%-%d+T%d+Z%-%x+$" then return nil end
  return self.runs .. "/" .. id
end

-- A handle on runs/<id> (or runs/<id>/<rel>), or nil, message, code.
local function handle(self, id, rel)
  local runs, message, code = fs.opendir(self.runs)
  if not runs then return nil, message, code end
  local h
  h, message, code = runs:sub(rel and (id .. "/" .. rel) or id)
  runs:close()
  return h, message, code
end

local function write(self, id, rel, value)
  local parent, name = rel:match "^(.*)/([^/]+)$"
  local h <close> = assert(handle(self, id, parent))
  assert(h:write_atomic(name or rel, encode(value)))
end

local function read_json(h, rel)
  local bytes, message, code = h:read(rel, RECORD_BYTES)
  if not bytes then return nil, message, code end
  return json.decode(bytes)
end

function Store:submit(kind, payload)
  assert(records.KINDS[kind], "unknown job kind " .. tostring(kind))
  local id = common.new_id()
  local runs <close> = assert(fs.opendir(self.runs))
  local staging = ".new-" .. id
  assert(runs:mkdirs(staging .. "/attempts"))
  local created = common.now()
  assert(runs:write_atomic(staging .. "/job.json",
    encode { schema_version = 1, run_id = id, kind = kind, created_at = created, payload = payload }))
  assert(runs:write_atomic(staging .. "/state.json",
    encode(common.state_record { status = "queued", attempts = 0, created_at = created })))
  -- The run appears whole: a reader never sees half a run.
  assert(runs:rename(staging, id))
  return id
end

function Store:write_state(id, fields)
  local state = common.state_record(fields)
  write(self, id, "state.json", state)
  return state
end

function Store:get(id)
  local dir = self:run_dir(id)
  if not dir or not fs.lstat(dir) then return nil, ("no run %s in %s"):format(tostring(id), self.runs), "unknown-run" end
  local h <close>, hmessage, hcode = handle(self, id)
  if not h then return common.corrupt(id, "./", hcode, hmessage) end
  local docs = {}
  for _, name in ipairs { "job", "state" } do
    local doc, message, code = read_json(h, name .. ".json")
    if doc == nil then return common.corrupt(id, name .. ".json", code, message) end
    local ok, reason, why = records[name](doc, id)
    if not ok then return common.corrupt(id, name .. ".json", reason, why) end
    docs[name] = doc
  end
  local state = docs.state
  local attempts = {}
  for _, name in ipairs(fs.list(dir .. "/attempts") or {}) do
    if name:match "^%d+$" then attempts[#attempts + 1] = tonumber(name) end
  end
  table.sort(attempts)
  local last = state.attempts > 0 and read_json(h, ("attempts/%d/attempt.json"):format(state.attempts)) or nil
  local ok, file, reason, why = records.consistent(state, attempts, { [state.attempts] = last })
  if not ok then return common.corrupt(id, file, reason, why) end
  local run = { id = id, dir = dir, job = docs.job, state = state, attempts = attempts,
                cancel_requested = h:lstat "cancel" ~= nil,
                stale = state.status == "running" and not self:is_locked(id) }
  ok, file, reason, why = common.check_evidence(run, function(n, rel, max_bytes)
    return h:read(("attempts/%d/%s"):format(n, rel), max_bytes)
  end, function(n, rel)
    return h:sha256(("attempts/%d/%s"):format(n, rel))
  end)
  if not ok then return common.corrupt(id, file, reason, why) end
  return run
end

function Store:list()
  local ids = {}
  for _, name in ipairs(fs.list(self.runs) or {}) do
    if self:run_dir(name) then ids[#ids + 1] = name end
  end
  table.sort(ids, function(a, b) return a > b end)
  return ids
end

--- The run's lock if nobody else holds it, else nil.
function Store:lock_run(id)
  return fs.lock(self:run_dir(id) .. "/lock")
end

function Store:is_locked(id)
  local lock = self:lock_run(id)
  if lock then
    lock:unlock()
    return false
  end
  return true
end

function Store:cancel(id)
  local run, message, code = self:get(id)
  if not run then return nil, message, code end
  if common.TERMINAL[run.state.status] then return run end
  do
    local h <close> = assert(handle(self, id))
    assert(h:write_atomic("cancel", common.now() .. "\n"))
  end
  local lock = self:lock_run(id)
  if lock then
    local fresh = self:get(id)
    if fresh and fresh.state.status == "queued" then
      self:write_state(id, { status = "cancelled", attempts = fresh.state.attempts, created_at = fresh.state.created_at,
                             error = "cancelled before it started" })
    end
    lock:unlock()
  end
  return self:get(id)
end

-- Ends a run that no attempt will run again (cancelled, or out of attempts).
local function settle(self, run, fields)
  fields.attempts = run.state.attempts
  fields.created_at = run.state.created_at
  self:write_state(run.id, fields)
end

--- Claims the oldest runnable run: {run, attempt, attempt_dir, record} or
--  nil.  A run left running by a dead worker has that attempt recorded
--  abandoned first; a cancelled or exhausted one is settled and skipped.
function Store:claim(worker, hooks)
  local ids = self:list()
  for i = #ids, 1, -1 do
    local id = ids[i]
    if not self.finished[id] then
      local lock = self:lock_run(id)
      if lock then
        local run = self:get(id)
        local claim = run and not common.TERMINAL[run.state.status] and self:start(run, lock, worker, hooks)
        if claim then return claim end
        if run and common.TERMINAL[(self:get(id) or run).state.status] then self.finished[id] = true end
        lock:unlock()
      end
    end
  end
  return nil
end

-- Decides a locked, unfinished run: a claim of its next attempt, or nil.
function Store:start(run, lock, worker, hooks)
  local n = run.state.attempts
  if run.state.status == "running" then
    -- We hold the lock of a run marked running: its worker is gone.
    local record = common.abandoned_record(n, run.state)
    if hooks and hooks.abandoned then hooks.abandoned(run.id, n, record) end
    write(self, run.id, ("attempts/%d/attempt.json"):format(n), record)
  end
  if run.cancel_requested then
    settle(self, run, { status = "cancelled", error = "cancelled before the attempt could run" })
    return nil
  end
  if n >= policy.max_attempts then
    settle(self, run, { status = "failed", error = common.exhausted(n) })
    return nil
  end
  local attempt = n + 1
  local h <close> = assert(handle(self, run.id))
  assert(h:mkdirs "attempts")
  local made, message, code = h:mkdir(("attempts/%d"):format(attempt))
  if not made and code ~= "EEXIST" then error(message) end
  local record = { attempt = attempt, worker = worker, worker_pid = sys.pid(), started_at = common.now(),
                   status = "running" }
  write(self, run.id, ("attempts/%d/attempt.json"):format(attempt), record)
  self:write_state(run.id, { status = "running", attempts = attempt, worker_pid = sys.pid(),
                             created_at = run.state.created_at })
  return { run = run, attempt = attempt, lock = lock, record = record,
           attempt_dir = ("%s/attempts/%d"):format(run.dir, attempt) }
end

--- The lease is the flock: held while this process lives.  Returns held,
--  cancel_requested.
function Store:heartbeat(claim)
  return true, fs.lstat(claim.run.dir .. "/cancel") ~= nil
end

--- Records how the claimed attempt ended: attempt.json (from the record
--  kept in memory, never from the file) before state.json, so a reader
--  never sees a state its attempt does not bear out.  Returns true (the
--  flock cannot have been lost while this process lived).
function Store:complete(claim, fields)
  local record = {}
  for k, v in pairs(claim.record) do record[k] = v end
  record.finished_at = common.now()
  record.status = fields.status
  record.outcome = fields.outcome or json.null
  write(self, claim.run.id, ("attempts/%d/attempt.json"):format(claim.attempt), record)
  local state = {}
  for k, v in pairs(fields) do state[k] = v end
  state.attempts = claim.attempt
  state.created_at = claim.run.state.created_at
  self:write_state(claim.run.id, state)
  if common.TERMINAL[fields.status] then self.finished[claim.run.id] = true end
  claim.lock:unlock()
  return true
end

--- The attempt's record as the store keeps it (attempt.json).
function Store:attempt_record(run, n)
  local h <close> = handle(self, run.id)
  return h and read_json(h, ("attempts/%d/attempt.json"):format(n)) or nil
end

--- Every regular file retained by attempt n: {path, size} (sorted).
function Store:artifacts(run, n)
  local out = json.array()
  for _, e in ipairs(fs.walk(("%s/attempts/%d"):format(run.dir, n)) or {}) do
    if e.kind == "file" then out[#out + 1] = { path = e.path, size = e.size } end
  end
  return out
end

--- The bytes of a retained file, read beneath the attempt's directory
--  handle (never through a link).
function Store:read_artifact(run, n, rel, max_bytes)
  local h <close>, message, code = handle(self, run.id, ("attempts/%d"):format(n))
  if not h then return nil, message, code end
  return h:read(rel, max_bytes)
end

--- Attempt n's progress lines so far (common.PROGRESS, read beneath the
--  attempt's handle as it is written), or nil when it has none.
function Store:progress(run, n)
  return self:read_artifact(run, n, common.PROGRESS, policy.progress_bytes)
end

--- The local directory holding attempt n's `rel` subtree (here it is the
--  attempt directory itself).
function Store:retained_dir(run, n, rel)
  return ("%s/attempts/%d/%s"):format(run.dir, n, rel)
end

function Store:has_work()
  for _, id in ipairs(self:list()) do
    if not self.finished[id] then
      local run = self:get(id)
      if run and (run.state.status == "queued" or run.stale) then return true end
    end
  end
  return false
end

--- The lock an on-demand worker holds while it scans.
function Store:scanner_lock()
  return fs.lock(self.dir .. "/worker.lock")
end

function Store:worker_argv(exe)
  return { exe, "run", "worker", "--project", self.project }, self.dir .. "/worker.log", self.project
end

function Store:wait_for_work(ms)
  sys.sleep(ms / 1000)
end

function Store:close() end

return M
