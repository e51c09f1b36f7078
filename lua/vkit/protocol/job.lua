--- Job-store handler for external checks and their replays.
local run = require "vkit.protocol.run"
local retained = require "vkit.protocol.retained"

local M = {}

local SUMMARY_FIELDS = retained.SUMMARY_FIELDS

--- The outcome attempt n's retained files support (vkit.store.common.
--  check_evidence holds the recorded one to it).
function M.outcome_from_evidence(run_record, n, files)
  return retained.derive(run_record, n, files)
end

function M.run(job, ctx)
  local run_id = ("%s/%d"):format(ctx.run_id, ctx.attempt)
  local result
  if job.kind == "external-replay" then
    local payload = job.payload
    if not payload.evidence_dir then
      -- The retained evidence of the run replayed, from whichever store
      -- holds it (a verified local copy on a shared store).
      payload = setmetatable({ evidence_dir = ctx.retained(payload.of_run, payload.of_attempt, "evidence") },
        { __index = payload })
    end
    result = run.replay(payload, ctx, run_id)
  else
    result = run.run_check(job.payload, ctx, run_id)
  end
  if result.reason == "cancelled" then return { outcome = "cancelled" } end
  local summary = { run_id = run_id, evidence = result.evidence }
  for _, k in ipairs(SUMMARY_FIELDS) do summary[k] = result[k] end
  return { outcome = result.outcome, summary = summary }
end

return M
