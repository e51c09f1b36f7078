--- Input domains, boxes and standing requirements of the multi-parameter
-- profile (issue 34, in progress).  Pure.
--
-- A set is the values of one type a parameter (or a result component) may
-- take: {type = name, ranges = {{lo, hi}, ...}}, its ranges in ord space
-- (vkit.change.signature.ord: signed order is the type's order, u64
-- included), sorted, merged and non-adjacent, so two spellings of one set
-- are one table.  The accepted inputs are a product of one set per
-- parameter, enumerated in lexicographic order (the first parameter most
-- significant, the last fastest): at() and index() map between a position
-- 0 .. size-1 and a tuple (mixed radix), so inputs can be run in order or
-- sampled.  A product above policies/signatures.lua exhaustive_inputs is
-- refused: every accepted input is run.
--
-- Text syntax (docs/change.md, "Multi-parameter profile (in progress)"):
--
--   set          *  |  item ( "|" item )*        item: V  or  LO..HI
--   domain       name=set ( "," name=set )*      every parameter once
--   box          name=set ( "," name=set )*  or  *   an omitted parameter is its whole type
--   outputs      set ( ";" set )*                one set per result component
--   requirement  box -> outputs                  (the observation universe is outputs alone)
--
-- V is canonical value text (vkit.change.signature.parse_value: decimal,
-- true, false); spaces around tokens are ignored.  "," only separates
-- parameters and ";" only result components, so no text has two readings.
--
-- Errors are `nil, message, code` as in vkit.change.signature.
local signature = require "vkit.change.signature"
local policy = require("vkit.policy").signatures

local M = {}

local MAXINT = math.maxinteger

local function fail(code, fmt, ...)
  return nil, fmt:format(...), code
end

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- Sorted, merged, non-adjacent ranges (ord space).
local normalize = require("vkit.change.ranges").merge

--- The set of every value of `type_name`.
function M.whole(type_name)
  local t = assert(signature.type(type_name), "unknown type")
  return { type = type_name, ranges = { { t.lo_ord, t.hi_ord } } }
end

