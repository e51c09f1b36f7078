--- `vkit SUBCOMMAND ...`: dispatch, help and exit codes.
--
-- Each subcommand is one module in lua/vkit/commands/<name>.lua returning
-- { summary = "one line", usage = "vkit name ...", run = function(argv) -> status }.
-- Exit codes: 0 success, 1 refused or failed, 2 usage, 3 infrastructure.
local fs = require "vkit.fs"
local boot = require "vkit.boot"

local M = {}

function M.usage_error(message, command)
  io.stderr:write(("vkit: %s\nTry 'vkit %s--help'.\n"):format(message, command and (command .. " ") or ""))
  return 2
end

--- Names of all subcommands, sorted.
function M.command_names()
  local names = {}
  local entries = assert(fs.list(boot.root .. "/lua/vkit/commands"))
  for _, file in ipairs(entries) do
    local name = file:match "^([%w_]+)%.lua$"
    if name then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

function M.load_command(name)
  if not name:match "^[%w_]+$" then return nil end
  if not package.searchpath("vkit.commands." .. name, package.path) then return nil end
  return require("vkit.commands." .. name)
end

function M.help()
  local lines = { "usage: vkit SUBCOMMAND [ARGS...]", "", "subcommands:" }
  for _, name in ipairs(M.command_names()) do
    lines[#lines + 1] = ("  %-10s %s"):format(name, M.load_command(name).summary)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "'vkit SUBCOMMAND --help' describes one subcommand."
  return table.concat(lines, "\n") .. "\n"
end

function M.main(argv)
  local name = argv[1]
  if name == nil then
    io.stderr:write(M.help())
    return 2
  end
  if name == "--help" or name == "-h" or name == "help" then
    io.stdout:write(M.help())
    return 0
  end
  if name == "--version" then name = "version" end
  local command = M.load_command(name)
  if not command then return M.usage_error(("unknown subcommand %q"):format(name)) end
  local rest = table.move(argv, 2, #argv, 1, {})
  if command.usage and (rest[1] == "--help" or rest[1] == "-h") and not command.own_help then
    io.stdout:write(command.usage, "\n")
    return 0
  end
  return command.run(rest) or 0
end

return M
