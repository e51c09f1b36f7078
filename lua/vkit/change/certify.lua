--- Change certification: preflight, then each selected method, as one
-- shadow job (seed 001, `vkit change certify`).
--
-- Methods:
--   finite_paired   paired execution + change analysis (sampled native
--                   observations of accepted inputs)
--   rust_exhaustive every accepted input, base and candidate compiled into
--                   one native harness by rustc (Rust bindings only)
--   rust_kani       the Kani relational proof over the admitted Rust
--                   sources (Rust bindings, native x86-64 Linux, and a
--                   host-supplied Kani toolchain pin)
--   auto            finite_paired first; adds rust_kani only for a Rust
--                   binding on native x86-64 Linux with a host Kani pin
-- An explicitly requested method that cannot run yields a blocked shadow
-- job: there is never a fallback to another method.
--
-- The summary: requirement citation, intent digest, each method's result
-- and report reference, source_proof:false, approval_authority:false.  No
-- method plan or input vectors.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local preflight = require("vkit.change.preflight").preflight
local artifacts = require "vkit.change.artifacts"
local limits = require("vkit.policy").limits.paired
local change_policy = require("vkit.policy").change

local M = {}

M.METHODS = { "auto", "finite_paired", "rust_exhaustive", "rust_kani" }

-- Method modules are loaded only when a method runs.
local RUNNERS = {
  finite_paired = "vkit.change.method_paired",
  rust_exhaustive = "vkit.relational.exhaustive",
  rust_kani = "vkit.relational.kani_method",
}

--- Whether this host is the qualified native platform for Kani.
function M.native_x86_64_linux()
  local u = sys.uname()
  return u and u.sysname == "Linux" and u.machine == "x86_64"
end

local function binding_language(repo, bound)
  local pin = bound.intent.artifacts.binding_map
  local blob = repo:read(bound.target.commit, pin.path, change_policy.caps.artifact_bytes)
  local doc = blob and artifacts.parse("binding_map", blob.bytes)
  return doc and doc.language
end

--- The methods to run for a request, or nil and the reason the requested
--  method cannot run (a blocked shadow job).
function M.plan(method, language, has_kani_pin)
  local rust_native = language == "rust" and M.native_x86_64_linux()
  if method == "auto" then
    local plan = { "finite_paired" }
    if rust_native and has_kani_pin then plan[#plan + 1] = "rust_kani" end
    return plan
  end
  if method == "rust_kani" then
    if language ~= "rust" then return nil, "unsupported_binding", "rust_kani needs a Rust binding" end
    if not M.native_x86_64_linux() then return nil, "unsupported_platform", "rust_kani runs only on native x86-64 Linux" end
    if not has_kani_pin then return nil, "missing_toolchain_pin", "rust_kani needs a host-supplied --kani-toolchain pin" end
  elseif method == "rust_exhaustive" and language ~= "rust" then
    return nil, "unsupported_binding", "rust_exhaustive needs a Rust binding"
  end
  return { method }
end

--- Runs a certification.  payload = {project, request (decoded), trusted_target,
--  method, kani_toolchain (decoded pin or nil)}; ctx = a job-store context.
--  Returns the summary table (also written to <attempt>/certification.v1.json).
function M.run(payload, ctx)
  local dir = ctx.attempt_dir
  local repo = assert(require("vkit.git").open(payload.project))
  local summary = { schema_version = 1, source_proof = false, approval_authority = false,
                    methods = json.array(), method_requested = payload.method }
  local function finish(outcome)
    summary.outcome = outcome
    assert(fs.write_atomic(dir .. "/certification.v1.json", json.encode(summary, { indent = 2 }) .. "\n"))
    return summary
  end
  local bound, message, code = preflight(repo, payload.request, payload.trusted_target)
  if not bound then
    summary.blocked = { stage = "preflight", reason = code, message = message }
    return finish("blocked")
  end
  local preflight_done = sys.monotonic_ms()
  assert(fs.write_atomic(dir .. "/preflight.json",
    json.encode(require("vkit.change.bound").to_json(bound), { indent = 2 }) .. "\n"))
  summary.requirement = { source = bound.intent.requirement.source, statement = bound.intent.requirement.statement }
  summary.intent_digest = bound.intent.digest
  summary.request_digest = bound.request.digest
  summary.preflight_digest = bound.digest
  summary.target = bound.target.commit
  summary.candidate = bound.candidate.commit

  local plan, reason, why = M.plan(payload.method, binding_language(repo, bound), payload.kani_toolchain ~= nil)
  if not plan then
    summary.blocked = { stage = "method", reason = reason, message = why }
    return finish("blocked")
  end
  local worst = "observed_conformance"
  local rank = { observed_conformance = 0, verified = 0, all_inputs_conform = 0, samples_within_contract = 0,
                 unknown = 1, infrastructure_failure = 1, blocked = 2, proof_rejected = 3, observed_violation = 3 }
  for _, method in ipairs(plan) do
    local method_dir = dir .. "/" .. method
    assert(fs.mkdirs(method_dir))
    local runner = require(RUNNERS[method])
    local result = runner.run(bound, {
      repo = repo, dir = method_dir, ctx = ctx, kani_toolchain = payload.kani_toolchain,
      deadline_at = preflight_done + limits.deadline_ms,
      progress = ctx.progress or function() end,
    })
    local report_path = method .. "/" .. result.report
    summary.methods[#summary.methods + 1] = {
      method = method, result = result.status, reason = result.reason or json.null,
      report = report_path, report_sha256 = assert(hash.file(dir .. "/" .. report_path)),
    }
    if (rank[result.status] or 1) > (rank[worst] or 0) then worst = result.status end
    if ctx.cancelled() then return finish("cancelled") end
  end
  -- Every method conformed (each in its own terms): the shadow outcome says
  -- observed_conformance; otherwise the worst method result stands.
  return finish(rank[worst] == 0 and "observed_conformance" or worst)
end

return M
