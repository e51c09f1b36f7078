--- Judging one input of the multi-parameter profile (issue 34): the seed's
-- rules (vkit.change.assess) over tuples of inputs and results.  Pure.
--
-- For an accepted input with base result b and candidate result c (each
-- the canonical text of a value of the declared result type):
--   1. standing requirements always apply: every component of c is in the
--      legal outputs (the observation universe intersected with every
--      requirement whose box contains the input, vkit.change.multi.legal);
--   2. inside guards: every component of c is in the intersection of the
--      outputs of every guard whose box contains the input;
--   3. outside guards: c == b (preservation), or b is illegal under the
--      intent and c is legal (an allowed standing-intent repair).
-- A candidate that stably returned a value outside its declared type (the
-- driver's !range: Python's True for an int, TypeScript's -0, a tuple of
-- another length) breaks rule 1 by name (rule `range`): it is never
-- coerced, never a pass.  A base outside its type is an illegal base.
-- Anything else unobserved, failed or unstable leaves the input undecided.
local domain = require "vkit.change.domain"
local signature = require "vkit.change.signature"
local mlegal = require "vkit.change.multi.legal"

local M = {}

-- The guards whose box contains the input: their names and the
-- intersection of their outputs (nil when none does).
local function guards_for(guards, tuple)
  local names, allowed = {}, nil
  for _, g in ipairs(guards) do
    if domain.box_contains(g.box, tuple) then
      names[#names + 1] = g.name
      if allowed then
        local both = {}
        for i, set in ipairs(allowed) do both[i] = mlegal.intersect(set, g.outputs[i]) end
        allowed = both
      else
        allowed = g.outputs
      end
    end
  end
  return names, allowed
end

--- A result as a reader sees it: "3", or "(3, true)" for a tuple.
function M.shown(sig, text)
  if not sig.tuple then return text end
  return "(" .. text:gsub(",", ", ") .. ")"
end

--- What a side's observation shows in a finding.
function M.side_text(sig, side)
  if side.state == "value" then return M.shown(sig, side.value) end
  if side.state == "failed" and side.marker then return "!" .. side.marker end
  return side.state
end

local function allowed_text(sets)
  return domain.outputs_text(sets)
end

--- Judges one input.  c: the intent's normal-form contract; tuple: the
--  input; base, candidate = {state = "value", value = text} | {state =
--  "failed", marker} | {state = "unstable"} | {state = "not-run"}; call:
--  "f(x=7, lo=3, hi=-2)" for messages.  Returns {verdict = "conforms" |
--  "violation" | "undecided", rule, message, allowed (text, a violation's)}.
function M.judge(c, guards, tuple, base, candidate, call)
  local sig = c.sig
  local function violation(rule, allowed, why)
    return { verdict = "violation", rule = rule, allowed = allowed and allowed_text(allowed) or nil,
             message = ("%s: base %s, candidate %s%s"):format(call, M.side_text(sig, base),
               M.side_text(sig, candidate), why) }
  end
  if candidate.state == "failed" and candidate.marker == "range" then
    return violation("range", nil, ": the candidate returned a value outside its declared type "
      .. signature.describe(sig):match "%-> (.*)$")
  end
  if candidate.state ~= "value" then
    return { verdict = "undecided", rule = "observation",
             message = ("%s: the candidate observation is %s"):format(call, M.side_text(sig, candidate)) }
  end
  local legal = mlegal.legal(c, tuple)
  local value = assert(signature.parse_result(sig, candidate.value))
  if not domain.allows(sig, legal, value) then
    return violation("standing-requirement", legal, (", which the accepted intent does not allow (allowed: %s)"):format(
      allowed_text(legal)))
  end
  local names, allowed = guards_for(guards, tuple)
  if allowed then
    if not domain.allows(sig, allowed, value) then
      return violation("guard", allowed, (", outside the outputs approved by guard%s %s"):format(
        #names > 1 and "s" or "", table.concat(names, ", ")))
    end
    return { verdict = "conforms", rule = "guard" }
  end
  if base.state == "failed" and base.marker == "range" then return { verdict = "conforms", rule = "repair" } end
  if base.state ~= "value" then
    return { verdict = "undecided", rule = "preservation",
             message = ("%s: the base observation is %s, so preservation cannot be judged"):format(call,
               M.side_text(sig, base)) }
  end
  if candidate.value == base.value then return { verdict = "conforms", rule = "preservation" } end
  if not domain.allows(sig, legal, assert(signature.parse_result(sig, base.value))) then
    return { verdict = "conforms", rule = "repair" }
  end
  return violation("unapproved-difference", nil, ", and no guard approves the difference")
end

return M
