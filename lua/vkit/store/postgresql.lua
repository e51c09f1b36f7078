--- The PostgreSQL backend of the job store: one database, workers on any
-- machine.
--
-- Tables (vkit.schema): runs (one row per run: the job record, its state,
-- its lease), attempts (one row per attempt: who ran it under which lease
-- token, how it ended), artifacts (every file an attempt retained, by
-- SHA-256, in the evidence store), settings (the evidence root).
--
-- A claim is one transaction: the oldest runnable run (queued, or running
-- under a lease that has expired by the database's clock) is selected
-- FOR UPDATE SKIP LOCKED, so concurrent claimers never wait on nor take
-- the same row; an expired attempt is recorded abandoned, a cancelled or
-- exhausted run is settled, otherwise the run gets a new attempt and a
-- fresh random lease token that expires lease_seconds from now.  A
-- heartbeat renews the lease only while the token still matches and the
-- lease has not expired, and returns cancel_requested: that is how a
-- cancellation reaches the worker holding the run.  Completion is one
-- transaction conditional on the same: a worker that lost its lease (it
-- was paused, partitioned, or slow) has its result discarded and its
-- attempt recorded abandoned; it can never overwrite a newer attempt.
--
-- The database holds every role to the same rules, whatever SQL it sends
-- (vkit.store.pg_guards): submitters queue and cancel, workers claim and
-- record; a run is created queued; only the login holding a run's live
-- lease begins, renews, retains files for and ends its attempt, once; a
-- finished run, an ended attempt and a retained file never change.  The
-- code below takes each of those steps the way the guards expect, and
-- reads a guard's refusal of a lost lease (VK001) as the lease lost.
--
-- A store no worker could retain files in (no evidence root, or one that
-- cannot be written here) is refused before anything depends on it: by
-- `vkit store migrate` (an evidence root is required), at submission (the
-- store names none) and at claim (this worker cannot write it), so a run
-- stays queued rather than being run and then failed.
--
-- Every statement is fixed text with $n parameters (vkit.pg sends values
-- apart from the statement); nothing is built from request data.
local pg = require "vkit.pg"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local hash = require "vkit.hash"
local json = require "vkit.json"
local common = require "vkit.store.common"
local records = require "vkit.store.records"
local schema = require "vkit.store.schema"
local evidence_mod = require "vkit.store.evidence"
local projects = require "vkit.store.projects"
local failure = require "vkit.store.failure"
local pg_guards = require "vkit.store.pg_guards"
local policy = require("vkit.policy").store

local M = {}
local Store = setmetatable({}, { __index = common.Store })
Store.__index = Store

local NULL = pg.null

-- An error raised by a statement: {message, code}; tostring gives the message.
local raise = failure.raise

local CONNECTION_CODES = { ["connection-lost"] = true, timeout = true, ["connection-failed"] = true,
                           ["57P01"] = true, ["57P02"] = true, ["57P03"] = true }

--- Whether an error (raised or returned) means the database could not be
--  reached, rather than that it refused.
function M.is_connection_error(e)
  return type(e) == "table" and CONNECTION_CODES[e.code] or false
end

--- The local cache directory of this machine's vkit (git caches, scratch
--  attempt directories, on-demand worker locks).
function M.cache_dir(dir)
  dir = dir or os.getenv "VKIT_CACHE"
  if not dir or dir == "" then
    local xdg = os.getenv "XDG_CACHE_HOME"
    dir = ((xdg and xdg ~= "") and xdg or ((os.getenv "HOME" or "/tmp") .. "/.cache")) .. "/vkit"
  end
  assert(fs.mkdirs(dir))
  return assert(fs.realpath(dir))
end

-- The conninfo libpq gets: the user's URL, with a connect timeout when it
-- sets none (a host that does not answer is an error after that long).
local function conninfo(chosen)
  if chosen.options.connect_timeout or os.getenv "PGCONNECT_TIMEOUT" then return chosen.conninfo end
  local sep = chosen.conninfo:find("?", 1, true) and "&" or "?"
  return chosen.conninfo .. sep .. "connect_timeout=" .. policy.connect_timeout_seconds
end

function Store:connection()
  if self.conn and self.conn:ok() then return self.conn end
  if self.conn then self.conn:close() end
  self.conn, self.listening = nil, {}
  local conn, message, code = pg.connect(self.conninfo)
  if not conn then raise(("cannot reach the store %s: %s"):format(self.display, message), code) end
  -- A worker cut off between a transaction's statements (FOR UPDATE held)
  -- would keep its run from every other worker (claims SKIP LOCKED) until
  -- TCP noticed, hours later: the server ends such a session instead.
  local set, why, set_code = conn:exec("SELECT set_config('idle_in_transaction_session_timeout', $1, false)",
    { tostring(policy.idle_transaction_timeout_ms) }, policy.statement_timeout_ms)
  if not set then
    conn:close()
    raise(("cannot configure the session with the store %s: %s"):format(self.display, why), set_code)
  end
  self.conn = conn
  return conn
