local json = require "vkit.json"
local contract = require "vkit.change.contract"
local assess = require "vkit.change.assess"

local H = ("0"):rep(64)

-- Inputs 0..9, universe 0..100; inputs 0..4 must return 0..50.
local intent = assert(contract.normalize(assert(json.decode(([[{
  "signature": "u32 -> u32",
  "domain": {"inputs": [{"from":0,"to":9}], "codec_sha256": "%s", "observation_policy_sha256": "%s",
             "environment_model_sha256": "%s"},
  "observations": [{"from":0,"to":100}],
  "requirements": [{"inputs": [{"from":0,"to":4}], "outputs": [{"from":0,"to":50}]}]
}]]):format(H, H, H)))))

local function v(n) return { state = "value", value = n } end
local failed = { state = "failed" }
local unstable = { state = "unstable" }

local guards = {
  { name = "raise", inputs = { { 5, 7 } }, outputs = { { 10, 30 } } },
  { name = "cap", inputs = { { 7, 8 } }, outputs = { { 20, 40 } } },
}

describe("assessing paired observations", function()
  it("requires preservation outside guards", function()
    assert.equal("conforms", assess.judge(intent, {}, 1, v(5), v(5)).verdict)
    local j = assess.judge(intent, {}, 1, v(5), v(6))
    assert.equal("violation", j.verdict)
    assert.equal("unapproved-difference", j.rule)
  end)

  it("applies the standing requirements even where the base already broke them", function()
    local j = assess.judge(intent, {}, 2, v(60), v(60))
    assert.equal("violation", j.verdict)
    assert.equal("standing-requirement", j.rule)
    j = assess.judge(intent, {}, 2, v(5), v(101)) -- outside the observation universe
    assert.equal("standing-requirement", j.rule)
  end)

  it("allows a standing-intent repair of an illegal base output", function()
    local j = assess.judge(intent, {}, 2, v(60), v(40))
    assert.equal("conforms", j.verdict)
    assert.equal("repair", j.rule)
  end)

  it("accepts an approved difference inside a guard and refuses one outside it", function()
    assert.equal("conforms", assess.judge(intent, guards, 5, v(1), v(12)).verdict)
    local j = assess.judge(intent, guards, 5, v(1), v(31))
    assert.equal("guard", j.rule)
    assert.matches("raise", j.message)
  end)

  it("intersects overlapping guards", function()
    assert.equal("conforms", assess.judge(intent, guards, 7, v(0), v(25)).verdict)
    local j = assess.judge(intent, guards, 7, v(0), v(15)) -- raise allows, cap does not
    assert.equal("violation", j.verdict)
    assert.matches("raise, cap", j.message)
    j = assess.judge(intent, guards, 7, v(0), v(35)) -- cap allows, raise does not
    assert.equal("violation", j.verdict)
  end)

  it("leaves an input undecided when an observation failed or was unstable", function()
    assert.equal("undecided", assess.judge(intent, {}, 1, v(5), failed).verdict)
    assert.equal("undecided", assess.judge(intent, {}, 1, unstable, v(5)).verdict)
    -- but a candidate value that breaks the standing intent is a violation whatever the base did
    assert.equal("violation", assess.judge(intent, {}, 1, failed, v(99)).verdict)
    -- inside a guard the base is not needed
    assert.equal("conforms", assess.judge(intent, guards, 5, failed, v(12)).verdict)
  end)

  describe("the overall status", function()
    local function obs(input, b, c) return { input = input, base = b, candidate = c } end

    it("is observed_conformance only when every selected input was observed and conforms", function()
      local r = assess.assess(intent, {}, { obs(0, v(1), v(1)), obs(1, v(2), v(2)) }, { selected = 2, omitted = 8 })
      assert.equal("observed_conformance", r.status)
      assert.equal(8, r.coverage.omitted)
      assert.equal(10, r.coverage.domain)
      r = assess.assess(intent, {}, { obs(0, v(1), v(1)) }, { selected = 2, omitted = 8 })
      assert.equal("unknown", r.status)
      assert.equal(1, r.coverage.unobserved)
    end)

    it("keeps a known violation visible when another input failed", function()
      local r = assess.assess(intent, {}, { obs(0, v(1), failed), obs(1, v(2), v(3)) }, { selected = 2, omitted = 0 })
      assert.equal("observed_violation", r.status)
      assert.equal(2, #r.findings)
      assert.equal("undecided", r.findings[1].verdict)
      assert.equal("violation", r.findings[2].verdict)
    end)

    it("is unknown when anything is undecided and nothing is violated", function()
      local r = assess.assess(intent, {}, { obs(0, unstable, v(1)) }, { selected = 1, omitted = 0 })
      assert.equal("unknown", r.status)
      assert.equal("unknown", assess.assess(intent, {}, {}, { selected = 0, omitted = 10 }).status)
    end)
  end)
end)
