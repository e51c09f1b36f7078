--- Choosing which accepted inputs to run, and shrinking.  Pure.
--
-- select(domain, how, budget) picks at most `budget` inputs from the
-- accepted domain (ranges): "ascending" takes the smallest; "spread" takes
-- the smallest and the largest and evenly spaced inputs between, so a
-- small budget still sees the whole domain.
-- shrink_candidates(domain, violating, lower, limit) lists smaller accepted
-- inputs to try, nearest to `lower` (the largest input known to conform)
-- first by bisection, so at most `limit` checks narrow the violation.
local ranges = require "vkit.change.ranges"

local M = {}

local function nth(set, k) -- k-th (0-based) value of a canonical set
  for _, r in ipairs(set) do
    local size = r[2] - r[1] + 1
    if k < size then return r[1] + k end
    k = k - size
  end
end

function M.select(domain, how, budget)
  local total = ranges.count(domain)
  local n = math.min(total, budget)
  local picked = {}
  if n <= 0 then return picked, total end
  if how == "ascending" or n == total then
    for k = 0, n - 1 do picked[#picked + 1] = nth(domain, k) end
  elseif n == 1 then
    picked[1] = nth(domain, 0)
  else
    local last = nil
    for i = 0, n - 1 do
      local k = (i * (total - 1)) // (n - 1)
      if k ~= last then picked[#picked + 1] = nth(domain, k) end
      last = k
    end
  end
  return picked, total - #picked
end

--- How many inputs the invocations left can observe, keeping room for
--  shrinking: each input costs both sides `repetitions` processes, and
--  shrink_limit inputs are reserved.  Returns the count to select (at most
--  max_inputs) and, when that is fewer than max_inputs would take of
--  `total` inputs, the affordable count (a cut to record).
function M.affordable(invocations_left, policy, total)
  local per_input = 2 * policy.repetitions
  local affordable = math.max(0, (invocations_left - policy.shrink_limit * per_input) // per_input)
  local cut = affordable < math.min(policy.max_inputs, total) and affordable or nil
  return math.min(affordable, policy.max_inputs), cut
end

--- The index (0-based) of a value in a canonical set.
local function index_of(set, v)
  local k = 0
  for _, r in ipairs(set) do
    if v >= r[1] and v <= r[2] then return k + (v - r[1]) end
    k = k + (r[2] - r[1] + 1)
  end
end

--- Bisection between the largest conforming input below the violation
--  (or the domain's start) and the violating input.  Returns a function
--  next(last_result) giving the next input to try or nil, and the list
--  of inputs tried.  last_result: true if the last tried input violated.
function M.shrinker(domain, violating, conforming_below, limit)
  local hi = index_of(domain, violating)         -- known violating
  local lo = conforming_below and index_of(domain, conforming_below) or -1 -- known conforming (or none)
  local tried, pending = {}, nil
  local function next_input(last_violated)
    if pending ~= nil then
      if last_violated then hi = pending else lo = pending end
      pending = nil
    end
    if #tried >= limit or hi - lo <= 1 then return nil end
    pending = (lo + hi) // 2
    if pending < 0 then pending = 0 end
    if pending == hi then return nil end
    local v = nth(domain, pending)
    tried[#tried + 1] = v
    return v
  end
  local function smallest() return nth(domain, hi) end
  return next_input, tried, smallest
end

return M
