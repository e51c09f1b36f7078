--- Bundles shipped as .tar, .tar.gz or .tgz (SPEC §1): read by vkit.archive
--  without trusting them and unpacked only into a fresh private directory,
--  which is verified as a directory and then removed.
--
-- `unsafe-archive`: an absolute member path, a ".." component, a Windows
-- root or drive, a backslash or control character in a name, any link or
-- device or fifo, a member that repeats or collides with another, entries
-- beside the bundle root, a decompressed size or entry count over the
-- caps in policies/vac.lua, or an archive that cannot be read.
local fs = require "vkit.fs"
local archive = require "vkit.archive"
local Failures = require "vkit.vac.failures"
local policy = require("vkit.policy").vac

local M = {}

--- The components of a member name, or nil and why it is unsafe.  An
--  empty list is the archive's own root ("." or "./").
function M.member_parts(name)
  if name:sub(1, 1) == "/" then return nil, "absolute path" end
  if name:find("\\", 1, true) then return nil, "backslash in name (a Windows path)" end
  if name:find "%c" then return nil, "control character in name" end
  local second = utf8.offset(name, 2)
  if second and name:sub(second, second) == ":" then return nil, "drive-qualified name" end
  local parts = {}
  for part in name:gmatch "[^/]+" do
    if part == ".." then return nil, "'..' component" end
    if part ~= "." then parts[#parts + 1] = part end
  end
  return parts
end

local function quote(s) return ("%q"):format(s) end

-- Unpacks the archive at path into dest; nil on success, else the reason
-- (and vkit.archive's code when the archive could not even be opened).
local function unpack(path, dest)
  local caps = policy.archive
  local reader, err, code = archive.open(path, {
    max_bytes = caps.max_unpacked_bytes, max_entries = caps.max_entries, max_name = caps.max_name_bytes,
  })
  if not reader then return err, code end
  local _ <close> = reader
  local seen = {}
  while true do
    local entry, msg = reader:next()
    if not entry then
      if msg then return msg end
      break
    end
    local parts, why = M.member_parts(entry.path)
    if not parts then return ("unsafe member %s: %s"):format(quote(entry.path), why) end
    if entry.kind ~= "file" and entry.kind ~= "dir" then
      return ("unsafe member %s: %s"):format(quote(entry.path), entry.kind)
    end
    if #parts == 0 then
      if entry.kind == "file" then return ("unsafe member %s: a file with no name"):format(quote(entry.path)) end
    else
      local rel = table.concat(parts, "/")
      -- a path seen before, or one under a file, is a collision
      for i = 1, #parts - 1 do
        local prefix = table.concat(parts, "/", 1, i)
        if seen[prefix] == "file" then return ("unsafe member %s: below a file"):format(quote(entry.path)) end
      end
      if seen[rel] and (seen[rel] == "file" or entry.kind == "file") then
        return ("unsafe member %s: appears more than once"):format(quote(entry.path))
      end
      seen[rel] = entry.kind
      local target = dest .. "/" .. rel
      if entry.kind == "dir" then
        local ok, e = fs.mkdirs(target)
        if not ok then return e end
      else
        if #parts > 1 then
          local ok, e = fs.mkdirs(dest .. "/" .. table.concat(parts, "/", 1, #parts - 1))
          if not ok then return e end
        end
        local f, e = io.open(target, "wb")
        if not f then return e end
        while true do
          local chunk, rerr = reader:read(1 << 20)
          if not chunk then
            f:close()
            return rerr
          end
          if chunk == "" then break end
          f:write(chunk)
        end
        f:close()
      end
    end
  end
  -- a bundle tar holds exactly the bundle directory
  local top = fs.list(dest) or {}
  local manifest = fs.lstat(dest .. "/vac.json")
  if #top > 1 and not (manifest and manifest.kind == "file") then
    local names = {}
    for i, n in ipairs(top) do names[i] = quote(n) end
    return "archive has entries beside the bundle root: " .. table.concat(names, ", ")
  end
  return nil
end

local function bundle_root(dest)
  local st = fs.lstat(dest .. "/vac.json")
  if st and st.kind == "file" then return dest end
  local top = fs.list(dest) or {}
  if #top == 1 then
    local sub = dest .. "/" .. top[1]
    local d, m = fs.lstat(sub), fs.lstat(sub .. "/vac.json")
    if d and d.kind == "dir" and m and m.kind == "file" then return sub end
  end
  return dest
end

--- Verifies the bundle archive at path: the same result as a directory
--  verification, or a single unsafe-archive failure; or nil, message,
--  "unsupported-compression" for an archive compressed in a way vkit does
--  not read (nothing was verified, so nothing is refused).
function M.verify(path, name)
  local verify = require "vkit.vac.verify"
  local dest, err = fs.mkdtemp((os.getenv "TMPDIR" or "/tmp") .. "/vkit-vac-")
  if not dest then
    local failures = Failures.new()
    failures:add("unsafe-archive", "cannot create a private directory: " .. tostring(err))
    return { name = name, failures = failures, archive_refused = true }
  end
  local ok, result, code = pcall(function()
    local why, code = unpack(path, dest)
    if code == "unsupported-compression" then return false, why end
    if why then
      local failures = Failures.new()
      failures:add("unsafe-archive", why)
      return { name = name, failures = failures, archive_refused = true }
    end
    local failures, m = verify.directory(bundle_root(dest))
    return { name = name, failures = failures, manifest = m }
  end)
  fs.remove_tree(dest)
  if not ok then error(result, 0) end
  if result == false then return nil, code, "unsupported-compression" end
  return result
end

return M
