--- A worker's local cache of the projects its jobs name.
--
-- A job names its project by a Git location (the path or URL the
-- submitter gave) and exact commits.  A worker never reads that location's
-- working tree: it fetches the location's branches and tags, and every
-- exact commit the payload names, into a bare repository of its own cache
-- (<cache>/git/<sha256 of the location>.git) with libgit2, and the handler
-- reads objects from there.  A commit no branch or tag holds cannot be
-- fetched from a local repository (no transport serves it): it is copied
-- from that repository's object database with its history
-- (repo:copy_commit).  The commits the payload names are found
-- structurally: every string of 40 lowercase hex digits in it.
local fs = require "vkit.fs"
local git = require "vkit.git"
local hash = require "vkit.hash"

local M = {}

local function commits_in(value, out)
  if type(value) == "string" then
    if #value == 40 and value:match "^[0-9a-f]+$" then out[value] = true end
  elseif type(value) == "table" then
    for _, v in pairs(value) do commits_in(v, out) end
  end
  return out
end
M.commits_in = commits_in

--- Fetches `location` into the cache; returns the cache repository's path
--  or nil, message, code.
function M.fetch(cache, location, payload)
  local dir = ("%s/git/%s.git"):format(cache, hash.sha256(location))
  assert(fs.mkdirs(cache .. "/git"))
  -- Workers of one machine share the cache: one fetches at a time.
  local lock <close> = assert(fs.lock(dir .. ".lock", { wait = true }))
  local repo, message, code
  if fs.lstat(dir) then
    repo, message, code = git.open(dir, { search = false })
  else
    repo, message, code = git.init(dir, { bare = true })
  end
  if not repo then return nil, message, code end
  local ok
  ok, message, code = repo:fetch(location, { "+refs/heads/*:refs/vkit/heads/*", "+refs/tags/*:refs/vkit/tags/*" })
  if not ok then
    repo:close()
    return nil, message, code
  end
  local wanted = {}
  for oid in pairs(commits_in(payload, {})) do
    if not repo:commit(oid) then wanted[#wanted + 1] = oid .. ":refs/vkit/commits/" .. oid end
  end
  if #wanted > 0 then
    table.sort(wanted)
    -- A commit no branch or tag holds: a transport serves it only if the
    -- server allows it; a local repository's is copied object by object.
    local source = location:sub(1, 1) == "/" and git.open(location, { search = false }) or nil
    for _, spec in ipairs(wanted) do
      local oid = spec:sub(1, 40)
      if not repo:fetch(location, { spec }) and source then repo:copy_commit(source, oid) end
    end
    if source then source:close() end
    -- A 40-digit string that is no commit of the location stays missing;
    -- the handler then refuses it as it would any unknown commit.
  end
  repo:close()
  return dir
end

return M
