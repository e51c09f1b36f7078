--- The finite_paired certification method: paired execution, then change
-- analysis of the retained observations (seed 001).
local analysis = require "vkit.change.analysis"

local M = {}

--- opts as for vkit.change.paired.run; returns {status, reason, report}.
function M.run(bound, opts)
  local result, report = analysis.run(bound, opts)
  return { status = result.status, reason = report.status, report = analysis.REPORT }
end

return M
