-- The multi-parameter profile's documents (issue 34): contracts, claims,
-- codecs and difference policies, pure; and the seed's intent digest,
-- which this profile must leave exactly as it was.
local json = require "vkit.json"
local contract = require "vkit.change.contract"
local mcontract = require "vkit.change.multi.contract"
local codec = require "vkit.change.multi.codec"
local differences = require "vkit.change.differences"
local artifacts = require "vkit.change.artifacts"
local authoring = require "vkit.change.authoring"
local intents = require "tests.support.intents"
local multi = require "tests.support.multi"

local H1, H2, H3 = ("1"):rep(64), ("2"):rep(64), ("3"):rep(64)
local CLAMP = multi.signature({ { "x", "i32" }, { "lo", "i32" }, { "hi", "i32" } }, "i32")

local function doc(overrides)
  local d = {
    signature = CLAMP,
    domain = { inputs = { x = "-100..100", lo = "-20..20", hi = "-20..20" }, codec_sha256 = H1,
               observation_policy_sha256 = H2, environment_model_sha256 = H3 },
    observations = json.array { "-100..100" },
    requirements = json.array {
      { inputs = { x = "0..9" }, outputs = json.array { "-20..20" } },
      { inputs = json.object(), outputs = json.array { "*" } },
    },
  }
  for k, v in pairs(overrides or {}) do d[k] = v end
  return assert(json.decode(json.encode(d)))
end

describe("the seed's documents", function()
  it("keep the digest of the specs' seed intent (computed on main before issue 34)", function()
    local _, digest = authoring.revision {
      requirement = { source = "ISSUE-42", statement = "score doubles small inputs and caps at 100" },
      contract = intents.contract, artifacts = intents.artifacts }
    assert.equal("d2dedc967ab58a96e458d83bc79413225a44bd8d772b90eb362c4d68b9d122ae", digest)
  end)

  it("keep the seed's codec and refuse a multi codec for a u32 -> u32 contract", function()
    local seed = assert(contract.normalize(json.decode(json.encode(authoring.contract(intents.contract,
      { codec = H1, observation_policy = H2, environment_model = H3 })))))
    assert.is_nil(seed.profile)
    assert.is_true(codec.matches(seed, intents.artifacts.codec.bytes))
    local ok, _, code = codec.matches(seed, multi.codec(CLAMP))
    assert.is_nil(ok)
    assert.equal("codec-signature-mismatch", code)
    assert.same({ schema_version = 1, input = "u32-le", output = "decimal-u32-line" },
      assert(artifacts.parse("codec", intents.artifacts.codec.bytes)))
  end)
end)

