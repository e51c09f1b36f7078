--- Job-store handler for change certification (kind "change-certify").
local certify = require "vkit.change.certify"

local M = {}

-- ctx.progress (the worker's) records each method's progress lines.
function M.run(job, ctx)
  local summary = certify.run(job.payload, ctx)
  if summary.outcome == "cancelled" then return { outcome = "cancelled", summary = summary } end
  return { outcome = summary.outcome, summary = summary }
end

return M
