--- preflight(project, request, trusted_target): bind a finite change request
-- to an accepted intent at an exact Git target (seed 001).
--
-- Reads captured Git objects only (never the working tree, never a local
-- approved.json) and executes nothing.  The trusted caller supplies the
-- target separately from the request.  Returns a BoundChangeRequest (see
-- vkit.change.bound) or nil, message, code; every refusal names what to fix.
local vkit_git = require "vkit.git"
local hash = require "vkit.hash"
local intent = require "vkit.change.intent"
local request = require "vkit.change.request"
local contract = require "vkit.change.contract"
local differences = require "vkit.change.differences"
local codec = require "vkit.change.multi.codec"
local bound = require "vkit.change.bound"
local policy = require("vkit.policy").change

local M = {}

local function refuse(code, fmt, ...)
  return nil, fmt:format(...), code
end

local function open_repo(project)
  if type(project) ~= "string" then return project end
  local repo, message, code = vkit_git.open(project)
  if not repo then return nil, ("cannot open the project repository %s: %s"):format(project, message), code end
  return repo
end

-- A blob at an exact commit, or nil plus the reason ("missing-path", ...).
local function read_blob(repo, commit, path, cap)
  local blob, message, code = repo:read(commit, path, cap)
  if blob then return blob end
  return nil, message, code
end

local function exact_commit(repo, id, role)
  local commit, message = repo:commit(id)
  if commit then return commit end
  return refuse("not-an-exact-commit", "%s %s is not an exact commit in the repository (%s): give a full commit id",
    role, tostring(id), message)
end

-- The target and candidate copies of one protected file must be the same
-- blob with the same mode.
local function protected(repo, target_blob, candidate_id, path, cap, names)
  local copy, _, code = read_blob(repo, candidate_id, path, cap)
  if not copy then
    if code == "missing-path" then
      return refuse(names.deleted, "the candidate deletes %s; protected files must stay byte for byte", path)
    end
    return refuse(names.changed, "the candidate replaces %s with a non-file (%s)", path, code)
  end
  if copy.blob ~= target_blob.blob or copy.mode ~= target_blob.mode then
    return refuse(names.changed, "the candidate changes %s; it must stay byte for byte as in the target", path)
  end
  return copy
end

local function check_artifacts(repo, revision, target_id, candidate_id)
  local blobs = {}
  for _, name in ipairs(intent.ARTIFACTS) do
    local pin = revision.artifacts[name]
    local at_target, message, code = read_blob(repo, target_id, pin.path, policy.caps.artifact_bytes)
    if not at_target then
      if code == "missing-path" then
        return refuse("artifact-missing-in-target", "the %s %s is not in the target commit", name:gsub("_", " "), pin.path)
      end
      return refuse("artifact-not-regular", "the %s %s cannot be read at the target: %s", name:gsub("_", " "), pin.path, message)
    end
    local actual = hash.sha256(at_target.bytes)
    if actual ~= pin.sha256 then
      return refuse("artifact-hash-mismatch", "the %s %s at the target has SHA-256 %s, but the intent pins %s",
        name:gsub("_", " "), pin.path, actual, pin.sha256)
    end
    local ok, pmessage, pcode = protected(repo, at_target, candidate_id, pin.path, policy.caps.artifact_bytes,
      { deleted = "artifact-missing-in-candidate", changed = "artifact-changed-in-candidate" })
    if not ok then return nil, pmessage, pcode end
    blobs[name] = { path = pin.path, blob = at_target.blob, mode = at_target.mode, sha256 = actual }
  end
  return blobs
end

local function check_difference_policy(repo, revision, target_id, candidate_id)
  local path = ("%s/%s.v1.json"):format(policy.layout.differences_dir, revision.digest)
  local cap = policy.caps.document_bytes
  local at_target, message, code = read_blob(repo, target_id, path, cap)
  if not at_target and code ~= "missing-path" then
    return refuse("difference-policy-invalid", "the difference policy %s cannot be read at the target: %s", path, message)
  end
  if not at_target then
    local added = read_blob(repo, candidate_id, path, cap)
    if added then
      return refuse("difference-policy-added",
        "the candidate adds the difference policy %s; a candidate cannot approve its own differences", path)
    end
    return { policy = differences.none(), blob = nil }
  end
  local ok, pmessage, pcode = protected(repo, at_target, candidate_id, path, cap,
    { deleted = "difference-policy-deleted", changed = "difference-policy-changed" })
  if not ok then return nil, pmessage, pcode end
  local parsed, dmessage, dcode = differences.parse(at_target.bytes, revision.digest, revision.contract.domain.inputs)
  if not parsed then return nil, dmessage, dcode end
  return { policy = parsed, blob = { path = path, blob = at_target.blob, mode = at_target.mode } }
