--- An attempt directory that the processes of the attempt can also write.
--
-- A producer or checker knows its run directory ({{run_dir}}) and runs as
-- the vkit user, so it can put a link, a file or a directory where vkit is
-- about to write (logs/ -> /elsewhere, result.json as a directory).  Every
-- file vkit retains is therefore written beneath a directory handle
-- (vkit.fs.opendir), one component at a time, never through a link.  When
-- something stands in the way, the entry is moved aside into tampered/
-- (kept, never deleted), the write is made again, and the tampering is
-- recorded: the caller turns any recorded tampering into BLOCKED
-- run-dir-tampered.
--
--   local rd = run_dir.open(path)          -- or nil, message, code
--   rd:write(rel, bytes) / rd:write_json(rel, value) / rd:mkdir(rel)
--   rd:read(rel, max_bytes) -> bytes | nil, message, code
--   rd:sha256(rel) -> hex, size | nil, message, code
--   rd:audit(when) -- records every retained file changed since vkit wrote it
--   rd:tampering() -> {{path, kind, found_when, moved_to}, ...} (empty: none)
--   rd:path(rel) -> the host path of rel
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"

local M = {}
local RunDir = {}
RunDir.__index = RunDir

-- Codes of a write refused because something else stands at the path.
local OBSTRUCTED = { ["link-in-path"] = true, ["not-a-directory"] = true, EISDIR = true, EEXIST = true }

function M.open(path)
  local handle, message, code = fs.opendir(path)
  if not handle then return nil, message, code end
  return setmetatable({ handle = handle, root = path, found = json.array(), moved = 0, written = {}, order = {} },
    RunDir)
end

function RunDir:path(rel)
  return rel and (self.root .. "/" .. rel) or self.root
end

function RunDir:close()
  self.handle:close()
end
RunDir.__close = RunDir.close

-- The first prefix of rel that is not what the write needs: a link or a
-- non-directory on the way, or (the whole of rel) something that is not a
-- regular file, or anything at all when `fresh`.
local function obstruction(self, rel, fresh)
  local prefix = ""
  for part, sep in rel:gmatch "([^/]+)(/?)" do
    prefix = prefix == "" and part or (prefix .. "/" .. part)
    local st = self.handle:lstat(prefix)
    if not st then return nil end
    local last = sep == ""
    if st.kind == "link" or (not last and st.kind ~= "dir") or (last and (fresh or st.kind ~= "file")) then
      return prefix, st
    end
  end
end

-- Moves what stands at `prefix` into tampered/ and records it.
function RunDir:quarantine(prefix, st, why)
  assert(self.handle:mkdirs "tampered")
  self.moved = self.moved + 1
  local moved_to = ("tampered/%d-%s"):format(self.moved, prefix:gsub("/", "_"))
  local ok, message = self.handle:rename(prefix, moved_to)
  self.found[#self.found + 1] = { path = prefix, kind = st.type, target = st.target, found_when = why,
                                  moved_to = ok and moved_to or json.null, error = ok and json.null or message }
  return ok
end

-- Runs op(); when something stands in its way, quarantines it and tries
-- once more.  Raises when the second try fails too (the directory cannot
-- be kept: an infrastructure failure, never a verdict).
function RunDir:attempt(rel, op, fresh)
  local ok, message, code = op()
  if ok or not OBSTRUCTED[code] then return ok, message, code end
  local prefix, st = obstruction(self, rel, fresh)
  if not prefix then return ok, message, code end
  assert(self:quarantine(prefix, st, "writing " .. rel), message)
  return assert(op())
end

--- Makes the directory rel (and its parents); with fresh, rel itself must
--  not exist yet (anything there was put there by someone else).
function RunDir:mkdir(rel, fresh)
  local handle = self.handle
  if fresh then
    local parent = rel:match "^(.*)/[^/]+$"
    if parent then self:mkdir(parent) end
    return self:attempt(rel, function() return handle:mkdir(rel) end, true)
  end
  return self:attempt(rel, function() return handle:mkdirs(rel) end)
end

function RunDir:write(rel, bytes)
  local parent = rel:match "^(.*)/[^/]+$"
  if parent then self:mkdir(parent) end
  local handle = self.handle
  local ok, message, code = self:attempt(rel, function() return handle:write_atomic(rel, bytes) end)
  if ok then
    if not self.written[rel] then self.order[#self.order + 1] = rel end
    self.written[rel] = { sha256 = hash.sha256(bytes), size = #bytes }
  end
  return ok, message, code
end

function RunDir:write_json(rel, value)
  return self:write(rel, json.encode(value, { indent = 2 }) .. "\n")
end

function RunDir:read(rel, max_bytes)
  return self.handle:read(rel, max_bytes)
end

function RunDir:sha256(rel)
  return self.handle:sha256(rel)
end

function RunDir:lstat(rel)
  return self.handle:lstat(rel)
end

--- Re-reads every file vkit wrote: one that is gone, is no longer a
--  regular file, or holds other bytes was changed by someone else; and the
--  directory itself must still be where it was (moved away, vkit's writes
--  would have followed it out of the run).
function RunDir:audit(when)
  local here, why = self.handle:at_path()
  if not here then
    self.found[#self.found + 1] = { path = ".", kind = "moved", found_when = when, moved_to = json.null, error = why }
  end
  for _, rel in ipairs(self.order) do
    local want = self.written[rel]
    local bytes, message = self.handle:read(rel, want.size)
    if not bytes or hash.sha256(bytes) ~= want.sha256 then
      self.found[#self.found + 1] = { path = rel, kind = "changed", found_when = when, moved_to = json.null,
                                      error = bytes and "other bytes than vkit wrote" or message }
    end
  end
end

function RunDir:tampering()
  return self.found
end

return M
