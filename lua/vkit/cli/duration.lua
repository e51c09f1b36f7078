--- `--timeout` values: a decimal count of seconds with an optional unit,
-- `90`, `90s`, `10m`, `1.5h`, bounded by policies/store.lua
-- max_timeout_seconds.  Every mistake is a sentence for a usage error.
local policy = require("vkit.policy").store

local M = {}

local UNITS = { [""] = 1, s = 1, m = 60, h = 3600 }

--- Seconds, or nil and why not.
function M.parse(text, option)
  option = option or "--timeout"
  local number, unit = tostring(text):match "^(%d+%.?%d*)([smh]?)$"
  local n = number and tonumber(number)
  if not n then
    return nil, ("%s needs a duration such as 90, 90s, 10m or 2h, not %q"):format(option, tostring(text))
  end
  local seconds = n * UNITS[unit]
  if seconds > policy.max_timeout_seconds then
    return nil, ("%s must be at most %dh (%d seconds)"):format(option, policy.max_timeout_seconds // 3600,
      policy.max_timeout_seconds)
  end
  return seconds
end

return M
