--- The report model of a probe run (the store's diagnostic job): its
--  status and outcome, nothing verified.
local records = require "vkit.report.records"

local M = {}

function M.model(store, run)
  local model = records.base(run, "probe")
  model.passing = run.state.status == "done"
  model.reason = model.error and "failed" or nil
  model.message = model.error
  model.headline = ("%s probe: %s"):format(model.outcome or model.status, model.error or "a diagnostic job")
  model.not_established = { "A probe verifies nothing: it waits and honours cancellation." }
  return model
end

return M
