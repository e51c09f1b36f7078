--- Finite u32 -> u32 contracts: the accepted intent's contract and a
-- request's claim have this one shape.
--
--   {
--     "signature": "u32 -> u32",
--     "domain": { "inputs": SET, "codec_sha256": H,
--                 "observation_policy_sha256": H, "environment_model_sha256": H },
--     "observations": SET,              -- the observation universe
--     "requirements": [ { "inputs": SET, "outputs": SET }, ... ]
--   }
--
-- A SET is an array of u32 integers and {"from": a, "to": b} ranges.  The
-- legal outputs for an input are the observation universe intersected with
-- the outputs of every requirement whose inputs contain it.  The semantic
-- domain is the input set plus the three artifact hashes (codec,
-- observation policy, environment model): a claim about other inputs or
-- another encoding is a claim about something else.
--
-- A contract whose "signature" is an object is the multi-parameter
-- profile's (issue 34): normalize() hands it to vkit.change.multi.contract,
-- whose normal form says profile = "multi", and every function below
-- hands such a normal form there too.  The seed's path is unchanged.
local json = require "vkit.json"
local S = require "vkit.schema"
local ranges = require "vkit.change.ranges"
local limits = require("vkit.policy").limits

local M = {}

local set_item = S.either(S.u32, S.object { from = S.u32, to = S.u32 })
local set = S.array(set_item, { max = 65536 })

M.schema = S.object {
  signature = S.const "u32 -> u32",
  domain = S.object {
    inputs = set,
    codec_sha256 = S.sha256,
    observation_policy_sha256 = S.sha256,
    environment_model_sha256 = S.sha256,
  },
  observations = set,
  requirements = S.array(S.object { inputs = set, outputs = set }, { max = 65536 }),
}

M.DOMAIN_HASHES = { "codec_sha256", "observation_policy_sha256", "environment_model_sha256" }

-- The multi-parameter profile's module for a normal form of it, else nil.
local function multi(c)
  return type(c) == "table" and c.profile == "multi" and require "vkit.change.multi.contract" or nil
end