describe("a multi-parameter contract", function()
  it("normalises to canonical set texts, requirements sorted, one digest for two spellings", function()
    local a = assert(contract.normalize(doc()))
    assert.equal("multi", a.profile)
    assert.equal(201 * 41 * 41, a.domain.inputs.size)
    local other = doc {
      domain = { inputs = { x = "-100..-1|0..100", lo = "-20..20", hi = "-20 .. 20" }, codec_sha256 = H1,
                 observation_policy_sha256 = H2, environment_model_sha256 = H3 },
      requirements = json.array {
        { inputs = json.object(), outputs = json.array { "*" } },
        { inputs = { x = "0..4|5..9", lo = "*" }, outputs = json.array { "-20..20" } },
      },
    }
    local b = assert(contract.normalize(json.decode(json.encode(other))))
    assert.equal(json.digest(contract.to_json(a)), json.digest(contract.to_json(b)))
    local j = contract.to_json(a)
    assert.equal("-100..100", j.domain.inputs.x)
    assert.same({ x = "0..9" }, j.requirements[1].inputs)
    -- the document form is a contract that says the same
    assert.equal(json.digest(j), json.digest(contract.to_json(assert(contract.normalize(
      json.decode(json.encode(contract.to_document(a))))))))
  end)

  it("refuses each malformed part by name", function()
    local function code_of(d) return select(3, contract.normalize(json.decode(json.encode(d)))) end
    assert.equal("signature-invalid", code_of(doc { signature = multi.signature({ { "x", "i33" } }, "i32") }))
    assert.equal("contract-invalid", code_of(doc { observations = json.array { "*", "*" } }))
    assert.equal("contract-invalid", code_of(doc { observations = json.array { "-100..100.5" } }))
    assert.equal("contract-invalid", code_of(doc { requirements = json.array {
      { inputs = { y = "1" }, outputs = json.array { "*" } } } }))
    assert.equal("contract-invalid", code_of(doc { domain = { inputs = { x = "1", lo = "1" }, codec_sha256 = H1,
      observation_policy_sha256 = H2, environment_model_sha256 = H3 } }))
    -- a value outside the declared type is refused, never coerced
    assert.equal("contract-invalid", code_of(doc { domain = { inputs = { x = "2147483648", lo = "1", hi = "1" },
      codec_sha256 = H1, observation_policy_sha256 = H2, environment_model_sha256 = H3 } }))
  end)

  it("accepts more inputs than the exhaustive cap (the method refuses them) but not past its own limit", function()
    local sig = multi.signature({ { "x", "u64" } }, "u64")
    local function with(inputs)
      return json.decode(json.encode(doc { signature = sig, domain = { inputs = { x = inputs }, codec_sha256 = H1,
        observation_policy_sha256 = H2, environment_model_sha256 = H3 }, observations = json.array { "*" },
        requirements = json.array() }))
    end
    assert.equal((1 << 20) + 1, assert(contract.normalize(with "0..1048576")).domain.inputs.size)
    assert.equal("domain-too-large", select(3, contract.normalize(with "*")))
  end)

  it("is unsatisfiable when a box allows nothing for some accepted input (checked per cell)", function()
    local d = doc { requirements = json.array { { inputs = { x = "3", lo = "-1" }, outputs = json.array { "200..300" } } } }
    local c = assert(contract.normalize(d))
    local ok, message, code = contract.check_satisfiable(c, "the intent")
    assert.is_nil(ok)
    assert.equal("unsatisfiable-intent", code)
    assert.matches("input x=3, lo=%-1, hi=%-20", message)
    assert.is_true(contract.check_satisfiable(assert(contract.normalize(doc())), "the intent"))
  end)

  it("is covered by a claim that allows at least the intent's outputs on exactly its domain", function()
    local intent = assert(contract.normalize(doc()))
    assert.is_true(contract.covers(assert(contract.normalize(doc { requirements = json.array() })), intent))
    local narrower = doc { requirements = json.array { { inputs = { x = "0..9", hi = "5" }, outputs = json.array { "0..5" } } } }
    local ok, message, code = contract.covers(assert(contract.normalize(narrower)), intent)
    assert.is_nil(ok)
    assert.equal("claim-excludes-legal-behavior", code)
    assert.matches("x=0, lo=%-20, hi=5", message)
    local other_domain = doc { domain = { inputs = { x = "-100..99", lo = "-20..20", hi = "-20..20" }, codec_sha256 = H1,
      observation_policy_sha256 = H2, environment_model_sha256 = H3 } }
    assert.equal("claim-domain-changed", select(3, contract.covers(assert(contract.normalize(other_domain)), intent)))
    local seed = assert(contract.normalize(json.decode(json.encode(authoring.contract(intents.contract,
      { codec = H1, observation_policy = H2, environment_model = H3 })))))
    assert.equal("claim-domain-changed", select(3, contract.covers(seed, intent)))
    assert.equal("claim-domain-changed", select(3, contract.covers(intent, seed)))
  end)

  it("needs a codec of exactly its signature", function()
    local c = assert(contract.normalize(doc()))
    assert.is_true(codec.matches(c, multi.codec(CLAMP)))
    local renamed = multi.signature({ { "x", "i32" }, { "low", "i32" }, { "hi", "i32" } }, "i32")
    local ok, message, code = codec.matches(c, multi.codec(renamed))
    assert.is_nil(ok)
    assert.equal("codec-signature-mismatch", code)
    assert.matches("differs from the codec's", message)
    assert.equal("codec-signature-mismatch", select(3, codec.matches(c, intents.artifacts.codec.bytes)))
  end)
end)

