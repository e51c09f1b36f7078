--- `vkit repl`: an interactive Lua session with `vkit` loaded.
local vkit = require "vkit"
local args = require "vkit.args"

return {
  summary = "interactive Lua with vkit preloaded (piped stdin works too)",
  usage = "usage: vkit repl",
  run = function(argv)
    local opts, err = args.parse(argv, { max = 0 })
    if not opts then return require("vkit.cli").usage_error(err, "repl") end
    _G.vkit = vkit
    return require("vkit.repl").run(_G)
  end,
}
