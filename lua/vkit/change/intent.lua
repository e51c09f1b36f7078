--- Accepted intent revisions and the acceptance list (seed 001).
--
-- verification/change-intents/<digest>.v1.json holds one revision:
--   {
--     "schema_version": 1,
--     "requirement": { "source": "<citation label>", "statement": "<literal text>" },
--     "contract": <finite u32 -> u32 contract, see vkit.change.contract; or the
--                  multi-parameter profile's, vkit.change.multi.contract>,
--     "artifacts": {
--       "binding_map":        { "path": "<repo path>", "sha256": "<raw-byte SHA-256>" },
--       "codec":              { ... }, "observation_policy": { ... }, "environment_model": { ... }
--     }
--   }
-- The codec, observation policy and environment model pins must equal the
-- contract's domain hashes.  The revision digest is the SHA-256 of the RFC
-- 8785 form of the normalised revision (normalised contract, requirement and
-- artifact identities), and must equal the <digest> in the file name.
--
-- verification/change-intents/accepted.v1.json:
--   { "schema_version": 1, "accepted": ["<digest>", ...] }
-- Acceptance is this separate, target-owned list; a revision file alone
-- grants nothing.  requirement.source is a citation label: it is retained,
-- never resolved.
local json = require "vkit.json"
local S = require "vkit.schema"
local contract = require "vkit.change.contract"

local M = {}

M.ARTIFACTS = { "binding_map", "codec", "observation_policy", "environment_model" }
-- Which contract domain hash each of the last three artifacts must match.
M.DOMAIN_PIN = {
  codec = "codec_sha256",
  observation_policy = "observation_policy_sha256",
  environment_model = "environment_model_sha256",
}

local pin = S.object { path = S.normal_path, sha256 = S.sha256 }

M.schema = S.object {
  schema_version = S.const(1),
  requirement = S.object {
    source = S.string { min = 1, max = 4096 },
    statement = S.string { min = 1, max = 65536 },
  },
  contract = S.any_object, -- validated and normalised by vkit.change.contract
  artifacts = S.object {
    binding_map = pin, codec = pin, observation_policy = pin, environment_model = pin,
  },
}

M.accepted_schema = S.object {
  schema_version = S.const(1),
  accepted = S.array(S.sha256, { unique = true, max = 100000 }),
}

local function decode(bytes, what)
  local doc, message, code = json.decode(bytes)
  if doc == nil then return nil, ("%s is not valid JSON (%s)"):format(what, message), code end
  return doc
end

--- Parses revision bytes: {document, contract (normal form), digest, json}
--  or nil, message, code.
function M.parse_revision(bytes, what)
  what = what or "intent revision"
  local doc, message, code = decode(bytes, what)
  if not doc then return nil, message, code end
  local ok, err = S.check(M.schema, doc)
  if not ok then return nil, ("%s: %s"):format(what, S.explain(err)), "intent-revision-invalid" end
  local normal, cmessage, ccode = contract.normalize(doc.contract, what .. " contract")
  if not normal then return nil, cmessage, ccode == "contract-invalid" and "intent-revision-invalid" or ccode end
  for artifact, hash_field in pairs(M.DOMAIN_PIN) do
    if doc.artifacts[artifact].sha256 ~= normal.domain[hash_field] then
      return nil, ("%s: artifacts.%s.sha256 does not match contract.domain.%s: the domain must name the pinned %s"):format(
        what, artifact, hash_field, artifact:gsub("_", " ")), "domain-artifact-mismatch"
    end
  end
  local satisfiable, smessage, scode = contract.check_satisfiable(normal, what)
  if not satisfiable then return nil, smessage, scode end
  local artifacts = {}
  for _, name in ipairs(M.ARTIFACTS) do
    artifacts[name] = { path = doc.artifacts[name].path, sha256 = doc.artifacts[name].sha256 }
  end
  local normalized = {
    schema_version = 1,
    requirement = { source = doc.requirement.source, statement = doc.requirement.statement },
    contract = contract.to_json(normal),
    artifacts = artifacts,
  }
  return {
    document = doc,
    requirement = normalized.requirement,
    contract = normal,
    artifacts = artifacts,
    normalized = normalized,
    digest = json.digest(normalized),
  }
end

--- Parses accepted-list bytes: a set {digest = true} and the ordered list.
function M.parse_accepted(bytes, what)
  what = what or "accepted list"
  local doc, message, code = decode(bytes, what)
  if not doc then return nil, message, code end
  local ok, err = S.check(M.accepted_schema, doc)
  if not ok then return nil, ("%s: %s"):format(what, S.explain(err)), "accepted-list-invalid" end
  local set = {}
  for _, d in ipairs(doc.accepted) do set[d] = true end
  return { set = set, list = doc.accepted }
end

--- The repository path of a revision file.
function M.revision_path(layout, digest)
  return ("%s/%s.v1.json"):format(layout.intents_dir, digest)
end

return M