describe("a multi-parameter difference policy", function()
  local c = assert(contract.normalize(doc()))
  local function policy(guards)
    return json.encode { schema_version = 1, intent = H1, guards = guards }
  end

  it("parses guards over boxes with one output set per component", function()
    local p = assert(differences.parse(policy { { name = "G", inputs = { x = "0..9" }, outputs = { "0..5" } } }, H1,
      c.domain.inputs))
    assert.equal("G", p.guards[1].name)
    assert.same({ name = "G", inputs = { x = "0..9" }, outputs = { "0..5" } },
      require("vkit.change.multi.differences").guard_json(c.sig, p.guards[1]))
  end)

  it("refuses a guard naming no parameter of the signature, the wrong arity, another intent", function()
    for _, bytes in ipairs {
      policy { { name = "G", inputs = { y = "1" }, outputs = { "0" } } },
      policy { { name = "G", inputs = { x = "1" }, outputs = { "0", "1" } } },
      json.encode { schema_version = 1, intent = H2, guards = json.array() },
    } do
      assert.equal("difference-policy-invalid", select(3, differences.parse(bytes, H1, c.domain.inputs)))
    end
  end)
end)

describe("the multi-parameter judge", function()
  local massess = require "vkit.change.multi.assess"
  local sig = multi.signature({ { "a", "u8" }, { "b", "u8" } }, { "bool", "u8" })
  local c = assert(contract.normalize(doc { signature = sig,
    domain = { inputs = { a = "*", b = "*" }, codec_sha256 = H1, observation_policy_sha256 = H2,
               environment_model_sha256 = H3 },
    observations = json.array { "*", "*" },
    requirements = json.array { { inputs = { b = "0" }, outputs = json.array { "false", "0" } } } }))
  local guards = assert(differences.parse(json.encode { schema_version = 1, intent = H1, guards = json.array {
    { name = "G-1", inputs = { b = "1" }, outputs = json.array { "true", "0..100" } } } }, H1, c.domain.inputs)).guards
  local function v(text) return { state = "value", value = text } end

  it("applies the seed's rules to tuples", function()
    local call = "f(a=5, b=0)"
    local j = massess.judge(c, guards, { 5, 0 }, v "false,0", v "true,0", call)
    assert.same({ "violation", "standing-requirement" }, { j.verdict, j.rule })
    assert.equal("f(a=5, b=0): base (false, 0), candidate (true, 0), which the accepted intent does not allow "
      .. "(allowed: false; 0)", j.message)
    assert.equal("conforms", massess.judge(c, guards, { 5, 1 }, v "true,5", v "true,0", "f").verdict)
    assert.same({ "violation", "guard" }, { massess.judge(c, guards, { 5, 1 }, v "true,5", v "true,101", "f").verdict,
      massess.judge(c, guards, { 5, 1 }, v "true,5", v "true,101", "f").rule })
    assert.equal("unapproved-difference", massess.judge(c, guards, { 5, 2 }, v "true,2", v "true,3", "f").rule)
    assert.equal("preservation", massess.judge(c, guards, { 5, 2 }, v "true,2", v "true,2", "f").rule)
    -- a base the intent forbids may be repaired
    assert.equal("repair", massess.judge(c, guards, { 5, 0 }, v "true,0", v "false,0", "f").rule)
    -- outside the declared type: a named violation, never a pass
    local r = massess.judge(c, guards, { 1, 2 }, v "true,0", { state = "failed", marker = "range" }, "f(a=1, b=2)")
    assert.same({ "violation", "range" }, { r.verdict, r.rule })
    assert.equal("undecided", massess.judge(c, guards, { 1, 2 }, v "true,0", { state = "unstable" }, "f").verdict)
    assert.equal("undecided", massess.judge(c, guards, { 1, 2 }, { state = "not-run" }, v "true,1", "f").verdict)
  end)
end)
