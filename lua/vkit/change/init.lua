--- vkit.change: change intents, preflight, witnesses, paired execution,
-- change analysis and certification (seed 001).
local M = {}

M.preflight = require("vkit.change.preflight").preflight

return M
