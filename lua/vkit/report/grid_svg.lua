--- The HTML report's picture of a multi-parameter domain (issue 34): the
--  grid of vkit.report.grid as an inline SVG (no script, no external
--  resource: the page stays self-contained), one rect per cell coloured by
--  its state, a cross on a cell where base and candidate differ, both axes
--  named with their parameter, values and binning, and a caption saying
--  what a cell aggregates.  Elements carry data- attributes so a spec reads
--  the grid through Chromium's DOM.
local h = require("vkit.report.markup").html

local M = {}

M.COLOURS = { checked = "#2e9e55", violating = "#d92d20", undecided = "#f79009", omitted = "#d0d5dd" }
M.DRAWING = 840                   -- px at most for an axis's cells
-- a cell is at least 6 px each way (visible), at most 40 wide and 20 tall
local TOP, MIN_CELL, MAX_WIDE, MAX_TALL = 8, 6, 40, 20

local function add(out, s) out[#out + 1] = s end

local function words(a)
  return ("%s: %s, %d value%s%s"):format(a.name, a.set, a.values, a.values == 1 and "" or "s",
    a.bin > 1 and (", %d a cell"):format(a.bin) or "")
end

--- Appends the grid's SVG, legend and caption to out (a list of lines).
function M.render(out, grid)
  local x, y = grid.x, grid.y
  local cols, rows = x.cells, y and y.cells or 1
  local cw = math.max(MIN_CELL, math.min(MAX_WIDE, M.DRAWING // cols))
  local ch = math.max(MIN_CELL, math.min(MAX_TALL, M.DRAWING // rows))
  -- below the cells: the x tick labels (6 px a character at 10 px), level
  -- when they fit between ticks, else turned 50 degrees; then the axis name
  local every_x, every_y = math.max(1, -(-16 // cw)), math.max(1, -(-14 // ch))
  local longest = 0
  for _, l in ipairs(x.labels) do longest = math.max(longest, #l) end
  local level = longest * 6 <= every_x * cw - 4
  -- left of the cells: the y axis name (turned), then the y tick labels; a rotated first x label reaches left too
  local widest = 0
  for _, l in ipairs(y and y.labels or {}) do widest = math.max(widest, #l) end
  local LEFT = math.max(28 + widest * 6 + 8, level and 40 or math.ceil(#x.labels[1] * 6 * 0.65) + 8)
  local W, H = LEFT + cols * cw + 8, TOP + rows * ch + 6 + (level and 12 or math.ceil(longest * 6 * 0.77)) + 24
  local counts = {}
  for _, c in ipairs(grid.cells) do counts[c.state] = (counts[c.state] or 0) + 1 end
  add(out, ('<svg id="grid" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
    .. 'aria-label="%s" data-x="%s" data-y="%s" data-cols="%d" data-rows="%d" data-cell="%dx%d" data-violating="%d">')
    :format(W, H, W, H, h(y and ("accepted inputs by %s and %s"):format(x.name, y.name) or ("accepted inputs of " .. x.name)),
      h(x.name), h(y and y.name or ""), cols, rows, cw, ch, counts.violating or 0))
  for _, c in ipairs(grid.cells) do
    local px, py = LEFT + c.col * cw, TOP + c.row * ch
    local at = y and ("%s=%s, %s=%s"):format(x.name, x.labels[c.col + 1], y.name, y.labels[c.row + 1])
      or ("%s=%s"):format(x.name, x.labels[c.col + 1])
    add(out, ('<rect class="cell" x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#fff" stroke-width="%s" '
      .. 'data-col="%d" data-row="%d" data-state="%s" data-x="%s" data-y="%s" data-inputs="%d" data-violating="%d" '
      .. 'data-undecided="%d" data-omitted="%d"><title>%s: %d inputs, %d violating, %d undecided, %d not run</title></rect>')
      :format(px, py, cw, ch, M.COLOURS[c.state], math.min(cw, ch) >= 10 and "1" or "0.5", c.col, c.row, c.state,
        h(x.labels[c.col + 1]), h(y and y.labels[c.row + 1] or ""), c.inputs, c.violating, c.undecided, c.omitted,
        h(at), c.inputs, c.violating, c.undecided, c.omitted))
    if c.difference then
      -- a square cross in the cell's middle
      local r = math.max(2, math.min(cw, ch) * 3 // 10)
      local mx, my = px + cw // 2, py + ch // 2
      add(out, ('<path class="difference" data-col="%d" data-row="%d" d="M%d %dL%d %dM%d %dL%d %d" stroke="#1b1b1b" '
        .. 'stroke-width="1.5"/>'):format(c.col, c.row, mx - r, my - r, mx + r, my + r, mx + r, my - r, mx - r, my + r))
    end
  end
  -- a tick every few cells, the last cell's always (it replaces the one before when that is nearer than `every`)
  local function ticked(k, n, every) return k == n - 1 or k % every == 0 and k + every <= n - 1 end
  for c = 0, cols - 1 do
    if ticked(c, cols, every_x) then
      local tx, ty = LEFT + c * cw + cw // 2, TOP + rows * ch + (level and 16 or 6)
      add(out, ('<text class="tick" data-axis="x" data-col="%d" x="%d" y="%d" font-size="10" %s>%s</text>'):format(c, tx,
        ty, level and 'text-anchor="middle"' or ('text-anchor="end" transform="rotate(-50 %d %d)"'):format(tx, ty),
        h(x.labels[c + 1])))
    end
  end
  for r = 0, rows - 1 do
    if y and ticked(r, rows, every_y) then
      add(out, ('<text class="tick" data-axis="y" data-row="%d" x="%d" y="%d" font-size="10" text-anchor="end" '
        .. 'dominant-baseline="middle">%s</text>'):format(r, LEFT - 4, TOP + r * ch + ch // 2, h(y.labels[r + 1])))
    end
  end
  add(out, ('<text class="axis" data-axis="x" x="%d" y="%d" font-size="12" text-anchor="middle">%s →</text>'):format(
    LEFT + cols * cw // 2, H - 6, h(words(x))))
  if y then
    local ax, ay = 14, TOP + rows * ch // 2
    add(out, ('<text class="axis" data-axis="y" x="%d" y="%d" font-size="12" text-anchor="middle" '
      .. 'transform="rotate(-90 %d %d)">← %s</text>'):format(ax, ay, ax, ay, h(words(y))))
  end
  add(out, "</svg>")
  add(out, '<p class="legend">' .. table.concat((function()
    local items = {}
    for _, s in ipairs { "checked", "violating", "undecided", "omitted" } do
      items[#items + 1] = ('<span style="background:%s"></span>%s'):format(M.COLOURS[s],
        s == "omitted" and "not run" or s)
    end
    return items
  end)()) .. "; ✕ base and candidate differ</p>")
  local others = #grid.aggregated > 0 and (", whatever %s %s"):format(table.concat(grid.aggregated, ", "),
    #grid.aggregated == 1 and "is" or "are") or ""
  add(out, ('<p id="grid-caption">%s. A cell stands for every accepted input with %s%s: red if any of them violates, '
    .. 'amber if any ran without a verdict (undecided), grey if any was not run, else green (every one checked and '
    .. 'conforming); ✕ where base and candidate return different results on a violating input (rule '
    .. 'unapproved-difference; a difference a guard approves is not drawn).%s</p>'):format(
    h(y and ("Columns: %s; rows: %s"):format(words(x), words(y)) or ("Cells: " .. words(x))),
    y and ("its values of %s and %s"):format(h(x.name), h(y.name)) or ("its value of " .. h(x.name)), h(others),
    (grid.undecided_total or 0) > grid.undecided_drawn and (" The run listed %d of its %d undecided inputs: only "
      .. "those are drawn."):format(grid.undecided_drawn, grid.undecided_total) or ""))
end

return M
