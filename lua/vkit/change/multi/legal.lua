--- The legal outputs of the multi-parameter profile's contracts (issue
-- 34), and the cells that let a whole domain be checked by a few inputs.
-- Pure.  vkit.change.multi.contract reads documents into the normal form
-- {sig, domain = {inputs = a vkit.change.domain product}, observations =
-- {set per component}, requirements = {{box, outputs}}} these read.
--
-- The legal outputs for an input are, per result component, the
-- observation universe intersected with the outputs of every requirement
-- whose box contains the input.
--
-- Cells.  Every box and the domain cut each parameter's values into
-- segments on which membership in every box is the same, so the legal
-- outputs are constant on each product of segments (a cell).  Checking one
-- input per cell checks them all: satisfiability and claim coverage cost
-- the number of cells, never the number of inputs.
local ranges = require "vkit.change.ranges"
local signature = require "vkit.change.signature"
local domain = require "vkit.change.domain"
local policy = require("vkit.policy").signatures

local M = {}

-- The intersection of two sets of one type.
local function intersect(a, b)
  return { type = a.type, ranges = ranges.intersect(a.ranges, b.ranges) }
end
M.intersect = intersect

--- The legal outputs for one input: one set per result component.
function M.legal(c, tuple)
  local legal = c.observations
  for _, r in ipairs(c.requirements) do
    if domain.box_contains(r.box, tuple) then
      local next_legal = {}
      for i, set in ipairs(legal) do next_legal[i] = intersect(set, r.outputs[i]) end
      legal = next_legal
    end
  end
  return legal
end

--- Calls visit(tuple) once per cell of the accepted inputs cut by `boxes`
--  (a list of boxes): one input whose every box membership equals that of
--  each input of its cell.  Returns true and the first non-nil value visit
--  returns (it stops there); or false and the number of cells when they are
--  more than policies/signatures.lua exhaustive_inputs (many small ranges
--  in many boxes: checked by no one, refused by the caller).
function M.cells(d, boxes, visit)
  local starts = {}
  for i, set in ipairs(d.sets) do
    local cuts = {}
    for _, b in ipairs(boxes) do
      for _, r in ipairs(b[i].ranges) do
        cuts[#cuts + 1] = r[1]
        if r[2] < math.maxinteger then cuts[#cuts + 1] = r[2] + 1 end
      end
    end
    table.sort(cuts)
    local list = {}
    for _, r in ipairs(set.ranges) do
      list[#list + 1] = r[1]
      for _, p in ipairs(cuts) do
        if p > r[1] and p <= r[2] and p ~= list[#list] then list[#list + 1] = p end
      end
    end
    starts[i] = list
  end
  local count = 1
  for _, list in ipairs(starts) do
    if #list > policy.exhaustive_inputs // count then return false, math.maxinteger end
    count = count * #list
  end
  local tuple, n = {}, #d.sets
  local function walk(i)
    if i > n then return visit(tuple) end
    for _, o in ipairs(starts[i]) do
      tuple[i] = signature.from_ord(d.sets[i].type, o)
      local r = walk(i + 1)
      if r ~= nil then return r end
    end
  end
  return true, walk(1)
end

local function requirement_boxes(...)
  local boxes = {}
  for _, c in ipairs { ... } do
    for _, r in ipairs(c.requirements) do boxes[#boxes + 1] = r.box end
  end
  return boxes
end

--- The first cell's input where some result component has no legal
--  output: true, {tuple, component} | true, nil when there is none; or
--  false when the cells are too many (M.cells).
function M.first_empty(c)
  return M.cells(c.domain.inputs, requirement_boxes(c), function(tuple)
    for i, set in ipairs(M.legal(c, tuple)) do
      if #set.ranges == 0 then return { tuple = tuple, component = i } end
    end
  end)
end

--- The first cell's input where `claim` allows less than `intent` in some
--  component: true, {tuple, component, allowed, claimed} | true, nil; or
--  false when the cells are too many.  Both on the same accepted inputs.
function M.first_excluded(claim, intent)
  return M.cells(intent.domain.inputs, requirement_boxes(intent, claim), function(tuple)
    local allowed, claimed = M.legal(intent, tuple), M.legal(claim, tuple)
    for i, set in ipairs(allowed) do
      if not ranges.equal(M.intersect(set, claimed[i]).ranges, set.ranges) then
        return { tuple = tuple, component = i, allowed = set, claimed = claimed[i] }
      end
    end
  end)
end


return M
