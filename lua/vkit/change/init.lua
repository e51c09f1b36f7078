--- vkit.change: change intents, preflight, witnesses, paired execution,
-- change analysis, the exhaustive method and certification (seed 001).
local library = require "vkit.change.library"

local M = {}

M.preflight = require("vkit.change.preflight").preflight
M.run_paired_execution = library.run_paired_execution
M.run_change_analysis = library.run_change_analysis
M.run_exhaustive = library.run_exhaustive

return M
