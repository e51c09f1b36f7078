--- Finite sets of u32 values, kept as sorted, merged, inclusive ranges.
--
-- Intent documents write sets as arrays whose items are integers or
-- {"from": a, "to": b} objects; normalize() turns any such spelling into the
-- one canonical form {{lo, hi}, ...} (sorted, non-overlapping, non-adjacent),
-- so two spellings of one set have one digest.  All functions are pure.
local json = require "vkit.json"

local M = {}

local U32_MAX = 0xFFFFFFFF

--- Canonical ranges from an intent-document set, or nil, message.
function M.normalize(items)
  if json.kind(items) ~= "array" then return nil, "a set must be an array" end
  local spans = {}
  for i, item in ipairs(items) do
    local lo, hi
    if math.type(item) == "integer" then
      lo, hi = item, item
    elseif json.kind(item) == "object" then
      for k in pairs(item) do
        if k ~= "from" and k ~= "to" then return nil, ("item %d: unknown field %q"):format(i, tostring(k)) end
      end
      lo, hi = item.from, item.to
      if math.type(lo) ~= "integer" or math.type(hi) ~= "integer" then
        return nil, ("item %d: a range needs integer from and to"):format(i)
      end
      if lo > hi then return nil, ("item %d: range from %d to %d is empty"):format(i, lo, hi) end
    else
      return nil, ("item %d: expected an integer or {from, to}"):format(i)
    end
    if lo < 0 or hi > U32_MAX then return nil, ("item %d: outside the u32 range"):format(i) end
    spans[#spans + 1] = { lo, hi }
  end
  return M.merge(spans)
end

--- Inclusive integer spans {lo, hi} (sorted in place) as sorted, merged,
--  non-adjacent ranges; a span ending at math.maxinteger has no successor
--  (vkit.change.domain's ordinals reach it), so nothing wraps.
function M.merge(spans)
  table.sort(spans, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, s in ipairs(spans) do
    local last = out[#out]
    if last and (s[1] <= last[2] or (last[2] < math.maxinteger and s[1] == last[2] + 1)) then
      if s[2] > last[2] then last[2] = s[2] end
    else
      out[#out + 1] = { s[1], s[2] }
    end
  end
  return out
end

--- Number of values in a canonical set.
function M.count(set)
  local n = 0
  for _, r in ipairs(set) do n = n + (r[2] - r[1] + 1) end
  return n
end

function M.contains(set, v)
  local lo, hi = 1, #set
  while lo <= hi do
    local mid = (lo + hi) // 2
    local r = set[mid]
    if v < r[1] then hi = mid - 1 elseif v > r[2] then lo = mid + 1 else return true end
  end
  return false
end

function M.intersect(a, b)
  local out, i, j = {}, 1, 1
  while i <= #a and j <= #b do
    local lo, hi = math.max(a[i][1], b[j][1]), math.min(a[i][2], b[j][2])
    if lo <= hi then out[#out + 1] = { lo, hi } end
    if a[i][2] < b[j][2] then i = i + 1 else j = j + 1 end
  end
  return out
end

--- The smallest value of a not in b (so a is a subset of b when nil).
function M.first_missing(a, b)
  local j = 1
  for _, r in ipairs(a) do
    local v = r[1]
    while v <= r[2] do
      while b[j] and b[j][2] < v do j = j + 1 end
      local s = b[j]
      if not s or s[1] > v then return v end
      v = s[2] + 1
    end
  end
  return nil
end

function M.equal(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i][1] ~= b[i][1] or a[i][2] ~= b[i][2] then return false end
  end
  return true
end

--- Iterates the values of a set in ascending order.
function M.values(set)
  local i, v = 1, nil
  return function()
    local r = set[i]
    if not r then return nil end
    if v == nil then v = r[1] else v = v + 1 end
    if v > r[2] then
      i = i + 1
      r = set[i]
      if not r then return nil end
      v = r[1]
    end
    return v
  end
end

--- The JSON form of a canonical set: [[lo, hi], ...] as marked arrays.
function M.to_json(set)
  local out = json.array()
  for i, r in ipairs(set) do out[i] = json.array { r[1], r[2] } end
  return out
end

return M
