--- witness.v1.json: immutable change-witness artifacts (seed 001).
--
--   {
--     "schema_version": 1,
--     "kind": "proof_rejected" | "engine_counterexample" | "model_witness"
--           | "unknown" | "infrastructure_failure",
--     "binding": <WitnessBinding, see binding()>,
--     "reason": "<one sentence>",
--     "engine": { "name", "version", "toolchain_digest" } | null,
--     "counterexample": { "input": u32, "base_output": u32|null, "candidate_output": u32|null } | null,
--     "native_playback": { "status": "reproduced" | "not_reproduced" | "failed" | "unsupported",
--                          "input": u32, "base_output": u32|null, "candidate_output": u32|null,
--                          "runtime_identity": "<sha256>" } | null,
--     "artifacts": [ { "role", "path", "sha256", "media_type" }, ... ]
--   }
--
-- Kind rules: proof_rejected attaches no native playback; an
-- engine_counterexample retains the engine input and the counterexample and
-- states its native playback status (possibly "unsupported"); a
-- model_witness retains model, configuration and trace and can never carry
-- native playback; unknown and infrastructure_failure carry none either.
--
-- import() checks a witness against a separately supplied WitnessBinding and
-- the retained artifact bytes: the binding the caller derived from actual
-- preflight and independently measured runner/runtime identities is the
-- authority; whatever identity the producer wrote only has to match it.
local json = require "vkit.json"
local S = require "vkit.schema"
local fs = require "vkit.fs"
local hash = require "vkit.hash"

local M = {}

M.KINDS = { "proof_rejected", "engine_counterexample", "model_witness", "unknown", "infrastructure_failure" }
M.PLAYBACK = { "reproduced", "not_reproduced", "failed", "unsupported" }
M.MAX_BYTES = require("vkit.policy").change.caps.witness_bytes

local capture = S.object { commit = S.commit_id, tree = S.commit_id }

M.binding_schema = S.object {
  request_digest = S.sha256,
  intent_digest = S.sha256,
  claim_digest = S.sha256,
  target = capture,
  candidate = capture,
  codec_sha256 = S.sha256,
  observation_policy_sha256 = S.sha256,
  environment_model_sha256 = S.sha256,
  runner_identity = S.sha256,
  runtime_identity = S.sha256,
}

local normal_path = S.normal_path

local maybe_u32 = S.either(S.u32, S.const(json.null))
local function nullable(spec) return S.either(S.const(json.null), spec) end

M.schema = S.object {
  schema_version = S.const(1),
  kind = S.enum(M.KINDS),
  binding = M.binding_schema,
  reason = S.string { min = 1, max = 4096 },
  engine = nullable(S.object { name = S.string { min = 1, max = 100 }, version = S.string { min = 1, max = 100 },
                               toolchain_digest = S.sha256 }),
  counterexample = nullable(S.object { input = S.u32, base_output = maybe_u32, candidate_output = maybe_u32 }),
  native_playback = nullable(S.object { status = S.enum(M.PLAYBACK), input = S.u32, base_output = maybe_u32,
                                        candidate_output = maybe_u32, runtime_identity = S.sha256 }),
  artifacts = S.array(S.object { role = S.string { min = 1, max = 100 }, path = normal_path, sha256 = S.sha256,
                                 media_type = S.string { pattern = "^[%w.+-]+/[%w.+-]+$", what = "a media type" } },
                      { max = 1000 }),
}

local REQUIRED_ROLES = {
  engine_counterexample = { "engine_input", "counterexample" },
  model_witness = { "model", "configuration", "trace" },
}

local function refuse(code, fmt, ...)
  return nil, fmt:format(...), code
end

--- The WitnessBinding for a BoundChangeRequest and independently measured
--  runner and runtime identities (each a JSON value; their digests bind).
function M.binding(bound, runner_identity, runtime_identity)
  local domain = bound.request.claim.domain
  return {
    request_digest = bound.request.digest,
    intent_digest = bound.intent.digest,
    claim_digest = json.digest(require("vkit.change.contract").to_json(bound.request.claim)),
    target = { commit = bound.target.commit, tree = bound.target.tree },
    candidate = { commit = bound.candidate.commit, tree = bound.candidate.tree },
    codec_sha256 = domain.codec_sha256,
    observation_policy_sha256 = domain.observation_policy_sha256,
    environment_model_sha256 = domain.environment_model_sha256,
    runner_identity = json.digest(runner_identity),
    runtime_identity = json.digest(runtime_identity),
  }
