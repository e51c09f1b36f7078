-- A batch's share of the deadline (issue 34): the multi-parameter
-- exhaustive method gives each batch launch a share of the time left
-- (policies/signatures.lua batch_deadline), so a candidate that hangs on
-- one input does not take every other input with it.  A batch past its
-- share is split and its halves re-run; a single input past its share is
-- reported as timed out: unknown, never a value and never a pass.  Real
-- Git repositories and python3.11 through the library API.
local vkit = require "vkit"
local batch_run = require "vkit.change.batch_run"
local intents = require "tests.support.intents"
local multi = require "tests.support.multi"

local P = vkit.policies.signatures.batch_deadline

describe("a batch launch's share of the time left", function()
  it("is slack times its proportion of the work left, capped by max_fraction and floored", function()
    -- one batch of many: the proportion decides
    assert.equal(math.floor(P.slack * 300000 * 1 / 16), batch_run.share_ms(300000, 1, 16, P))
    -- the last launch of the work: capped so that a split leaves time for the halves
    assert.equal(math.floor(300000 * P.max_fraction), batch_run.share_ms(300000, 8, 8, P))
    -- a tiny proportion: the floor, a runtime's start on a loaded host
    assert.equal(P.floor_ms, batch_run.share_ms(300000, 1, 1 << 22, P))
    -- never more than what is left
    assert.equal(P.floor_ms - 1, batch_run.share_ms(P.floor_ms - 1, 1, 1 << 22, P))
    assert.equal(1, batch_run.share_ms(0, 1, 4, P))
  end)
end)

local F = multi.signature({ { "a", "u8" }, { "b", "u8" } }, "u8")
local BASE = "def f(a, b):\n    return a + b\n"
-- inside the pure profile; at (1, 0) a loop no host finishes
local HANGS = "def f(a, b):\n    if a == 1 and b == 0:\n        for i in range(10 ** 15):\n            a = a + 0\n"
  .. "    return a + b\n"

describe("a candidate that hangs on one input of two", function()
  it("has that input reported as timed out and the other checked: unknown, never a pass", function()
    local p = multi.project { language = "python", fn = "f", signature = F, inputs = { a = "0..1", b = "0" },
                              observations = { "0..6" }, source = BASE }
    finally(function() intents.finish(p) end)
    local candidate = p.commit({ [p.path] = HANGS }, p.target)
    local result = vkit.change.run_exhaustive(p.dir .. "/project", p.request(candidate), p.target,
      { dir = p.dir .. "/library_run", deadline_ms = 30000 })
    assert.is_true(result.admitted)  -- observed in batch mode
    assert.equal("unknown", result.status)
    assert.equal("candidate-failed", result.reason)
    local report = result.record
    assert.equal(2, report.inputs_accepted)
    assert.equal(1, report.inputs_checked)
    assert.equal(1, report.inputs_conforming)
    assert.equal(1, report.failed_inputs.total)
    assert.same({ input = "f(a=1, b=0)", side = "candidate", outcome = "timeout" },
      { input = report.failed_inputs.items[1].input, side = report.failed_inputs.items[1].side,
        outcome = report.failed_inputs.items[1].outcome })
    -- the batch of two was split into its inputs, past its share
    assert.equal(1, #report.batches.split)
    for _, s in ipairs(report.batches.split) do assert.equal("deadline-share", s.why) end
    assert.matches("share of the time left", report.observation_policy.note, 1, true)
    -- the reports' causes: the one input's timeout (first pass), not the launch that was split
    local rc = require "vkit.report.causes"
    local lines = {}
    for i, c in ipairs(rc.of_method(p.dir, { report = "library_run/" .. result.report, method = "library_run" })) do
      lines[i] = rc.line(c)
    end
    assert.same({ "cause (candidate): timed out (1 run)" }, lines)
  end)
end)
