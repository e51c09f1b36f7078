--- The cross-check `auto` makes for the multi-parameter profile (issue 34),
-- as the seed's exhaustive method does: when finite_paired ran first, each
-- of its per-input runs (a fresh process per input and repetition) is
-- compared with the batch outcome of the same input on the same side.  A
-- difference means the batch answer depended on what ran before it in the
-- process (state kept between calls) or on how it was run: that side of
-- that input becomes "isolation-difference", which the judge leaves
-- undecided, never conforming.  Pure.
--
-- Both methods key an outcome alike (vkit.change.multi.per_input and the
-- batch runs of vkit.change.multi.exhaustive): a result's canonical text,
-- "!raise" or "!range".  Only outcomes both sides of the comparison have
-- are compared (a crash or timeout is not an answer).
local json = require "vkit.json"

local M = {}

M.STATE = "isolation-difference"

local function batch_key(o)
  if o.state == "value" then return o.value end
  if o.state == "failed" and o.marker then return "!" .. o.marker end
  return nil
end

-- The first sampled run's key that differs from the batch key `want`,
-- and how many runs were compared.
local function first_difference(runs, want)
  local compared = 0
  for _, run in ipairs(runs) do
    if run.key ~= nil and run.key ~= json.null then
      compared = compared + 1
      if run.key ~= want then return run.key, compared end
    end
  end
  return nil, compared
end

--- Compares the sampled report (finite_paired's paired-execution report of
--  this request, or nil) with the batch observations, batch(x, side) ->
--  {state, value | marker}.  Returns {marks = {[x] = {[side] = true}},
--  differences = list of {index, input, side, batch, isolated}, compared}.
function M.check(sampled, bound, batch)
  local out = { marks = {}, differences = {}, compared = 0 }
  if not sampled then return out end
  if not (type(sampled.binding) == "table" and sampled.binding.request_digest == bound.request.digest
          and sampled.binding.intent_digest == bound.intent.digest) then
    error("vkit.change.multi.isolation: the sampled report is not a paired execution of this request", 2)
  end
  for _, so in ipairs(sampled.observations or {}) do
    local x = so.input
    for _, s in ipairs { "base", "candidate" } do
      local want = batch_key(batch(x, s))
      local got, compared = first_difference(want and so[s] and so[s].runs or {}, want)
      out.compared = out.compared + compared
      if got then
        out.marks[x] = out.marks[x] or {}
        out.marks[x][s] = true
        out.differences[#out.differences + 1] = { index = x, input = so.call, side = s, batch = want, isolated = got }
      end
    end
  end
  return out
end

--- The side observations `o` of input x with the isolation differences marked.
function M.mark(result, x, o)
  for s in pairs(result.marks[x] or {}) do o[s] = { state = M.STATE } end
  return o
end

return M
