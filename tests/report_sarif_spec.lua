-- `vkit run report --format sarif`: a SARIF 2.1.0 log with the changed
-- function's source location, the rules the findings break and their
-- levels, checked by Microsoft's SARIF multitool (`validate`, the format's
-- reference checker, pinned by SHA-256 in deps/sarif.lock).
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local report = require "vkit.report"
local sarif = require "tests.support.sarif"
local reports = require "tests.support.reports"

-- What the multitool may say of a valid vkit log: vkit has no web page to
-- name as the driver's informationUri (SARIF2005 is a style warning).
local TOLERATED = { SARIF2005 = "nformationUri" }

local function assert_clean(v)
  assert.same({}, v.errors, v.output)
  for _, w in ipairs(v.warnings) do
    assert(TOLERATED[w.rule] and w.text:find(TOLERATED[w.rule], 1, true), "unexpected warning " .. w.rule .. ": " .. w.text)
  end
end

describe("SARIF locations", function()
  it("percent-encode the file as a URI reference: #, ?, %, a space or a control cannot cut it", function()
    local model = { kind = "change-certify", run_id = "r-1", status = "done", outcome = "unknown", passing = false,
                    reason = "x", message = "m", methods = {}, target = { file = "src/a b#c?d%e\n.py", line = 7 } }
    local log = json.decode(report.render(model, "sarif"))
    local loc = log.runs[1].results[1].locations[1].physicalLocation
    assert.equal("src/a%20b%23c%3Fd%25e%0A.py", loc.artifactLocation.uri)
    assert.equal(7, loc.region.startLine)
    assert.equal("src/score.py", require("vkit.report.sarif").uri "src/score.py")
  end)
end)

describe("SARIF reports", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  describe("of a certification wrong at inputs 4000..4095", function()
    local ctx
    setup(function() ctx = reports.violation_run() end)
    teardown(function() if ctx then ctx.finish() end end)

    it("pass the SARIF multitool's validation", function()
      local path = dir .. "/vkit.sarif"
      t.write(path, ctx.report "sarif")
      assert_clean(sarif.validate(dir, path))
    end)

    it("say the finding at the function's source line, with its rule and level", function()
      local log = json.decode(ctx.report "sarif")
      assert.equal("2.1.0", log.version)
      local run = log.runs[1]
      assert.equal("vkit", run.tool.driver.name)
      assert.equal(vkit.version, run.tool.driver.version)
      assert.equal(1, #run.results)
      local r = run.results[1]
      assert.same({ "standing-requirement", "error", 0 }, { r.ruleId, r.level, r.ruleIndex })
      assert.equal("standing-requirement", run.tool.driver.rules[1].id)
      assert.matches("^4000%.%.4095 %(96 inputs%): standing%-requirement — at input 4000: the candidate returned 200",
        r.message.text)
      local where = r.locations[1].physicalLocation
      assert.same({ "src/score.py", 4 }, { where.artifactLocation.uri, where.region.startLine })
      assert.same({ ctx.p.target, ctx.candidate, "observed_violation" },
        { run.properties.base, run.properties.candidate, run.properties.outcome })
      assert.equal("vkit/change-certify/" .. ctx.run_id, run.automationDetails.id)
    end)
  end)

  it("of a passing run: no result, and still valid", function()
    local model = { kind = "change-certify", run_id = "r-1", status = "done", outcome = "all_inputs_conform",
                    passing = true, methods = {}, target = { file = "src/a.rs", line = 1, ["function"] = "f" } }
    local text = report.render(model, "sarif")
    assert.equal(0, #json.decode(text).runs[1].results)
    t.write(dir .. "/pass.sarif", text)
    assert_clean(sarif.validate(dir, dir .. "/pass.sarif"))
  end)

  it("of a run that could not check: one result saying why, without a location it does not know", function()
    local model = { kind = "change-certify", run_id = "r-2", status = "done", outcome = "unknown", passing = false,
                    reason = "candidate-failed", message = "0 of 10 checked\nsee run show", methods = {} }
    local log = json.decode(report.render(model, "sarif"))
    local r = log.runs[1].results[1]
    assert.same({ "candidate-failed", "error" }, { r.ruleId, r.level })
    assert.equal("0 of 10 checked\nsee run show.", r.message.text)
    assert.is_nil(r.locations)
    t.write(dir .. "/unknown.sarif", report.render(model, "sarif"))
    assert_clean(sarif.validate(dir, dir .. "/unknown.sarif"))
  end)

  it("the validator is real: a planted broken log fails it", function()
    local model = { kind = "change-certify", run_id = "r-3", status = "done", outcome = "observed_violation",
                    passing = false, reason = "x", methods = {}, target = { file = "a.py", line = 2 } }
    local log = json.decode(report.render(model, "sarif"))
    -- two breaches of the schema (the multitool says nothing at all of a
    -- file whose level is outside the enumeration, so none is planted here)
    log.runs[1].tool.driver.name = nil
    log.runs[1].results[1].locations[1].physicalLocation.region.startLine = 0
    t.write(dir .. "/broken.sarif", json.encode(log))
    local v = sarif.validate(dir, dir .. "/broken.sarif")
    local rules = {}
    for _, e in ipairs(v.errors) do rules[#rules + 1] = e.rule end
    table.sort(rules)
    assert.same({ "JSON1002", "JSON1008" }, rules, v.output)
  end)
end)
