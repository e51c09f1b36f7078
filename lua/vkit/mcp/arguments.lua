--- Checks tool arguments against the tool's published inputSchema.
--
-- The schema a client reads in tools/list is the one enforced here, so the
-- two cannot drift.  Only the JSON Schema keywords vkit's tools use are
-- understood (type, properties, required, additionalProperties: false,
-- enum, minimum, maximum, minLength, items, and pattern for the patterns
-- in PATTERNS); a schema using any other validation keyword or pattern
-- raises, so a keyword is never published unchecked.
-- The keywords mean the same in draft-07 and 2020-12 (MCP's default).
local hash = require "vkit.hash"
local json = require "vkit.json"
local schema = require "vkit.schema"

local M = {}

local ANNOTATIONS = { description = true, title = true, default = true, examples = true }
local CHECKED = { type = true, properties = true, required = true, additionalProperties = true, enum = true,
                  minimum = true, maximum = true, minLength = true, items = true, pattern = true }

-- The ECMA-262 patterns vkit's schemas publish, each with its exact Lua
-- equivalent (a general regex engine is not worth its risk here).
local PATTERNS = {
  ["^[0-9a-f]{64}$"] = hash.is_digest,
  ["^([0-9a-f]{40}|[0-9a-f]{64})$"] = schema.is_commit_id,
}

local function is_type(v, t)
  local kind = json.kind(v)
  if t == "number" then return kind == "integer" or kind == "number" end
  if t == "integer" then return kind == "integer" or (kind == "number" and v == math.floor(v)) end
  return kind == t
end

local function describe(v)
  local kind = json.kind(v)
  return kind == "number" and "a non-integer number" or kind == "integer" and "an integer" or
    kind == "object" and "an object" or kind == "array" and "an array" or kind or type(v)
end

local function check(schema, v, path)
  for key in pairs(schema) do
    if not CHECKED[key] and not ANNOTATIONS[key] then error(("schema keyword %q is not enforced"):format(key), 0) end
  end
  if schema.type then
    local types = type(schema.type) == "table" and schema.type or { schema.type }
    local ok = false
    for _, t in ipairs(types) do ok = ok or is_type(v, t) end
    if not ok then
      return nil, ("%s: expected %s, got %s"):format(path, table.concat(types, " or "), describe(v))
    end
  end
  if schema.enum then
    local ok = false
    for _, allowed in ipairs(schema.enum) do ok = ok or allowed == v end
    if not ok then
      local names = {}
      for i, allowed in ipairs(schema.enum) do names[i] = json.encode(allowed) end
      return nil, ("%s: must be one of %s"):format(path, table.concat(names, ", "))
    end
  end
  local number = json.kind(v) == "integer" or json.kind(v) == "number"
  if number and schema.minimum and v < schema.minimum then
    return nil, ("%s: %s is below the minimum %s"):format(path, json.encode(v), json.encode(schema.minimum))
  end
  if number and schema.maximum and v > schema.maximum then
    return nil, ("%s: %s is above the maximum %s"):format(path, json.encode(v), json.encode(schema.maximum))
  end
  if type(v) == "string" and schema.minLength and utf8.len(v) and utf8.len(v) < schema.minLength then
    return nil, ("%s: must be at least %d character(s) long"):format(path, schema.minLength)
  end
  if schema.pattern and not PATTERNS[schema.pattern] then
    error(("schema pattern %q is not enforced"):format(schema.pattern), 0)
  end
  if type(v) == "string" and schema.pattern and not PATTERNS[schema.pattern](v) then
    return nil, ("%s: must match %s"):format(path, schema.pattern)
  end
  if json.kind(v) == "object" then
    for _, name in ipairs(schema.required or {}) do
      if v[name] == nil then return nil, ("%s: missing required property %q"):format(path, name) end
    end
    local properties = schema.properties or {}
    local names = {}
    for name in pairs(v) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local sub = properties[name]
      if sub then
        local ok, message = check(sub, v[name], path .. "." .. name)
        if not ok then return nil, message end
      elseif schema.additionalProperties == false then
        return nil, ("%s: unknown property %q"):format(path, name)
      end
    end
  end
  if json.kind(v) == "array" and schema.items then
    for i, item in ipairs(v) do
      local ok, message = check(schema.items, item, ("%s[%d]"):format(path, i - 1))
      if not ok then return nil, message end
    end
  end
  return true
end

--- true, or nil and a sentence naming the first problem ("arguments.wait:
--  expected number, got a string").
function M.check(schema, args)
  return check(schema, args, "arguments")
end

return M
