--- The durable job store: one interface, two backends.
--
--   open(project [, {create = false}])  the file store of a project directory
--   open{store = URL?, project = DIR?, create = false?}
--                                       the store a URL names (else VKIT_STORE,
--                                       else the file store of DIR, default ".");
--                                       create = false: a read-only command
--                                       never makes a file store's .vkit/
--   -> store, or raises with a sentence (a bad URL, an unreachable database)
--
-- Backends: vkit.store.files (the embedded default: runs under
-- <project>/.vkit/, one machine) and vkit.store.postgresql (one database,
-- workers on any machine, artifacts in a content-addressed evidence
-- store).  Nothing above the store knows which one it talks to.  Every
-- store has:
--
--   store.backend, store.project (the local project directory commands
--   submit from), store:describe() (printable: never a password)
--   store:location()            the Git location a job names its project by
--   store:submit(kind, payload) -> run id
--   store:get(id)               -> run | nil, message, code [, corruption]
--       run = {id, job = {kind, payload, ...}, state = {status, attempts,
--       outcome, summary, error, worker_pid?, created_at, updated_at},
--       attempts = {1..n}, cancel_requested, stale}; code unknown-run, or
--       corrupt-run with corruption = {run_id, file, reason, message}
--   store:list()                -> run ids, newest first
--   store:entries()             -> {run = run} | {corrupt = corruption}, newest first
--   store:summary(run)          -> the stable summary --json prints
--   store:cancel(id)            -> run (a queued run is cancelled at once; a
--                                  running one by the worker holding it)
--   store:wait(id, seconds)     -> run, once terminal or after `seconds`
--   store:claim(worker)         -> claim {run, attempt, attempt_dir, ...} | nil:
--                                  the oldest runnable run, under a lease
--   store:heartbeat(claim)      -> held, cancel_requested
--   store:complete(claim, {status, outcome, summary, error}) -> accepted:
--                                  false when the lease was lost (the
--                                  result is discarded)
--   store:attempt_record(run, n), store:artifacts(run, n),
--   store:read_artifact(run, n, path, max_bytes) -> bytes (verified),
--   store:retained_dir(run, n, rel [, scratch]) -> a local directory holding
--                                  the attempt's retained `rel` subtree
--   store:has_work(), store:ensure_worker(), store:close()
--
-- Run states: queued -> running -> done | failed | cancelled; a running run
-- whose lease lapsed (its worker died) is retried as a new attempt up to
-- policies/store.lua max_attempts, the earlier attempt recorded abandoned.
-- Nothing is ever deleted by the store.
local common = require "vkit.store.common"
local url = require "vkit.store.url"
local fs = require "vkit.fs"
local json = require "vkit.json"

local M = {}

M.TERMINAL = common.TERMINAL
M.now = common.now
M.state_record = common.state_record
M.corrupt_summary = common.corrupt_summary

function M.read_json(path)
  local bytes, message, code = fs.read(path, 16 * 1024 * 1024, { nofollow = true })
  if not bytes then return nil, message, code end
  return json.decode(bytes)
end

function M.write_json(path, value)
  return assert(fs.write_atomic(path, json.encode(value, { indent = 2 }) .. "\n"))
end

--- Opens the store; see above.
function M.open(target, opts)
  if type(target) ~= "table" then return require("vkit.store.files").open(target, opts) end
  local chosen, message = url.choose(target.store, target.project)
  if not chosen then error(message, 0) end
  if chosen.backend == "files" then return require("vkit.store.files").open(chosen.dir, target) end
  return require("vkit.store.postgresql").open(chosen, target.project or ".",
    { lease_seconds = target.lease_seconds, cache = target.cache })
end

return M
