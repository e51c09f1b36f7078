--- The content-addressed evidence store: <root>/<sha256[0:2]>/<sha256>.
--
-- A directory every machine of a shared store reaches (a network mount).
-- An object's name is the SHA-256 of its bytes, computed here from the
-- copy written into the root, never taken from anyone; objects are
-- read-only and never replaced except when the bytes found there no longer
-- hash to their name (then the fresh, verified copy replaces them).  Every
-- read hashes what it read and refuses bytes that do not match
-- (`evidence-corrupt`), so a changed or truncated object can never be
-- served as evidence.
--
--   open(root)              -> ev (raises when root is not a directory here)
--   ev:put(path)            -> sha256, size | nil, message, code
--   ev:read(sha256, max)    -> bytes | nil, message, code
--   ev:copy_out(sha256, dest) -> true | nil, message, code (dest verified)
--   ev:path(sha256)
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local sys = require "vkit.sys"

local M = {}
local Evidence = {}
Evidence.__index = Evidence

local READ_ONLY = tonumber("444", 8)

local valid = hash.is_digest -- 64 lowercase hex digits

function M.open(root)
  -- The root itself is never made here: `vkit store migrate --evidence-root`
  -- makes it once.  A root that is missing on this machine is a network
  -- mount that is not mounted; creating it would fill the local disk with
  -- files no other machine sees, and show every run's evidence as gone.
  local real = fs.realpath(root)
  local st = real and fs.lstat(real)
  if not st or st.kind ~= "dir" then
    error(("the evidence root %s is not a directory on this machine (is it mounted?)"):format(root), 0)
  end
  assert(fs.mkdirs(real .. "/.tmp"))
  return setmetatable({ root = real }, Evidence)
end

function Evidence:path(sha)
  assert(valid(sha), "not a SHA-256: " .. tostring(sha))
  return ("%s/%s/%s"):format(self.root, sha:sub(1, 2), sha)
end

--- Copies the regular file at path into the store; its name is the hash of
--  the copy (so a file changing meanwhile is stored as what was copied).
function Evidence:put(path)
  local tmp = ("%s/.tmp/%d-%s"):format(self.root, sys.pid(), sys.random_hex(8))
  local ok, message, code = fs.copy_file(path, tmp, READ_ONLY)
  if not ok then return nil, message, code end
  local sha, size = hash.file(tmp)
  if not sha then
    os.remove(tmp)
    return nil, size, "evidence-unwritable"
  end
  local dest = self:path(sha)
  assert(fs.mkdirs(self.root .. "/" .. sha:sub(1, 2)))
  local existing = hash.file(dest)
  if existing == sha then
    os.remove(tmp)
  else
    local renamed, rmessage = os.rename(tmp, dest)
    if not renamed then
      os.remove(tmp)
      return nil, rmessage, "evidence-unwritable"
    end
  end
  return sha, size
end

function Evidence:read(sha, max_bytes)
  if not valid(sha) then return nil, "not a SHA-256: " .. tostring(sha), "evidence-corrupt" end
  local bytes, message, code = fs.read(self:path(sha), max_bytes, { nofollow = true })
  if not bytes then
    if code == "ENOENT" then return nil, ("evidence %s is missing from %s"):format(sha, self.root), "evidence-missing" end
    return nil, message, code
  end
  if hash.sha256(bytes) ~= sha then
    return nil, ("evidence %s in %s does not hash to its name: it was changed"):format(sha, self.root), "evidence-corrupt"
  end
  return bytes
end

function Evidence:copy_out(sha, dest)
  local src = self:path(sha)
  if not fs.lstat(src) then return nil, ("evidence %s is missing from %s"):format(sha, self.root), "evidence-missing" end
  local ok, message, code = fs.copy_file(src, dest)
  if not ok then return nil, message, code end
  if hash.file(dest) ~= sha then
    os.remove(dest)
    return nil, ("evidence %s in %s does not hash to its name: it was changed"):format(sha, self.root), "evidence-corrupt"
  end
  return true
end

return M
