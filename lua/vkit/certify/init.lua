--- Change certification: preflight, then each selected method, as one
-- shadow job (seed 001, `vkit change certify`).
--
-- Methods are peers (vkit.change.methods, run by the modules in RUNNERS): each writes its own report and
-- runs on its own budget, and the one pure combiner (vkit.change.combine)
-- turns their results into the run's outcome.
--   auto  finite_paired, then exhaustive (every accepted input), and
--         rust_kani only for a Rust binding on native x86-64 Linux when the
--         host supplies a closed-format Kani toolchain pin
-- An explicitly requested method that cannot run yields a blocked shadow
-- job: there is never a fallback to another method.
--
-- Budgets: finite_paired and exhaustive each get the seed's runner limits
-- (128 invocations, 64 KiB per invocation, 300 s from the method's start,
-- which is after Git preflight); rust_kani gets its own engine deadline
-- (<= 300 s, for the Kani process alone).  The run's cancellation reaches
-- every method's processes.
--
-- The summary: requirement citation, intent digest, each method's result,
-- report reference, coverage ("checked N of M accepted inputs (method)"),
-- cuts and budget, the combined outcome and its coverage,
-- source_proof:false, approval_authority:false.  No method plan or input
-- vectors.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local preflight = require("vkit.change.preflight").preflight
local artifacts = require "vkit.change.artifacts"
local methods = require "vkit.change.methods"
local combine = require "vkit.change.combine"
local kani_toolchain = require "vkit.relational.toolchain"
local limits = require("vkit.policy").limits
local change_policy = require("vkit.policy").change

local M = {}

M.METHODS = methods.NAMES

-- The module that runs each method, loaded only when the method runs.
local RUNNERS = {
  finite_paired = "vkit.change.method_paired",
  exhaustive = "vkit.change.exhaustive",
  rust_exhaustive = "vkit.relational.exhaustive",
  rust_kani = "vkit.relational.kani_method",
}

--- Whether this host is the qualified native platform for Kani.
function M.native_x86_64_linux()
  local u = sys.uname()
  return u and u.sysname == "Linux" and u.machine == "x86_64"
end

--- true, or nil and why `pin` is not a closed-format Kani toolchain pin.
function M.closed_format_pin(pin)
  if pin == nil then return nil, "no Kani toolchain pin was supplied" end
  if json.kind(pin) ~= "object" then return nil, "the Kani toolchain pin must be a JSON object" end
  return kani_toolchain.check(pin)
end

local function binding_language(repo, bound)
  local pin = bound.intent.artifacts.binding_map
  local blob = repo:read(bound.target.commit, pin.path, change_policy.caps.artifact_bytes)
  local doc = blob and artifacts.parse("binding_map", blob.bytes)
  return doc and doc.language
end

