--- `vkit repl [--project DIR]`: an interactive Lua session with `vkit` loaded.
local vkit = require "vkit"
local args = require "vkit.args"

local USAGE = [[usage: vkit repl [--project DIR] [--store URL]

An interactive Lua 5.4 session with vkit loaded: readline editing, history
in ~/.vkit_history (appended as each line is entered), Tab completion of
globals and fields, pretty-printed values, multi-line chunks.  Ctrl-C
cancels the line, or interrupts a running chunk; Ctrl-D exits.  On a pipe:
no prompts, and the exit status says whether every chunk ran.

options:
  --project DIR   preload runs(), run(id), pp(value) and store for walking
                  the job store of the Git work tree holding DIR (found
                  upward as git does; vkit.repl.explore); never creates a
                  store.  run(name) takes a whole id, a unique prefix of
                  it or of its hex tail, or latest
  --store URL     walk that job store instead (postgresql://..., or VKIT_STORE)
  --help          this text

exit codes: 0, 1 a chunk failed (piped input), 2 usage, 3 the store cannot
  be opened]]

return {
  summary = "interactive Lua with vkit preloaded; --project adds runs() and run(id)",
  usage = USAGE,
  run = function(argv)
    local opts, err = args.parse(argv, { options = { project = "string", store = "string" } })
    if not opts then return require("vkit.cli").usage_error(err, "repl") end
    _G.vkit = vkit
    if opts.project or opts.store then
      local store, status = require("vkit.cli").open_store(opts.project, { create = false, store = opts.store })
      if not store then return status end
      for k, v in pairs(require("vkit.repl.explore").helpers(store)) do _G[k] = v end
    end
    return require("vkit.repl").run(_G)
  end,
}
