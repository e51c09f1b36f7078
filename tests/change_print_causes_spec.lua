-- The summary `vkit change certify` prints of a run it did not see finish
-- (vkit.cli.outcomes.print_change) names each method's causes, why inputs
-- could not be checked, as the text report does: the same lines, read from
-- the same retained records.  A real run of a Python candidate returning -1.
local vkit = require "vkit"
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local outcomes = require "vkit.cli.outcomes"
local change_runs = require "vkit.runs.change"
local records = require "vkit.report.records"

local NEGATIVE = "def score(x):\n    if x >= 50:\n        return -1\n    return 2 * x\n"

describe("vkit.cli.outcomes.print_change", function()
  local p
  before_each(function() p = intents.language_project "python" end)
  after_each(function() intents.finish(p) end)

  it("prints the cause lines the text report shows, under their method", function()
    local candidate = p.commit({ ["src/score.py"] = NEGATIVE }, p.target)
    local summary = intents.certify(p, candidate, { "--method", "finite_paired" })
    local project = p.dir .. "/project"
    local store = require("vkit.store").open(project)
    local run = assert(store:get(summary.run_id))
    local lines = {}
    outcomes.print_change(change_runs.shadow(store, run), function(l) lines[#lines + 1] = l end,
      records.attempt_dir(run))
    local printed = table.concat(lines, "\n")
    local cause = "    cause (candidate): returned -1, not a u32 (3 inputs, first 59)"
    assert.matches("\n" .. cause .. "\n", printed, 1, true)
    local report = t.vkit { "run", "report", "--run", summary.run_id, "--format", "text", "--project", project }
    assert.matches("cause (candidate): returned -1, not a u32 (3 inputs, first 59)", report.stdout, 1, true)
    -- the method's line comes first, the cause under it
    assert.truthy(printed:find("  finite_paired[^\n]*\n.-" .. cause:gsub("%p", "%%%0")), printed)
    -- without the attempt directory, nothing is read and no cause is made up
    lines = {}
    outcomes.print_change(change_runs.shadow(store, run), function(l) lines[#lines + 1] = l end)
    assert.not_matches("cause %(", table.concat(lines, "\n"))
    assert.truthy(vkit.fs.lstat(records.attempt_dir(run)))
  end)
end)
