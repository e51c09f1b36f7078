--- Small table helpers shared across the library.
local M = {}

--- A plain deep copy, read through pairs (so frozen policy views copy too).
function M.copy(value)
  if type(value) ~= "table" then return value end
  local out = {}
  for k, v in pairs(value) do out[k] = M.copy(v) end
  return out
end

return M
