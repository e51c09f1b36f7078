--- identity(check): the complete JSON object of both executables and every
-- declared dependency with its current hash (seed 000, "Command identity").
--
--   { "producer": { "executable": {path, sha256},
--                   "dependencies": [{path, sha256}, ...],
--                   "trusted_tool_dependencies": [{path, sha256}, ...] },
--     "checker":  { ... } }
--
-- Built by re-hashing every pin now: a version string never substitutes for
-- a content pin, and any difference refuses with pin-mismatch naming the
-- path, the pinned hash and the actual one.  Snapshot-relative dependency
-- paths are hashed inside the frozen snapshot.  vkit.proc hashes them all
-- again immediately before each launch.
local json = require "vkit.json"
local hash = require "vkit.hash"

local M = {}

M.ROLES = { "producer", "checker" }

--- The host path of a declared dependency.
function M.resolve(path, snapshot)
  if path:sub(1, 1) == "/" then return path end
  return snapshot .. "/" .. path
end

local function rehash(entry, snapshot, what)
  local actual, message = hash.file(M.resolve(entry.path, snapshot))
  if not actual then
    return nil, ("%s %s cannot be hashed: %s"):format(what, entry.path, message), "pin-mismatch"
  end
  if actual ~= entry.sha256 then
    return nil, ("%s %s: pinned sha256 %s, actual %s"):format(what, entry.path, entry.sha256, actual), "pin-mismatch"
  end
  return { path = entry.path, sha256 = actual }
end

--- A command's pins through `pin(entry, what)` (-> pin | nil, message,
--  code): {executable, dependencies, trusted_tool_dependencies} or the
--  first failure.  Shared by the identity and the manifest-entry writer.
function M.pin_command(command, role, pin)
  local exe, message, code = pin(command.executable, role .. " executable")
  if not exe then return nil, message, code end
  local lists = {}
  for _, field in ipairs { "dependencies", "trusted_tool_dependencies" } do
    local out = json.array()
    for i, entry in ipairs(command[field] or {}) do
      local pinned
      pinned, message, code = pin(entry, role .. (field == "dependencies" and " dependency" or " trusted tool dependency"))
      if not pinned then return nil, message, code end
      out[i] = pinned
    end
    lists[field] = out
  end
  return { executable = exe, dependencies = lists.dependencies, trusted_tool_dependencies = lists.trusted_tool_dependencies }
end

function M.build(check, snapshot)
  local identity = {}
  local function pin(entry, what) return rehash(entry, snapshot, what) end
  for _, role in ipairs(M.ROLES) do
    local pins, message, code = M.pin_command(check[role], role, pin)
    if not pins then return nil, message, code end
    identity[role] = pins
  end
  return identity
end

--- The pins vkit.proc re-hashes immediately before launching `role`.
function M.launch_pins(check, role, snapshot)
  local command = check[role]
  local files = {}
  for _, list in ipairs { command.dependencies, command.trusted_tool_dependencies } do
    for _, entry in ipairs(list) do
      files[#files + 1] = { path = M.resolve(entry.path, snapshot), sha256 = entry.sha256 }
    end
  end
  return { exe_sha256 = command.executable.sha256, files = files }
end

return M
