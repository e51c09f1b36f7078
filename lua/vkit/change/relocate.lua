--- A toolchain root found elsewhere on this host (issue 33 item 5).  An
-- intent written with `--toolchain-root /opt/python` pins every tool by its
-- path under /opt/python; a host that keeps the same bytes under another
-- directory says so (VKIT_TOOLCHAIN_ROOTS="/opt/python=/srv/python", read
-- when a certification is queued: the host's choice, never the request's),
-- and each pinned path beneath the declared root is read and run from the
-- host's directory instead.  The SHA-256 pins are unchanged: a file with
-- other bytes there is refused as it would be at the declared path.  Pure.
local json = require "vkit.json"

local M = {}

M.VARIABLE = "VKIT_TOOLCHAIN_ROOTS"

local function clean(path)
  return (path:gsub("/+", "/"):gsub("(.)/$", "%1"))
end

local function plain(path)
  return path:sub(1, 1) == "/" and not path:find("/%.%.?/") and not path:find("/%.%.?$") and path ~= "/"
end

--- The roots of "FROM=TO[:FROM=TO...]" (absolute paths), or nil, message.
function M.parse(text)
  local out = json.array()
  for part in tostring(text):gmatch "[^:]+" do
    local from, to = part:match "^([^=]+)=([^=]+)$"
    if not from or not plain(from) or not plain(to) then
      return nil, ("%s: %q is not FROM=TO with two absolute paths"):format(M.VARIABLE, part)
    end
    out[#out + 1] = { from = clean(from), to = clean(to) }
  end
  return out
end

--- The roots a caller passes as data ({{from, to}}), checked as parse
--  checks the variable's: the list, or nil, message.
function M.check(roots)
  if json.kind(roots) ~= "array" then return nil, "toolchain_roots must be an array of {from, to}" end
  local out = json.array()
  for i, r in ipairs(roots) do
    if type(r) ~= "table" or type(r.from) ~= "string" or type(r.to) ~= "string" or not plain(r.from)
       or not plain(r.to) then
      return nil, ("toolchain_roots[%d] is not {from, to} with two absolute paths"):format(i)
    end
    out[i] = { from = clean(r.from), to = clean(r.to) }
  end
  return out
end

local function moved(path, roots)
  for _, r in ipairs(roots) do
    if path:sub(1, #r.from + 1) == r.from .. "/" then return r.to .. path:sub(#r.from + 1), r end
  end
  return path
end

--- The chain ({tools, dependencies}, vkit.change.artifacts.toolchain's)
--  with each path beneath a root's FROM read from its TO; and the roots
--  that applied.  No roots: the chain itself.
function M.chain(chain, roots)
  if not roots or #roots == 0 then return chain, json.array() end
  local used, applied = {}, json.array()
  local function move(entry)
    local path, r = moved(entry.path, roots)
    if r and not used[r] then
      used[r] = true
      applied[#applied + 1] = { from = r.from, to = r.to }
    end
    local copy = {}
    for k, v in pairs(entry) do copy[k] = v end
    copy.path = path
    return copy
  end
  local tools = {}
  for name, tool in pairs(chain.tools) do
    tools[name] = name == "dependencies" and tool or move(tool)
  end
  local dependencies = json.array()
  for i, d in ipairs(chain.dependencies) do dependencies[i] = move(d) end
  tools.dependencies = dependencies
  return { tools = tools, dependencies = dependencies }, applied
end

return M
