--- Exit statuses of runs: what `vkit change certify`, `vkit verify`, `vkit
-- run wait` and `vkit run replay` return for them.  Scripts and CI jobs
-- read these, and vkit.api publishes them (vkit.change.exit_code,
-- vkit.protocol.exit_code), so they are chosen here once, as pure
-- functions of a run's state:
--   a certification: the outcome's exit in policies/change.lua (0 only
--     when every accepted input was checked and conforms), 3 a failed
--     run, 4 still pending;
--   external checks: 0 PASS (every check), 1 BLOCKED or cancelled, 3 a
--     failed run, 4 still pending.
local store_mod = require "vkit.store"
local combine = require "vkit.change.combine"

local M = {}

--- The exit status of `vkit change certify` for a certification run.
function M.change_exit(run)
  local s = run.state
  if s.status == "failed" then return 3 end
  if not store_mod.TERMINAL[s.status] then return 4 end
  local known = combine.outcome(s.outcome)
  return known and known.exit or 1
end

--- The exit status of `vkit verify` for external check runs (also `vkit
--  run wait`'s and `vkit run replay`'s).
function M.external_exit(runs)
  local code = 0
  for _, r in ipairs(runs) do
    local s = r.state
    if s.status == "failed" then return 3 end
    if not store_mod.TERMINAL[s.status] then code = math.max(code, 4)
    elseif s.outcome ~= "PASS" then code = math.max(code, 1) end
  end
  return code
end

--- The exit status of any run, by its kind.
function M.run_exit(run)
  local kind = run.job.kind
  if kind == "change-certify" then return M.change_exit(run) end
  if kind == "external-check" or kind == "external-replay" then return M.external_exit({ run }) end
  return nil
end

return M
