--- Job-store handler for change certification (kind "change-certify").
local certify = require "vkit.certify"

local M = {}

--- The outcome a finished run's retained reports support (the store
--  checks the one it records against it: vkit.store.common.check_evidence).
--  files.read(rel, max_bytes): attempt n's retained file.
function M.outcome_from_evidence(run, n, files)
  return require("vkit.change.evidence").derive(files.read, run.job.payload.trust_candidate_code == true,
    run.state.summary)
end

-- ctx.progress (the worker's) records each method's progress lines.
function M.run(job, ctx)
  local summary = certify.run(job.payload, ctx)
  if summary.outcome == "cancelled" then return { outcome = "cancelled", summary = summary } end
  return { outcome = summary.outcome, summary = summary }
end

return M
