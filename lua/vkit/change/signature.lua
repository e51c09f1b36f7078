--- Signatures of the multi-parameter profile (issue 34, in progress).  Pure.
--
-- A signature is 1 to 4 parameters, each `bool` or a fixed-width integer
-- (u8 u16 u32 u64 i8 i16 i32 i64), and one result of such a type or a
-- tuple of 2 to 4 of them (policies/signatures.lua).  The seed's
-- u32 -> u32 profile is the one signature is_seed_profile() names; nothing
-- here changes how the seed works.
--
-- Values in Lua.  A bool is a Lua boolean; every integer type's value is a
-- Lua integer (never a float: 1.0 is not a value of any type).  u64 values
-- above 2^63-1 do not fit a signed Lua integer, so a u64 value is the Lua
-- integer with the same 64 bits: 2^64-1 is -1, 2^63 is math.mininteger.
-- Its order is unsigned (math.ult), its text is unsigned decimal; every
-- Lua integer is a u64 value.  ord() maps every type's values to Lua
-- integers whose signed order is the type's order (u64: the sign bit
-- flipped; bool: false 0, true 1), so vkit.change.domain handles every
-- type with one arithmetic.
--
-- Errors are `nil, message, code`: the code is a stable name (specs and
-- later callers test it), the message says what and where.
local policy = require("vkit.policy").signatures

local M = {}

local MININT, MAXINT = math.mininteger, math.maxinteger
-- 2^64-1 divided by 10, and the remainder: the largest magnitude that can
-- take one more decimal digit without passing 64 bits.
local DIV10, REM10 = 1844674407370955161, 5

local function fail(code, fmt, ...)
  return nil, fmt:format(...), code
end

-- A canonical decimal integer as (negative, 64-bit magnitude), or nil when
-- it is not canonical ("0", or an optional "-" and no leading zero) or its
-- magnitude does not fit 64 bits.
local function magnitude(text)
  if type(text) ~= "string" then return nil end
  local neg, digits = text:match "^(%-?)(%d+)$"
  if not digits or (#digits > 1 and digits:sub(1, 1) == "0") or (neg == "-" and digits == "0") then return nil end
  local m = 0
  for i = 1, #digits do
    local d = digits:byte(i) - 48
    if math.ult(DIV10, m) or (m == DIV10 and d > REM10) then return nil end
    m = m * 10 + d
  end
  return neg == "-", m
end

-- The integer a canonical decimal stands for in `type_name`'s Lua
-- representation, without the type's range (u64 reads the magnitude's
-- bits; the others as a signed 64-bit integer), or nil.
local function raw_integer(type_name, text)
  local neg, m = magnitude(text)
  if neg == nil then return nil end
  if type_name == "u64" then
    if neg then return nil end
    return m
  end
  if neg then
    if math.ult(MININT, m) then return nil end
    return -m
  end
  if math.ult(MAXINT, m) then return nil end
  return m
end

-- The types, with their range as Lua values and as ords, from the policy.
local TYPES = {}
for name, t in pairs(policy.types) do
  local info = { name = name, bytes = t.bytes }
  if name == "bool" then
    info.bool = true
    info.lo_ord, info.hi_ord = 0, 1
  else
    info.min = assert(raw_integer(name, t.min), "policies/signatures.lua: bad min for " .. name)
    info.max = assert(raw_integer(name, t.max), "policies/signatures.lua: bad max for " .. name)
    info.unsigned = name:sub(1, 1) == "u"
    info.lo_ord = name == "u64" and info.min ~ MININT or info.min
    info.hi_ord = name == "u64" and info.max ~ MININT or info.max
  end
  TYPES[name] = info
end

--- The type named `name` ({name, bytes, bool, unsigned, min, max, lo_ord,
--  hi_ord}), or nil.
function M.type(name)
  return TYPES[name]
end

--- The type names, sorted.
function M.type_names()
  local out = {}
  for name in pairs(TYPES) do out[#out + 1] = name end
  table.sort(out)
  return out
end

--- Whether `v` is a value of type `type_name`: true, or nil, message, code
--  (`range`: a value of the wrong kind or outside the type; nothing is
--  coerced, so a float, a bool where an integer is declared and an integer
--  where a bool is declared are all outside).
function M.check(type_name, v)
  local t = TYPES[type_name]
  if not t then return fail("unknown-type", "unknown type %s", tostring(type_name)) end
  if t.bool then
    if type(v) == "boolean" then return true end
    return fail("range", "%s is not a bool", M.shown(v))
  end
  if math.type(v) ~= "integer" then return fail("range", "%s is not an integer (%s)", M.shown(v), type_name) end
  if type_name == "u64" or (v >= t.min and v <= t.max) then return true end
  return fail("range", "%d is outside %s", v, type_name)
end

--- A short description of any Lua value, for messages.
function M.shown(v)
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) == "number" then return ("%s (a float)"):format(tostring(v)) end
  if type(v) == "string" then return ("%q"):format(v) end
  return tostring(v)
