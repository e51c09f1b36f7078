--- rows-aggregate-v1 (SPEC §3.7): the issuer supplies the rows and a
--  recipe, data not code, from a closed set of operations; every declared
--  number is recomputed from the rows.
local json = require "vkit.json"
local number = require "vkit.vac.number"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"
local sorted_keys = require("vkit.vac.manifest").sorted_keys

local kind = json.kind
local M = { name = "rows-aggregate-v1", refs = { "artifact" }, optional_refs = {} }

M.OPS = { "count", "sum", "mean", "rate_true", "min", "max" }
local is_op = {}
for _, op in ipairs(M.OPS) do is_op[op] = true end

local function finish(v, places)
  v = v + 0.0
  if places == nil then return v end
  return number.round(v, places)
end

-- Integer sums stay exact while they fit; past 64 bits they continue in
-- floating point (Python would keep an exact big integer).
local function add(a, b)
  if math.type(a) == "integer" and math.type(b) == "integer" then
    local r = a + b
    if (b > 0 and r < a) or (b < 0 and r > a) then return (a + 0.0) + b end
    return r
  end
  return a + b
end

--- The recipe's value over rows, or nil when a value has the wrong type.
function M.aggregate(rows, op, field, places)
  local n = #rows
  if op == "count" then return n + 0.0 end
  if op == "rate_true" then
    local t = 0
    for i = 1, n do
      local v = rows[i][field]
      if type(v) ~= "boolean" then return nil end
      if v then t = t + 1 end
    end
    return finish(t / n, places)
  end
  local sum, lo, hi = 0, nil, nil
  for i = 1, n do
    local v = rows[i][field]
    if not math.type(v) then return nil end
    sum = add(sum, v)
    if lo == nil or v < lo then lo = v end
    if hi == nil or v > hi then hi = v end
  end
  if op == "sum" then return finish(sum, places) end
  if op == "mean" then return finish(sum / n, places) end
  if op == "min" then return finish(lo, places) end
  if op == "max" then return finish(hi, places) end
  return nil
end

function M.recompute(ctx)
  local check, fails = ctx.check, ctx.failures
  local art = check.artifact
  local data = ctx.source:json(art, "object or array")
  if not data then return nil end
  local rows_key = check.rows_key
  local rows
  if kind(data) == "array" then
    rows = data
  elseif text.nonblank(rows_key) then
    rows = data[rows_key]
  end
  if not (kind(rows) == "array" and value.all_objects(rows)) then
    local where = text.nonblank(rows_key) and value.show(rows_key) or "the document"
    fails:addf("artifact-unparsable", "%s: no array of row objects at %s", art, where)
    return nil
  end
  if #rows == 0 then
    fails:addf("artifact-unparsable", "%s: rows[] is empty; no aggregate can be recomputed from nothing", art)
    return nil
  end
  local recipe = check.recompute
  if kind(recipe) ~= "object" or next(recipe) == nil then
    fails:add("schema-violation", "results.checks[rows-aggregate-v1].recompute: a recipe naming how each declared "
      .. "number is recomputed from the rows is required")
    return nil
  end
  local recomputed = {}
  for _, name in ipairs(sorted_keys(recipe)) do
    local spec = recipe[name]
    if kind(spec) ~= "object" then
      fails:addf("schema-violation", "recompute.%s: object required", name)
      return nil
    end
    local op = spec.op
    if not (type(op) == "string" and is_op[op]) then
      fails:addf("schema-violation", "recompute.%s.op: %s is not one of %s", name, value.show(op),
        table.concat(M.OPS, "/"))
      return nil
    end
    local field = spec.field
    if op ~= "count" and not text.nonblank(field) then
      fails:addf("schema-violation", "recompute.%s.field: required for op '%s'", name, op)
      return nil
    end
    local places = spec.round
    if places == json.null then places = nil end
    if places ~= nil and math.type(places) ~= "integer" then
      fails:addf("schema-violation", "recompute.%s.round: integer required", name)
      return nil
    end
    if op ~= "count" then
      for i, r in ipairs(rows) do
        if r[field] == nil then
          fails:addf("raw-aggregate-mismatch", "%s: recompute.%s reads '%s', absent from row %d", art, name, field, i - 1)
          return nil
        end
      end
    end
    local got = M.aggregate(rows, op, field, places)
    if got == nil then
      fails:addf("raw-aggregate-mismatch", "%s: recompute.%s: '%s' is not the type op '%s' requires across every row",
        art, name, field, op)
      return nil
    end
    recomputed[name] = got
  end
  local exp = check.expect
  if kind(exp) ~= "object" or next(exp) == nil then
    fails:add("schema-violation", "results.checks[rows-aggregate-v1].expect: declared numbers required")
    return nil
  end
  for _, k in ipairs(sorted_keys(exp)) do
    if recomputed[k] == nil then
      fails:addf("summary-mismatch", "%s: declared but the recipe does not recompute it", k)
    elseif not value.eq(exp[k], recomputed[k]) then
      fails:addf("summary-mismatch", "%s: declared %s, recomputed %s", k, value.show(exp[k]), value.show(recomputed[k]))
    end
  end
  return expect.pool(recomputed)
end

return M
