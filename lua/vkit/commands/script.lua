--- `vkit script FILE.lua [ARGS...]`: run a script with `vkit` loaded.
--
-- `arg` is set as the standalone `lua` interpreter sets it (arg[0] is the
-- script, arg[1..n] its arguments, negative indices the host), the chunk
-- receives the arguments as `...`, and `vkit` is a global and the value of
-- require "vkit".  An uncaught error prints a traceback to stderr and exits 1.
local vkit = require "vkit"

local function traceback(message)
  if type(message) ~= "string" then
    message = ("(error object is a %s value)"):format(type(message))
  end
  return debug.traceback(message, 2)
end

return {
  summary = "run a Lua script with the vkit library loaded",
  usage = "usage: vkit script FILE.lua [ARGS...]",
  run = function(argv)
    local file = argv[1]
    if not file then return require("vkit.cli").usage_error("script needs a FILE.lua", "script") end
    local handle = io.open(file, "r")
    if not handle then return require("vkit.cli").usage_error(("cannot open %s"):format(file), "script") end
    handle:close()
    local chunk, err = loadfile(file)
    if not chunk then
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
