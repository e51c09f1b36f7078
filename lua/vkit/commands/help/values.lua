--- The option values shell completion offers, as data: for each option
-- that takes one of a fixed set, the table the command itself checks the
-- value against (never a copy, so a format or method added there is
-- completed at the next `make install`), and for --run, the project's runs.
--
--   { command, action (nil: any), option, values = function() -> {names} | "runs" }
local M = {}

local function report_formats() return require("vkit.report").FORMATS end

M.OPTIONS = {
  { command = "run", action = "report", option = "--format", values = report_formats },
  { command = "vac", action = "verify", option = "--report", values = report_formats },
  { command = "change", action = "certify", option = "--method",
    values = function() return require("vkit.change.methods").NAMES end },
  { command = "change", action = "intent", option = "--language",
    values = function() return require("vkit.policy").change.languages end },
  -- run ids are asked of `vkit run list --json` when completing (the store
  -- may be a shared one, named by --store or VKIT_STORE)
  { command = "run", option = "--run", values = "runs" },
}

return M
