--- A pretty printer for Lua values, used by the REPL and by scripts.
--
-- format(value [, {width = 72, max_items = 200, indent = "  "}]) -> string
-- Tables print as Lua constructors with sorted keys, on one line when they
-- fit in `width`, else one entry per line.  A table that contains itself
-- (directly or through its children) prints <cycle> where it recurs.
-- JSON null prints as `null`; a JSON array (vkit.json.array_mt) prints in
-- brackets, `[ 1, 2 ]`, so `[]` and `{}` are told apart; JSON objects and
-- Lua tables print in braces.  A table whose metatable has __pretty prints
-- as what __pretty(t) returns (a view such as the REPL's runs() table).
local json = require "vkit.json"
local json_null = json.null

local M = {}

local function quote(s)
  return (("%q"):format(s):gsub("\\\n", "\\n"))
end

local function key_order(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then
    if ta == "number" then return true end
    if tb == "number" then return false end
    return ta < tb
  end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

local function format_key(k)
  if type(k) == "string" and k:match "^[%a_][%w_]*$" then return k end
  if type(k) == "string" then return "[" .. quote(k) .. "]" end
  return "[" .. tostring(k) .. "]"
end

local function scalar(v)
  if v == json_null then return "null" end
  local t = type(v)
  if t == "string" then return quote(v) end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(v) end
  return "<" .. tostring(v) .. ">"
end

local function format_table(t, opts, level, ancestors)
  if ancestors[t] then return "<cycle: " .. tostring(t) .. ">" end
  local mt = getmetatable(t)
  if type(mt) == "table" and type(mt.__pretty) == "function" then return mt.__pretty(t) end
  local open, close = "{", "}"
  if mt == json.array_mt then open, close = "[", "]" end
  ancestors[t] = true
  local n = rawlen(t)
  local parts, keys = {}, {}
  for i = 1, n do
    if #parts >= opts.max_items then break end
    parts[#parts + 1] = M._format(rawget(t, i), opts, level + 1, ancestors)
  end
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, key_order)
  local total = n + #keys
  for _, k in ipairs(keys) do
    if #parts >= opts.max_items then break end
    parts[#parts + 1] = format_key(k) .. " = " .. M._format(rawget(t, k), opts, level + 1, ancestors)
  end
  if total > #parts then parts[#parts + 1] = ("... (%d more)"):format(total - #parts) end
  ancestors[t] = nil
  if #parts == 0 then return open .. close end
  local one_line = open .. " " .. table.concat(parts, ", ") .. " " .. close
  if #one_line + #opts.indent * level <= opts.width and not one_line:find "\n" then return one_line end
  local pad = opts.indent:rep(level + 1)
  return open .. "\n" .. pad .. table.concat(parts, ",\n" .. pad) .. "\n" .. opts.indent:rep(level) .. close
end

function M._format(v, opts, level, ancestors)
  if type(v) == "table" then return format_table(v, opts, level, ancestors) end
  return scalar(v)
end

function M.format(v, opts)
  opts = opts or {}
  local o = { width = opts.width or 72, max_items = opts.max_items or 200, indent = opts.indent or "  " }
  return M._format(v, o, 0, {})
end

return M