end

-- What a refused privilege means here: which group role takes that step.
local PRIVILEGE_HINT = ("; the role lacks that privilege: %s queue and cancel runs, %s run them, vkit_client does "
  .. "both (docs/deployment.md)"):format(pg_guards.SUBMITTERS, pg_guards.WORKERS)

--- Runs one statement; raises a store failure (vkit.store.failure).
function Store:exec(sql, params)
  local conn = self:connection()
  local result, message, code = conn:exec(sql, params, policy.statement_timeout_ms)
  if not result then
    if code == "42501" then message = tostring(message):gsub("%s+$", "") .. PRIVILEGE_HINT end
    raise(message, code)
  end
  return result
end

--- Runs one statement that is safe to send twice, retrying it once on a
--  fresh connection when the first one was lost.
function Store:query(sql, params)
  local ok, result = pcall(self.exec, self, sql, params)
  if ok then return result end
  if not M.is_connection_error(result) then error(result, 0) end
  return self:exec(sql, params)
end

--- Runs fn() inside a transaction; rolls back and re-raises on an error.
function Store:transaction(fn)
  self:exec "BEGIN"
  local results = table.pack(pcall(fn))
  if results[1] then
    self:exec "COMMIT"
    return table.unpack(results, 2, results.n)
  end
  if self.conn and self.conn:ok() then pcall(self.exec, self, "ROLLBACK") end
  error(results[2], 0)
end

local function version_of(self)
  local present = self:query("SELECT to_regclass('vkit.schema_version') IS NOT NULL AS present").rows[1].present
  if present ~= "t" then return 0 end
  local row = self:query("SELECT coalesce(max(version), 0) AS version FROM vkit.schema_version").rows[1]
  return tonumber(row.version)
end

--- Opens the store a postgresql:// URL names.  The schema must be the one
--  this vkit knows (else: run `vkit store migrate`).
function M.open(chosen, project, opts)
  opts = opts or {}
  local self = setmetatable({ backend = "postgresql", conninfo = conninfo(chosen), display = chosen.display,
                              url = chosen.conninfo, listening = {} }, Store)
  self.project = fs.realpath(project or ".") or project
  self:connection()
  if not opts.for_migration then
    local version = version_of(self)
    if version ~= schema.LATEST then
      raise(("the store %s has schema version %d; this vkit needs %d: run `vkit store migrate --store URL`"):format(
        self.display, version, schema.LATEST), "schema-mismatch")
    end
  end
  self.lease_seconds = opts.lease_seconds or policy.lease_seconds
  self.cache = opts.cache
  return self
end

function Store:cache_dir()
  return M.cache_dir(self.cache)
end

function Store:describe()
  return "PostgreSQL store " .. self.display
end

function Store:location()
  return self.project
end

