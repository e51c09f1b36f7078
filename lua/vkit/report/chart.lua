--- The HTML report's chart of what base and candidate return over the
--  accepted domain: one step line per side (input on x, output on y),
--  with every range of inputs where the two differ shaded.  Inline SVG in
--  the self-contained page (no script); the elements carry data-
--  attributes so a spec reads the chart through Chromium's DOM.
--
-- Input: domain = {from, to, series = {base, candidate, sampled}} with
-- each series [[from, to, value|null], ...] ascending (vkit.change.runs).
local json = require "vkit.json"

local M = {}

M.WIDTH, M.HEIGHT = 960, 240
local LEFT, TOP, BOTTOM = 56, 8, 22
local SIDES = { { name = "base", colour = "#2563eb", dash = "" },
                { name = "candidate", colour = "#ea580c", dash = ' stroke-dasharray="6 3"' } }

local function add(out, s) out[#out + 1] = s end

local function value(v) return v ~= json.null and math.type(v) == "integer" and v or nil end

--- The ranges of inputs where the two series differ: {{from, to}, ...}.
--  Both cover the same inputs (one observation per input and side).
function M.differences(base, candidate)
  local out, i, j = {}, 1, 1
  while i <= #base and j <= #candidate do
    local b, c = base[i], candidate[j]
    local lo, hi = math.max(b[1], c[1]), math.min(b[2], c[2])
    if lo <= hi and b[3] ~= c[3] then
      local last = out[#out]
      if last and last[2] + 1 == lo then last[2] = hi else out[#out + 1] = { lo, hi } end
    end
    if b[2] < c[2] then i = i + 1 elseif c[2] < b[2] then j = j + 1 else i, j = i + 1, j + 1 end
  end
  return out
end

-- The smallest and largest value either side returned (a flat line gets
-- a band of one around it).
local function extent(series)
  local lo, hi
  for _, side in ipairs(SIDES) do
    for _, r in ipairs(series[side.name] or {}) do
      local v = value(r[3])
      if v then lo, hi = math.min(lo or v, v), math.max(hi or v, v) end
    end
  end
  if not lo then return nil end
  if lo == hi then lo, hi = lo - 1, hi + 1 end
  return lo, hi
end

-- The step path of one side: a horizontal segment per run, joined to the
-- next when the inputs are consecutive; broken where no value was returned.
local function path(runs, x, y)
  local d, prev = {}, nil
  for _, r in ipairs(runs) do
    local v = value(r[3])
    if v then
      if prev and prev[2] + 1 == r[1] and value(prev[3]) then
        d[#d + 1] = ("V%.2f H%.2f"):format(y(v), x(r[2] + 1))
      else
        d[#d + 1] = ("M%.2f %.2f H%.2f"):format(x(r[1]), y(v), math.max(x(r[2] + 1), x(r[1]) + 1.5))
      end
    end
    prev = r
  end
  return table.concat(d, " ")
end

--- Appends the chart's SVG and legend to out (a list of lines).
function M.render(out, domain)
  local series = domain.series
  local lo, hi = extent(series)
  if not lo then return end
  local W, H = M.WIDTH, M.HEIGHT
  local pw, ph = W - LEFT, H - TOP - BOTTOM
  local n = domain.to - domain.from + 1
  local function x(v) return LEFT + (v - domain.from) / n * pw end
  local function y(v) return TOP + (hi - v) / (hi - lo) * ph end
  local diffs = M.differences(series.base or {}, series.candidate or {})
  add(out, ('<svg id="outputs" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
    .. 'aria-label="base and candidate outputs over inputs %d to %d" data-from="%d" data-to="%d" data-min="%d" '
    .. 'data-max="%d" data-sampled="%s" data-differences="%d">'):format(W, H, W, H, domain.from, domain.to, domain.from,
    domain.to, lo, hi, tostring(series.sampled == true), #diffs))
  add(out, ('<rect x="%d" y="%d" width="%d" height="%d" fill="#f8fafc" stroke="#cbd5e1"/>'):format(LEFT, TOP, pw, ph))
  for _, d in ipairs(diffs) do
    add(out, ('<rect class="difference" x="%.2f" y="%d" width="%.2f" height="%d" fill="#d92d20" fill-opacity="0.18" '
      .. 'data-from="%d" data-to="%d"/>'):format(x(d[1]), TOP, math.max(x(d[2] + 1) - x(d[1]), 2), ph, d[1], d[2]))
  end
  for _, side in ipairs(SIDES) do
    local runs = series[side.name] or {}
    add(out, ('<path class="series" data-side="%s" data-runs="%d" d="%s" fill="none" stroke="%s" stroke-width="2"%s/>')
      :format(side.name, #runs, path(runs, x, y), side.colour, side.dash))
  end
  add(out, ('<text x="%d" y="%d" font-size="11" text-anchor="end">%d</text><text x="%d" y="%d" font-size="11" '
    .. 'text-anchor="end">%d</text>'):format(LEFT - 4, TOP + 10, hi, LEFT - 4, TOP + ph, lo))
  add(out, ('<text x="%d" y="%d" font-size="11">%d</text><text x="%d" y="%d" font-size="11" text-anchor="end">%d</text>')
    :format(LEFT, H - 6, domain.from, W, H - 6, domain.to))
  add(out, "</svg>")
  add(out, ('<p class="legend"><span style="background:#2563eb"></span>base<span style="background:#ea580c"></span>'
    .. 'candidate<span style="background:#f4c7c3"></span>base and candidate differ%s</p>'):format(series.sampled
    and " (the sampled inputs only: no exhaustive run kept every output)" or ""))
end

return M
