--- The producer's evidence directory: exactly the declared artifacts.
--
-- hash_declared(dir, declared) -> { files = {{path, sha256}, ...} sorted,
--   digest = evidence digest } or nil, message, code where code is
--   evidence-missing (a declared artifact is absent), evidence-unlisted (a
--   file nobody declared), or evidence-not-regular (a link, FIFO, device...).
-- Directories are allowed only as parents of declared artifacts.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"

local M = {}

local function parents_of(declared)
  local parents = {}
  for _, p in ipairs(declared) do
    local prefix = ""
    for part in p:gmatch "([^/]+)/" do
      prefix = prefix == "" and part or (prefix .. "/" .. part)
      parents[prefix] = true
    end
  end
  return parents
end

function M.hash_declared(dir, declared)
  local entries, message = fs.walk(dir)
  if not entries then return nil, "cannot read the evidence directory: " .. message, "evidence-missing" end
  local wanted, parents, seen = {}, parents_of(declared), {}
  for _, p in ipairs(declared) do wanted[p] = true end
  for _, e in ipairs(entries) do
    if e.kind == "dir" then
      if not parents[e.path] then
        return nil, ("evidence/%s is a directory nobody declared"):format(e.path), "evidence-unlisted"
      end
    elseif e.kind ~= "file" then
      return nil, ("evidence/%s is a %s, not a regular file"):format(e.path, e.type), "evidence-not-regular"
    elseif not wanted[e.path] then
      return nil, ("evidence/%s was not declared: the evidence must be exactly the declared artifacts"):format(e.path),
        "evidence-unlisted"
    else
      seen[e.path] = true
    end
  end
  local files = json.array()
  for _, p in ipairs(declared) do
    if not seen[p] then return nil, ("the declared artifact evidence/%s is missing"):format(p), "evidence-missing" end
    files[#files + 1] = { path = p, sha256 = assert(hash.file(dir .. "/" .. p)) }
  end
  table.sort(files, function(a, b) return a.path < b.path end)
  return { files = files, digest = assert(hash.evidence_digest(files)) }
end

--- Copies the declared artifacts (regular files only) into a fresh dir.
function M.copy_declared(src, dst, declared)
  for _, p in ipairs(declared) do
    local parent = p:match "^(.*)/[^/]+$"
    assert(fs.mkdirs(parent and (dst .. "/" .. parent) or dst))
    local ok, message, code = fs.copy_file(src .. "/" .. p, dst .. "/" .. p)
    if not ok then
      return nil, ("cannot copy retained evidence %s: %s"):format(p, message),
        code == "ENOENT" and "evidence-missing" or "evidence-not-regular"
    end
  end
  return true
end

return M
