--- Reading a run's retained records for its report: the edge where the
--  report models do their I/O.  Files are read without following links and
--  within a cap; an artifact is hashed as it is now, beside the digest the
--  run recorded, so a report shows a retained file changed since.
local json = require "vkit.json"
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local paths = require "vkit.paths"
local policy = require("vkit.policy").store

local M = {}

M.CAP = policy.max_record_bytes

--- `dir/rel` when `rel`, a path a retained record names, is a normalised
--  relative path (vkit.paths.check: no `..`, not absolute), else nil: a
--  record cannot lead a report to read outside the run's directory.
function M.inside(dir, rel)
  if type(dir) ~= "string" or not paths.check(rel) then return nil end
  return dir .. "/" .. rel
end

function M.read_json(path)
  local bytes = fs.read(path, M.CAP, { nofollow = true })
  if not bytes then return nil end
  return json.decode(bytes)
end

--- The last attempt's directory, or nil when the run never ran.
function M.attempt_dir(run)
  local n = run.attempts[#run.attempts]
  if not n then return nil end
  -- A shared store's attempt: a local copy of what it retained, each file
  -- verified against its SHA-256 (vkit.store.postgresql).
  if run.local_attempt then return run.local_attempt(n) end
  return ("%s/attempts/%d"):format(run.dir, n)
end

--- {path, sha256, size, recorded, changed}: the file as it is now (nil
--  fields when it is gone or not a regular file) and, when the run recorded
--  a digest, whether the bytes still have it.
function M.artifact(path, recorded)
  local st = fs.lstat(path)
  local a = { path = path, recorded = recorded or json.null }
  if st and st.kind == "file" then
    a.sha256, a.size = hash.file(path)
  end
  a.sha256 = a.sha256 or json.null
  a.size = a.size or json.null
  a.missing = a.sha256 == json.null
  a.changed = recorded ~= nil and a.sha256 ~= recorded
  return a
end

--- The fields every model starts with, from the store's record of the run.
function M.base(run, kind_title)
  local s = run.state
  return {
    schema = "vkit-run-report.v1",
    kind = run.job.kind,
    kind_title = kind_title,
    run_id = run.id,
    status = s.status,
    outcome = s.outcome ~= json.null and s.outcome or nil,
    created_at = s.created_at,
    updated_at = s.updated_at,
    error = s.error ~= json.null and s.error or nil,
    subject = {},
    methods = {},
    established = {},
    not_established = {},
    artifacts = {},
  }
end

--- Adds every regular file under dir (sorted) to the model's artifacts,
--  with the digests the run recorded for some of them (rel path -> hex).
function M.add_tree(model, dir, recorded, prefix)
  local entries = fs.walk(dir)
  if not entries then return end
  for _, e in ipairs(entries) do
    if e.kind == "file" then
      local rel = (prefix or "") .. e.path
      model.artifacts[#model.artifacts + 1] = M.artifact(dir .. "/" .. e.path, recorded and recorded[rel])
    end
  end
end

return M
