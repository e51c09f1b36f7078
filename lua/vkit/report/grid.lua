--- The grid of a multi-parameter domain (issue 34) for the HTML report:
--  pure.  Two parameters are drawn, the two with the most values (ties:
--  the earlier), in parameter order: the later on x (columns), the earlier
--  on y (rows); a function of one parameter is one row.  Every other
--  parameter is AGGREGATED, never fixed: a cell stands for every input
--  whose two drawn values fall in it, whatever the others, and takes the
--  worst state among them: violating (any input violates), else undecided
--  (any ran without a verdict), else omitted (any was not run), else
--  checked.  A cell holding an input where base and candidate differ
--  (rule unapproved-difference) is marked `difference`.  An axis of more
--  than policies/report.lua grid_cells_per_axis values is binned, ceil(n /
--  cap) consecutive values of the parameter's set a cell, so a grid has at
--  most cap x cap cells.
--
-- Input (what the run retained, vkit.report.change): {params = {{name,
-- type, set = set text}}, ran = {{from, to}} index ranges run, violating =
-- {{from = a, to = b, rule}} ascending, undecided = {index, ...} (a
-- listing: maybe fewer than undecided_total)}.  An input is its index in
-- the domain's enumeration (vkit.change.domain.at, the last parameter
-- fastest).
local domain = require "vkit.change.domain"
local signature = require "vkit.change.signature"
local merge = require("vkit.change.ranges").merge
local policy = require "vkit.policy"

local M = {}

M.STATES = { "violating", "undecided", "omitted", "checked" }

--- The drawn parameters' positions: x, and y (nil for one parameter).
function M.axes(counts)
  local order = {}
  for i = 1, #counts do order[i] = i end
  table.sort(order, function(a, b)
    if counts[a] ~= counts[b] then return counts[a] > counts[b] end
    return a < b
  end)
  if #order == 1 then return order[1], nil end
  local a, b = math.min(order[1], order[2]), math.max(order[1], order[2])
  return b, a
end

--- Values a cell along an axis of n values (at most cap cells), and the cells.
function M.bin(n, cap)
  local size = (n + cap - 1) // cap
  return size, (n + size - 1) // size
end

-- The domain of the input's parameters (the result type does not matter
-- here), or nil above the exhaustive cap (nothing ran) or for a set that
-- does not parse.
local function domain_of(params)
  local desc, sets = { params = {}, returns = "bool" }, {}
  for i, p in ipairs(params) do
    desc.params[i] = { name = p.name, type = p.type }
    sets[i] = domain.parse_set(p.type, p.set)
    if not sets[i] then return nil end
  end
  local sig = signature.parse(desc)
  return sig and domain.product(sig, sets)
end

-- One axis: the parameter, its binning and the value text of each bin.
local function axis(d, i, stride, cap)
  local p, n = d.sig.params[i], d.counts[i]
  local size, cells = M.bin(n, cap)
  local function value(k) return signature.text(p.type, domain.at(d, k * stride[i])[i]) end
  local a = { param = i, name = p.name, type = p.type, set = domain.set_text(d.sets[i]), values = n, bin = size,
              cells = cells, labels = {} }
  for c = 0, cells - 1 do
    local lo, hi = c * size, math.min((c + 1) * size, n) - 1
    a.labels[c + 1] = lo == hi and value(lo) or value(lo) .. ".." .. value(hi)
  end
  return a
end

--- The grid: {x = axis, y = axis | nil, aggregated = {names}, cells =
--  {{col, row (0-based), state, inputs, violating, undecided, omitted,
--  difference}} row by row, undecided_drawn}.  An axis is {param, name,
--  type, set, values, bin, cells, labels (a value text or lo..hi per cell)}.
--  nil when the domain is above the exhaustive cap.
function M.build(g, cap)
  cap = cap or policy.report.grid_cells_per_axis
  local d = domain_of(g.params)
  if not d then return nil end
  local stride, s = {}, 1
  for i = #d.counts, 1, -1 do stride[i], s = s, s * d.counts[i] end
  local xi, yi = M.axes(d.counts)
  local grid = { x = axis(d, xi, stride, cap), y = yi and axis(d, yi, stride, cap) or nil, aggregated = {}, cells = {} }
  for i, p in ipairs(d.sig.params) do
    if i ~= xi and i ~= yi then grid.aggregated[#grid.aggregated + 1] = p.name end
  end
  local cols, rows = grid.x.cells, grid.y and grid.y.cells or 1
  for r = 0, rows - 1 do
    for c = 0, cols - 1 do
      grid.cells[#grid.cells + 1] = { col = c, row = r, inputs = 0, violating = 0, undecided = 0, omitted = 0,
                                      difference = false }
    end
  end
  local undecided, drawn = {}, 0
  for _, x in ipairs(g.undecided or {}) do undecided[x] = true end
  local spans = {}
  for k, r in ipairs(g.ran or {}) do spans[k] = { r[1], r[2] } end
  local ran, violating = merge(spans), g.violating or {}
  local sx, nx, bx = stride[xi], d.counts[xi], grid.x.bin
  local sy, ny, by = yi and stride[yi] or 1, yi and d.counts[yi] or 1, grid.y and grid.y.bin or 1
  local ri, vi = 1, 1
  for x = 0, d.size - 1 do
    while ran[ri] and ran[ri][2] < x do ri = ri + 1 end
    while violating[vi] and violating[vi].to < x do vi = vi + 1 end
    local row = yi and (x // sy) % ny // by or 0
    local cell = grid.cells[row * cols + (x // sx) % nx // bx + 1]
    cell.inputs = cell.inputs + 1
    local v = violating[vi]
    if v and v.from <= x then
      cell.violating = cell.violating + 1
      cell.difference = cell.difference or v.rule == "unapproved-difference"
    elseif undecided[x] then
      cell.undecided, drawn = cell.undecided + 1, drawn + 1
    elseif not (ran[ri] and ran[ri][1] <= x) then
      cell.omitted = cell.omitted + 1
    end
  end
  for _, cell in ipairs(grid.cells) do
    cell.state = cell.violating > 0 and "violating" or cell.undecided > 0 and "undecided"
      or cell.omitted > 0 and "omitted" or "checked"
  end
  grid.undecided_drawn, grid.undecided_total = drawn, g.undecided_total
  return grid
end

return M
