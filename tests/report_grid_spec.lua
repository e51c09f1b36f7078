-- The HTML report's grid of a multi-parameter domain (issue 34): the pure
-- grid function (which parameters, binning at the cap and one past it,
-- aggregation over the other parameters, cell states), then a real run's
-- page as headless Chromium renders it.
local vkit = require "vkit"
local fs = vkit.fs
local grid = require "vkit.report.grid"
local report = require "vkit.report"
local t = require "tests.support.run"
local browser = require "tests.support.browser"
local intents = require "tests.support.intents"
local multi = require "tests.support.multi"

local function cell(g, col, row)
  for _, c in ipairs(g.cells) do
    if c.col == col and c.row == row then return c end
  end
end

local function states(g)
  local out = {}
  for _, c in ipairs(g.cells) do
    if c.state ~= "checked" then out[#out + 1] = ("%s %d,%d"):format(c.state, c.col, c.row) end
  end
  table.sort(out)
  return out
end

describe("the grid of a multi-parameter domain", function()
  it("bins an axis of at most the cap one value a cell, and one past it two", function()
    assert.same({ 1, 64 }, { grid.bin(64, 64) })
    assert.same({ 2, 33 }, { grid.bin(65, 64) })
    assert.same({ 1, 1 }, { grid.bin(1, 64) })
    assert.same({ 16384, 64 }, { grid.bin(1 << 20, 64) })
  end)

  it("draws the two parameters with the most values, the later on x, ties to the earlier", function()
    assert.same({ 3, 1 }, { grid.axes { 10, 2, 10 } })
    assert.same({ 2, 1 }, { grid.axes { 5, 5, 5 } })
    assert.same({ 1 }, { grid.axes { 7 } })
  end)

  -- a: u8 0..63 (64 values: the cap), b: i8 -64..0 (65: one past), c: bool
  local params = { { name = "a", type = "u8", set = "0..63" }, { name = "b", type = "i8", set = "-64..0" },
                   { name = "c", type = "bool", set = "*" } }
  local N = 64 * 65 * 2
  local function index(a, b, c) return (a * 65 + (b + 64)) * 2 + (c and 1 or 0) end

  it("at the cap, one value a cell; one past, two; the other parameter aggregated", function()
    -- the sets above are sized for policies/report.lua's cap, which build() takes by default
    assert.equal(64, require("vkit.policy").report.grid_cells_per_axis)
    local v = index(10, -1, true)                  -- b = -1 is position 63: cell 31 (62..63)
    local g = grid.build({ params = params, ran = { { 0, N - 1 } },
                           violating = { { from = v, to = v, rule = "unapproved-difference" } } })
    assert.same({ "b", 2, 33, "a", 1, 64 }, { g.x.name, g.x.bin, g.x.cells, g.y.name, g.y.bin, g.y.cells })
    assert.same({ "c" }, g.aggregated)
    assert.equal(33 * 64, #g.cells)
    assert.same({ "-64..-63", "-2..-1", "0" }, { g.x.labels[1], g.x.labels[32], g.x.labels[33] })
    assert.same({ "0", "63" }, { g.y.labels[1], g.y.labels[64] })
    assert.same({ "violating 31,10" }, states(g))
    local c = cell(g, 31, 10)
    -- two values of b times both values of c
    assert.same({ 4, 1, true }, { c.inputs, c.violating, c.difference })
    assert.equal(2, cell(g, 32, 0).inputs)         -- the last bin holds b = 0 alone
    local total = 0
    for _, x in ipairs(g.cells) do total = total + x.inputs end
    assert.equal(N, total)
  end)

  it("colours a cell by its worst input: violating, undecided, not run, checked", function()
    local v = index(0, -64, false)
    local g = grid.build({ params = params, ran = { { 0, N // 2 - 1 } }, undecided = { index(1, -64, true) },
                           undecided_total = 3, violating = { { from = v, to = v + 1, rule = "requirement" } } }, 64)
    assert.same({ "violating", false }, { cell(g, 0, 0).state, cell(g, 0, 0).difference })
    assert.equal("undecided", cell(g, 0, 1).state)
    assert.equal("checked", cell(g, 0, 31).state)
    assert.equal("omitted", cell(g, 0, 32).state)
    assert.same({ 1, 3 }, { g.undecided_drawn, g.undecided_total })
  end)

  it("draws one parameter as one row", function()
    local g = grid.build({ params = { { name = "n", type = "i16", set = "-100..99" } }, ran = { { 0, 199 } },
                           violating = { { from = 199, to = 199, rule = "unapproved-difference" } } }, 64)
    assert.is_nil(g.y)
    assert.same({ 4, 50, 50 }, { g.x.bin, g.x.cells, #g.cells })
    assert.same({ "violating 49,0" }, states(g))
    assert.equal("96..99", g.x.labels[50])
  end)

  it("keeps its lists lists in the JSON report, none aggregated for two parameters", function()
    local g = grid.build({ params = { params[1], params[3] }, ran = { { 0, 127 } } }, 64)
    local doc = vkit.json.decode(report.render({ kind = "change-certify", run_id = "r-1", status = "done",
      methods = {}, subject = {}, established = {}, not_established = {}, artifacts = {}, grid = g }, "json"))
    assert.same({ "array", 128 }, { vkit.json.kind(doc.grid.aggregated), #doc.grid.cells })
  end)

  it("is not drawn above the exhaustive cap (nothing ran)", function()
    assert.is_nil(grid.build { params = { { name = "a", type = "u32", set = "*" }, { name = "b", type = "u8", set = "*" } } })
  end)

  it("renders into the self-contained page: cells, crosses, axes and caption", function()
    local v = index(10, -1, true)
    local g = grid.build({ params = params, ran = { { 0, N - 1 } },
                           violating = { { from = v, to = v, rule = "unapproved-difference" } } }, 64)
    local html = report.render({ kind = "change-certify", run_id = "r-1", status = "done", passing = false,
      methods = {}, subject = {}, established = {}, not_established = {}, artifacts = {}, grid = g }, "html")
    local n = 0
    for _ in html:gmatch '<rect class="cell"' do n = n + 1 end
    assert.equal(33 * 64, n)
    assert.matches('<path class="difference" data-col="31" data-row="10"', html, 1, true)
    assert.matches("b: -64..0, 65 values, 2 a cell", html, 1, true)
    assert.matches("whatever c is", html, 1, true)
    assert.is_nil(html:find("<script", 1, true))
  end)

  -- f(a: u8 in 0..99, b: i8 in -5..5, flag: bool), 2,200 inputs; the
  -- candidate wrong exactly where a is 40..45, b is 3 and flag is true
  describe("of a real run, in headless Chromium", function()
    local p, summary, dir, cleanup
    local BASE = "def f(a, b, flag):\n    return a + b if flag else a - b\n"
    local WRONG = "def f(a, b, flag):\n    if 40 <= a <= 45 and b == 3 and flag:\n        return 0\n"
      .. "    return a + b if flag else a - b\n"
    setup(function()
      if not browser.available() then
        error("chromium is not installed: scripts/deps installs it (Debian package chromium)")
      end
      p = multi.project { language = "python", fn = "f", source = BASE, observations = { "*" },
        signature = multi.signature({ { "a", "u8" }, { "b", "i8" }, { "flag", "bool" } }, "i16"),
        inputs = { a = "0..99", b = "-5..5", flag = "*" } }
      summary = p.certify(WRONG)
      dir, cleanup = t.tempdir()
    end)
    teardown(function()
      if p then intents.finish(p) end
      if cleanup then cleanup() end
    end)

    it("draws a by b, flag aggregated, a binned two a row, red exactly at a 40..45, b 3", function()
      assert.equal("observed_violation", summary.outcome)
      local out = t.vkit { "run", "report", "--run", summary.run_id, "--project", p.dir .. "/project", "--format", "html" }
      assert.equal(0, out.code, out.stderr)
      local page = dir .. "/report.html"
      t.write(page, out.stdout)
      local dom = browser.dom(dir, page)
      local svg = assert(dom:match '<svg id="grid"[^>]*>', "the grid is in the loaded page")
      assert.matches('data-x="b" data-y="a" data-cols="11" data-rows="50"', svg, 1, true)
      local cells, red = 0, {}
      for attrs in dom:gmatch '<rect class="cell"([^>]*)>' do
        cells = cells + 1
        if attrs:find('data-state="violating"', 1, true) then
          red[#red + 1] = attrs:match 'data%-x="([^"]*)"' .. " " .. attrs:match 'data%-y="([^"]*)"'
            .. " " .. attrs:match 'data%-violating="(%d+)"'
        end
      end
      assert.equal(11 * 50, cells)
      -- rows of two values of a; flag aggregated: 2 of the 4 inputs of 40..41 and b=3
      assert.same({ "3 40..41 2", "3 42..43 2", "3 44..45 2" }, red)
      local crosses = {}
      for col, row in dom:gmatch '<path class="difference" data%-col="(%d+)" data%-row="(%d+)"' do
        crosses[#crosses + 1] = col .. "," .. row
      end
      assert.same({ "8,20", "8,21", "8,22" }, crosses)
      assert.matches("b: -5..5, 11 values →", dom, 1, true)
      assert.matches("← a: 0..99, 100 values, 2 a cell", dom, 1, true)
      assert.matches('<text class="tick" data%-axis="y" data%-row="49"[^>]*>98%.%.99</text>', dom)
      assert.matches("with its values of b and a, whatever flag is: red if any of them violates", dom, 1, true)
      assert.is_nil(dom:find("<script", 1, true))
      local png = browser.screenshot(dir, page, 1100, 1800)
      local bytes = assert(fs.read(png, 1 << 26))
      assert.equal("\137PNG\r\n\26\n", bytes:sub(1, 8))
      if os.getenv("VKIT_GRID_PNG") then t.write(os.getenv("VKIT_GRID_PNG"), bytes) end
    end)
  end)
end)
