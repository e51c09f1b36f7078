--- Strict validation of decoded JSON documents.
--
-- A schema is built from small constructors and checked against a value
-- decoded by vkit.json.  Objects are closed: an unknown field is an error,
-- as is a missing one unless wrapped in optional().  check() returns true, or
-- nil plus an error table {code, path, message} naming the first problem:
--   missing-field, unknown-field, wrong-type, out-of-range, bad-format,
--   invalid-value, duplicate-item.
--
--   local S = require "vkit.schema"
--   local request = S.object {
--     schema_version = S.const(1),
--     base = S.commit_id,
--     tags = S.optional(S.array(S.string(), { max = 8, unique = true })),
--   }
--   local ok, err = S.check(request, value)
local hash = require "vkit.hash"
local json = require "vkit.json"

local M = {}

local function fail(code, path, fmt, ...)
  return nil, { code = code, path = path == "" and "$" or path, message = fmt:format(...) }
end

local function describe(v)
  local kind = json.kind(v)
  if kind == nil then return type(v) end
  return kind
end

--- Any string, with optional {pattern, min, max (bytes), enum = {...}}.
function M.string(opts)
  opts = opts or {}
  return function(v, path)
    if type(v) ~= "string" then return fail("wrong-type", path, "expected a string, got %s", describe(v)) end
    if opts.min and #v < opts.min then return fail("out-of-range", path, "string shorter than %d bytes", opts.min) end
    if opts.max and #v > opts.max then return fail("out-of-range", path, "string longer than %d bytes", opts.max) end
    if opts.pattern and not v:match(opts.pattern) then
      return fail("bad-format", path, "%s", opts.what and ("expected " .. opts.what) or "string has the wrong format")
    end
    return true
  end
end

--- An integer (a JSON number without fraction), with optional {min, max}.
function M.integer(opts)
  opts = opts or {}
  return function(v, path)
    if math.type(v) ~= "integer" then return fail("wrong-type", path, "expected an integer, got %s", describe(v)) end
    if opts.min and v < opts.min then return fail("out-of-range", path, "%d is below %d", v, opts.min) end
    if opts.max and v > opts.max then return fail("out-of-range", path, "%d is above %d", v, opts.max) end
    return true
  end
end

M.u32 = M.integer { min = 0, max = 0xFFFFFFFF }

function M.boolean(v, path)
  if type(v) ~= "boolean" then return fail("wrong-type", path, "expected a boolean, got %s", describe(v)) end
  return true
end

--- Exactly this value (a string, integer or boolean).
function M.const(expected)
  return function(v, path)
    if v ~= expected or math.type(v) ~= math.type(expected) then
      return fail("invalid-value", path, "expected %s", json.encode(expected))
    end
    return true
  end
end

--- One of the listed strings.
function M.enum(values)
  local allowed = {}
  for _, s in ipairs(values) do allowed[s] = true end
  return function(v, path)
    if type(v) ~= "string" then return fail("wrong-type", path, "expected a string, got %s", describe(v)) end
    if not allowed[v] then return fail("invalid-value", path, "%q is not one of %s", v, table.concat(values, ", ")) end
    return true
  end
end

--- An array of `item`, with optional {min, max, unique, sorted}.
function M.array(item, opts)
  opts = opts or {}
  return function(v, path)
    if json.kind(v) ~= "array" then return fail("wrong-type", path, "expected an array, got %s", describe(v)) end
    if opts.min and #v < opts.min then return fail("out-of-range", path, "array has fewer than %d items", opts.min) end
    if opts.max and #v > opts.max then return fail("out-of-range", path, "array has more than %d items", opts.max) end
    local seen = {}
    for i, x in ipairs(v) do
      local ok, err = item(x, ("%s[%d]"):format(path, i))
      if not ok then return nil, err end
      if opts.unique then
        -- Canonical JSON refuses an integer beyond 2^53 (it raises): a
        -- hostile document gets a named refusal instead of a traceback.
        local encoded, key = pcall(json.canonical, x)
        if not encoded then
          return fail("number-out-of-range", ("%s[%d]"):format(path, i), "item holds a number canonical JSON cannot represent")
        end
        if seen[key] then return fail("duplicate-item", ("%s[%d]"):format(path, i), "item repeats item %d", seen[key]) end
        seen[key] = i
      end
    end
    return true
  end