--- The methods to run for a request, or nil and the reason the requested
--  method cannot run (a blocked shadow job).  kani_pin: the decoded pin or
--  nil; multi: the intent is of the multi-parameter profile.
function M.plan(method, language, kani_pin, multi)
  -- the multi-parameter profile (issue 34): finite_paired and exhaustive check it, auto runs both as for the seed
  if multi then
    if method == "auto" then return { "finite_paired", "exhaustive" } end
    if method == "finite_paired" or method == "exhaustive" then return { method } end
    return nil, "unsupported_profile", method .. " does not check the multi-parameter profile yet: use finite_paired, "
      .. "exhaustive or auto"
  end
  local rust_native = language == "rust" and M.native_x86_64_linux()
  local pin_ok, pin_problem = M.closed_format_pin(kani_pin)
  if method == "auto" then
    local plan = { "finite_paired", "exhaustive" }
    if rust_native and pin_ok then plan[#plan + 1] = "rust_kani" end
    return plan
  end
  if method == "rust_kani" then
    if language ~= "rust" then return nil, "unsupported_binding", "rust_kani needs a Rust binding" end
    if not M.native_x86_64_linux() then return nil, "unsupported_platform", "rust_kani runs only on native x86-64 Linux" end
    if kani_pin == nil then return nil, "missing_toolchain_pin", "rust_kani needs a host-supplied --kani-toolchain pin" end
    if not pin_ok then return nil, "invalid_pin", "the Kani toolchain pin is not in the closed format: " .. pin_problem end
  elseif method == "rust_exhaustive" and language ~= "rust" then
    return nil, "unsupported_binding", "rust_exhaustive needs a Rust binding"
  end
  return { method }
end

-- The options one method runs with: its own budget, the run's cancellation.
local function method_options(method, repo, dir, ctx, payload, sampled, shared)
  return {
    repo = repo, dir = dir, ctx = ctx, run_id = ctx.run_id, sampled = sampled,
    -- the toolchain is hashed in full once per certification, not per method
    toolchain_cache = shared.toolchain_cache,
    kani_toolchain = payload.kani_toolchain,
    toolchain_roots = payload.toolchain_roots,  -- where this host keeps a declared toolchain root
    -- finite_paired and exhaustive: 300 s from this method's start (after Git preflight)
    deadline_at = sys.monotonic_ms() + limits.paired.deadline_ms,
    -- rust_kani: the engine process's own deadline
    kani_deadline_ms = limits.kani.max_deadline_ms,
    progress = ctx.progress or function() end,
  }
end

--- What the summary says of the candidate's admission (vkit.change.admission).
function M.admission_summary(record)
  local r = record.refusal ~= json.null and record.refusal or nil
  return { admitted = record.admitted, profile = record.profile, source = record.source.path,
           source_sha256 = record.source.sha256 or json.null,
           rule = r and r.rule or json.null, at = r and r.at or json.null, message = r and r.message or json.null,
           not_established = (not record.admitted) and require("vkit.change.admission").not_established(record)
             or json.null }
end

--- Runs a certification.  payload = {project, request (decoded), trusted_target,
--  method, kani_toolchain (decoded pin or nil), trust_candidate_code (the
--  host's --trust-candidate-code: true or absent)}; ctx = a job-store context
--  {attempt_dir, run_id, cancelled(), run_process(spec), progress}.
--  Returns the summary table (also written to <attempt>/certification.v1.json).
function M.run(payload, ctx)
  local dir = ctx.attempt_dir
  -- Written beneath a handle: the methods' candidate processes run below
  -- this directory and could plant a link where these files go.
  local rd = assert(require("vkit.run_dir").open(dir))
  local repo = assert(require("vkit.git").open(payload.project))
  local trusted = payload.trust_candidate_code == true
  local summary = { schema_version = 1, source_proof = false, approval_authority = false,
                    methods = json.array(), method_requested = payload.method, trust_candidate_code = trusted,
                    candidate_admission = json.null, not_established = json.array() }
  local function finish(outcome, combined)
    summary.outcome = outcome
    local known = combine.outcome(outcome)
    summary.outcome_meaning = known and known.meaning or json.null
    summary.coverage = combined and combined.coverage or json.null
    assert(rd:write_json("certification.v1.json", summary))
    rd:close()
    return summary
  end
  local bound, message, code = preflight(repo, payload.request, payload.trusted_target)
  if not bound then
    summary.blocked = { stage = "preflight", reason = code, message = message }
    return finish("blocked")
  end
  assert(rd:write_json("preflight.json", require("vkit.change.bound").to_json(bound)))
  summary.requirement = { source = bound.intent.requirement.source, statement = bound.intent.requirement.statement }
  summary.intent_digest = bound.intent.digest
  summary.request_digest = bound.request.digest
  summary.preflight_digest = bound.digest
  summary.target = bound.target.commit
  summary.candidate = bound.candidate.commit

  local plan, reason, why = M.plan(payload.method, binding_language(repo, bound), payload.kani_toolchain,
    bound.intent.contract.profile == "multi")
  if not plan then
    summary.blocked = { stage = "method", reason = reason, message = why }
    return finish("blocked")
  end
  local results, sampled = {}, nil
  local shared = { toolchain_cache = {} }
  local sandbox_noted = false
  for _, method in ipairs(plan) do
    if ctx.cancelled() then return finish("cancelled") end
    local method_dir = dir .. "/" .. method
    assert(fs.mkdirs(method_dir))
    local runner = require(RUNNERS[method])
    local result = runner.run(bound, method_options(method, repo, method_dir, ctx, payload, sampled, shared))
    if result.paired then sampled = result.paired end
    local report_path = method .. "/" .. result.report
    local entry = {
      method = method, result = result.status, reason = result.reason or json.null,
      -- what went wrong, in the method's words (a pin mismatch names the file)
      message = type(result.message) == "string" and result.message or json.null,
      report = report_path, report_sha256 = assert(hash.file(dir .. "/" .. report_path)),
      coverage = result.coverage or json.null, cuts = result.cuts or json.array(), budget = result.budget or json.null,
    }
    entry.admitted = combine.admitted { method = method, admitted = result.admitted }
    if result.sandbox then
      entry.os_sandbox = result.sandbox.os_sandbox == true
      if not entry.os_sandbox and not sandbox_noted then
        sandbox_noted = true
        summary.not_established[#summary.not_established + 1] = ("%s ran without the full OS sandbox: %s"):format(
          method, tostring(result.sandbox.reason ~= json.null and result.sandbox.reason or "not applied to every launch"))
      end
    end
    summary.methods[#summary.methods + 1] = entry
    -- what the method itself says its result leaves open (the multi-parameter exhaustive method's batch mode)
    for _, line in ipairs(result.not_established or {}) do
      summary.not_established[#summary.not_established + 1] = method .. ": " .. line
    end
    results[#results + 1] = { method = method, status = result.status, coverage = result.coverage,
                              admitted = result.admitted }
    if result.admission and summary.candidate_admission == json.null then
      summary.candidate_admission = M.admission_summary(result.admission)
    end
    if ctx.cancelled() then return finish("cancelled") end
  end
  local combined = combine.combine(results, { trust_candidate_code = trusted })
  local a = summary.candidate_admission
  if a ~= json.null and not a.admitted then
    summary.not_established[#summary.not_established + 1] = a.not_established
    if trusted then
      summary.not_established[#summary.not_established + 1] = "the host accepted this candidate with "
        .. "--trust-candidate-code: its conformance rests on that trust, not on the pure profile"
    end
  end
  return finish(combined.outcome, combined)
end

return M
