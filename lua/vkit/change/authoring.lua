--- Writing intent documents: what a team (or a test, or the demo) uses to
-- propose a revision and accept it.  Pure: returns bytes and digests; the
-- caller commits them through its own reviewed process.
--
--   local a = require "vkit.change.authoring"
--   local files, digest = a.revision {
--     requirement = { source = "ISSUE-7", statement = "..." },
--     contract = { inputs = SET, observations = SET, requirements = {...} },
--       -- or, for the multi-parameter profile, { signature = <its JSON>,
--       -- inputs = {name = set text}, observations = {text, ...}, requirements = {...} }
--     artifacts = { binding_map = {path, bytes}, codec = {path, bytes},
--                   observation_policy = {path, bytes}, environment_model = {path, bytes} },
--   }
--   -- files: { [path] = bytes } for the revision and its four artifacts
local json = require "vkit.json"
local hash = require "vkit.hash"
local intent = require "vkit.change.intent"
local layout = require("vkit.policy").change.layout

local M = {}

-- The multi-parameter profile's contract (issue 34): the signature object,
-- one set text per parameter and per result component, boxes for inputs
-- (vkit.change.multi.contract's document; spec as vkit.change.multi.scaffold
-- returns it).
local function multi_contract(spec, hashes)
  local function object(t)
    local out = json.object()
    for k, v in pairs(t) do out[k] = v end
    return out
  end
  local requirements = json.array()
  for i, r in ipairs(spec.requirements or {}) do
    requirements[i] = { inputs = object(r.inputs), outputs = json.array(r.outputs) }
  end
  return {
    signature = spec.signature,
    domain = { inputs = object(spec.inputs), codec_sha256 = hashes.codec,
               observation_policy_sha256 = hashes.observation_policy, environment_model_sha256 = hashes.environment_model },
    observations = json.array(spec.observations),
    requirements = requirements,
  }
end

--- The contract document for a domain bound to the artifact hashes: the
--  seed's u32 -> u32, or the multi-parameter profile's when the spec
--  carries a signature.
function M.contract(spec, hashes)
  if spec.signature then return multi_contract(spec, hashes) end
  local requirements = json.array()
  for i, r in ipairs(spec.requirements or {}) do
    requirements[i] = { inputs = json.array(r.inputs), outputs = json.array(r.outputs) }
  end
  return {
    signature = "u32 -> u32",
    domain = { inputs = json.array(spec.inputs), codec_sha256 = hashes.codec,
               observation_policy_sha256 = hashes.observation_policy, environment_model_sha256 = hashes.environment_model },
    observations = json.array(spec.observations),
    requirements = requirements,
  }
end

--- Files of a revision and its digest (and the parsed revision), or nil,
--  message, code when the revision would not parse (an empty or too large
--  domain, an unsatisfiable contract, ...).
function M.try_revision(spec)
  local files, pins, hashes = {}, {}, {}
  for _, name in ipairs(intent.ARTIFACTS) do
    local a = assert(spec.artifacts[name], "missing artifact " .. name)
    files[a.path] = a.bytes
    hashes[name] = hash.sha256(a.bytes)
    pins[name] = { path = a.path, sha256 = hashes[name] }
  end
  local doc = { schema_version = 1, requirement = spec.requirement, contract = M.contract(spec.contract, hashes),
                artifacts = pins }
  local bytes = json.encode(doc, { indent = 2 }) .. "\n"
  local parsed, message, code = intent.parse_revision(bytes)
  if not parsed then return nil, message, code end
  files[intent.revision_path(layout, parsed.digest)] = bytes
  return files, parsed.digest, parsed
end

--- As try_revision, raising when the revision would not parse.
function M.revision(spec)
  local files, digest, parsed = M.try_revision(spec)
  if not files then error(digest, 2) end
  return files, digest, parsed
end

--- The accepted list's bytes.
function M.accepted(digests)
  return json.encode({ schema_version = 1, accepted = json.array(digests) }, { indent = 2 }) .. "\n"
end

--- A difference policy's path and bytes.
function M.difference_policy(digest, guards)
  local list = json.array()
  for i, g in ipairs(guards) do
    list[i] = { name = g.name, inputs = json.array(g.inputs), outputs = json.array(g.outputs) }
  end
  return ("%s/%s.v1.json"):format(layout.differences_dir, digest),
    json.encode({ schema_version = 1, intent = digest, guards = list }, { indent = 2 }) .. "\n"
end

--- A finite request's bytes.
function M.request(base, candidate, digest, claim_contract)
  return json.encode({ schema_version = 1, base = base, candidate = candidate, intent = digest, claim = claim_contract },
    { indent = 2 }) .. "\n"
end

return M
