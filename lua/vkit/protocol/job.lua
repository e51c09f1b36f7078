--- Job-store handler for external checks and their replays.
local run = require "vkit.protocol.run"

local M = {}

local SUMMARY_FIELDS = { "outcome", "reason", "message", "checker_verdict", "component", "check_id", "commit", "job_id",
                         "input_digest", "specification_digest", "evidence_digest", "replay_of", "sandbox",
                         "containment", "tampering" }

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