end

function M.preflight(project, request_input, trusted_target)
  local repo, message, code = open_repo(project)
  if not repo then return nil, message, code end
  local req
  req, message, code = request.parse(request_input)
  if not req then return nil, message, code end

  local target, tmessage, tcode = exact_commit(repo, trusted_target, "the trusted target")
  if not target then return nil, tmessage, tcode end
  if req.base ~= target.id then
    return refuse("base-not-target", "the request's base %s is not the trusted target %s", req.base, target.id)
  end
  local candidate, cmessage, ccode = exact_commit(repo, req.candidate, "the candidate")
  if not candidate then return nil, cmessage, ccode end
  local descends, amessage, acode = repo:is_ancestor(target.id, candidate.id)
  if descends == nil then return nil, amessage, acode end
  if not descends then
    return refuse("target-not-ancestor", "the trusted target %s is not an ancestor of the candidate %s", target.id, candidate.id)
  end

  local cap = policy.caps.document_bytes
  local layout = policy.layout
  local accepted_blob, _, rcode = read_blob(repo, target.id, layout.accepted_list, cap)
  if not accepted_blob then
    return refuse("accepted-list-missing", "the target has no readable %s (%s): nothing is accepted", layout.accepted_list, rcode)
  end
  local accepted, pmessage, pcode = intent.parse_accepted(accepted_blob.bytes, layout.accepted_list)
  if not accepted then return nil, pmessage, pcode end
  if not accepted.set[req.intent] then
    return refuse("intent-not-accepted", "intent revision %s is not in the target's %s", req.intent, layout.accepted_list)
  end
  local revision_path = intent.revision_path(layout, req.intent)
  local revision_blob = read_blob(repo, target.id, revision_path, cap)
  if not revision_blob then
    return refuse("intent-revision-missing", "the accepted revision %s is not in the target", revision_path)
  end
  local revision
  revision, pmessage, pcode = intent.parse_revision(revision_blob.bytes, revision_path)
  if not revision then return nil, pmessage, pcode end
  if revision.digest ~= req.intent then
    return refuse("intent-digest-mismatch", "%s has digest %s, not the %s its name claims", revision_path, revision.digest, req.intent)
  end

  local ok
  ok, pmessage, pcode = protected(repo, accepted_blob, candidate.id, layout.accepted_list, cap,
    { deleted = "accepted-list-deleted", changed = "accepted-list-changed" })
  if not ok then return nil, pmessage, pcode end
  ok, pmessage, pcode = protected(repo, revision_blob, candidate.id, revision_path, cap,
    { deleted = "intent-revision-deleted", changed = "intent-revision-changed" })
  if not ok then return nil, pmessage, pcode end

  local artifacts
  artifacts, pmessage, pcode = check_artifacts(repo, revision, target.id, candidate.id)
  if not artifacts then return nil, pmessage, pcode end
  -- the codec describes the contract's function (issue 34: a codec names its signature)
  local codec_blob = read_blob(repo, target.id, artifacts.codec.path, policy.caps.artifact_bytes)
  ok, pmessage, pcode = codec.matches(revision.contract, codec_blob.bytes)
  if not ok then return nil, pmessage, pcode end
  local difference
  difference, pmessage, pcode = check_difference_policy(repo, revision, target.id, candidate.id)
  if not difference then return nil, pmessage, pcode end

  ok, pmessage, pcode = contract.covers(req.claim, revision.contract)
  if not ok then return nil, pmessage, pcode end

  return bound.new {
    request = req,
    intent = revision,
    target = { commit = target.id, tree = target.tree },
    candidate = { commit = candidate.id, tree = candidate.tree },
    difference_policy = difference.policy,
    policy_blobs = {
      accepted_list = { path = layout.accepted_list, blob = accepted_blob.blob, mode = accepted_blob.mode },
      intent_revision = { path = revision_path, blob = revision_blob.blob, mode = revision_blob.mode },
      artifacts = artifacts,
      difference_policy = difference.blob,
    },
  }
end

return M
