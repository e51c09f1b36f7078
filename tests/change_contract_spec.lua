local json = require "vkit.json"
local ranges = require "vkit.change.ranges"
local contract = require "vkit.change.contract"

local H1, H2, H3 = ("1"):rep(64), ("2"):rep(64), ("3"):rep(64)

local function doc(overrides)
  local d = {
    signature = "u32 -> u32",
    domain = { inputs = json.array { { from = 0, to = 9 } }, codec_sha256 = H1, observation_policy_sha256 = H2,
               environment_model_sha256 = H3 },
    observations = json.array { { from = 0, to = 100 } },
    requirements = json.array { { inputs = json.array { { from = 0, to = 4 } }, outputs = json.array { 0, 1, 2 } },
                                { inputs = json.array { 3 }, outputs = json.array { 2, 50 } } },
  }
  for k, v in pairs(overrides or {}) do d[k] = v end
  return assert(json.decode(json.encode(d)))
end

describe("ranges", function()
  it("normalises any spelling of a set to merged sorted ranges", function()
    local a = assert(ranges.normalize(json.decode '[5, {"from":1,"to":3}, 4, 9, {"from":2,"to":2}]'))
    assert.same({ { 1, 5 }, { 9, 9 } }, a)
    assert.equal(6, ranges.count(a))
  end)

  it("refuses reversed ranges, values outside u32 and odd items", function()
    assert.is_nil(ranges.normalize(json.decode '[{"from":3,"to":1}]'))
    assert.is_nil(ranges.normalize(json.decode '[4294967296]'))
    assert.is_nil(ranges.normalize(json.decode '[-1]'))
    assert.is_nil(ranges.normalize(json.decode '["1"]'))
    assert.is_nil(ranges.normalize(json.decode '[{"from":1,"to":2,"step":1}]'))
  end)

  it("intersects, tests membership, finds what is missing and iterates", function()
    local a, b = { { 0, 10 }, { 20, 30 } }, { { 5, 25 } }
    assert.same({ { 5, 10 }, { 20, 25 } }, ranges.intersect(a, b))
    assert.is_true(ranges.contains(a, 25))
    assert.is_false(ranges.contains(a, 15))
    assert.equal(0, ranges.first_missing(a, b))
    assert.is_nil(ranges.first_missing({ { 6, 9 } }, b))
    assert.equal(26, ranges.first_missing({ { 24, 27 } }, b))
    local seen = {}
    for v in ranges.values { { 1, 2 }, { 5, 5 } } do seen[#seen + 1] = v end
    assert.same({ 1, 2, 5 }, seen)
  end)
end)

describe("contracts", function()
  it("normalise so that two spellings have one digest", function()
    local a = assert(contract.normalize(doc()))
    local b = assert(contract.normalize(doc { requirements = json.decode(
      '[{"inputs":[3],"outputs":[50,2]},{"inputs":[0,1,2,3,4],"outputs":[{"from":0,"to":2}]}]') }))
    assert.equal(json.digest(contract.to_json(a)), json.digest(contract.to_json(b)))
  end)

  it("compute legal outputs as the universe intersected with every requirement", function()
    local c = assert(contract.normalize(doc()))
    assert.same({ { 2, 2 } }, contract.legal(c, 3))
    assert.same({ { 0, 2 } }, contract.legal(c, 1))
    assert.same({ { 0, 100 } }, contract.legal(c, 7))
  end)

  it("refuse requirements outside the domain and oversize domains", function()
    local _, _, code = contract.normalize(doc { requirements = json.decode '[{"inputs":[10],"outputs":[1]}]' })
    assert.equal("requirement-outside-domain", code)
    _, _, code = contract.normalize(doc { observations = json.decode '[{"from":0,"to":4096}]' })
    assert.equal("domain-too-large", code)
    _, _, code = contract.normalize(doc { signature = "u64 -> u64" })
    assert.equal("contract-invalid", code)
  end)

  it("detect empty and unsatisfiable intents", function()
    local empty = assert(contract.normalize(doc { domain = json.decode(('{"inputs":[],"codec_sha256":"%s",'
      .. '"observation_policy_sha256":"%s","environment_model_sha256":"%s"}'):format(H1, H2, H3)),
      requirements = json.array() }))
    assert.equal("empty-intent-domain", select(3, contract.check_satisfiable(empty, "intent")))
    local none = assert(contract.normalize(doc { requirements = json.decode '[{"inputs":[1],"outputs":[200]}]' }))
    assert.equal("unsatisfiable-intent", select(3, contract.check_satisfiable(none, "intent")))
  end)

  describe("coverage", function()
    local intent = assert(contract.normalize(doc()))

    it("binds the same claim and a weaker one", function()
      assert.is_true(contract.covers(intent, intent))
      local weaker = assert(contract.normalize(doc { requirements = json.array() }))
      assert.is_true(contract.covers(weaker, intent))
    end)

    it("refuses a claim that excludes legal behaviour, naming input and output", function()
      local narrower = assert(contract.normalize(doc { requirements = json.decode
        '[{"inputs":[{"from":0,"to":4}],"outputs":[0,1,2]},{"inputs":[1],"outputs":[0,2]}]' }))
      local ok, message, code = contract.covers(narrower, intent)
      assert.is_nil(ok)
      assert.equal("claim-excludes-legal-behavior", code)
      assert.matches("input 1 .* output 1", message)
    end)

    it("refuses a changed domain: other inputs or another encoding", function()
      local fewer = assert(contract.normalize(doc { domain = json.decode(('{"inputs":[{"from":0,"to":8}],"codec_sha256":"%s",'
        .. '"observation_policy_sha256":"%s","environment_model_sha256":"%s"}'):format(H1, H2, H3)) }))
      assert.equal("claim-domain-changed", select(3, contract.covers(fewer, intent)))
      local recoded = assert(contract.normalize(doc { domain = json.decode(('{"inputs":[{"from":0,"to":9}],"codec_sha256":"%s",'
        .. '"observation_policy_sha256":"%s","environment_model_sha256":"%s"}'):format(H2, H2, H3)) }))
      assert.equal("claim-domain-changed", select(3, contract.covers(recoded, intent)))
    end)
  end)
end)
