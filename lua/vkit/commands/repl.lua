--- `vkit repl [--project DIR]`: an interactive Lua session with `vkit` loaded.
local vkit = require "vkit"
local args = require "vkit.args"

local USAGE = [[usage: vkit repl [--project DIR] [--store URL]

With --project, runs(), run(id), pp(value) and store are preloaded for
walking the project's job store (see vkit.store.explore).]]

return {
  summary = "interactive Lua with vkit preloaded; --project adds runs() and run(id)",
  usage = USAGE,
  run = function(argv)
    local opts, err = args.parse(argv, { options = { project = "string", store = "string" } })
    if not opts then return require("vkit.cli").usage_error(err, "repl") end
    _G.vkit = vkit
    if opts.project or opts.store then
      local ok, store = pcall(require("vkit.store").open, { store = opts.store, project = opts.project or "." })
      if not ok then
        io.stderr:write("vkit: cannot open the job store: ", tostring(store), "\n")
        return 3
      end
      for k, v in pairs(require("vkit.store.explore").helpers(store)) do _G[k] = v end
    end
    return require("vkit.repl").run(_G)
  end,
}
