--- Runs of consecutive accepted inputs that share something: the
--  violations that break one rule over a range of inputs, and what a side
--  returned over the domain.  A method's report keeps these beside its
--  listed items, which stop at a cap: a reader (the reports, the chart)
--  then sees every violating input and every output in a few lines.
--  Both functions are pure; their inputs are ascending by input.
local json = require "vkit.json"

local M = {}

--- The violations {input, rule, ...} (ascending) as ranges of consecutive
--  inputs with the same rule: [{from, to, count, rule}, ...].
function M.violation_ranges(violations)
  local out = json.array()
  for _, v in ipairs(violations) do
    local last = out[#out]
    if last and last.rule == v.rule and v.input == last.to + 1 then
      last.to, last.count = v.input, last.count + 1
    else
      out[#out + 1] = { from = v.input, to = v.input, count = 1, rule = v.rule }
    end
  end
  return out
end

--- What one side returned over the domain, run-length encoded: the
--  observations {input, [side] = {state, value}} (ascending) as
--  [[from, to, value], ...], value null where the side returned no stable
--  value (it failed, was unstable, or was not run).
function M.series(observations, side)
  local out = json.array()
  for _, o in ipairs(observations) do
    local s = o[side]
    local value = s and s.state == "value" and math.tointeger(tonumber(s.value)) or json.null
    local last = out[#out]
    if last and last[3] == value and o.input == last[2] + 1 then
      last[2] = o.input
    else
      out[#out + 1] = json.array { o.input, o.input, value }
    end
  end
  return out
end

--- Both sides' series, or, past `cap` runs on a side, why they are not kept
--  (a report stays within its record cap whatever the domain).
function M.outputs(observations, cap)
  local out = { base = M.series(observations, "base"), candidate = M.series(observations, "candidate") }
  if #out.base > cap or #out.candidate > cap then
    return { omitted = ("more than %d runs of one output on a side"):format(cap) }
  end
  return out
end

return M
