--- Change certification runs: queueing one, following it, and its compact
-- shadow summary.  The command line, MCP, the REPL and vkit.api all call
-- these; none of them prints or chooses an exit status (that is
-- vkit.cli.outcomes').
--
-- The compact shadow summary: requirement citation, intent digest, each
-- method's result, report reference and coverage, the combined outcome and
-- its coverage, source_proof:false and approval_authority:false.  No method
-- plan, no input vectors.
local json = require "vkit.json"
local sys = require "vkit.sys"
local store_mod = require "vkit.store"
local store_policy = require("vkit.policy").store
local certify = require "vkit.certify"
local request = require "vkit.change.request"
local relocate = require "vkit.change.relocate"
local methods = require "vkit.change.methods"
local combine = require "vkit.change.combine"
local schema = require "vkit.schema"

local M = {}

--- nil when `method` names a certification method, else why not.
function M.method_problem(method)
  if methods.known(method) then return nil end
  return ("unknown method %q (one of %s)"):format(tostring(method), table.concat(methods.NAMES, ", "))
end

--- Validates and queues a certification; returns the run id or nil,
--  message, code: unknown-method, request-invalid (not a change request),
--  trusted-target-missing, trusted-branch-invalid, kani-pin-invalid (not a
--  closed-format pin),
--  toolchain-roots-invalid (fields.toolchain_roots, else VKIT_TOOLCHAIN_ROOTS:
--  vkit.change.relocate).
function M.submit(store, fields)
  local method = fields.method or "auto"
  local problem = M.method_problem(method)
  if problem then return nil, problem, "unknown-method" end
  if json.kind(fields.request) ~= "object" then return nil, "the request must be a JSON object", "request-invalid" end
  -- A document that is not a change request is refused before anything is
  -- queued; whether a well-formed request binds is preflight's to say.
  local parsed, why, why_code = request.parse(fields.request)
  if not parsed then return nil, why, why_code or "request-invalid" end
  if type(fields.trusted_target) ~= "string" then
    return nil, "a trusted target commit is required", "trusted-target-missing"
  end
  -- A pin the host supplies must be a closed-format Kani toolchain pin:
  -- refused up front, never silently ignored (by auto) or run (by rust_kani).
  if fields.kani_toolchain ~= nil then
    local ok, pin_problem = certify.closed_format_pin(fields.kani_toolchain)
    if not ok then
      return nil, "the Kani toolchain pin is not a closed-format pin: " .. tostring(pin_problem), "kani-pin-invalid"
    end
  end
  -- How the one command chose the trusted target (vkit.change.trusted_base):
  -- the trusted branch's commit it checked the base against, or that the
  -- caller's base was taken as given.  Recorded for the report, never used
  -- to bind.
  if fields.trusted_branch ~= nil and not schema.is_commit_id(fields.trusted_branch) then
    return nil, "trusted_branch must be a full commit id", "trusted-branch-invalid"
  end
  if fields.base_from_caller ~= nil and type(fields.base_from_caller) ~= "boolean" then
    return nil, "base_from_caller must be a boolean", "request-invalid"
  end
  if fields.trust_candidate_code ~= nil and type(fields.trust_candidate_code) ~= "boolean" then
    return nil, "trust_candidate_code must be a boolean", "request-invalid"
  end
  -- Where this host keeps a declared toolchain root (vkit.change.relocate):
  -- the host's environment when it queues, never the request.
  local roots, roots_problem
  if fields.toolchain_roots ~= nil then
    roots, roots_problem = relocate.check(fields.toolchain_roots)
  elseif os.getenv(relocate.VARIABLE) then
    roots, roots_problem = relocate.parse(os.getenv(relocate.VARIABLE))
  end
  if roots_problem then return nil, roots_problem, "toolchain-roots-invalid" end
  -- A store that cannot take the job (this login may not queue, no worker
  -- could keep its files) refuses it before anything is queued.
  local refusal, refusal_code = store.submit_problem and store:submit_problem()
  if refusal then return nil, refusal, refusal_code end
  local id = store:submit("change-certify", {
    project = store.project, request = fields.request, trusted_target = fields.trusted_target, method = method,
    kani_toolchain = fields.kani_toolchain, toolchain_roots = roots,
    -- the host's choice (--trust-candidate-code), never the request's
    trust_candidate_code = fields.trust_candidate_code == true or nil,
    trusted_branch = fields.trusted_branch, base_from_caller = fields.base_from_caller == true or nil,
  })
  store:ensure_worker()
  return id
end

--- The compact shadow summary of a certification run.
function M.shadow(store, run)
  local s = run.state.summary
  local out = store:summary(run)
  out.summary = nil
  out.source_proof = false
  out.approval_authority = false
  if s ~= json.null and s then
    out.requirement = s.requirement or json.null
    out.intent_digest = s.intent_digest or json.null
    out.methods = s.methods or json.array()
    out.coverage = s.coverage or json.null
    out.outcome_meaning = s.outcome_meaning or json.null
    out.blocked = s.blocked or json.null
    out.target = s.target or json.null
    out.candidate = s.candidate or json.null
    out.trust_candidate_code = s.trust_candidate_code == true
    out.candidate_admission = s.candidate_admission or json.null
    out.not_established = s.not_established or json.array()
  else
    out.methods = json.array()
    out.blocked = json.null
    out.coverage = json.null
  end
  return out
end

--- Waits up to `seconds`, copying the attempt's progress lines to `echo`.
function M.wait(store, id, seconds, echo)
  local deadline = sys.monotonic_ms() + math.floor(seconds * 1000)
  local shown, over = 0, false
  while true do
    local run = assert(store:get(id))
    if echo and #run.attempts > 0 then
      local n = run.attempts[#run.attempts]
      local log, _, code = store:progress(run, n)
      if log and #log > shown then
        echo(log:sub(shown + 1))
        shown = #log
      elseif code == "too-large" and not over then
        echo(("(the progress of attempt %d passed %d bytes: the whole of it is the retained progress.log)\n")
          :format(n, store_policy.progress_bytes))
        over = true
      end
    end
    if store_mod.TERMINAL[run.state.status] or sys.monotonic_ms() >= deadline then return run end
    sys.sleep(0.1)
  end
end

--- Whether a run certified its change: finished, and its outcome is one
--  whose policy says every accepted input was checked and conforms (exit
--  0 in policies/change.lua).  Anything else (pending, failed, unknown,
--  sampled, unadmitted, blocked) is not.
function M.certified(run)
  local s = run.state
  if s.status == "failed" or not store_mod.TERMINAL[s.status] then return false end
  local known = combine.outcome(s.outcome)
  return known ~= nil and known.exit == 0
end

return M
