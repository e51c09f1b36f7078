--- Admission of a multi-parameter source (issue 34), until the pure
-- profiles learn this profile's signatures (vkit.admission.*, another
-- piece of work): every side is recorded as NOT admitted, whatever the
-- seed's profile said of it, with a rule that names why.  So a conforming
-- candidate ends unadmitted_conform (exit 8) unless the host trusts it
-- with --trust-candidate-code, and nothing reads as established that was
-- not checked.  Pure.
local json = require "vkit.json"

local M = {}

M.RULE = "admission-profile-pending"
M.MESSAGE = "the pure-function profiles do not yet admit functions of the multi-parameter profile: the source "
  .. "is treated as not admitted"

--- The side's admission record (vkit.change.admission's shape) as not
--  admitted; what the seed's profile said stays under `seed_profile`.
function M.pending(record)
  local out = {}
  for k, v in pairs(record) do out[k] = v end
  out.admitted, out.outcome = false, "refused"
  out.seed_profile = { outcome = record.outcome, admitted = record.admitted, refusal = record.refusal or json.null }
  out.refusal = { rule = M.RULE, reason = "profile_pending", at = record.source and record.source.path or json.null,
                  message = M.MESSAGE }
  return out
end

return M
