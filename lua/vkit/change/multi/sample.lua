--- Which inputs the sampled method runs for the multi-parameter profile
-- (issue 34), and how it shrinks a violation.  Pure.
--
-- Inputs are INDEXES in the domain's enumeration (vkit.change.domain.at:
-- the last parameter fastest), so selection is the seed's over the
-- contiguous range 0 .. N-1 (vkit.change.select: "ascending" the first,
-- "spread" the first, the last and evenly spaced between).
--
-- Shrinking moves one parameter at a time, first to last, toward its
-- smallest accepted value (position 0 in its set's order), the others
-- held: first the smallest itself, then bisection between the largest
-- position known not to violate and the smallest known to violate.  A
-- parameter keeps a smaller value only if the input still violates, so
-- the result is a violating input; at most `limit` inputs are tried in all.
local select_mod = require "vkit.change.select"

local M = {}

--- At most `budget` indexes of the domain `d`, and how many were left out.
function M.select(d, how, budget)
  return select_mod.select({ { 0, d.size - 1 } }, how, budget)
end

-- An index's position in each parameter's set (mixed radix), and back.
local function positions(d, index)
  local pos = {}
  for i = #d.counts, 1, -1 do
    pos[i] = index % d.counts[i]
    index = index // d.counts[i]
  end
  return pos
end

local function compose(d, pos)
  local index = 0
  for i, k in ipairs(pos) do index = index * d.counts[i] + k end
  return index
end

--- A shrinker from the violating index `index`.  Returns next(last_violated)
--  giving the next index to try (nil when done), the list of indexes tried,
--  and smallest() (the smallest violating index found).  last_violated:
--  whether the index next returned last still violated.
function M.shrinker(d, index, limit)
  local pos = positions(d, index)
  local i, lo, pending = 1, -1, nil -- lo: largest position of parameter i known not to violate
  local tried = {}
  local function next_index(last_violated)
    if pending ~= nil then
      if last_violated then pos[i] = pending else lo = pending end
      pending = nil
    end
    while i <= #pos do
      if #tried >= limit then return nil end
      local hi = pos[i]
      if hi - lo > 1 then
        pending = lo < 0 and 0 or (lo + hi) // 2
        local probe = table.move(pos, 1, #pos, 1, {})
        probe[i] = pending
        local x = compose(d, probe)
        tried[#tried + 1] = x
        return x
      end
      i, lo = i + 1, -1
    end
    return nil
  end
  return next_index, tried, function() return compose(d, pos) end
end

return M
