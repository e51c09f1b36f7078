-- The HTML report draws what base and candidate return over the accepted
-- domain (an inline SVG step chart, the ranges where they differ shaded),
-- checked as Chromium renders the page, the way the domain strip is.
local vkit = require "vkit"
local fs = vkit.fs
local t = require "tests.support.run"
local report = require "vkit.report"
local chart = require "vkit.report.chart"
local browser = require "tests.support.browser"
local reports = require "tests.support.reports"

describe("the outputs chart", function()
  it("finds the ranges where the two sides differ, a missing value included", function()
    local null = vkit.json.null
    assert.same({ { 3, 5 }, { 9, 9 } }, chart.differences({ { 0, 5, 1 }, { 6, 9, 2 } },
      { { 0, 2, 1 }, { 3, 4, 7 }, { 5, 5, 8 }, { 6, 8, 2 }, { 9, 9, null } }))
    assert.same({}, chart.differences({ { 0, 9, 1 } }, { { 0, 4, 1 }, { 5, 9, 1 } }))
  end)

  describe("of a certification wrong at inputs 4000..4095, in headless Chromium", function()
    local ctx, dir, cleanup
    setup(function()
      if not browser.available() then
        error("chromium is not installed: scripts/deps installs it (Debian package chromium)")
      end
      ctx = reports.violation_run()
      dir, cleanup = t.tempdir()
    end)
    teardown(function()
      if ctx then ctx.finish() end
      if cleanup then cleanup() end
    end)

    it("draws both sides over the whole domain and shades exactly 4000..4095", function()
      local page = dir .. "/report.html"
      t.write(page, ctx.report "html")
      local dom = browser.dom(dir, page)
      local svg = dom:match '<svg id="outputs"[^>]*>'
      assert.truthy(svg, "the chart is in the loaded page")
      assert.matches('data-from="0" data-to="4095" data-min="0" data-max="200" data-sampled="false" '
        .. 'data-differences="1"', svg, 1, true)
      local diffs = {}
      for from, to in dom:gmatch '<rect class="difference"[^>]-data%-from="(%d+)" data%-to="(%d+)"' do
        diffs[#diffs + 1] = from .. ".." .. to
      end
      assert.same({ "4000..4095" }, diffs)
      -- base: x // 64 is 0..63, a run of one value each; the candidate the
      -- same up to 62 (3968..3999), then 200 over 4000..4095
      assert.matches('<path class="series" data%-side="base" data%-runs="64" d="M', dom)
      assert.matches('<path class="series" data%-side="candidate" data%-runs="64" d="M', dom)
      local png = browser.screenshot(dir, page, 1100, 1000)
      assert.equal("\137PNG\r\n\26\n", assert(fs.read(png, 1 << 26)):sub(1, 8))
    end)
  end)

  it("from sampled inputs only says so", function()
    local html = report.render({ kind = "change-certify", run_id = "r-1", status = "done", passing = false, methods = {},
      subject = {}, established = {}, not_established = {}, artifacts = {},
      domain = { from = 0, to = 99, checked = { { 0, 0 }, { 50, 50 } }, violating = { 50 },
                 series = { base = { { 0, 0, 0 }, { 50, 50, 100 } }, candidate = { { 0, 0, 0 }, { 50, 50, 99 } },
                            sampled = true } } }, "html")
    assert.matches('data%-sampled="true" data%-differences="1"', html)
    assert.matches("the sampled inputs only", html, 1, true)
  end)
end)
