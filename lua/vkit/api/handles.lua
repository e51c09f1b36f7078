--- The internal object behind each public handle (a `vkit.store` Store):
-- kept here, in a table keyed weakly by the handle, so a script holding
-- the handle cannot reach the internals through it.  Not part of the API.
local M = {}

local behind = setmetatable({}, { __mode = "k" })

function M.wrap(handle, internal)
  behind[handle] = internal
  return handle
end

--- The internal object of a public handle; raises for anything else.
function M.internal(handle)
  local internal = behind[handle]
  if internal == nil then error("not a handle opened by the vkit API (use vkit.store.open)", 3) end
  return internal
end

return M