end

--- The canonical text of a value of `type_name` (checked first): decimal,
--  "-" for negatives, no leading zero; u64 unsigned; `true` / `false`.
function M.text(type_name, v)
  assert(M.check(type_name, v))
  if type_name == "bool" then return v and "true" or "false" end
  if type_name == "u64" then return ("%u"):format(v) end
  return ("%d"):format(v)
end

--- The value of `type_name` a canonical text stands for, or nil, message,
--  code (`syntax`: not canonical text of the type's kind; `range`: a
--  number outside the type).  Text is canonical: "007", "+7", "-0" and
--  " 7" are refused, so every value has exactly one text.
function M.parse_value(type_name, text)
  local t = TYPES[type_name]
  if not t then return fail("unknown-type", "unknown type %s", tostring(type_name)) end
  if type(text) ~= "string" then return fail("syntax", "%s is not text", M.shown(text)) end
  if t.bool then
    if text == "true" then return true elseif text == "false" then return false end
    return fail("syntax", "%q is not true or false", text)
  end
  if text ~= "0" and not text:match "^%-?[1-9]%d*$" then
    return fail("syntax", "%q is not a canonical decimal integer", text)
  end
  local v = raw_integer(type_name, text)
  if v == nil or (type_name ~= "u64" and (v < t.min or v > t.max)) then
    return fail("range", "%s is outside %s", text, type_name)
  end
  return v
end

--- The ord of a value: a Lua integer whose signed order is the type's order.
function M.ord(type_name, v)
  if type_name == "bool" then return v and 1 or 0 end
  if type_name == "u64" then return v ~ MININT end
  return v
end

--- The value of an ord (the inverse of ord()).
function M.from_ord(type_name, o)
  if type_name == "bool" then return o == 1 end
  if type_name == "u64" then return o ~ MININT end
  return o
end

-- An identifier: what a parameter name may be (the text syntax of
-- vkit.change.domain names parameters; drivers pass arguments by position).
local function identifier(s)
  return type(s) == "string" and s:match "^[%a_][%w_]*$" ~= nil and #s <= 64
end

local function only_fields(t, allowed, what)
  for k in pairs(t) do
    if not allowed[k] then return fail("unknown-field", "%s: unknown field %s", what, tostring(k)) end
  end
  return true
end

