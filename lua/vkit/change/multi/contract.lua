--- Contracts of the multi-parameter profile (issue 34): the accepted
-- intent's contract and a request's claim, when "signature" is an object.
-- The seed's "u32 -> u32" contracts stay vkit.change.contract's; that
-- module hands an object signature here (its one dispatch point).
--
--   {
--     "signature": { "params": [ { "name": "x", "type": "i32" }, ... ],
--                    "returns": "i32" | [ "bool", "u32", ... ] },
--     "domain": { "inputs": { "x": SET, ... },        -- every parameter once
--                 "codec_sha256": H, "observation_policy_sha256": H,
--                 "environment_model_sha256": H },
--     "observations": [ SET, ... ],                    -- one per result component
--     "requirements": [ { "inputs": { "x": SET, ... }, -- a box: an omitted parameter is its whole type
--                         "outputs": [ SET, ... ] } ]  -- one per result component
--   }
--
-- A SET is the canonical set TEXT of vkit.change.domain (`-5..5|9`, `*`),
-- never JSON numbers: a 64-bit value does not survive a JSON number, and
-- one text per set makes two spellings of a contract one digest.  A box
-- may reach past the accepted inputs (an omitted parameter is its whole
-- type): it applies where it meets them.  What is legal for an input, and
-- the cells satisfiability and claim coverage are checked on, are
-- vkit.change.multi.legal's.
local json = require "vkit.json"
local S = require "vkit.schema"
local signature = require "vkit.change.signature"
local domain = require "vkit.change.domain"
local legal = require "vkit.change.multi.legal"
local policy = require("vkit.policy").signatures

local M = {}

M.PROFILE = "multi"
M.DOMAIN_HASHES = { "codec_sha256", "observation_policy_sha256", "environment_model_sha256" }

local set_text = S.string { min = 1, max = policy.max_set_text, what = "a set's text" }
local box = S.map(set_text, { key_pattern = "^[%a_][%w_]*$", key_what = "a parameter name", max = policy.max_params })
local outputs = S.array(set_text, { min = 1, max = policy.max_components })

M.schema = S.object {
  signature = S.any_object, -- vkit.change.signature.parse names what is wrong with it
  domain = S.object {
    inputs = box,
    codec_sha256 = S.sha256,
    observation_policy_sha256 = S.sha256,
    environment_model_sha256 = S.sha256,
  },
  observations = outputs,
  requirements = S.array(S.object { inputs = box, outputs = outputs }, { max = policy.max_requirements }),
}

local function fail(code, fmt, ...)
  return nil, fmt:format(...), code
end

--- The JSON form of a parsed signature (what contracts and codecs carry).
function M.signature_json(sig)
  local params = json.array()
  for i, p in ipairs(sig.params) do params[i] = { name = p.name, type = p.type } end
  return { params = params, returns = sig.tuple and json.array(sig.returns) or sig.returns[1] }
end

--- A parsed signature from its JSON form, or nil, message, code.
function M.parse_signature(doc, what)
  local sig, message, code = signature.parse(doc)
  if not sig then return fail("signature-invalid", "%s: signature: %s (%s)", what, message, code) end
  return sig
end

-- A box object {name = set text} as one set per parameter (omitted: the whole type).
local function parse_box(sig, obj, what)
  local position = {}
  for i, p in ipairs(sig.params) do position[p.name] = i end
  local sets = {}
  for name, text in pairs(obj) do
    local i = position[name]
    if not i then return fail("unknown-param", "%s: no parameter %s", what, name) end
    local set, message = domain.parse_set(sig.params[i].type, text)
    if not set then return fail("set-invalid", "%s: %s: %s", what, name, message) end
    sets[i] = set
  end
  for i, p in ipairs(sig.params) do sets[i] = sets[i] or domain.whole(p.type) end
  return sets
end
M.parse_box = parse_box

-- One set per result component from a list of set texts.
local function parse_outputs(sig, list, what)
  if #list ~= #sig.returns then
    return fail("arity", "%s: %d output sets for %d result components", what, #list, #sig.returns)
  end
  local out = {}
  for i, text in ipairs(list) do
    local set, message = domain.parse_set(sig.returns[i], text)
    if not set then return fail("set-invalid", "%s: output %d: %s", what, i, message) end
    out[i] = set
  end
  return out
end
M.parse_outputs = parse_outputs

--- The JSON form of a box: its parameters that are not whole types.
function M.box_json(sig, b)
  local out = json.object()
  for i, p in ipairs(sig.params) do
    local text = domain.set_text(b[i])
    if text ~= "*" then out[p.name] = text end
  end
  return out
end

function M.outputs_json(sets)
  local out = json.array()
  for i, set in ipairs(sets) do out[i] = domain.set_text(set) end
  return out
end

--- A requirement's (or a guard's) canonical key: its JSON, canonical.
function M.requirement_key(sig, r)
  return json.canonical { inputs = M.box_json(sig, r.box), outputs = M.outputs_json(r.outputs) }
end