end

--- Structural and kind rules on a decoded witness.
function M.validate(w)
  local ok, err = S.check(M.schema, w)
  if not ok then return refuse("witness-invalid", "witness: %s", S.explain(err)) end
  local seen, roles = {}, {}
  for _, a in ipairs(w.artifacts) do
    if seen[a.path] then return refuse("witness-invalid", "witness lists artifact %s twice", a.path) end
    seen[a.path] = true
    roles[a.role] = true
  end
  for _, role in ipairs(REQUIRED_ROLES[w.kind] or {}) do
    if not roles[role] then
      return refuse("witness-invalid", "a %s witness must retain its %s artifact", w.kind, role:gsub("_", " "))
    end
  end
  local playback = w.native_playback ~= json.null
  if w.kind == "model_witness" and playback then
    return refuse("model-witness-playback", "a model witness cannot carry native playback: "
      .. "its replay is absent or limited to the same model engine")
  end
  if w.kind == "engine_counterexample" then
    if w.counterexample == json.null then
      return refuse("witness-invalid", "an engine counterexample must retain the counterexample input")
    end
    if not playback then
      return refuse("witness-invalid", "an engine counterexample must state its native playback status (use \"unsupported\")")
    end
  elseif playback then
    return refuse("witness-invalid", "a %s witness attaches no native playback", w.kind)
  end
  return true
end

--- Serialises a witness (validated first) to its retained bytes.
function M.serialize(w)
  local ok, message, code = M.validate(w)
  if not ok then return nil, message, code end
  return json.encode(w, { indent = 2 }) .. "\n"
end

-- A retained artifact must be a regular file reached through no link.
local function check_artifact(dir, a)
  local path = dir
  for part in a.path:gmatch "[^/]+" do
    path = path .. "/" .. part
    local st = fs.lstat(path)
    if not st then return refuse("witness-artifact-missing", "retained artifact %s is missing", a.path) end
    if st.kind == "link" then return refuse("witness-artifact-link", "retained artifact %s goes through a link", a.path) end
  end
  local st = fs.lstat(path)
  if st.kind ~= "file" then
    return refuse("witness-artifact-not-regular", "retained artifact %s is not a regular file", a.path)
  end
  local actual = hash.file(path)
  if actual ~= a.sha256 then
    return refuse("witness-artifact-changed", "retained artifact %s has SHA-256 %s, not the recorded %s", a.path,
      tostring(actual), a.sha256)
  end
  return true
end

local function first_difference(expected, actual, prefix)
  for _, k in ipairs { "request_digest", "intent_digest", "claim_digest", "target", "candidate", "codec_sha256",
                       "observation_policy_sha256", "environment_model_sha256", "runner_identity", "runtime_identity" } do
    if json.canonical(expected[k]) ~= json.canonical(actual[k]) then return prefix .. k end
  end
end

--- Imports retained witness bytes whose artifacts live under `dir`, against
--  the expected WitnessBinding.  Returns the decoded witness or nil,
--  message, code.
function M.import(bytes, dir, expected_binding)
  local w, message, code = json.decode(bytes)
  if w == nil then return nil, "the witness is not valid JSON: " .. message, code end
  local ok
  ok, message, code = M.validate(w)
  if not ok then return nil, message, code end
  local differs = first_difference(expected_binding, w.binding, "binding.")
  if differs then
    return refuse("witness-binding-mismatch", "the witness's %s does not match the binding derived from preflight "
      .. "and the measured identities", differs)
  end
  if w.native_playback ~= json.null and w.native_playback.runtime_identity ~= expected_binding.runtime_identity then
    return refuse("witness-binding-mismatch", "the native playback ran under another runtime than the one measured")
  end
  for _, a in ipairs(w.artifacts) do
    ok, message, code = check_artifact(dir, a)
    if not ok then return nil, message, code end
  end
  return w
end

--- import() of a retained witness.v1.json file (a link is refused).
function M.import_file(path, dir, expected_binding)
  local bytes, message, code = fs.read(path, M.MAX_BYTES, { nofollow = true })
  if not bytes then return nil, "cannot read the witness: " .. message, code end
  return M.import(bytes, dir, expected_binding)
end

return M
