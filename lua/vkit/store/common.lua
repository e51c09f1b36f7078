--- What both job-store backends share: run ids, records, and the
-- operations written once on top of each backend's primitives (entries,
-- summary, wait, ensure_worker).
local boot = require "vkit.boot"
local sys = require "vkit.sys"
local json = require "vkit.json"
local policy = require("vkit.policy").store

local M = {}

M.TERMINAL = { done = true, failed = true, cancelled = true }

--- The file in an attempt directory that holds the handler's progress
--  lines (ctx.progress), retained with the attempt and shown live by
--  Store:progress while it runs.
M.PROGRESS = "progress.log"

function M.now()
  return os.date "!%Y-%m-%dT%H:%M:%SZ"
end

--- A run id: "r-" UTC second "-" 12 hex digits, the first 3 the
--  millisecond, so ids sort in the order runs were queued (`vkit run show
--  latest`, vkit.runs.named), the other 9 random.
function M.new_id()
  local now = sys.time()
  local second = math.floor(now)
  return ("r-%s-%03x%s"):format(os.date("!%Y%m%dT%H%M%SZ", second), math.min(999, math.floor((now - second) * 1000)),
    sys.random_hex(5):sub(1, 9))
end

--- The state record of the given fields (the others null), stamped now.
function M.state_record(fields)
  local state = { schema_version = 1, outcome = json.null, summary = json.null, error = json.null }
  for k, v in pairs(fields) do state[k] = v end
  state.updated_at = M.now()
  return state
end

--- The record of an attempt whose worker stopped before finishing it.
function M.abandoned_record(n, state)
  return { attempt = n, status = "abandoned", abandoned_at = M.now(), worker_pid = state.worker_pid,
           note = "the worker stopped (or lost its lease) before finishing this attempt" }
end

function M.exhausted(n)
  return ("the worker stopped during attempt %d and no attempts remain (max %d)"):format(n, policy.max_attempts)
end

--- nil, message, "corrupt-run", {run_id, file, reason, message}.
function M.corrupt(id, file, reason, message)
  return nil, ("run %s is corrupt: %s: %s (%s)"):format(id, file, message, reason), "corrupt-run",
    { run_id = id, file = file, reason = reason, message = message }
end

--- The corrupt entry's summary row (what --json lists for it).
function M.corrupt_summary(corruption)
  return { run_id = corruption.run_id, status = "corrupt", corrupt = corruption }
end

--- Whether a finished run's recorded outcome is what its retained evidence
--  supports (issue 29 for certifications, issue 30 for every kind).  The
--  handler of each kind says (`outcome_from_evidence(run, n, files)` ->
--  outcome | nil, file, reason, message, with files.read(rel, max_bytes)
--  and files.sha256(rel) over attempt n's retained files); a record no
--  evidence backs is corrupt, never the outcome it claims.  A kind whose
--  handler cannot say is refused here rather than believed.
--  read_artifact(n, rel, max_bytes): the backend's reader of attempt n's
--  retained files; sha256_artifact(n, rel): their SHA-256 (default: the
--  hash of what read_artifact returns).
--  Returns true, or nil, file, reason, message.
-- Codes with which a backend says its evidence cannot be reached at all.
local UNREACHABLE = { ["no-evidence-root"] = true, ["evidence-unusable"] = true }

function M.check_evidence(run, read_artifact, sha256_artifact)
  if run.state.status ~= "done" then return true end
  local n = run.state.attempts
  if n == 0 then return nil, "state.json", "outcome-not-in-evidence", "it claims an outcome no attempt recorded" end
  local handler = require(policy.handlers[run.job.kind])
  if not handler.outcome_from_evidence then
    return nil, "state.json", "outcome-not-in-evidence",
      ("a %s run's outcome cannot be derived from its evidence"):format(run.job.kind)
  end
  -- A backend that cannot reach its evidence at all (no evidence root
  -- here, or one that is not mounted) says so: the run is unverifiable
  -- from this machine, which is not the same as a report gone missing.
  local unreachable
  local function noting(value, message, code)
    if value == nil and UNREACHABLE[code] then unreachable = unreachable or { code = code, message = message } end
    return value, message, code
  end
  local files = {
    read = function(rel, max_bytes) return noting(read_artifact(n, rel, max_bytes)) end,
    sha256 = function(rel)
      if sha256_artifact then return noting(sha256_artifact(n, rel)) end
      local bytes, message, code = noting(read_artifact(n, rel, policy.max_artifact_bytes))
      if not bytes then return nil, message, code end
      return require("vkit.hash").sha256(bytes)
    end,
  }
  local derived, file, reason, message = handler.outcome_from_evidence(run, n, files)
  if not derived and unreachable then return nil, "evidence", unreachable.code, unreachable.message end
  if not derived then
    -- A handler names attempt files relative to the attempt, and the run's
    -- own records (state.json, job.json) as they are.
    if file ~= "state.json" and file ~= "job.json" then file = ("attempts/%d/%s"):format(n, tostring(file)) end
    return nil, file, reason, message
  end
  if derived ~= run.state.outcome then
    return nil, "state.json", "outcome-not-in-evidence",
      ("it claims outcome %s; the retained files of attempt %d support %s"):format(tostring(run.state.outcome), n,
        derived)
  end
  return true
end

-- The operations every backend gets from its primitives (get, list, ...).
local Store = {}
M.Store = Store

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

--- Waits up to `seconds` (0..max_wait_seconds) for a terminal state.  A
--  backend that can be told of changes waits for them (wait_change);
--  otherwise it re-reads every poll_ms.
function Store:wait(id, seconds)
  local deadline = sys.monotonic_ms() + math.floor(seconds * 1000)
  while true do
    local run, message, code = self:get(id)
    if not run then return nil, message, code end
    local left = deadline - sys.monotonic_ms()
    if M.TERMINAL[run.state.status] or left <= 0 then return run end
    if self.wait_change then self:wait_change(math.min(left, policy.poll_ms * 10))
    else sys.sleep(math.min(left, policy.poll_ms) / 1000) end
  end
end

-- The environment a worker this command starts runs with: a closed one,
-- plus what tells libpq and vkit where the store is (never a password
-- itself, except as the caller's own PGPASSWORD, which libpq reads).
local PASS_THROUGH = { "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSSLMODE", "PGSSLROOTCERT", "PGCONNECT_TIMEOUT",
                       "VKIT_STORE", "VKIT_EVIDENCE_ROOT", "VKIT_CACHE", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE" }

function M.worker_env(overrides)
  local env = { "PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" .. (os.getenv "HOME" or "/") }
  for _, name in ipairs(PASS_THROUGH) do
    local v = (overrides or {})[name] or os.getenv(name)
    if v then env[#env + 1] = name .. "=" .. v end
  end
  return env
end

--- Starts a detached on-demand worker unless one is already scanning
--  (it rescans after releasing its lock, so a job queued just before it
--  exits is still seen: see vkit.store.worker).
function Store:ensure_worker()
  local lock = self:scanner_lock()
  if not lock then return true end
  lock:unlock()
  local argv, log, cwd, env = self:worker_argv(boot.exe)
  return sys.spawn_detached { exe = boot.exe, argv = argv, env = M.worker_env(env), cwd = cwd, log = log }
end

return M