--- Validates and normalises a decoded contract whose signature is an
--  object.  The normal form: {profile = "multi", sig, signature (its JSON),
--  domain = {inputs = a vkit.change.domain product, <hashes>},
--  observations = {set per component}, requirements = {{box, outputs}}}
--  sorted by canonical text; or nil, message, code.
function M.normalize(doc, what)
  what = what or "contract"
  local ok, err = S.check(M.schema, doc)
  if not ok then return fail("contract-invalid", "%s: %s", what, S.explain(err)) end
  local sig, message, code = M.parse_signature(doc.signature, what)
  if not sig then return nil, message, code end
  local sets = {}
  for name, text in pairs(doc.domain.inputs) do
    local i
    for j, p in ipairs(sig.params) do if p.name == name then i = j end end
    if not i then return fail("contract-invalid", "%s: domain.inputs: no parameter %s", what, name) end
    local set, smessage = domain.parse_set(sig.params[i].type, text)
    if not set then return fail("contract-invalid", "%s: domain.inputs.%s: %s", what, name, smessage) end
    sets[i] = set
  end
  local d, dmessage, dcode = domain.product(sig, sets, policy.contract_inputs)
  if not d then
    return fail(dcode == "too-large" and "domain-too-large" or "contract-invalid", "%s: domain.inputs: %s", what, dmessage)
  end
  local observations
  observations, message = parse_outputs(sig, doc.observations, what .. ": observations")
  if not observations then return fail("contract-invalid", "%s", message) end
  local requirements = {}
  for i, r in ipairs(doc.requirements) do
    local rbox, bmessage = parse_box(sig, r.inputs, ("%s: requirement %d inputs"):format(what, i))
    if not rbox then return fail("contract-invalid", "%s", bmessage) end
    local routs, omessage = parse_outputs(sig, r.outputs, ("%s: requirement %d"):format(what, i))
    if not routs then return fail("contract-invalid", "%s", omessage) end
    requirements[i] = { box = rbox, outputs = routs }
  end
  -- Requirement order carries no meaning: sort by canonical text.
  table.sort(requirements, function(a, b) return M.requirement_key(sig, a) < M.requirement_key(sig, b) end)
  local dom = { inputs = d }
  for _, h in ipairs(M.DOMAIN_HASHES) do dom[h] = doc.domain[h] end
  return { profile = M.PROFILE, sig = sig, signature = M.signature_json(sig), domain = dom,
           observations = observations, requirements = requirements }
end

--- The JSON value of a normal form (what digests are computed over), and
--  the document a claim that says exactly the same carries.
function M.to_json(c)
  local inputs = json.object()
  for i, p in ipairs(c.sig.params) do inputs[p.name] = domain.set_text(c.domain.inputs.sets[i]) end
  local dom = { inputs = inputs }
  for _, h in ipairs(M.DOMAIN_HASHES) do dom[h] = c.domain[h] end
  local requirements = json.array()
  for i, r in ipairs(c.requirements) do
    requirements[i] = { inputs = M.box_json(c.sig, r.box), outputs = M.outputs_json(r.outputs) }
  end
  return { signature = M.signature_json(c.sig), domain = dom, observations = M.outputs_json(c.observations),
           requirements = requirements }
end
M.to_document = M.to_json

--- "x=7, lo=3, hi=-2": an input with every parameter named.
function M.input_text(sig, tuple)
  local parts = {}
  for i, p in ipairs(sig.params) do parts[i] = p.name .. "=" .. signature.text(p.type, tuple[i]) end
  return table.concat(parts, ", ")
end

local function too_many(what)
  return fail("contract-too-complex", "%s: its boxes cut the accepted inputs into more than %d cells", what,
    policy.exhaustive_inputs)
end

--- Whether a normal-form contract can be satisfied: every accepted input
--  has at least one legal output in every component.
function M.check_satisfiable(c, what)
  local within, empty = legal.first_empty(c)
  if not within then return too_many(what) end
  if empty then
    return fail("unsatisfiable-intent", "%s allows no value of result component %d for input %s", what,
      empty.component, M.input_text(c.sig, empty.tuple))
  end
  return true
end

--- Whether `claim` covers every legal input and output of `intent` on the
--  same semantic domain (so the intent entails the claim).
function M.covers(claim, intent)
  if claim.profile ~= M.PROFILE then
    return fail("claim-domain-changed", "the claim's signature differs from the accepted intent's")
  end
  if json.canonical(claim.signature) ~= json.canonical(intent.signature) then
    return fail("claim-domain-changed", "the claim's signature differs from the accepted intent's: claim exactly "
      .. "the intent's signature")
  end
  if domain.text(claim.domain.inputs) ~= domain.text(intent.domain.inputs) then
    return fail("claim-domain-changed", "the claim's input domain differs from the accepted intent's: claim exactly "
      .. "the intent's inputs")
  end
  for _, h in ipairs(M.DOMAIN_HASHES) do
    if claim.domain[h] ~= intent.domain[h] then
      return fail("claim-domain-changed", "the claim's domain.%s differs from the accepted intent's: the claim is "
        .. "about another encoding", h)
    end
  end
  local within, excluded = legal.first_excluded(claim, intent)
  if not within then return too_many("the claim") end
  if excluded then
    return fail("claim-excludes-legal-behavior", "for input %s the accepted intent allows %s in result component %d "
      .. "but the claim allows only %s: a claim must allow all accepted behaviour", M.input_text(intent.sig, excluded.tuple),
      domain.set_text(excluded.allowed), excluded.component,
      #excluded.claimed.ranges == 0 and "nothing" or domain.set_text(excluded.claimed))
  end
  return true
end

return M
