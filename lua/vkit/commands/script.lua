--- `vkit script FILE.lua [ARGS...]`: run a script with `vkit` loaded.
--
-- `arg` is set as the standalone `lua` interpreter sets it (arg[0] is the
-- script, arg[1..n] its arguments, negative indices the host), the chunk
-- receives the arguments as `...`, and `vkit` is a global and the value of
-- require "vkit".  FILE `-` reads the script from standard input.  An
-- uncaught error prints a traceback of the script's own frames to stderr
-- and exits 1.
--
-- Modules: the script's own `require` is the lua interpreter's (LUA_PATH,
-- LUA_CPATH, else Lua's defaults, ./?.lua among them), except that the
-- names vkit and vkit.* are vkit's and load only from its own library
-- (csrc/main.c's searchers), whatever the paths, the working directory or
-- the environment say.  LUA_INIT is not run.
local vkit = require "vkit"
local cli = require "vkit.cli"

local USAGE = [[usage: vkit script FILE.lua [ARGS...]
       vkit script - [ARGS...]          (the script from standard input)

Runs a Lua 5.4 script with the vkit library loaded: `vkit` is a global and
the value of require "vkit"; `arg` is set as the lua interpreter sets it and
the chunk receives ARGS as `...`.  os.exit(n) ends it with status n.

The script's own modules are found as the lua interpreter finds them:
package.path and package.cpath from LUA_PATH and LUA_CPATH (or their
_5_4 forms), else Lua's defaults, which end in the working directory
(./?.lua, ./?/init.lua, ./?.so): run a script from its own directory to
require the modules beside it.  The names vkit and vkit.*
are vkit's: they load only from this vkit's own library, whatever those
paths, the working directory or the environment say.  LUA_INIT is not run.

exit codes: 0 the script finished, n its os.exit(n), 1 an uncaught error
  (its traceback on stderr) or a syntax error, 2 FILE cannot be opened]]

-- The frames below the script's chunk are vkit's dispatcher: a user's
-- traceback stops at the chunk.
local function traceback(message)
  if type(message) ~= "string" then
    message = ("(error object is a %s value)"):format(type(message))
  end
  return (debug.traceback(message, 2):gsub("\n%s*%[C%]: in function 'xpcall'.*$", ""))
end

local function load_script(file)
  if file == "-" then return load(io.read "a" or "", "=stdin", "t") end
  local handle = io.open(file, "r")
  if not handle then return nil, ("cannot open %s"):format(file), "usage" end
  handle:close()
  return loadfile(file, "t")
end

return {
  summary = "run a Lua script with the vkit library loaded (- reads it from stdin)",
  usage = USAGE,
  own_help = true, -- a script's own --help belongs to the script
  run = function(argv)
    local file = argv[1]
    if file == "--help" or file == "-h" then
      io.stdout:write(USAGE, "\n")
      return 0
    end
    if not file then return cli.usage_error("script needs a FILE.lua (or - for standard input)", "script") end
    local chunk, err, why = load_script(file)
    if not chunk then
      if why == "usage" then return cli.usage_error(err, "script") end
      io.stderr:write("vkit: ", err, "\n")
      return 1
    end
    local script_args = { [-2] = vkit.exe, [-1] = "script", [0] = file }
    for i = 2, #argv do script_args[i - 1] = argv[i] end
    _G.arg = script_args
    _G.vkit = vkit
    local ok, failure = xpcall(chunk, traceback, table.unpack(script_args, 1, #argv - 1))
    if not ok then
      io.stderr:write("vkit: ", failure, "\n")
      return 1
    end
    return 0
  end,
}
