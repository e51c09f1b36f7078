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

-- group_inputs: the violating inputs of one rule grouped into boxes for a
-- report, at most that many; past it the report says how many it grouped
-- of how many.  f(a: u16 in 0..511, b: u8) is 2 x group_inputs inputs,
-- index a * 256 + b; the candidate is wrong at the first `limit` indexes.
describe("policies/signatures.lua group_inputs", function()
  local intents = require "tests.support.intents"
  local F = multi.signature({ { "a", "u16" }, { "b", "u8" } }, "u16")
  local p
  setup(function()
    assert.equal(1 << 16, policy.group_inputs, "the domain below is sized for the policy's value")
    p = multi.project { language = "python", fn = "f", signature = F, inputs = { a = "0..511", b = "*" },
                        observations = { "*" }, source = "def f(a, b):\n    return a + b\n" }
  end)
  teardown(function() intents.finish(p) end)
  local function boxes_for(wrong)
    local summary, r = p.certify("def f(a, b):\n    return a + b + 1 if " .. wrong .. " else a + b\n",
      { "--method", "exhaustive" })
    assert.equal(1, r.code, r.stderr)
    return multi.report(p, summary).violations.boxes
  end
  it("that many violating inputs are all grouped; one more is counted, not grouped", function()
    local at = boxes_for "a < 256"
    assert.same({ policy.group_inputs, policy.group_inputs }, { at.grouped, at.of })
    assert.same({ "f(a=0..255, b=*)", policy.group_inputs }, { at.items[1].call, at.items[1].count })
    local past = boxes_for "a < 256 or (a == 256 and b == 0)"
    assert.same({ policy.group_inputs, policy.group_inputs + 1 }, { past.grouped, past.of })
    assert.same({ "f(a=0..255, b=*)", 1 }, { past.items[1].call, past.total })
  end)
end)
