--- The durable job store: queue certifications and external checks, wait
-- for them, read their results and their retained reports.
--
-- Runs live under the project (`.vkit/runs/<run-id>/`, ignored by Git), or
-- in a PostgreSQL database shared by workers on many machines
-- (`docs/deployment.md`), and are executed by a worker (`vkit run worker`)
-- that `submit` starts when none is running, so a run survives the script
-- that queued it.  The
-- states: `queued` → `running` → `done` | `failed` | `cancelled`; a run whose
-- worker was killed is retried as a new attempt (at most 3).  What each run
-- established is read with `vkit.change.result` (certifications) or rendered
-- with `vkit.report`.
-- @module vkit.store
local fs = require "vkit.fs"
local json = require "vkit.json"
local hash = require "vkit.hash"
local store_mod = require "vkit.store"
local handles = require "vkit.api.handles"
local policy = require("vkit.policy").api

local M = {}

--- The terminal states, as a set: `{done = true, failed = true, cancelled = true}`.
-- @table TERMINAL
M.TERMINAL = { done = true, failed = true, cancelled = true }

local Store = {}
Store.__index = Store

--- Opens the job store of a project directory: its file store, or the
-- store a URL names (`opts.store`, else the `VKIT_STORE` environment
-- variable, as the CLI's `--store`).
-- @string project the project directory (a Git repository for anything but reading)
-- @tparam[opt] table opts `{create = false}`: do not make a file store's `.vkit/`
-- (a read-only look at a project that has no runs yet); `{store =
-- "postgresql://..."}`: the shared store
-- @treturn Store
-- @return nil, message, code: `ENOENT`, `not-a-directory`, `store-unavailable`
-- (a bad URL, a database that cannot be reached)
function M.open(project, opts)
  if type(project) ~= "string" then error("vkit.store.open: project must be a path", 2) end
  opts = opts or {}
  local real, message, code = fs.realpath(project)
  if not real then return nil, ("the project %s does not exist: %s"):format(project, message), code end
  local st = fs.lstat(real)
  if not st or st.kind ~= "dir" then return nil, ("the project %s is not a directory"):format(project), "not-a-directory" end
  local ok, internal = pcall(store_mod.open, { store = opts.store, project = real, create = opts.create })
  if not ok then return nil, tostring(internal), "store-unavailable" end
  return handles.wrap(setmetatable({}, Store), internal)
end

--- A project's job store (`vkit.store.open`).
-- @type Store

--- The project directory (absolute).
-- @treturn string
function Store:project()
  return handles.internal(self).project
end

--- Where the runs are kept, printable (a URL never shows a password).
-- @treturn string
function Store:describe()
  return handles.internal(self):describe()
end

-- The submissions a script may make, by job kind: each validates what it is
-- given before anything is queued and returns the run ids.
local SUBMIT = {}

SUBMIT["change-certify"] = function(store, fields)
  if type(fields.request) == "string" then
    local request, message, code = json.decode(fields.request)
    if request == nil then return nil, "the request is not valid JSON: " .. message, code end
    local copy = {}
    for k, v in pairs(fields) do copy[k] = v end
    copy.request, fields = request, copy
  end
  local id, message, code = require("vkit.runs.change").submit(store, fields)
  if not id then return nil, message, code end
  return { id }
end

SUBMIT["external-check"] = function(store, fields)
  if type(fields.component) ~= "string" then error("external-check needs fields.component", 3) end
  local ids, message, code = require("vkit.runs.external").submit_component(store, store.project, fields.component,
    { policy_sha256 = fields.policy_sha256, package_sha256 = fields.package_sha256 })
  if not ids then return nil, message, code end
  store:ensure_worker()
  return ids
end

SUBMIT["external-replay"] = function(store, fields)
  local original, message, code = store:get(fields.run)
  if not original then return nil, message, code end
  local id
  id, message, code = require("vkit.runs.external").submit_replay(store, original)
  if not id then return nil, message, code end
  return { id }
end

--- Queues a job and makes sure a worker will run it.
--
-- Kinds and their fields:
--
-- * `"change-certify"`: `{request = <request table or JSON text>, trusted_target
--   = <full commit id>, method = "auto"|"finite_paired"|"exhaustive"|"rust_exhaustive"|"rust_kani"
--   (default auto), kani_toolchain = <closed-format pin table>}` (also
--   `vkit.change.certify`);
-- * `"external-check"`: `{component = name, policy_sha256 = hex?, package_sha256 = hex?}`:
--   every check of the component at the project's `HEAD`; the pins, when
--   given, must be the manifest's (also `vkit.protocol.verify`);
-- * `"external-replay"`: `{run = <run id of an external check>}` (also `vkit.protocol.replay`).
-- @string kind
-- @tparam table fields
-- @treturn string the run id (the first, when a component has several checks)
-- @treturn {string,...} every run id queued
-- @return nil, message, code: `unknown-kind`, `unknown-method`, `request-invalid`,
-- `trusted-target-missing`, `kani-pin-invalid`, `unknown-component`,
-- `component-policy-pin-mismatch`, `package-pin-mismatch`, `manifest-missing`,
-- `unknown-run`, `not-replayable`, `no-attempt`, ...
function Store:submit(kind, fields)
  local submit = SUBMIT[kind]
  if not submit then
    return nil, ("unknown job kind %q (one of change-certify, external-check, external-replay)"):format(tostring(kind)),
      "unknown-kind"
  end
  if type(fields) ~= "table" then error("vkit.store: submit needs a table of fields", 2) end
  local ids, message, code = submit(handles.internal(self), fields)
  if not ids then return nil, message, code end
  return ids[1], ids
end

--- One run.
-- @string id a run id
-- @treturn table `{id, job = {kind, payload, created_at, ...}, state = {status,
-- attempts, outcome, summary, error, created_at, updated_at}, attempts = {1..n},
-- cancel_requested, stale}`
-- @return nil, message, code: `unknown-run`, `corrupt-run` (a fourth value
-- names the file that cannot be believed)
function Store:get(id)
  return handles.internal(self):get(id)
end

--- Waits until the run is in a terminal state, or the time is up.
-- @string id a run id
-- @number seconds how long at most (0: look once)
-- @tparam[opt] table opts `{progress = function(text)}`: receives the
-- attempt's progress lines as they are written
-- @treturn table the run, as `get` returns it (its state may still be
-- `queued` or `running` when the time ran out)
-- @return nil, message, code as `get`
function Store:wait(id, seconds, opts)
  if type(seconds) ~= "number" or seconds < 0 then error("vkit.store: wait needs seconds >= 0", 2) end
  local internal = handles.internal(self)
  local run, message, code = internal:get(id)
  if not run then return nil, message, code end
  if opts and opts.progress then
    return require("vkit.runs.change").wait(internal, id, seconds, opts.progress)
  end
  return internal:wait(id, seconds)
end

--- Every run, newest first, as summaries; a run that cannot be read is
-- listed as `{run_id, status = "corrupt", corrupt = {file, reason, message}}`,
-- never skipped.
-- @treturn {table,...} the summaries, as `summary` gives them
function Store:list()
  local internal = handles.internal(self)
  local out = json.array()
  for _, entry in ipairs(internal:entries()) do
    out[#out + 1] = entry.run and internal:summary(entry.run) or store_mod.corrupt_summary(entry.corrupt)
  end
  return out
end

--- The compact summary of a run (what `vkit run list` prints as JSON).
-- @tparam table run as `get` returns it
-- @treturn table `{run_id, kind, status, outcome, attempts, created_at, updated_at, error, summary, cancel_requested}`
function Store:summary(run)
  return handles.internal(self):summary(run)
end

--- Requests cancellation: a queued run is cancelled at once, a running one
-- by its worker, which stops the run's processes (their whole trees).
-- @string id
-- @treturn table the run
-- @return nil, message, code as `get`
function Store:cancel(id)
  return handles.internal(self):cancel(id)
end

-- The JSON records each kind of run retains in an attempt, relative to the
-- attempt directory, with the digests the run recorded for them.
local function retained_records(run)
  local list = {}
  local summary = run.state.summary
  if run.job.kind == "change-certify" then
    for _, m in ipairs(json.kind(summary) == "object" and json.kind(summary.methods) == "array" and summary.methods or {}) do
      if type(m.report) == "string" then
        list[#list + 1] = { name = m.report, method = m.method,
                            recorded = type(m.report_sha256) == "string" and m.report_sha256 or nil }
        if m.method == "finite_paired" then
          list[#list + 1] = { name = m.report:gsub("[^/]+$", "paired-execution-report.v1.json"), method = m.method }
        end
      end
    end
  elseif run.job.kind == "external-check" or run.job.kind == "external-replay" then
    for _, name in ipairs { "result.json", "checker/request.json", "checker/receipt.json" } do
      list[#list + 1] = { name = name }
    end
  end
  return list
end

--- The reports a run retained in its last attempt: a certification's method
-- reports (`finite_paired/change-analysis.v1.json` and the paired report,
-- `exhaustive/exhaustive-report.v1.json`, ...), an external check's result,
-- checker request and receipt.  Each is read through the store (beneath
-- the attempt's directory handle, never through a link; from the evidence
-- store, its digest verified, for PostgreSQL) and hashed as it is now,
-- beside the digest the run recorded, so a report changed since is visible.
-- @string id a run id
-- @treturn {table,...} `{name (relative to the attempt), path (the file, in a
-- file store), method, sha256 (now; nil when missing), recorded (nil when the
-- run recorded none), changed, document (the decoded JSON; nil when missing
-- or not JSON)}`; empty when the run never ran
-- @return nil, message, code as `get`
function Store:reports(id)
  local internal = handles.internal(self)
  local run, message, code = internal:get(id)
  if not run then return nil, message, code end
  local out = json.array()
  local n = run.attempts[#run.attempts]
  if not n then return out end
  for _, r in ipairs(retained_records(run)) do
    local bytes = internal:read_artifact(run, n, r.name, policy.max_report_bytes)
    local sha = bytes and hash.sha256(bytes) or nil
    out[#out + 1] = { name = r.name, path = run.dir and ("%s/attempts/%d/%s"):format(run.dir, n, r.name) or nil,
                      method = r.method, sha256 = sha, recorded = r.recorded,
                      changed = r.recorded ~= nil and sha ~= r.recorded, document = bytes and json.decode(bytes) or nil }
  end
  return out
end

return M
