--- Comparing decoded JSON values the way the VAC rules compare them.
--
-- Numbers compare by exact value (3 == 3.0, as in the reference); absent
-- and null are the same ("a missing key reads as null"); arrays compare
-- in order, objects key for key.  One deliberate difference from Python:
-- a boolean never equals a number (Python's True == 1 is not followed).
local json = require "vkit.json"
local number = require "vkit.vac.number"

local null, kind = json.null, json.kind
-- the globals of the hot loops as upvalues: no _ENV lookup per call
local type, ipairs, pairs, mtype = type, ipairs, pairs, math.type
local M = {}

function M.is_number(v) return mtype(v) ~= nil end

function M.is_object(v) return kind(v) == "object" end

function M.is_array(v) return kind(v) == "array" end

--- v when it is an object, else nil (for reading optional structure).
function M.object(v)
  if kind(v) == "object" then return v end
  return nil
end

--- t[k] when t is an object, else nil.
function M.get(t, k)
  if kind(t) ~= "object" then return nil end
  local v = t[k]
  if v == null then return nil end
  return v
end

--- Is every element of array a an object?
function M.all_objects(a)
  for i = 1, #a do
    if kind(a[i]) ~= "object" then return false end
  end
  return true
end

local function eq(a, b)
  if a == nil then a = null end
  if b == nil then b = null end
  if a == b then return true end
  local ta, tb = type(a), type(b)
  if ta ~= "table" or tb ~= "table" then return false end
  local ka, kb = kind(a), kind(b)
  if ka ~= kb then return false end
  -- members that are the same Lua value are equal without a call (the
  -- first test eq makes): strings, most numbers, shared tables
  if ka == "array" then
    if #a ~= #b then return false end
    for i = 1, #a do
      local x, y = a[i], b[i]
      if x ~= y and not eq(x, y) then return false end
    end
    return true
  end
  if ka == "object" then
    for k, v in pairs(a) do
      local w = b[k]
      if w == nil or (v ~= w and not eq(v, w)) then return false end
    end
    for k in pairs(b) do
      if a[k] == nil then return false end
    end
    return true
  end
  return false
end
M.eq = eq

--- A table key that identifies v up to the equality of Python's sets and
--  dict keys (1, 1.0 and True are one key there), for scalar v; nil for
--  arrays and objects, which Python cannot hash.  A number is its own key
--  (an integral float its integer, as Lua's tables key it anyway), so no
--  number is ever formatted; a string is itself (no number is a string);
--  null and absent are NULL_KEY; a NaN, equal to nothing, a new table.
local NULL_KEY = setmetatable({}, { __name = "null key" })

function M.key(v)
  if v == nil or v == null then return NULL_KEY end
  local t = mtype(v)
  if t == "integer" then return v end
  if t == "float" then
    if v ~= v then return {} end
    return math.tointeger(v) or v
  end
  if v == true then return 1 end
  if v == false then return 0 end
  if type(v) == "string" then return v end
  return nil
end

--- A canonical key of a value (bytes, for comparing, never shown) that
--  tells apart exactly what Python's json.dumps(sort_keys=True) tells
--  apart: 1 from 1.0 and from true, 0.0 from -0.0, and nothing equal.
--  Every token is tagged and every string length-prefixed, so no two
--  values share a key; numbers are their bytes, not formatted text
--  (vkit.json's exact_key, in C: the rows of a bundle are keyed one by one).
M.canonical = json.exact_key

--- Short, Python-like rendering of a value for failure details.
function M.show(v)
  if v == nil or v == null then return "None" end
  if v == true then return "True" end
  if v == false then return "False" end
  if mtype(v) then return number.str(v) end
  if type(v) == "string" then return "'" .. v .. "'" end
  local k = kind(v)
  if k == "array" or k == "object" then
    local text = json.encode(v)
    if #text > 200 then text = text:sub(1, 200) .. "..." end
    return text
  end
  return tostring(v)
end

--- Like show, but strings bare (Python's str() rather than repr()).
function M.str(v)
  if type(v) == "string" then return v end
  return M.show(v)
end

M.null = null
return M
