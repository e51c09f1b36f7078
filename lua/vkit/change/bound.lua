--- BoundChangeRequest: what preflight binds (seed 001).
--
-- It holds the typed request and intent, the source capture identities of
-- target and candidate (commit and tree ids) and the policy blob identities
-- (accepted list, intent revision, the four semantic artifacts, the
-- difference policy).  Its JSON projection reports scope "request_preflight"
-- and candidate_behavior_checked false; its digest identifies that preflight
-- data, not a reusable proof receipt.  Nothing here grants approval.
--
-- The methods accept only a BoundChangeRequest as preflight returned it:
-- new() records a fingerprint of everything they read (the projection,
-- the normal-form contract and the difference guards), and genuine(b)
-- refuses a table preflight did not make or one changed since.
local json = require "vkit.json"
local request = require "vkit.change.request"
local intent = require "vkit.change.intent"
local contract = require "vkit.change.contract"
local ranges = require "vkit.change.ranges"

-- bound -> fingerprint, for the bounds preflight made (weak keys).  Kept
-- in the Lua registry so that a second load of this module (a script that
-- clears package.loaded, a test runner's insulation) still recognises the
-- bounds the first one made.
local REGISTRY_KEY = "vkit.change.bound: the bounds preflight made"
local made = debug.getregistry()[REGISTRY_KEY] or setmetatable({}, { __mode = "k" })
debug.getregistry()[REGISTRY_KEY] = made

local M = {}

local function blob_ref(b)
  if not b then return json.null end
  local ref = { path = b.path, blob = b.blob, mode = b.mode }
  if b.sha256 then ref.sha256 = b.sha256 end
  return ref
end

--- The JSON projection (stable; what the digest covers).
function M.to_json(b)
  local artifacts = {}
  for _, name in ipairs(intent.ARTIFACTS) do artifacts[name] = blob_ref(b.policy_blobs.artifacts[name]) end
  return {
    scope = "request_preflight",
    candidate_behavior_checked = false,
    request = request.to_json(b.request),
    request_digest = b.request.digest,
    intent = { digest = b.intent.digest, revision = b.intent.normalized },
    sources = { target = b.target, candidate = b.candidate },
    policy_blobs = {
      accepted_list = blob_ref(b.policy_blobs.accepted_list),
      intent_revision = blob_ref(b.policy_blobs.intent_revision),
      artifacts = artifacts,
      difference_policy = blob_ref(b.policy_blobs.difference_policy),
    },
  }
end

local function fingerprint(b)
  local guards = json.array()
  for i, g in ipairs(b.difference_policy.guards) do
    -- a guard over a box is the multi-parameter profile's (issue 34)
    guards[i] = g.box and require("vkit.change.multi.differences").guard_json(b.intent.contract.sig, g)
      or { name = g.name, inputs = ranges.to_json(g.inputs), outputs = ranges.to_json(g.outputs) }
  end
  return json.digest { bound = M.to_json(b), digest = b.digest, contract = contract.to_json(b.intent.contract),
                       guards = guards }
end

function M.new(fields)
  local b = fields
  b.scope = "request_preflight"
  b.candidate_behavior_checked = false
  b.digest = json.digest(M.to_json(b))
  made[b] = fingerprint(b)
  return b
end

--- true, or nil and why `b` is not a BoundChangeRequest as preflight
--  returned it.
function M.genuine(b)
  if type(b) ~= "table" or not made[b] then
    return nil, "not a BoundChangeRequest returned by vkit.change.preflight"
  end
  if fingerprint(b) ~= made[b] then return nil, "the BoundChangeRequest was changed after preflight" end
  return true
end

return M