--- Validates and normalises a decoded contract.  Returns the normal form
--  {signature, domain = {inputs = ranges, <hashes>}, observations = ranges,
--  requirements = {{inputs, outputs}, ...}} or nil, message, code.
function M.normalize(doc, what)
  what = what or "contract"
  if json.kind(doc) == "object" and json.kind(doc.signature) == "object" then
    return require("vkit.change.multi.contract").normalize(doc, what)
  end
  local ok, err = S.check(M.schema, doc)
  if not ok then return nil, ("%s: %s"):format(what, S.explain(err)), "contract-invalid" end
  local max = limits.relational.max_domain
  local inputs = assert(ranges.normalize(doc.domain.inputs))
  local observations = assert(ranges.normalize(doc.observations))
  if ranges.count(inputs) > max then
    return nil, ("%s: the domain has %d inputs; at most %d are allowed"):format(what, ranges.count(inputs), max), "domain-too-large"
  end
  if ranges.count(observations) > max then
    return nil, ("%s: the observation universe has %d values; at most %d are allowed"):format(
      what, ranges.count(observations), max), "domain-too-large"
  end
  if #doc.requirements > limits.relational.max_guards then
    return nil, ("%s: more than %d requirements"):format(what, limits.relational.max_guards), "domain-too-large"
  end
  local requirements = {}
  for i, r in ipairs(doc.requirements) do
    local r_inputs, r_outputs = assert(ranges.normalize(r.inputs)), assert(ranges.normalize(r.outputs))
    local outside = ranges.first_missing(r_inputs, inputs)
    if outside then
      return nil, ("%s: requirement %d names input %d, which is outside the domain"):format(what, i, outside),
        "requirement-outside-domain"
    end
    requirements[#requirements + 1] = { inputs = r_inputs, outputs = r_outputs }
  end
  -- Requirement order carries no meaning: sort by canonical text.
  table.sort(requirements, function(a, b) return M.requirement_key(a) < M.requirement_key(b) end)
  local domain = { inputs = inputs }
  for _, h in ipairs(M.DOMAIN_HASHES) do domain[h] = doc.domain[h] end
  return { signature = doc.signature, domain = domain, observations = observations, requirements = requirements }
end

function M.requirement_key(r)
  return json.canonical { inputs = ranges.to_json(r.inputs), outputs = ranges.to_json(r.outputs) }
end

--- The JSON value of a normal form (what digests are computed over).
function M.to_json(c)
  if multi(c) then return multi(c).to_json(c) end
  local requirements = json.array()
  for i, r in ipairs(c.requirements) do
    requirements[i] = { inputs = ranges.to_json(r.inputs), outputs = ranges.to_json(r.outputs) }
  end
  local domain = { inputs = ranges.to_json(c.domain.inputs) }
  for _, h in ipairs(M.DOMAIN_HASHES) do domain[h] = c.domain[h] end
  return { signature = c.signature, domain = domain, observations = ranges.to_json(c.observations),
           requirements = requirements }
end

--- The document form of a normal form (sets as {from, to} objects): a
--  contract that claims exactly what `c` says.
function M.to_document(c)
  if multi(c) then return multi(c).to_document(c) end
  local function set(r)
    local out = json.array()
    for i, span in ipairs(r) do out[i] = { from = span[1], to = span[2] } end
    return out
  end
  local requirements = json.array()
  for i, r in ipairs(c.requirements) do requirements[i] = { inputs = set(r.inputs), outputs = set(r.outputs) } end
  local domain = { inputs = set(c.domain.inputs) }
  for _, h in ipairs(M.DOMAIN_HASHES) do domain[h] = c.domain[h] end
  return { signature = c.signature, domain = domain, observations = set(c.observations), requirements = requirements }
end

--- The legal outputs (ranges) for one input of the domain.
function M.legal(c, input)
  local legal = c.observations
  for _, r in ipairs(c.requirements) do
    if ranges.contains(r.inputs, input) then legal = ranges.intersect(legal, r.outputs) end
  end
  return legal
end

--- Whether a normal-form contract can be satisfied at all: a non-empty
--  domain where every input has at least one legal output.
function M.check_satisfiable(c, what)
  if multi(c) then return multi(c).check_satisfiable(c, what) end
  if ranges.count(c.domain.inputs) == 0 or ranges.count(c.observations) == 0 then
    return nil, ("%s has an empty domain: there is nothing to accept"):format(what), "empty-intent-domain"
  end
  for input in ranges.values(c.domain.inputs) do
    if #M.legal(c, input) == 0 then
      return nil, ("%s allows no output at all for input %d"):format(what, input), "unsatisfiable-intent"
    end
  end
  return true
end

--- Whether `claim` covers every legal input and output of `intent` on the
--  same semantic domain (so the intent entails the claim).
function M.covers(claim, intent)
  local profile = multi(intent) or multi(claim)
  if profile then return profile.covers(claim, intent) end
  if not ranges.equal(claim.domain.inputs, intent.domain.inputs) then
    return nil, "the claim's input domain differs from the accepted intent's: claim exactly the intent's inputs",
      "claim-domain-changed"
  end
  for _, h in ipairs(M.DOMAIN_HASHES) do
    if claim.domain[h] ~= intent.domain[h] then
      return nil, ("the claim's domain.%s differs from the accepted intent's: the claim is about another encoding"):format(h),
        "claim-domain-changed"
    end
  end
  for input in ranges.values(intent.domain.inputs) do
    local excluded = ranges.first_missing(M.legal(intent, input), M.legal(claim, input))
    if excluded then
      return nil, ("for input %d the accepted intent allows output %d but the claim excludes it: "
        .. "a claim must allow all accepted behaviour"):format(input, excluded), "claim-excludes-legal-behavior"
    end
  end
  return true
end

return M
