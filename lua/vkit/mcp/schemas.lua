--- JSON Schemas shared by several tools (published in tools/list as
--  outputSchema).  Output schemas stay open (no additionalProperties:
--  false) so a field added to a run summary later does not break clients.
local json = require "vkit.json"

local M = {}

--- An object schema: properties (name -> schema), required names.
function M.object(properties, required, extra)
  local s = json.object { type = "object", properties = json.object(properties) }
  if required and #required > 0 then s.required = json.array(required) end
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

function M.typed(t, description, extra)
  local s = json.object { type = type(t) == "table" and json.array(t) or t }
  if description then s.description = description end
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

function M.array_of(items, description)
  return json.object { type = "array", items = items, description = description }
end

function M.enum(values, description, extra)
  local s = json.object { enum = json.array(values), description = description }
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

local string_or_null = function(d) return M.typed({ "string", "null" }, d) end

-- The fields every run summary has (vkit.store Store:summary).
local RUN = {
  run_id = M.typed("string", "the durable run id (.vkit/runs/<run_id>)"),
  kind = M.typed("string", "the job kind: change-certify, external-check, external-replay or probe"),
  status = M.enum({ "queued", "running", "done", "failed", "cancelled" }, "the run's lifecycle state"),
  outcome = string_or_null("the handler's verdict once done (e.g. all_inputs_conform, all_inputs_conform_trusted, "
    .. "unadmitted_conform, samples_conform, blocked, PASS)"),
  attempts = M.typed("integer", "attempts started so far (a lost worker's attempt is retried)"),
  created_at = M.typed("string", "UTC, ISO 8601"),
  updated_at = M.typed("string", "UTC, ISO 8601"),
  error = string_or_null "why the run failed or was cancelled",
  cancel_requested = M.typed("boolean"),
}
local RUN_REQUIRED = { "run_id", "kind", "status", "outcome", "attempts", "created_at", "updated_at", "error",
                       "cancel_requested" }

-- The compact shadow summary of a certification (vkit.change.cli.shadow).
local SHADOW = {
  requirement = M.object({ source = M.typed "string", statement = M.typed "string" }, { "source", "statement" },
    { type = json.array { "object", "null" }, description = "the accepted intent's requirement citation" }),
  intent_digest = string_or_null "the accepted intent revision's digest",
  methods = M.array_of(M.object({
    method = M.typed "string",
    result = M.typed("string", "e.g. observed_conformance, all_inputs_conform, observed_violation, unknown, verified"),
    reason = string_or_null(),
    report = M.typed("string", "the method report, relative to the attempt directory"),
    report_sha256 = M.typed "string",
    coverage = M.typed({ "object", "null" }, "{method, checked, accepted, scope, statement}: \"checked N of M accepted inputs (method)\""),
    cuts = M.typed("array", "observation-policy settings a limit cut: {setting, requested, applied, limit, limit_value}"),
    admitted = M.typed("boolean", "whether this method's candidate is inside the pure-function profile"),
    os_sandbox = M.typed("boolean", "whether every launch of this method had the full OS sandbox"),
  }, { "method", "result", "reason", "report", "report_sha256" }), "each method run, its result, report reference and coverage"),
  candidate_admission = M.typed({ "object", "null" }, "{admitted, profile, source, rule, at, message, not_established}: "
    .. "whether the candidate's source is inside its language's pure-function profile, and if not, the rule and line"),
  trust_candidate_code = M.typed("boolean", "the host accepted a candidate outside the pure profile "
    .. "(--trust-candidate-code): outcome all_inputs_conform_trusted"),
  not_established = M.typed("array", "what this certification does not establish beyond each method's own statement"),
  coverage = M.typed({ "object", "null" }, "the deciding method's coverage: \"checked N of M accepted inputs (method)\""),
  outcome_meaning = string_or_null "what the outcome establishes (0 exit only when every accepted input was checked)",
  blocked = M.object({ stage = M.typed "string", reason = M.typed "string", message = M.typed "string" },
    { "stage", "reason", "message" },
    { type = json.array { "object", "null" }, description = "why no method ran (preflight refusal or an unavailable method)" }),
  causes = M.array_of(M.object({
    method = M.typed "string", side = M.typed("string", "base or candidate"),
    text = M.typed("string", "the cause in one line: the exception and traceback tail, a value outside the type, "
      .. "a missing function, a build error"),
    count = M.typed "integer", unit = M.typed("string", "inputs, or runs for a build"),
    -- anyOf, not a type list: strict validators (the SDK's Ajv) refuse a
    -- union of integer and string types
    first = json.object { description = "the first input with this cause: a u32 (one u32 parameter) or the "
      .. "parameters named (\"x=3, lo=-1\")", anyOf = json.array { M.typed "integer", M.typed "string",
      M.typed "null" } },
  }, { "method", "side", "text", "count", "unit" }), "why inputs could not be checked, one per method and side"),
  target = string_or_null "the trusted target commit",
  candidate = string_or_null "the candidate commit",
  source_proof = M.enum({ false }, "always false: finite observations are not a source proof"),
  approval_authority = M.enum({ false }, "always false: no result here grants approval"),
}

local function merged(...)
  local out = {}
  for _, t in ipairs { ... } do for k, v in pairs(t) do out[k] = v end end
  return out
end

--- A run summary of any kind: certification fields present for
--  change-certify runs, `summary` for external checks.
function M.run()
  return M.object(merged(RUN, SHADOW, {
    summary = M.typed({ "object", "null" }, "an external check's result summary (seed 000)"),
  }), RUN_REQUIRED)
end

--- The compact shadow summary of a certification run.
function M.shadow()
  local required = { table.unpack(RUN_REQUIRED) }
  for _, k in ipairs { "methods", "blocked", "source_proof", "approval_authority" } do required[#required + 1] = k end
  return M.object(merged(RUN, SHADOW), required)
end

--- The run_id argument of the tools that take a run (vkit.runs.named).
function M.run_name()
  return M.typed("string", "the run: its whole id (as change_certify or verify returned it), a unique prefix of "
    .. "it or of its hex tail (3f2a for r-20261206T172530Z-3f2a...), or latest (the newest run); an unknown or "
    .. "ambiguous name is refused, naming the candidates", { minLength = 1 })
end

--- A bounded wait in seconds (policies/store.lua max_wait_seconds).
function M.wait(default, description)
  return M.typed("number", description, {
    minimum = 0, maximum = require("vkit.policy").store.max_wait_seconds, default = default })
end

return M