--- Applies the migrations the database lacks; returns {from, to, applied}.
function Store:migrate(evidence_root)
  return self:transaction(function()
    self:exec("SELECT pg_advisory_xact_lock(hashtext('vkit.store.migrate'))")
    self:exec "CREATE SCHEMA IF NOT EXISTS vkit"
    self:exec(schema.VERSION_TABLE)
    local from = version_of(self)
    if from > schema.LATEST then
      raise(("the store's schema is version %d, newer than this vkit's %d"):format(from, schema.LATEST),
        "schema-too-new")
    end
    local applied = json.array()
    for _, m in ipairs(schema.migrations) do
      if m.version > from then
        for _, statement in ipairs(m.statements) do self:exec(statement) end
        self:exec("INSERT INTO vkit.schema_version (version) VALUES ($1)", { m.version })
        applied[#applied + 1] = m.version
      end
    end
    if evidence_root then
      self:exec([[INSERT INTO vkit.settings (name, value) VALUES ('evidence_root', $1)
                  ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value]], { evidence_root })
    elseif not self:exec("SELECT value FROM vkit.settings WHERE name = 'evidence_root'").rows[1] then
      -- Every worker would run its jobs and then fail them, unable to
      -- retain their files: refused now, and nothing above is kept.
      raise(("the store %s has no evidence root, so no worker could retain what its runs produce: run "
        .. "`vkit store migrate --store URL --evidence-root DIR` with a directory every worker reaches"):format(
        self.display), "no-evidence-root")
    end
    return { from = from, to = schema.LATEST, applied = applied }
  end)
end

-- The evidence root this machine uses: VKIT_EVIDENCE_ROOT, else the one
-- recorded by `vkit store migrate --evidence-root`; nil when neither is.
local function evidence_root(self)
  local root = os.getenv "VKIT_EVIDENCE_ROOT"
  if root and root ~= "" then return root, "VKIT_EVIDENCE_ROOT" end
  local row = self:query("SELECT value FROM vkit.settings WHERE name = 'evidence_root'").rows[1]
  return row and row.value, "the store's evidence root"
end

local NO_ROOT = "the store %s has no evidence root: run `vkit store migrate --store URL --evidence-root DIR` as its "
  .. "owner, with a directory every worker reaches (or set VKIT_EVIDENCE_ROOT where it is mounted elsewhere)"

--- The evidence store (raises a store failure, no-evidence-root or
--  evidence-unusable, naming what to do).
function Store:evidence()
  if self.evidence_store then return self.evidence_store end
  local root, whose = evidence_root(self)
  if not root then raise(NO_ROOT:format(self.display), "no-evidence-root") end
  local ok, ev = pcall(evidence_mod.open, root)
  if not ok then
    raise(("%s %s cannot be used here (%s): mount it, or run `vkit store migrate --store URL --evidence-root DIR` "
      .. "with a directory every worker reaches"):format(whose, root, tostring(ev)), "evidence-unusable")
  end
  self.evidence_store = ev
  return ev
end

-- The evidence store, or nil, message, code: for readers, which show an
-- unreadable file as such rather than stop.
local function readable_evidence(self)
  local ok, ev = pcall(self.evidence, self)
  if ok then return ev end
  if not failure.is(ev) or M.is_connection_error(ev) then error(ev, 0) end
  return nil, ev.message, ev.code
end

--- Why this login cannot queue jobs here, or nil: it is not a submitter,
--  or the store names no evidence root (so no worker could keep what the
--  job produces).  Read from the database only: a submitter need not
--  mount the evidence root.
function Store:submit_problem()
  local row = self:query("SELECT vkit.acts_as($1) AS submits, session_user AS login", { pg_guards.SUBMITTERS }).rows[1]
  if row.submits ~= "t" then
    return ("the role %s cannot queue jobs in %s: grant it %s (or vkit_client)"):format(row.login, self.display,
      pg_guards.SUBMITTERS), "42501"
  end
  if not evidence_root(self) then return NO_ROOT:format(self.display), "no-evidence-root" end
  return nil
end

--- Why this login cannot run jobs from this machine, or nil: it is not a
--  worker, or it cannot write the evidence root (a worker that could not
--  keep an attempt's files would run the job and then fail it).
function Store:worker_problem()
  if self.worker_ready then return nil end
  local row = self:query("SELECT vkit.acts_as($1) AS works, session_user AS login", { pg_guards.WORKERS }).rows[1]
  if row.works ~= "t" then
    return ("the role %s cannot run jobs from %s: grant it %s (or vkit_client)"):format(row.login, self.display,
      pg_guards.WORKERS), "42501"
  end
  local ev, message, code = readable_evidence(self)
  if not ev then return message, code end
  local probe = ("%s/.tmp/writable-%d-%s"):format(ev.root, sys.pid(), sys.random_hex(4))
  local wrote, why = fs.write_atomic(probe, "")
  if not wrote then
    return ("the evidence root %s cannot be written here (%s): this worker could not keep an attempt's files")
      :format(ev.root, tostring(why)), "evidence-unusable"
  end
  os.remove(probe)
  self.worker_ready = true
  return nil
end

function Store:submit(kind, payload)
  assert(records.KINDS[kind], "unknown job kind " .. tostring(kind))
  local problem, problem_code = self:submit_problem()
  if problem then raise("cannot queue the job: " .. problem, problem_code) end
  local id = common.new_id()
  local created = common.now()
  local job = json.encode { schema_version = 1, run_id = id, kind = kind, created_at = created, payload = payload }
  local ok, e = pcall(self.exec, self, [[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
    VALUES ($1, $2, $3, 'queued', $4, $4)]], { id, kind, job, created })
  if not ok then
    -- Sent again after a lost answer: the first one may have landed.
    if not M.is_connection_error(e) then error(e, 0) end
    local again = pcall(self.exec, self, [[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
      VALUES ($1, $2, $3, 'queued', $4, $4) ON CONFLICT (run_id) DO NOTHING]], { id, kind, job, created })
    if not again then error(e, 0) end
  end
  return id
end

local RUN_COLUMNS = [[job, status, attempts, outcome, summary, error, cancel_requested, worker_pid, created_at,
  updated_at, (status = 'running' AND lease_expires_at < clock_timestamp()) AS stale]]

-- The run record of a row and its attempt rows, or the corruption.
local function run_of(id, row, attempt_rows)
  local job, message, code = json.decode(row.job)
  if job == nil then return common.corrupt(id, "job.json", code, message) end
  local ok, reason, why = records.job(job, id)
  if not ok then return common.corrupt(id, "job.json", reason, why) end
  local state = { schema_version = 1, status = row.status, attempts = math.tointeger(tonumber(row.attempts)),
                  outcome = row.outcome or json.null, error = row.error or json.null, summary = json.null,
                  created_at = row.created_at, updated_at = row.updated_at,
                  worker_pid = row.worker_pid and math.tointeger(tonumber(row.worker_pid)) or nil }
  if row.summary then
    local summary, smessage, scode = json.decode(row.summary)
    if summary == nil then return common.corrupt(id, "state.json", scode, smessage) end
    state.summary = summary
  end
  ok, reason, why = records.state(state)
  if not ok then return common.corrupt(id, "state.json", reason, why) end
  local attempts, by_number = {}, {}
  for _, a in ipairs(attempt_rows) do
    local n = math.tointeger(tonumber(a.attempt))
    attempts[#attempts + 1] = n
    by_number[n] = { status = a.status, outcome = a.outcome or json.null }
  end
  local file
  ok, file, reason, why = records.consistent(state, attempts, by_number)
  if not ok then return common.corrupt(id, file, reason, why) end
  return { id = id, job = job, state = state, attempts = attempts, cancel_requested = row.cancel_requested == "t",
           stale = row.stale == "t" }
end

function Store:get(id)
  if type(id) ~= "string" or not id:match "^r%-%d+T%d+Z%-%x+$" then
    return nil, ("no run %s in %s"):format(tostring(id), self.display), "unknown-run"
  end
  local row = self:query("SELECT " .. RUN_COLUMNS .. " FROM vkit.runs WHERE run_id = $1", { id }).rows[1]
  if not row then return nil, ("no run %s in %s"):format(id, self.display), "unknown-run" end
  local attempt_rows = self:query("SELECT attempt, status, outcome FROM vkit.attempts WHERE run_id = $1 ORDER BY attempt",
    { id }).rows
  local run, message, code, corruption = run_of(id, row, attempt_rows)
  if not run then return nil, message, code, corruption end
  local ok, file, reason, why = common.check_evidence(run, function(n, rel, max_bytes)
    return self:read_artifact(run, n, rel, max_bytes)
  end, function(n, rel)
    return self:artifact_sha256(run, n, rel)
  end)
  if not ok then return common.corrupt(id, file, reason, why) end
  -- Views that read an attempt's files (reports) get a verified local copy.
  local copies = {}
  function run.local_attempt(n)
    copies[n] = copies[n] or self:materialize(run, n)
    return copies[n]
  end
  return run
end

function Store:list()
  local ids = {}
  for _, row in ipairs(self:query("SELECT run_id FROM vkit.runs ORDER BY run_id DESC").rows) do ids[#ids + 1] = row.run_id end
  return ids
end

function Store:cancel(id)
  local run, message, code = self:get(id)
  if not run then return nil, message, code end
  if common.TERMINAL[run.state.status] then return run end
  self:query([[UPDATE vkit.runs SET cancel_requested = true, updated_at = $2
               WHERE run_id = $1 AND status IN ('queued', 'running')]], { id, common.now() })
  self:query([[UPDATE vkit.runs SET status = 'cancelled', error = 'cancelled before it started', updated_at = $2
               WHERE run_id = $1 AND status = 'queued']], { id, common.now() })
  return self:get(id)
end

local function settle(self, run_id, status, error_text)
  self:exec([[UPDATE vkit.runs SET status = $2, error = $3, lease_expires_at = NULL, updated_at = $4
              WHERE run_id = $1]], { run_id, status, error_text, common.now() })
end

-- One claim transaction: a claim, "again" (a run was settled: look once
-- more) or nil (nothing runnable).
local function claim_once(self, worker, hooks)
  return self:transaction(function()
    local row = self:exec([[SELECT run_id, status, attempts, cancel_requested, worker_pid, lease_owner, job FROM vkit.runs
      WHERE status = 'queued' OR (status = 'running' AND lease_expires_at < clock_timestamp())
      ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED]]).rows[1]
    if not row then return nil end
    local id, n = row.run_id, math.tointeger(tonumber(row.attempts))
    if row.status == "running" then
      local record = common.abandoned_record(n, { worker_pid = row.worker_pid and tonumber(row.worker_pid) })
      record.worker = row.lease_owner -- host:pid:nonce: the hook acts only on its own host's workers
      if hooks and hooks.abandoned then hooks.abandoned(id, n, record) end
      self:exec([[UPDATE vkit.attempts SET status = 'abandoned', finished_at = $3, note = $4
                  WHERE run_id = $1 AND attempt = $2 AND status = 'running']],
        { id, n, record.abandoned_at, "its lease expired before it finished (the worker died, paused or was cut off)" })
    end
    local job = json.decode(row.job)
    if not job or not records.job(job, id) then
      settle(self, id, "failed", "the run's job record cannot be believed")
      return "again"
    end
    if row.cancel_requested == "t" then
      settle(self, id, "cancelled", "cancelled before the attempt could run")
      return "again"
    end
    if n >= policy.max_attempts then
      settle(self, id, "failed", common.exhausted(n))
      return "again"
    end
    local token = sys.random_hex(16)
    local attempt, now = n + 1, common.now()
    self:exec([[UPDATE vkit.runs SET status = 'running', attempts = $2, lease_token = $3, lease_owner = $4,
                  lease_expires_at = clock_timestamp() + make_interval(secs => $5), worker_pid = $6, updated_at = $7
                WHERE run_id = $1]], { id, attempt, token, worker, self.lease_seconds, sys.pid(), now })
    self:exec([[INSERT INTO vkit.attempts (run_id, attempt, status, worker, worker_pid, lease_token, started_at)
                VALUES ($1, $2, 'running', $3, $4, $5, $6)]], { id, attempt, worker, sys.pid(), token, now })
    -- In doubt from here until the worker holds it (Store:claim).
    self.in_doubt = { id = id, attempt = attempt, token = token, job = job, worker = worker }
    return self.in_doubt
  end)
end

-- A claim in doubt: its COMMIT went out and no answer came back (the
-- connection was lost to a restart, a partition, a pause past the
-- statement timeout), or it committed and could not be prepared (the
-- database unreachable).  Its attempt may be recorded running under this
-- worker's lease while the worker goes on without it: nothing would ever
-- renew, end or discard it, and the worker would never learn its lease
-- was gone (issue 30: the fault spec's partitioned worker never logged its
-- discard).  Store:claim keeps it until the database answers, then
-- prepares it if it was recorded (prepared), else drops it.
local function prepared(self, claimed)
  self.in_doubt = claimed
  local ok, claim = pcall(self.prepare, self, claimed)
  if ok or not M.is_connection_error(claim) then self.in_doubt = nil end
  if not ok then error(claim, 0) end
  return claim
end

-- The claim in doubt, prepared, if its attempt was recorded (marked
-- recovered: vkit.store.worker checks its lease before running it); nil
-- if it never committed.  Raises while the database cannot be reached.
-- The run's row lock is taken (and let go) first: the session that sent
-- the COMMIT holds it until its transaction ends, so the answer read next
-- is final (a COMMIT held up in the network cannot land after it).
local function recover(self)
  local doubt = self.in_doubt
  self:query("SELECT 1 FROM vkit.runs WHERE run_id = $1 FOR UPDATE", { doubt.id })
  local row = self:query("SELECT status FROM vkit.attempts WHERE run_id = $1 AND attempt = $2 AND lease_token = $3",
    { doubt.id, doubt.attempt, doubt.token }).rows[1]
  if not row then
    self.in_doubt = nil
    return nil
  end
  local claim = prepared(self, doubt)
  claim.recovered = true
  return claim
end

function Store:claim(worker, hooks)
  -- A worker that could not keep an attempt's files (or may not work
  -- here) takes nothing: the runs stay queued for one that can.
  local problem, code = self:worker_problem()
  if problem then raise("this worker takes no run: " .. problem, code) end
  if self.in_doubt then
    local recovered = recover(self)
    if recovered then return recovered end
  end
  while true do
    local ok, claimed = pcall(claim_once, self, worker, hooks)
    if not ok then
      -- Only a COMMIT whose answer was lost leaves the claim in doubt; a
      -- failure before it, or a refusal, rolled the claim back.
      if not M.is_connection_error(claimed) then self.in_doubt = nil end
      error(claimed, 0)
    end
    if claimed ~= "again" then
      if not claimed then return nil end
      return prepared(self, claimed)
    end
  end
end

-- The claimed attempt's scratch directory and the job as its handler sees
-- it: the project fetched into this machine's cache.
function Store:prepare(claimed)
  local cache = self:cache_dir()
  local dir = ("%s/attempts/%s/%d"):format(cache, claimed.id, claimed.attempt)
  if fs.lstat(dir) then fs.remove_tree(dir) end
  assert(fs.mkdirs(dir))
  local run = assert(self:get(claimed.id))
  local claim = { run = run, attempt = claimed.attempt, token = claimed.token, attempt_dir = dir, job = claimed.job }
  local payload = claimed.job.payload
  if type(payload.project) == "string" then
    local local_repo, message = projects.fetch(cache, payload.project, payload)
    local job = {}
    for k, v in pairs(claimed.job) do job[k] = v end
    job.payload = {}
    for k, v in pairs(payload) do job.payload[k] = v end
    job.payload.project = local_repo or payload.project
    job.payload.project_location = payload.project
    claim.job = job
    if not local_repo then
      claim.refusal = { status = "failed", error = ("cannot fetch the project from %s: %s"):format(payload.project,
        tostring(message)) }
    end
  end
  return claim
end

-- A waiter may be on another machine than the attempt's directory: each
-- heartbeat of a held lease copies the progress lines written since the
-- last one into the attempt's row (read beneath the attempt directory's
-- handle, never through a link; at most progress_bytes).
local function publish_progress(self, claim)
  local dir <close> = fs.opendir(claim.attempt_dir)
  local text = dir and dir:read(common.PROGRESS, policy.progress_bytes)
  if not text or #text == (claim.progress_published or 0) then return end
  self:exec([[UPDATE vkit.attempts SET progress = $4
      WHERE run_id = $1 AND attempt = $2 AND lease_token = $3 AND status = 'running']],
    { claim.run.id, claim.attempt, claim.token, text })
  claim.progress_published = #text
end

function Store:heartbeat(claim)
  local rows = self:query([[UPDATE vkit.runs SET lease_expires_at = clock_timestamp() + make_interval(secs => $3)
      WHERE run_id = $1 AND lease_token = $2 AND status = 'running' AND lease_expires_at > clock_timestamp()
        AND lease_role = session_user
      RETURNING cancel_requested]], { claim.run.id, claim.token, self.lease_seconds }).rows
  if #rows == 0 then return false, false end
  pcall(publish_progress, self, claim) -- progress shown late never costs the lease or a cancellation
  return true, rows[1].cancel_requested == "t"
end

-- Every regular file the attempt left, copied into the evidence store.
function Store:retain(claim)
  local ev = self:evidence()
  local out = json.array()
  for _, e in ipairs(assert(fs.walk(claim.attempt_dir))) do
    if e.kind == "file" and not e.path:match "^%.retained/" then
      assert(#out < policy.max_artifacts, "the attempt retained more files than max_artifacts")
      if e.size > policy.max_artifact_bytes then
        raise(("%s has %d bytes; one retained file may have %d"):format(e.path, e.size, policy.max_artifact_bytes),
          "too-large")
      end
      local sha, size = ev:put(claim.attempt_dir .. "/" .. e.path)
      if not sha then raise(("cannot retain %s: %s"):format(e.path, tostring(size)), "evidence-unwritable") end
      out[#out + 1] = { path = e.path, sha256 = sha, size = size }
    end
  end
  return out
end

local function complete_once(self, claim, fields, retained)
  return self:transaction(function()
    local id = claim.run.id
    local row = self:exec([[SELECT status, attempts, lease_token, (lease_expires_at > clock_timestamp()) AS live,
        coalesce(lease_role = session_user, false) AS mine
      FROM vkit.runs WHERE run_id = $1 FOR UPDATE]], { id }).rows[1]
    local n = row and math.tointeger(tonumber(row.attempts))
    if row and row.lease_token == claim.token and n == claim.attempt and common.TERMINAL[row.status] then
      return true -- ours already: an answer lost on the way back
    end
    -- Files are indexed while the attempt is still ours and running (even
    -- when its lease was lost: they are kept for the record); once another
    -- worker recorded it abandoned, the guards refuse them.
    local attempt = self:exec([[SELECT status FROM vkit.attempts
      WHERE run_id = $1 AND attempt = $2 AND lease_token = $3]], { id, claim.attempt, claim.token }).rows[1]
    if attempt and attempt.status == "running" then
      self:exec([[INSERT INTO vkit.artifacts (run_id, attempt, path, sha256, size)
        SELECT $1, $2, a.path, a.sha256, a.size FROM jsonb_to_recordset($3::jsonb) AS a(path text, sha256 text, size bigint)
        ON CONFLICT DO NOTHING]], { id, claim.attempt, json.encode(retained) })
    end
    local held = row and row.lease_token == claim.token and n == claim.attempt and row.status == "running"
      and row.live == "t" and row.mine == "t"
    local now = common.now()
    if not held then
      self:exec([[UPDATE vkit.attempts SET status = 'abandoned', finished_at = $4, note = $5
        WHERE run_id = $1 AND attempt = $2 AND lease_token = $3 AND status = 'running']],
        { id, claim.attempt, claim.token, now, ("its result (%s) was discarded: the lease was lost"):format(fields.status) })
      return false
    end
    local outcome = fields.outcome
    if outcome == nil or outcome == json.null then outcome = NULL end
    self:exec([[UPDATE vkit.attempts SET status = $3, outcome = $4, finished_at = $5
      WHERE run_id = $1 AND attempt = $2]], { id, claim.attempt, fields.status, outcome, now })
    local summary = fields.summary
    summary = (summary ~= nil and summary ~= json.null) and json.encode(summary) or NULL
    local err = fields.error
    if err == nil or err == json.null then err = NULL end
    self:exec([[UPDATE vkit.runs SET status = $2, outcome = $3, summary = $4, error = $5, lease_expires_at = NULL,
      updated_at = $6 WHERE run_id = $1]], { id, fields.status, outcome, summary, err, now })
    return true
  end)
end

-- Says on stderr that `what` could not reach the database, waits, and
-- returns the next (doubled, bounded) pause.
local function retry_later(claim, what, err, pause)
  io.stderr:write(("%s worker %d: %s run %s attempt %d: %s; retrying in %d ms\n"):format(common.now(), sys.pid(),
    what, claim.run.id, claim.attempt, tostring(err), pause))
  sys.sleep(pause / 1000)
  return math.min(pause * 2, policy.reconnect_max_ms)
end

--- Retains the attempt's files, then records its end if the lease still
--  holds.  A database that cannot be reached is tried again until it
--  answers (with backoff, each failure said on stderr), for the files (the
--  evidence root may have to be looked up) as for the record: the answer is
--  then certain either way, a worker never goes on not knowing whether its
--  result counted, and an outage never fails a run that succeeded.
function Store:complete(claim, fields)
  local pause = policy.poll_ms
  local retained
  while not retained do
    local ok, got = pcall(self.retain, self, claim)
    if ok then
      retained = got
    elseif M.is_connection_error(got) then
      pause = retry_later(claim, "retaining the files of", got, pause)
    else
      fields = { status = "failed", error = "cannot retain the attempt's files: " .. tostring(got) }
      retained = json.array()
    end
  end
  pause = policy.poll_ms
  local lease_races = 0
  while true do
    local done, accepted = pcall(complete_once, self, claim, fields, retained)
    if done then
      if accepted then fs.remove_tree(claim.attempt_dir) end
      return accepted
    end
    -- The lease lapsed between this transaction's check and the guards'
    -- (VK001): once more, and the check sees it lost.
    if type(accepted) == "table" and accepted.code == pg_guards.LEASE_NOT_HELD and lease_races == 0 then
      lease_races = 1
    elseif M.is_connection_error(accepted) then
      pause = retry_later(claim, "recording", accepted, pause)
    else
      error(accepted, 0)
    end
  end
end

function Store:attempt_record(run, n)
  local row = self:query([[SELECT attempt, status, outcome, worker, worker_pid, started_at, finished_at, note
    FROM vkit.attempts WHERE run_id = $1 AND attempt = $2]], { run.id, n }).rows[1]
  if not row then return nil end
  row.attempt = math.tointeger(tonumber(row.attempt))
  row.worker_pid = row.worker_pid and math.tointeger(tonumber(row.worker_pid))
  return row
end

function Store:artifacts(run, n)
  local out = json.array()
  for _, row in ipairs(self:query([[SELECT path, sha256, size FROM vkit.artifacts WHERE run_id = $1 AND attempt = $2
      ORDER BY path]], { run.id, n }).rows) do
    out[#out + 1] = { path = row.path, sha256 = row.sha256, size = math.tointeger(tonumber(row.size)) }
  end
  return out
end

function Store:read_artifact(run, n, rel, max_bytes)
  local row = self:query("SELECT sha256 FROM vkit.artifacts WHERE run_id = $1 AND attempt = $2 AND path = $3",
    { run.id, n, rel }).rows[1]
  if not row then return nil, ("run %s attempt %d retained no %s"):format(run.id, n, rel), "ENOENT" end
  local ev, message, code = readable_evidence(self)
  if not ev then return nil, message, code end
  return ev:read(row.sha256, max_bytes)
end

--- The SHA-256 of a retained file, once its object in the evidence root
--  is found to hash to it (hashed as a stream, never read whole); nil,
--  message, code otherwise.
function Store:artifact_sha256(run, n, rel)
  local row = self:query("SELECT sha256 FROM vkit.artifacts WHERE run_id = $1 AND attempt = $2 AND path = $3",
    { run.id, n, rel }).rows[1]
  if not row then return nil, ("run %s attempt %d retained no %s"):format(run.id, n, rel), "ENOENT" end
  local ev, message, code = readable_evidence(self)
  if not ev then return nil, message, code end
  local object = ev:path(row.sha256)
  if not fs.lstat(object) then
    return nil, ("evidence %s is missing from %s"):format(row.sha256, ev.root), "evidence-missing"
  end
  if hash.file(object) ~= row.sha256 then
    return nil, ("evidence %s in %s does not hash to its name: it was changed"):format(row.sha256, ev.root),
      "evidence-corrupt"
  end
  return row.sha256
end

--- Attempt n's progress lines: the retained progress.log once the attempt
--  ended, before that what its worker last published; nil when none.
function Store:progress(run, n)
  local row = self:query([[SELECT a.progress, r.sha256 FROM vkit.attempts a
      LEFT JOIN vkit.artifacts r ON r.run_id = a.run_id AND r.attempt = a.attempt AND r.path = $3
      WHERE a.run_id = $1 AND a.attempt = $2]], { run.id, n, common.PROGRESS }).rows[1]
  if not row then return nil end
  if row.sha256 then
    local ev = readable_evidence(self)
    return ev and ev:read(row.sha256, policy.progress_bytes) or nil
  end
  if row.progress == nil or row.progress == "" then return nil end
  return row.progress
end

--- A fresh local directory holding every file attempt n retained, each
--  copied from the evidence store and verified against its SHA-256 (a
--  changed object is left out: the view then shows it missing; so is every
--  file when the evidence root cannot be read here).  An attempt that
--  retained nothing needs no evidence root.
function Store:materialize(run, n)
  local dir = assert(fs.mkdtemp "/tmp/vkit-attempt-")
  -- Removed when the store is collected (at the latest when vkit exits).
  self.views = self.views or {}
  self.views[#self.views + 1] = setmetatable({}, { __gc = function() fs.remove_tree(dir) end })
  local artifacts = self:artifacts(run, n)
  local ev = #artifacts > 0 and readable_evidence(self)
  if not ev then return dir end
  for _, a in ipairs(artifacts) do
    local target = dir .. "/" .. a.path
    local parent = target:match "^(.*)/[^/]+$"
    assert(fs.mkdirs(parent))
    ev:copy_out(a.sha256, target)
  end
  return dir
end

--- Materialises attempt n's retained `rel` subtree under scratch (every
--  file verified against its SHA-256); returns the local directory.
function Store:retained_dir(run, n, rel, scratch)
  scratch = scratch or assert(fs.mkdtemp "/tmp/vkit-retained-")
  local ev = self:evidence()
  local dest = scratch .. "/" .. rel
  assert(fs.mkdirs(dest))
  for _, row in ipairs(self:query([[SELECT path, sha256 FROM vkit.artifacts
      WHERE run_id = $1 AND attempt = $2 AND starts_with(path, $3) ORDER BY path]], { run.id, n, rel .. "/" }).rows) do
    local target = scratch .. "/" .. row.path
    assert(fs.mkdirs(target:match "^(.*)/[^/]+$"))
    assert(ev:copy_out(row.sha256, target))
  end
  return dest
end

function Store:has_work()
  local row = self:query([[SELECT EXISTS (SELECT 1 FROM vkit.runs WHERE status = 'queued'
      OR (status = 'running' AND lease_expires_at < clock_timestamp())) AS work]]).rows[1]
  return row.work == "t"
end

local function listen(self, channel)
  local conn = self:connection()
  if not self.listening[channel] then
    self:exec(channel == "vkit_queue" and "LISTEN vkit_queue" or "LISTEN vkit_runs")
    self.listening[channel] = true
  end
  return conn
end

--- Waits up to ms for a NOTIFY on channel (or returns at once when one is
--  pending).
function Store:wait_notify(channel, ms)
  local ok, conn = pcall(listen, self, channel)
  if not ok then
    sys.sleep(ms / 1000)
    return
  end
  conn:wait_notify(math.max(1, math.floor(ms)))
end

function Store:wait_for_work(ms) self:wait_notify("vkit_queue", ms) end
function Store:wait_change(ms) self:wait_notify("vkit_runs", ms) end

--- The lock an on-demand worker of this machine holds while it scans.
function Store:scanner_lock()
  return fs.lock(("%s/worker-%s.lock"):format(self:cache_dir(), hash.sha256(self.url):sub(1, 16)))
end

--- Starts an on-demand worker only when this login may work and can keep
--  an attempt's files here; otherwise the runs wait for the fleet's
--  workers (a submitter's credentials never start one that would fail).
function Store:ensure_worker()
  local ok, problem = pcall(self.worker_problem, self)
  if not ok then return nil, tostring(problem) end
  if problem then return nil, problem end
  return common.Store.ensure_worker(self)
end

function Store:worker_argv(exe)
  local cache = self:cache_dir()
  return { exe, "run", "worker", "--store", self.url, "--until-idle" }, cache .. "/worker.log", cache,
    { VKIT_CACHE = cache }
end

function Store:close()
  if self.conn then self.conn:close() end
  self.conn = nil
end

return M
