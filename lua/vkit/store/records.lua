--- The job store's records and what makes a run's records consistent.
--  Pure: the store reads the files, this decides whether they can be
--  believed.
--
--   job(doc, id)      -> true | nil, reason, message   (job.json)
--   state(doc)        -> true | nil, reason, message   (state.json)
--   consistent(run, attempt_records) -> true | nil, file, reason, message
--
-- A run whose records fail here is listed as corrupt, never skipped and
-- never shown with the outcome its state claims.
local S = require "vkit.schema"
local json = require "vkit.json"
local policy = require("vkit.policy").store

local M = {}

local text = S.string { min = 1, max = 256 }
local nullable = function(spec) return S.either(S.const(json.null), spec) end

M.STATUSES = { "queued", "running", "done", "failed", "cancelled" }

-- The job kinds with a handler (the policy raises on an absent name).
M.KINDS = {}
for kind in pairs(policy.handlers) do M.KINDS[kind] = true end

local JOB = S.object {
  schema_version = S.const(1),
  run_id = text,
  kind = text,
  created_at = text,
  payload = S.any_object,
}

local STATE = S.object {
  schema_version = S.const(1),
  status = S.enum(M.STATUSES),
  attempts = S.integer { min = 0, max = 1000 },
  outcome = nullable(text),
  summary = nullable(S.any_object),
  error = nullable(S.string { max = 65536 }),
  worker_pid = S.optional(S.integer { min = 1 }),
  created_at = text,
  updated_at = text,
}

local function checked(spec, doc)
  local ok, err = S.check(spec, doc)
  if ok then return true end
  return nil, err.code, S.explain(err)
end

function M.job(doc, id)
  local ok, code, message = checked(JOB, doc)
  if not ok then return nil, code, message end
  if doc.run_id ~= id then return nil, "wrong-run", ("it names run %s"):format(doc.run_id) end
  if not M.KINDS[doc.kind] then
    return nil, "unknown-kind", ("its kind %q has no handler"):format(doc.kind)
  end
  return true
end

function M.state(doc)
  return checked(STATE, doc)
end

--- Whether the state agrees with the attempts on disk.  attempts: the
--  attempt numbers present (sorted); records[n]: attempt n's attempt.json
--  (nil when it has none or it cannot be read).
function M.consistent(state, attempts, records)
  local n = state.attempts
  local highest = attempts[#attempts] or 0
  for i, a in ipairs(attempts) do
    if a ~= i then return nil, "attempts/", "missing-attempt", ("attempt %d is missing below attempt %d"):format(i, a) end
  end
  -- A worker makes attempt n+1's directory just before it records it.
  if highest < n or highest > n + 1 then
    return nil, "state.json", "attempts-mismatch",
      ("it counts %d attempts but the run has %d attempt directories"):format(n, highest)
  end
  if state.status == "queued" and n == 0 then return true end
  if n == 0 then
    if state.status == "cancelled" or state.status == "failed" then return true end
    return nil, "state.json", "attempts-mismatch", ("it says %s with no attempt"):format(state.status)
  end
  if state.status == "done" then
    local record = records[n]
    if not record or record.status ~= "done" or record.outcome ~= state.outcome then
      return nil, "state.json", "unrecorded-outcome",
        ("it claims outcome %s, which attempt %d does not record"):format(tostring(state.outcome), n)
    end
  end
  return true
end

return M
