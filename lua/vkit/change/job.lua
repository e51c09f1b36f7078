--- Job-store handler for change certification (kind "change-certify").
local certify = require "vkit.change.certify"

local M = {}

function M.run(job, ctx)
  ctx.progress = function(text)
    ctx.log(text)
    local f = io.open(ctx.attempt_dir .. "/progress.log", "a")
    if f then
      f:write(text, "\n")
      f:close()
    end
  end
  local summary = certify.run(job.payload, ctx)
  if summary.outcome == "cancelled" then return { outcome = "cancelled", summary = summary } end
  return { outcome = summary.outcome, summary = summary }
end

return M
