--- Verdicts of the multi-parameter exhaustive method, judged once per
-- class of inputs (issue 34).  Pure.
--
-- vkit.change.multi.assess judges one input from the requirement boxes and
-- guard boxes that contain it and the two sides' results; nothing else of
-- the input enters its verdict and rule (only its message names the
-- input).  So with both sides stable, inputs that lie in the same boxes
-- and got the same pair of outcomes (results, markers, a lost process)
-- get the same verdict: it is judged for the first of them and reused,
-- which turns 2^20 judgements (box tests, set intersections, text) into a
-- few table lookups each.
--
-- Box membership of an input is the AND of per-parameter bitmasks: for
-- each parameter, a mask per value of its accepted set (one bit per box
-- containing it), indexed by the value's position in the set, as the
-- domain's enumeration numbers inputs (vkit.change.domain.at).
local M = {}

-- One mask per position of set `set` (ranges of ords, `offsets` as the
-- domain's): bit b set when box b's set for this parameter holds the value.
local function param_masks(set, offsets, count, boxes, i)
  local masks = {}
  for k = 0, count - 1 do masks[k] = 0 end
  for b, box in ipairs(boxes) do
    local bit = 1 << (b - 1)
    for r, range in ipairs(set.ranges) do
      for _, br in ipairs(box[i].ranges) do
        local lo, hi = math.max(range[1], br[1]), math.min(range[2], br[2])
        for k = offsets[r] + (lo - range[1]), offsets[r] + (hi - range[1]) do masks[k] = masks[k] | bit end
      end
    end
  end
  return masks
end

--- A verdict function for domain `d` and the boxes `boxes` (every
--  requirement's and guard's; at most 64).  verdict(x, base, candidate,
--  judge) -> j: base and candidate are keys of results (equal results,
--  equal keys), judge(x) the full judgement of input x, called for the
--  first input of each class (a function made once, not per input); its result is returned for every input of
--  that class (callers read only verdict and rule from a reused one).
function M.new(d, boxes)
  assert(#boxes <= 64, "at most 64 boxes")
  local n, masks, counts = #d.sets, {}, d.counts
  for i, set in ipairs(d.sets) do masks[i] = param_masks(set, d.offsets[i], counts[i], boxes, i) end
  local cache = {}
  return function(x, base, candidate, judge)
    local mask, rest = -1, x
    for i = n, 1, -1 do
      local c = counts[i]
      mask = mask & masks[i][rest % c]
      rest = rest // c
    end
    local by_base = cache[mask]
    if not by_base then by_base = {} cache[mask] = by_base end
    local by_candidate = by_base[base]
    if not by_candidate then by_candidate = {} by_base[base] = by_candidate end
    local j = by_candidate[candidate]
    if not j then
      j = judge(x)
      by_candidate[candidate] = j
    end
    return j
  end
end

return M
