--- Small table helpers shared across the library.
local json = require "vkit.json"

local M = {}

--- The keys of a table, sorted: the order every listing, report and
--  graph that must read the same on every run uses.
function M.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

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

--- Whether two JSON values are the same value: the same kind, numbers
--  equal as numbers (3 and 3.0 alike, as in canonical JSON), arrays
--  element by element, objects with the same keys and equal members.
--  Unlike comparing canonical forms it never raises, whatever the values
--  hold (an integer beyond 2^53, a non-JSON Lua value): hostile data gets a
--  plain false.
function M.json_equal(a, b, depth)
  depth = depth or 0
  if depth > 512 then return false end
  local ka, kb = json.kind(a), json.kind(b)
  if ka == nil or kb == nil then return false end
  local numeric = { integer = true, number = true }
  if numeric[ka] and numeric[kb] then return a == b end
  if ka ~= kb then return false end
  if ka == "array" then
    if #a ~= #b then return false end
    for i = 1, #a do
      if not M.json_equal(a[i], b[i], depth + 1) then return false end
    end
    return true
  end
  if ka == "object" then
    for k, v in pairs(a) do
      if type(k) ~= "string" or not M.json_equal(v, b[k], depth + 1) then return false end
    end
    for k in pairs(b) do
      if a[k] == nil then return false end
    end
    return true
  end
  return a == b
end

return M
