--- Small table helpers shared across the library.
local json = require "vkit.json"

local M = {}

--- A plain deep copy, read through pairs (so frozen policy views copy
--  too).  JSON array/object marks are kept; other metatables are not.
function M.copy(value)
  if type(value) ~= "table" then return value end
  local out = {}
  for k, v in pairs(value) do out[k] = M.copy(v) end
  local mt = getmetatable(value)
  if mt == json.array_mt or mt == json.object_mt then setmetatable(out, mt) end
  return out
end

return M
