--- Submitting certifications and printing shadow summaries (CLI and MCP
-- share this).
--
-- The compact shadow summary: requirement citation, intent digest, each
-- method's result and report reference, source_proof:false and
-- approval_authority:false.  No method plan, no input vectors.
local json = require "vkit.json"
local sys = require "vkit.sys"
local store_mod = require "vkit.store"
local certify = require "vkit.change.certify"

local M = {}

M.NOT_ESTABLISHED = "Not established: finite paired results are sampled native observations of accepted inputs; "
  .. "they do not cover omitted inputs, prove deterministic behaviour, establish native compiler correspondence, "
  .. "or grant approval. An unsupported, incomplete or blocked method never becomes a passing result."

--- Validates and queues a certification; returns the run id or nil, message.
function M.submit(store, fields)
  local method = fields.method or "auto"
  local known = false
  for _, m in ipairs(certify.METHODS) do if m == method then known = true end end
  if not known then return nil, ("unknown method %q (one of %s)"):format(method, table.concat(certify.METHODS, ", ")) end
  if json.kind(fields.request) ~= "object" then return nil, "the request must be a JSON object" end
  if type(fields.trusted_target) ~= "string" then return nil, "a trusted target commit is required" end
  if fields.kani_toolchain ~= nil and json.kind(fields.kani_toolchain) ~= "object" then
    return nil, "the Kani toolchain pin must be a JSON object"
  end
  local id = store:submit("change-certify", {
    project = store.project, request = fields.request, trusted_target = fields.trusted_target, method = method,
    kani_toolchain = fields.kani_toolchain,
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
    out.blocked = s.blocked or json.null
    out.target = s.target or json.null
    out.candidate = s.candidate or json.null
  else
    out.methods = json.array()
    out.blocked = json.null
  end
  return out
end

--- Waits up to `seconds`, copying the attempt's progress lines to `echo`.
function M.wait(store, id, seconds, echo)
  local deadline = sys.monotonic_ms() + math.floor(seconds * 1000)
  local shown = 0
  while true do
    local run = assert(store:get(id))
    if echo and #run.attempts > 0 then
      local log = store:read_artifact(run, run.attempts[#run.attempts], "progress.log", 1 << 24)
      if log and #log > shown then
        echo(log:sub(shown + 1))
        shown = #log
      end
    end
    if store_mod.TERMINAL[run.state.status] or sys.monotonic_ms() >= deadline then return run end
    sys.sleep(0.1)
  end
end

function M.exit_code(run)
  local s = run.state
  if s.status == "failed" then return 3 end
  if not store_mod.TERMINAL[s.status] then return 4 end
  return s.outcome == "observed_conformance" and 0 or 1
end

function M.print_human(shadow)
  print(("run %s: %s%s"):format(shadow.run_id, shadow.status,
    shadow.outcome ~= json.null and ("  " .. tostring(shadow.outcome)) or ""))
  if shadow.requirement and shadow.requirement ~= json.null then
    print(("requirement %s: %s"):format(shadow.requirement.source, shadow.requirement.statement))
    print("intent " .. shadow.intent_digest)
  end
  if shadow.blocked and shadow.blocked ~= json.null then
    print(("blocked at %s: %s (%s)"):format(shadow.blocked.stage, shadow.blocked.message, shadow.blocked.reason))
  end
  for _, m in ipairs(shadow.methods) do
    print(("  %-16s %-24s report %s"):format(m.method, m.result, m.report))
  end
  if shadow.error ~= json.null and shadow.error then print("error: " .. shadow.error) end
  print("source_proof: false  approval_authority: false")
  print(M.NOT_ESTABLISHED)
end

return M
