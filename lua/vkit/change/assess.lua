--- Judging paired observations against the accepted intent and the
-- target's difference policy (seed 001, run_change_analysis).  Pure.
--
-- For each observed input i with base output b and candidate output c:
--   1. standing output requirements always apply: c must be legal under
--      the intent (the observation universe intersected with every
--      requirement naming i);
--   2. inside guards: c must be in the intersection of the outputs of every
--      guard naming i (overlapping guards intersect);
--   3. outside guards: c == b (preservation), or b is illegal under the
--      intent and c is legal (an allowed standing-intent repair).
-- Only validated returned values count.  A side that failed, was unstable
-- or was not observed leaves the input undecided, unless the candidate's
-- value alone already breaks rule 1 or 2.  A known violation stays
-- visible whatever else is incomplete.
local ranges = require "vkit.change.ranges"
local contract = require "vkit.change.contract"

local M = {}

M.STATUSES = { "observed_conformance", "observed_violation", "unknown" }

local function guards_for(guards, input)
  local names, allowed = {}, nil
  for _, g in ipairs(guards) do
    if ranges.contains(g.inputs, input) then
      names[#names + 1] = g.name
      allowed = allowed and ranges.intersect(allowed, g.outputs) or g.outputs
    end
  end
  return names, allowed
end

local function describe_side(side)
  if side.state == "value" then return tostring(side.value) end
  return side.state
end

--- Judges one input.  side = {state = "value"|"failed"|"unstable"|"missing", value}.
--  Returns {verdict = "conforms"|"violation"|"undecided", rule, message};
--  a violation also names `allowed`, the outputs (ranges) the broken rule
--  allowed for this input.
function M.judge(intent_contract, guards, input, base, candidate)
  local legal = contract.legal(intent_contract, input)
  local guard_names, allowed = guards_for(guards, input)
  if candidate.state == "value" then
    local c = candidate.value
    if not ranges.contains(legal, c) then
      return { verdict = "violation", rule = "standing-requirement", allowed = legal,
               message = ("input %d: the candidate returned %d, which the accepted intent does not allow"):format(input, c) }
    end
    if allowed and not ranges.contains(allowed, c) then
      return { verdict = "violation", rule = "guard", allowed = ranges.intersect(legal, allowed),
               message = ("input %d: the candidate returned %d, outside the outputs approved by guard%s %s"):format(
                 input, c, #guard_names > 1 and "s" or "", table.concat(guard_names, ", ")) }
    end
    if allowed then
      return { verdict = "conforms", rule = "guard", guards = guard_names }
    end
    if base.state ~= "value" then
      return { verdict = "undecided", rule = "preservation",
               message = ("input %d: the base observation is %s, so preservation cannot be judged"):format(
                 input, describe_side(base)) }
    end
    if c == base.value then return { verdict = "conforms", rule = "preservation" } end
    if not ranges.contains(legal, base.value) then return { verdict = "conforms", rule = "repair" } end
    return { verdict = "violation", rule = "unapproved-difference", allowed = { { base.value, base.value } },
             message = ("input %d: the candidate returned %d where the base returned %d, and no guard approves the difference"):format(
               input, c, base.value) }
  end
  return { verdict = "undecided", rule = "observation",
           message = ("input %d: the candidate observation is %s"):format(input, describe_side(candidate)) }
end

--- Assesses all observations.  `observations` is an array of
--  {input, base = side, candidate = side}; `selection` = {selected, omitted}
--  counts from the runner.  Returns {status, coverage, findings}.
function M.assess(intent_contract, guards, observations, selection)
  local findings, judged = {}, { conforms = 0, violation = 0, undecided = 0 }
  for _, o in ipairs(observations) do
    local j = M.judge(intent_contract, guards, o.input, o.base, o.candidate)
    judged[j.verdict] = judged[j.verdict] + 1
    if j.verdict ~= "conforms" then
      findings[#findings + 1] = { input = o.input, verdict = j.verdict, rule = j.rule, message = j.message,
                                  base = describe_side(o.base), candidate = describe_side(o.candidate),
                                  allowed = j.allowed and ranges.to_json(j.allowed) or nil }
    end
  end
  local selected = selection.selected
  local unobserved = selected - #observations
  local status
  if judged.violation > 0 then
    status = "observed_violation"
  elseif judged.undecided == 0 and unobserved == 0 and selected > 0 then
    status = "observed_conformance"
  else
    status = "unknown"
  end
  return {
    status = status,
    coverage = {
      domain = ranges.count(intent_contract.domain.inputs),
      selected = selected,
      omitted = selection.omitted,
      observed = #observations,
      unobserved = unobserved,
      conforming = judged.conforms,
      violations = judged.violation,
      undecided = judged.undecided,
    },
    findings = findings,
  }
end

return M