end

--- Marks a field as optional inside object().
function M.optional(spec)
  return { optional = spec }
end

--- A closed object: every field listed is required unless optional().
function M.object(fields)
  return function(v, path)
    if json.kind(v) ~= "object" then return fail("wrong-type", path, "expected an object, got %s", describe(v)) end
    local names = {}
    for name in pairs(fields) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local spec = fields[name]
      local sub = path == "" and name or (path .. "." .. name)
      local value = v[name]
      if type(spec) == "table" then
        if value ~= nil then
          local ok, err = spec.optional(value, sub)
          if not ok then return nil, err end
        end
      elseif value == nil then
        return fail("missing-field", sub, "required field is missing")
      else
        local ok, err = spec(value, sub)
        if not ok then return nil, err end
      end
    end
    local extra = {}
    for k in pairs(v) do
      if fields[k] == nil then extra[#extra + 1] = tostring(k) end
    end
    if #extra > 0 then
      table.sort(extra)
      return fail("unknown-field", path == "" and extra[1] or (path .. "." .. extra[1]), "field is not part of the schema")
    end
    return true
  end
end

--- Any JSON object; its contents are validated elsewhere.
function M.any_object(v, path)
  if json.kind(v) ~= "object" then return fail("wrong-type", path, "expected an object, got %s", describe(v)) end
  return true
end

--- An object whose keys match key_pattern and whose values all match spec.
function M.map(value_spec, opts)
  opts = opts or {}
  return function(v, path)
    if json.kind(v) ~= "object" then return fail("wrong-type", path, "expected an object, got %s", describe(v)) end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    if opts.max and #keys > opts.max then return fail("out-of-range", path, "more than %d entries", opts.max) end
    for _, k in ipairs(keys) do
      local sub = path == "" and k or (path .. "." .. k)
      if opts.key_pattern and not k:match(opts.key_pattern) then
        return fail("bad-format", sub, "%s", opts.key_what and ("key must be " .. opts.key_what) or "key has the wrong format")
      end
      local ok, err = value_spec(v[k], sub)
      if not ok then return nil, err end
    end
    return true
  end
end

--- Either of two specs (the first error is reported when both fail).
function M.either(a, b)
  return function(v, path)
    local ok, err = a(v, path)
    if ok then return true end
    if b(v, path) then return true end
    return nil, err
  end
end

--- A spec plus an extra rule: rule(v) returns true or nil, code, message.
function M.check_with(spec, rule)
  return function(v, path)
    local ok, err = spec(v, path)
    if not ok then return nil, err end
    local good, code, message = rule(v)
    if not good then return fail(code, path, "%s", message) end
    return true
  end
end

--- A name shown to a reader (a guard's, in messages and reports): one
--  line of at most `max` bytes with no control character, so a document
--  cannot move a terminal's cursor or start a CI log command with it.
function M.one_line(max)
  return M.string { min = 1, max = max, pattern = "^[^%c]+$", what = "one line of text without control characters" }
end

M.sha256 = M.string { pattern = "^[0-9a-f]+$", min = 64, max = 64, what = "64 lowercase hex digits (SHA-256)" }

--- Is v a full Git object id: a string of 40 (SHA-1) or 64 (SHA-256)
-- lowercase hex digits (never a branch, a tag or an abbreviation)?
function M.is_commit_id(v)
  return type(v) == "string" and (#v == 40 and not v:find "[^0-9a-f]" or hash.is_digest(v))
end

--- A full Git object id (M.is_commit_id).
M.commit_id = M.check_with(M.string { what = "a full commit id" }, function(v)
  if M.is_commit_id(v) then return true end
  return nil, "bad-format", "expected a full lowercase commit id (40 or 64 hex digits), not a branch, tag or short id"
end)

--- A normalised repository-relative POSIX path (vkit.paths.check).
M.normal_path = M.check_with(M.string(), function(p)
  local ok, _, message = require("vkit.paths").check(p)
  if ok then return true end
  return nil, "bad-format", message
end)

--- Validates; returns true or nil, {code, path, message}.
function M.check(spec, value)
  return spec(value, "")
end

--- "path: message" for people.
function M.explain(err)
  return ("%s: %s"):format(err.path, err.message)
end

return M