--- A set from a list of values and `{from = a, to = b}` ranges (inclusive),
--  each checked against the type, nothing coerced; or nil, message, code
--  (`unknown-type`, `empty-set`, `item`, `range`, `empty-range`).
function M.set(type_name, items)
  if not signature.type(type_name) then return fail("unknown-type", "unknown type %s", tostring(type_name)) end
  if type(items) ~= "table" or #items == 0 then return fail("empty-set", "a set has at least one item") end
  local spans = {}
  for i, item in ipairs(items) do
    local lo, hi
    if type(item) == "table" then
      lo, hi = item.from, item.to
      for k in pairs(item) do
        if k ~= "from" and k ~= "to" then return fail("item", "item %d: unknown field %s", i, tostring(k)) end
      end
    else
      lo, hi = item, item
    end
    for _, v in ipairs { lo, hi } do
      local ok, msg = signature.check(type_name, v)
      if not ok then return fail("range", "item %d: %s", i, msg) end
    end
    local a, b = signature.ord(type_name, lo), signature.ord(type_name, hi)
    if a > b then
      return fail("empty-range", "item %d: %s..%s is empty", i, signature.text(type_name, lo), signature.text(type_name, hi))
    end
    spans[#spans + 1] = { a, b }
  end
  return { type = type_name, ranges = normalize(spans) }
end

--- Parses a set's text (`*`, or items `V` / `LO..HI` joined by `|`) for
--  `type_name`; nil, message, code (`syntax`, `range`, `empty-range`).
function M.parse_set(type_name, text)
  if not signature.type(type_name) then return fail("unknown-type", "unknown type %s", tostring(type_name)) end
  if type(text) ~= "string" then return fail("syntax", "a set's text is a string") end
  text = trim(text)
  if text == "*" then return M.whole(type_name) end
  if text == "" then return fail("syntax", "an empty set") end
  local items = {}
  for part in (text .. "|"):gmatch "([^|]*)|" do
    part = trim(part)
    local lo_text, hi_text = part:match "^(.-)%.%.(.*)$"
    local item
    for _, t in ipairs(lo_text and { trim(lo_text), trim(hi_text) } or { part }) do
      local v, msg, code = signature.parse_value(type_name, t)
      if v == nil then return fail(code, "%q: %s", part, msg) end
      if item == nil then item = { from = v, to = v } else item.to = v end
    end
    items[#items + 1] = item
  end
  return M.set(type_name, items)
end

--- Whether `v` (a value of the set's type) is in `set`.
function M.set_contains(set, v)
  if not signature.check(set.type, v) then return false end
  local o = signature.ord(set.type, v)
  for _, r in ipairs(set.ranges) do
    if o >= r[1] and o <= r[2] then return true end
  end
  return false
end

--- The number of values in `set`, or nil, message, `too-large` when it is
--  above `cap` (computed without overflow: a whole u64 has 2^64 values).
function M.set_size(set, cap)
  local total = 0
  for _, r in ipairs(set.ranges) do
    local span = r[2] - r[1]            -- wraps for the widest spans: read as unsigned
    if math.ult(cap - 1, span) or span + 1 > cap - total then
      return fail("too-large", "more than %d values", cap)
    end
    total = total + span + 1
  end
  return total
end

--- The canonical text of a set: `*` for a whole type, else its ranges as
--  `V` or `LO..HI` joined by `|`, in the type's order.
function M.set_text(set)
  local t = signature.type(set.type)
  if #set.ranges == 1 and set.ranges[1][1] == t.lo_ord and set.ranges[1][2] == t.hi_ord then return "*" end
  local parts = {}
  for i, r in ipairs(set.ranges) do
    local lo = signature.text(set.type, signature.from_ord(set.type, r[1]))
    parts[i] = r[1] == r[2] and lo or lo .. ".." .. signature.text(set.type, signature.from_ord(set.type, r[2]))
  end
  return table.concat(parts, "|")
end

-- `name=set` parts of a domain or box text: {position = set}, or nil, message, code.
local function parse_params(sig, text, what)
  local position = {}
  for i, p in ipairs(sig.params) do position[p.name] = i end
  local sets = {}
  for part in (text .. ","):gmatch "([^,]*)," do
    local name, set_text = part:match "^%s*([%a_][%w_]*)%s*=(.*)$"
    if not name then return fail("syntax", "%s: %q is not name=set", what, trim(part)) end
    local i = position[name]
    if not i then return fail("unknown-param", "%s: no parameter %s", what, name) end
    if sets[i] then return fail("duplicate-param", "%s: %s given twice", what, name) end
    local set, msg, code = M.parse_set(sig.params[i].type, set_text)
    if not set then return fail(code, "%s: %s: %s", what, name, msg) end
    sets[i] = set
  end
  return sets
end

--- The accepted inputs: the product of one set per parameter (`sets` by
--  position or by name), or nil, message, code (`missing-param`,
--  `unknown-param`, `type-mismatch`, `too-large`: above `cap`, by default
--  policies/signatures.lua exhaustive_inputs).  The domain is
--  {sig, sets, counts, size}.
function M.product(sig, sets, cap)
  cap = cap or policy.exhaustive_inputs
  local by_position = {}
  for k, set in pairs(sets) do
    local i = k
    if type(k) == "string" then
      for j, p in ipairs(sig.params) do if p.name == k then i = j end end
    end
    if math.type(i) ~= "integer" or not sig.params[i] then return fail("unknown-param", "no parameter %s", tostring(k)) end
    if by_position[i] then return fail("duplicate-param", "parameter %s given twice", sig.params[i].name) end
    by_position[i] = set
  end
  local d = { sig = sig, sets = {}, counts = {}, offsets = {}, size = 1 }
  for i, p in ipairs(sig.params) do
    local set = by_position[i]
    if not set then return fail("missing-param", "no set for parameter %s", p.name) end
    if set.type ~= p.type then return fail("type-mismatch", "parameter %s is %s, its set %s", p.name, p.type, set.type) end
    local n = M.set_size(set, cap)
    if not n or n > cap // d.size then
      return fail("too-large", "the accepted inputs are more than %d (at parameter %s)", cap, p.name)
    end
    d.size = d.size * n
    d.sets[i], d.counts[i] = set, n
    -- offsets[i][k]: how many values of the set come before its k-th range
    local offsets, before = {}, 0
    for k, r in ipairs(set.ranges) do
      offsets[k] = before
      before = before + (r[2] - r[1] + 1)
    end
    d.offsets[i] = offsets
  end
  return d
end

--- Parses a domain's text (`name=set,...`, every parameter exactly once).
function M.parse(sig, text)
  local sets, msg, code = parse_params(sig, text, "domain")
  if not sets then return nil, msg, code end
  return M.product(sig, sets)
end

-- The last range whose offset is <= k (binary search).
local function range_at(offsets, k)
  local lo, hi = 1, #offsets
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if offsets[mid] <= k then lo = mid else hi = mid - 1 end
  end
  return lo
end

--- The input at `index` (0 .. size-1): a list of one value per parameter.
function M.at(d, index)
  assert(math.type(index) == "integer" and index >= 0 and index < d.size, "index outside the domain")
  local tuple = {}
  for i = #d.sets, 1, -1 do
    local k = index % d.counts[i]
    index = index // d.counts[i]
    local r = range_at(d.offsets[i], k)
    local set = d.sets[i]
    tuple[i] = signature.from_ord(set.type, set.ranges[r][1] + (k - d.offsets[i][r]))
  end
  return tuple
end

--- The index of an input (a list of one value per parameter), or nil when
--  it is not an accepted input.
function M.index(d, tuple)
  local index = 0
  for i, set in ipairs(d.sets) do
    local v = tuple[i]
    if not signature.check(set.type, v) then return nil end
    local o = signature.ord(set.type, v)
    local k
    for r, range in ipairs(set.ranges) do
      if o >= range[1] and o <= range[2] then k = d.offsets[i][r] + (o - range[1]) break end
    end
    if not k then return nil end
    index = index * d.counts[i] + k
  end
  return index
end

--- The canonical text of a domain: `name=set` for every parameter.
function M.text(d)
  local parts = {}
  for i, p in ipairs(d.sig.params) do parts[i] = p.name .. "=" .. M.set_text(d.sets[i]) end
  return table.concat(parts, ",")
end

--- Parses a box: `name=set,...` where an omitted parameter is its whole
--  type, or `*` for every input.  A box is a list of one set per parameter.
function M.parse_box(sig, text)
  local sets, msg, code
  if trim(text) == "*" then sets = {} else
    sets, msg, code = parse_params(sig, text, "box")
    if not sets then return nil, msg, code end
  end
  for i, p in ipairs(sig.params) do sets[i] = sets[i] or M.whole(p.type) end
  return sets
end

--- Whether an input is in a box.
function M.box_contains(box, tuple)
  for i, set in ipairs(box) do
    if not M.set_contains(set, tuple[i]) then return false end
  end
  return true
end

--- The canonical text of a box: its parameters that are not whole types,
--  or `*`.
function M.box_text(sig, box)
  local parts = {}
  for i, p in ipairs(sig.params) do
    local text = M.set_text(box[i])
    if text ~= "*" then parts[#parts + 1] = p.name .. "=" .. text end
  end
  return #parts == 0 and "*" or table.concat(parts, ",")
end

--- Parses one set per result component, joined by `;` (`true; 0..5`, `*`
--  for any value): a requirement's allowed outputs, and the observation
--  universe (every output the function may legally return).  A list of
--  sets, or nil, message, code (`arity`: not one set per component; else
--  parse_set()'s).
function M.parse_outputs(sig, text)
  if type(text) ~= "string" then return fail("syntax", "output sets are text") end
  local parts = {}
  for part in (text .. ";"):gmatch "([^;]*);" do parts[#parts + 1] = part end
  if #parts ~= #sig.returns then
    return fail("arity", "%d output sets for %d result components", #parts, #sig.returns)
  end
  local outputs = {}
  for i, part in ipairs(parts) do
    local set, msg, code = M.parse_set(sig.returns[i], part)
    if not set then return fail(code, "output %d: %s", i, msg) end
    outputs[i] = set
  end
  return outputs
end

--- The canonical text of one set per result component.
function M.outputs_text(outputs)
  local parts = {}
  for i, set in ipairs(outputs) do parts[i] = M.set_text(set) end
  return table.concat(parts, "; ")
end

--- Parses a standing requirement (or a guard) `box -> set; set; ...`: on
--  every input in the box, each result component is in its set (`*`: any).
--  Returns {box, outputs = {set per component}}, or nil, message, code
--  (`syntax`: no single `->`; `arity`: not one set per result component).
function M.parse_requirement(sig, text)
  if type(text) ~= "string" then return fail("syntax", "a requirement's text is a string") end
  local box_text, out_text = text:match "^(.-)%->(.*)$"
  if not box_text or out_text:find("->", 1, true) then
    return fail("syntax", "requirement %q: expected BOX -> OUTPUTS", text)
  end
  local box, msg, code = M.parse_box(sig, box_text)
  if not box then return nil, msg, code end
  local outputs
  outputs, msg, code = M.parse_outputs(sig, out_text)
  if not outputs then return fail(code, "requirement %q: %s", text, msg) end
  return { box = box, outputs = outputs }
end

--- Whether a (checked) result of `sig` is allowed by a requirement's outputs.
function M.allows(sig, outputs, result)
  if not signature.check_result(sig, result) then return false end
  local values = sig.tuple and result or { result }
  for i, set in ipairs(outputs) do
    if not M.set_contains(set, values[i]) then return false end
  end
  return true
end

--- The canonical text of a requirement.
function M.requirement_text(sig, req)
  return M.box_text(sig, req.box) .. " -> " .. M.outputs_text(req.outputs)
end

-- Lexicographic comparison of two boxes' ranges (ord space), skipping dimension `skip`.
local function before(a, b, skip)
  for i = 1, #a do
    if i ~= skip then
      if a[i][1] ~= b[i][1] then return a[i][1] < b[i][1] end
      if a[i][2] ~= b[i][2] then return a[i][2] < b[i][2] end
    end
  end
  return false
end

local function same_except(a, b, skip)
  for i = 1, #a do
    if i ~= skip and (a[i][1] ~= b[i][1] or a[i][2] ~= b[i][2]) then return false end
  end
  return true
end

-- Merges boxes that are equal in every dimension but `d` and adjacent in it.
local function merge_along(boxes, d)
  table.sort(boxes, function(a, b)
    if before(a, b, d) then return true end
    if before(b, a, d) then return false end
    return a[d][1] < b[d][1]
  end)
  local out = {}
  for _, box in ipairs(boxes) do
    local last = out[#out]
    if last and same_except(last, box, d) and last[d][2] < MAXINT and box[d][1] == last[d][2] + 1 then
      last[d][2] = box[d][2]
    else
      out[#out + 1] = box
    end
  end
  return out
end

--- Groups inputs (e.g. the violating ones) into boxes for a report: a list
--  of boxes (one single-range set per parameter) whose union is exactly
--  the given inputs, disjoint, in lexicographic order of their lowest
--  corner; or nil, message, `range` for a value outside its type.
--  Greedy, and documented as such: runs of adjacent values of the last
--  parameter (adjacent in the type, so a box never claims a value that was
--  not given) become ranges, then for each earlier parameter, from the last
--  but one to the first, boxes equal in every other parameter and adjacent
--  in that one merge.  Not always the fewest boxes; always exact.
function M.group(sig, tuples)
  local n, seen, points = #sig.params, {}, {}
  for j, tuple in ipairs(tuples) do
    local ords = {}
    for i, p in ipairs(sig.params) do
      local ok, msg = signature.check(p.type, tuple[i])
      if not ok then return fail("range", "input %d, parameter %s: %s", j, p.name, msg) end
      ords[i] = signature.ord(p.type, tuple[i])
    end
    local key = table.concat(ords, ",")
    if not seen[key] then
      seen[key] = true
      local box = {}
      for i = 1, n do box[i] = { ords[i], ords[i] } end
      points[#points + 1] = box
    end
  end
  local boxes = points
  for d = n, 1, -1 do boxes = merge_along(boxes, d) end
  table.sort(boxes, function(a, b)
    for i = 1, n do
      if a[i][1] ~= b[i][1] then return a[i][1] < b[i][1] end
    end
    return false
  end)
  local out = {}
  for k, box in ipairs(boxes) do
    local sets = {}
    for i, p in ipairs(sig.params) do sets[i] = { type = p.type, ranges = { box[i] } } end
    out[k] = sets
  end
  return out
end

return M
