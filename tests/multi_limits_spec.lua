-- The multi-parameter profile's document limits (policies/signatures.lua),
-- each at the limit and one past it: the accepted inputs a contract may
-- claim, its standing requirements, a guard list, and one set's text.
local vkit = require "vkit"
local json = vkit.json
local S = require "vkit.schema"
local mcontract = require "vkit.change.multi.contract"
local mdifferences = require "vkit.change.multi.differences"
local multi = require "tests.support.multi"
local policy = vkit.policies.signatures

local SIG = multi.signature({ { "x", "u64" }, { "lo", "u64" }, { "hi", "u64" } }, "u64")
local H = ("1"):rep(64)

local function contract(inputs, requirements)
  return assert(json.decode(json.encode {
    signature = SIG, observations = json.array { "*" }, requirements = json.array(requirements or {}),
    domain = { inputs = inputs, codec_sha256 = H, observation_policy_sha256 = H, environment_model_sha256 = H } }))
end

-- n boxes, each a different value of x, all allowing any output.
local function boxes(n)
  local list = {}
  for i = 1, n do list[i] = { inputs = { x = tostring(i) }, outputs = json.array { "*" } } end
  return list
end

describe("policies/signatures.lua", function()
  it("contract_inputs: a contract may claim that many accepted inputs, not one more", function()
    local half = math.floor(math.log(policy.contract_inputs, 2) + 0.5) // 2
    assert.equal(policy.contract_inputs, 1 << (2 * half))
    local side = ("0..%d"):format((1 << half) - 1)
    assert.is_table(mcontract.normalize(contract { x = side, lo = side, hi = "0" }))
    local refused, message, code = mcontract.normalize(contract { x = side, lo = side, hi = "0..1" })
    assert.is_nil(refused)
    assert.equal("domain-too-large", code)
    assert.matches(tostring(policy.contract_inputs), message, 1, true)
  end)

  it("max_requirements: that many standing requirements, not one more", function()
    local inputs = { x = "0..99", lo = "0", hi = "0" }
    assert.is_table(mcontract.normalize(contract(inputs, boxes(policy.max_requirements))))
    local refused, message, code = mcontract.normalize(contract(inputs, boxes(policy.max_requirements + 1)))
    assert.is_nil(refused)
    assert.equal("contract-invalid", code)
    assert.matches("requirements", message, 1, true)
  end)

  it("max_set_text: one set's text of that many bytes, not one more", function()
    local function of_length(n)            -- "0|0|…|0" then spaces (ignored): a valid set text of n bytes
      local s = ("0|"):rep((n - 1) // 2) .. "0"
      return s .. (" "):rep(n - #s)
    end
    assert.equal(policy.max_set_text, #of_length(policy.max_set_text))
    assert.is_table(mcontract.normalize(contract { x = of_length(policy.max_set_text), lo = "0", hi = "0" }))
    local refused, message, code = mcontract.normalize(contract { x = of_length(policy.max_set_text + 1), lo = "0",
                                                                  hi = "0" })
    assert.is_nil(refused)
    assert.equal("contract-invalid", code)
    assert.matches("longer than " .. policy.max_set_text, message, 1, true)
  end)

  it("max_guards: a difference policy of that many guards, not one more", function()
    local function guards(n)
      local list = {}
      for i = 1, n do list[i] = { name = "G-" .. i, inputs = { x = tostring(i) }, outputs = json.array { "*" } } end
      return json.decode(json.encode { schema_version = 1, intent = H, guards = json.array(list) })
    end
    assert.is_truthy(S.check(mdifferences.schema, guards(policy.max_guards)))
    assert.is_falsy(S.check(mdifferences.schema, guards(policy.max_guards + 1)))
  end)
end)
