--- prepare_rust_relational (seed 001): a RustRelationalProgram for a
-- finite request bound to an accepted intent with a Rust binding.
--
-- Preflight binds the request (captured Git objects only); the bound Rust
-- module of each exact commit is captured as it is (bytes, hash, Git
-- mode), admitted by the tree-sitter profile in a separate process, and a
-- relational harness is generated that includes each captured file as its
-- own module, never copying or rewriting its body.  The program holds the
-- bound captures, the protected policy (its blob identities), the source
-- admission records and the generated harness bytes.  Preparation runs no
-- verifier and returns no proof or approval verdict; it does not validate
-- or invoke the target's native tools, and binds no engine toolchain.
local json = require "vkit.json"
local hash = require "vkit.hash"
local git = require "vkit.git"
local preflight = require("vkit.change.preflight").preflight
local artifacts = require "vkit.change.artifacts"
local bound_mod = require "vkit.change.bound"
local admission = require "vkit.relational.admission"
local harness = require "vkit.relational.harness"
local kani = require "vkit.relational.kani"
local change_policy = require("vkit.policy").change

local M = {}

M.SCHEMA = "vkit.rust-relational-program.v1"

local function refuse(code, fmt, ...)
  return nil, fmt:format(...), code
end

local function capture(repo, commit, module)
  local blob, message, code = repo:read(commit, module, change_policy.caps.source_bytes)
  if not blob then return refuse("source-unavailable", "%s at %s: %s (%s)", module, commit, message, code) end
  return { commit = commit, module = module,
           files = { { path = module, bytes = blob.bytes, sha256 = hash.sha256(blob.bytes), mode = blob.mode, blob = blob.blob } } }
end

--- Prepares from an existing BoundChangeRequest (certification has one).
--  target = "kani" (default) or "native" selects the harness form.
function M.from_bound(repo, bound, target)
  local pin = bound.intent.artifacts.binding_map
  local blob = repo:read(bound.target.commit, pin.path, change_policy.caps.artifact_bytes)
  local binding, message, code = artifacts.parse("binding_map", blob and blob.bytes or "")
  if not binding then return nil, message, code end
  if binding.language ~= "rust" then
    return refuse("unsupported_binding", "the binding map names a %s module; the Rust relational method needs Rust",
      binding.language)
  end
  local program = {
    schema = M.SCHEMA,
    binding = { language = binding.language, source = binding.source, ["function"] = binding["function"] },
    bound = { digest = bound.digest, request_digest = bound.request.digest, intent_digest = bound.intent.digest,
              target = bound.target, candidate = bound.candidate },
    policy = bound_mod.to_json(bound).policy_blobs,
    captures = {}, admissions = {},
    source_proof = false, approval_authority = false,
  }
  for _, side in ipairs { "base", "candidate" } do
    local commit = side == "base" and bound.target.commit or bound.candidate.commit
    local c, cmessage, ccode = capture(repo, commit, binding.source)
    if not c then return nil, cmessage, ccode end
    local record = admission.admit(c.files[1].bytes, { expected_function = binding["function"] })
    if record.outcome ~= "admitted" then
      local why = record.rejection ~= json.null and record.rejection or record.failure
      return refuse("admission_" .. record.outcome, "the %s module %s is not admitted: %s (%s)", side, binding.source,
        tostring(why.message), tostring(why.reason))
    end
    program.captures[side], program.admissions[side] = c, record
  end
  local h, herr = harness.generate {
    function_name = binding["function"],
    modules = kani.module_paths(binding.source, binding.source),
    inputs = bound.intent.contract.domain.inputs,
    observations = bound.intent.contract.observations,
    standing = bound.intent.contract.requirements,
    guards = bound.difference_policy.guards,
    target = target or "kani",
  }
  if not h then return refuse(herr.reason, "%s", herr.message) end
  program.harness = h
  return program
end

--- The seed's API: preflight, then preparation.
function M.prepare_rust_relational(project, request, trusted_target)
  local repo = project
  if type(project) == "string" then
    local message, code
    repo, message, code = git.open(project)
    if not repo then return nil, message, code end
  end
  local bound, message, code = preflight(repo, request, trusted_target)
  if not bound then return nil, message, code end
  return M.from_bound(repo, bound)
end

--- The JSON record of a program (bytes of captures are referenced by hash).
function M.to_json(program)
  local captures = {}
  for side, c in pairs(program.captures) do
    local files = json.array()
    for i, f in ipairs(c.files) do files[i] = { path = f.path, sha256 = f.sha256, mode = f.mode, blob = f.blob } end
    captures[side] = { commit = c.commit, module = c.module, files = files }
  end
  return {
    schema = program.schema, binding = program.binding, bound = program.bound, policy = program.policy,
    captures = captures, admissions = program.admissions,
    harness = { sha256 = program.harness.sha256, size = program.harness.size, target = program.harness.target,
                assertions = program.harness.assertions, spec_digest = program.harness.spec_digest },
    source_proof = false, approval_authority = false,
  }
end

return M