--- Parses a signature description
--  `{params = {{name = "x", type = "i32"}, ...}, returns = "u32" | {"bool", "u32"}}`.
--  Returns `{params = {{name, type}, ...}, returns = {type, ...}, tuple = bool}`
--  (returns always a list; tuple says whether the result is a tuple), or
--  nil, message, code: `not-a-table`, `unknown-field`, `no-params`,
--  `too-many-params`, `param-name`, `duplicate-param`, `unknown-type`,
--  `no-returns`, `tuple-length`.
function M.parse(desc)
  if type(desc) ~= "table" then return fail("not-a-table", "a signature is a table") end
  local ok, msg, code = only_fields(desc, { params = true, returns = true }, "signature")
  if not ok then return nil, msg, code end
  local params = desc.params
  if type(params) ~= "table" or #params == 0 then return fail("no-params", "a signature has 1 to %d parameters", policy.max_params) end
  local count = 0
  for _ in pairs(params) do count = count + 1 end
  if count ~= #params then return fail("no-params", "params must be a list") end
  if #params > policy.max_params then
    return fail("too-many-params", "%d parameters: at most %d", #params, policy.max_params)
  end
  local sig, seen = { params = {}, returns = {} }, {}
  for i, p in ipairs(params) do
    if type(p) ~= "table" then return fail("param-name", "parameter %d is not a {name, type} table", i) end
    ok, msg, code = only_fields(p, { name = true, type = true }, ("parameter %d"):format(i))
    if not ok then return nil, msg, code end
    if not identifier(p.name) then return fail("param-name", "parameter %d: %s is not an identifier", i, M.shown(p.name)) end
    if seen[p.name] then return fail("duplicate-param", "parameter %d: %s named twice", i, p.name) end
    seen[p.name] = true
    if not TYPES[p.type] then return fail("unknown-type", "parameter %s: unknown type %s", p.name, M.shown(p.type)) end
    sig.params[i] = { name = p.name, type = p.type }
  end
  local returns = desc.returns
  if type(returns) == "string" then
    if not TYPES[returns] then return fail("unknown-type", "returns: unknown type %s", M.shown(returns)) end
    sig.returns[1], sig.tuple = returns, false
  elseif type(returns) == "table" then
    local n = 0
    for _ in pairs(returns) do n = n + 1 end
    if n ~= #returns or #returns < policy.min_components or #returns > policy.max_components then
      return fail("tuple-length", "a tuple result has %d to %d components", policy.min_components, policy.max_components)
    end
    for i, r in ipairs(returns) do
      if not TYPES[r] then return fail("unknown-type", "returns component %d: unknown type %s", i, M.shown(r)) end
      sig.returns[i] = r
    end
    sig.tuple = true
  else
    return fail("no-returns", "returns is a type name or a list of %d to %d", policy.min_components, policy.max_components)
  end
  return sig
end

--- Whether `sig` is the seed's profile: exactly one u32 parameter and a
--  single u32 result (its name does not matter).
function M.is_seed_profile(sig)
  return #sig.params == 1 and sig.params[1].type == "u32" and not sig.tuple and #sig.returns == 1
    and sig.returns[1] == "u32"
end

--- The parameter types of `sig`, in order.
function M.param_types(sig)
  local out = {}
  for i, p in ipairs(sig.params) do out[i] = p.type end
  return out
end

--- The canonical text of a list of values of `types`: their texts joined
--  by "," with no space ("3,-1,true"); one value is its own text.
function M.tuple_text(types, values)
  local parts = {}
  for i, t in ipairs(types) do parts[i] = M.text(t, values[i]) end
  return table.concat(parts, ",")
end

--- The values a canonical tuple text stands for, or nil, message, code
--  (`arity`: not exactly #types components; else parse_value()'s).
function M.parse_tuple(types, text)
  if type(text) ~= "string" then return fail("syntax", "%s is not text", M.shown(text)) end
  local parts = {}
  for part in (text .. ","):gmatch "([^,]*)," do parts[#parts + 1] = part end
  if #parts ~= #types then return fail("arity", "%q has %d components, not %d", text, #parts, #types) end
  local out = {}
  for i, t in ipairs(types) do
    local v, msg, code = M.parse_value(t, parts[i])
    if v == nil then return nil, ("component %d: %s"):format(i, msg), code end
    out[i] = v
  end
  return out
end

--- Checks a result of `sig`: a value (a single result) or a list of exactly
--  #returns values (a tuple).  true, or nil, message, `range`.
function M.check_result(sig, r)
  if not sig.tuple then return M.check(sig.returns[1], r) end
  if type(r) ~= "table" then return fail("range", "%s is not a tuple", M.shown(r)) end
  local n = 0
  for _ in pairs(r) do n = n + 1 end
  if n ~= #r or #r ~= #sig.returns then return fail("range", "a tuple of %d components, not %d", n, #sig.returns) end
  for i, t in ipairs(sig.returns) do
    local ok, msg = M.check(t, r[i])
    if not ok then return fail("range", "component %d: %s", i, msg) end
  end
  return true
end

--- The canonical text of a (checked) result of `sig`.
function M.result_text(sig, r)
  if sig.tuple then return M.tuple_text(sig.returns, r) end
  return M.text(sig.returns[1], r)
end

--- The result of `sig` a canonical text stands for (a value, or a list for
--  a tuple), or nil, message, code.
function M.parse_result(sig, text)
  local values, msg, code = M.parse_tuple(sig.returns, text)
  if not values then return nil, msg, code end
  if sig.tuple then return values end
  return values[1]
end

--- A readable rendering: "(x: i32, flag: bool) -> (bool, u32)".
function M.describe(sig)
  local params = {}
  for i, p in ipairs(sig.params) do params[i] = p.name .. ": " .. p.type end
  local returns = sig.tuple and "(" .. table.concat(sig.returns, ", ") .. ")" or sig.returns[1]
  return "(" .. table.concat(params, ", ") .. ") -> " .. returns
end

return M
