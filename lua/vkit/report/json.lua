--- The JSON view of a run's report: the model itself, with sorted keys.
local json = require "vkit.json"

local M = {}

-- The model's lists as JSON arrays (an empty Lua table would be ambiguous).
local LISTS = { subject = true, methods = true, findings = true, fields = true, established = true,
                not_established = true, artifacts = true, checked = true, violating = true, notes = true,
                seen_by = true, aggregated = true }  -- the grid's (vkit.report.grid): none for two parameters

local function marked(v, key)
  if type(v) ~= "table" or getmetatable(v) then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = marked(x, k) end
  if LISTS[key] then return json.array(out) end
  return next(out) == nil and json.object() or out
end

function M.render(model)
  return json.encode(marked(model), { indent = 2 }) .. "\n"
end

return M
