--- `vkit SUBCOMMAND ...`: dispatch, help and exit codes.
--
-- Each subcommand is one module in lua/vkit/commands/<name>.lua returning
-- { summary = "one line", usage = "the help text", run = function(argv) -> status,
--   help = { [action] = "the action's help text" } (optional) }.
-- `--help` or `-h` anywhere before `--` prints the help of the deepest
-- command named (`vkit run show --help`), on stdout, exit 0; a module that
-- sets own_help answers it itself.  `vkit help X [ACTION]` is `vkit X
-- [ACTION] --help`; `-V` is `--version`; a mistyped command or action is
-- answered with the nearest names (vkit.cli.suggest).
--
-- Exit codes, the same for every subcommand (M.EXIT):
--   0 the command's claim holds (PASS, every accepted input conforming, ...)
--   1 it does not: refused, BLOCKED, a violation, unknown, cancelled
--   2 usage error (nothing was queued or written)
--   3 infrastructure: a run failed, the store cannot be read or holds a
--     corrupt run
--   4 still pending after --wait
--   5 only sampled inputs were checked, and they conform (change certify:
--     never the same status as every accepted input conforming)
--   6 no such run
--   7 the project is not a Git repository (or not a directory)
--   8 change certify: every accepted input was observed conforming, but the
--     candidate is outside the pure-function profile, so its observations
--     cannot exclude state, observer tampering or environment detection
--     (the host may accept it with --trust-candidate-code: then 0)
local fs = require "vkit.fs"
local boot = require "vkit.boot"
local args = require "vkit.args"
local suggest = require "vkit.cli.suggest"
local tables = require "vkit.tables"

local M = {}

M.EXIT = { ok = 0, refused = 1, usage = 2, infrastructure = 3, pending = 4, sampled = 5, no_such_run = 6,
           not_a_repository = 7, unadmitted = 8 }

M.EXIT_TEXT = [[exit codes (the same for every vkit command):
  0  the claim holds              1  it does not (refused, BLOCKED, violation, unknown, cancelled)
  2  usage error                  3  infrastructure (a run failed; the store is unreadable or corrupt)
  4  still pending after --wait   5  only sampled inputs checked, and they conform
  6  no such run                  7  the project is not a Git repository
  8  every input conforms, but the candidate is outside the pure-function profile]]

--- The options a help text names (--name), sorted and unique.
function M.options_named(text)
  local named = {}
  for name in (text or ""):gmatch "%-%-[%a][%w-]*" do named[name] = true end
  return tables.sorted_keys(named)
end

--- The help text of a level ("run show", "change intent init"), or nil.
function M.help_text(level)
  local name, action = level:match "^(%S+)%s*(%S*)"
  local ok, command = pcall(M.load_command, name or "")
  if not (ok and command) then return nil end
  return type(command.help) == "table" and command.help[action] or command.usage
end

--- A usage error: one line naming the problem and the help to read.
--  command may be "run show" (the level whose help explains it).  An
--  unknown option is answered with the nearest options that help names.
function M.usage_error(message, command)
  local option = message:match "^unknown option (%-%-[%w-]+)$"
  if option and command then message = message .. suggest.hint(option, M.options_named(M.help_text(command))) end
  io.stderr:write(("vkit: %s\nSee 'vkit %s--help'.\n"):format(message, command and (command .. " ") or ""))
  return M.EXIT.usage
end

--- An error that is not a usage error: one line, the given exit code.
function M.fail(code, fmt, ...)
  io.stderr:write("vkit: ", fmt:format(...), "\n")
  return code
end

--- The job store of a project for a command: nil and the exit code (the
--  one-line error printed) when the project is not a directory (or, with
--  opts.git, not a Git repository: 7) or the store cannot be opened (3).
--  The project is the top of the Git work tree holding `project` (default
--  the current directory), found upward as git finds it, so a subdirectory
--  reads the same store; a directory outside Git is the project itself.
--  opts.create = false for read-only commands, which never make a .vkit/.
function M.open_store(project, opts)
  opts = opts or {}
  project = project or "."
  local real = require("vkit.cli.repository").project(project)
  local st = real and fs.lstat(real)
  if not st or st.kind ~= "dir" then
    return nil, M.fail(M.EXIT.not_a_repository, "the project %s is not a directory", project)
  end
  local git_ok, git = pcall(require, "vkit.git")
  if opts.git and git_ok then
    local repo, message = git.open(real)
    if not repo then
      return nil, M.fail(M.EXIT.not_a_repository, "the project %s is not a Git repository (%s)", project, message)
    end
    repo:close()
  end
  local ok, store = pcall(require("vkit.store").open, { store = opts.store, project = real, create = opts.create,
                                                       lease_seconds = opts.lease_seconds })
  if not ok then return nil, M.fail(M.EXIT.infrastructure, "cannot open the job store of %s: %s", project, tostring(store)) end
  return store
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

--- The command module of a subcommand name, or nil when vkit has none.
--  Commands, like every module named vkit or vkit.*, load only from vkit's
--  own library (csrc/main.c's searchers), never through package.path,
--  package.cpath or the working directory: `vkit verfiy` in a repository
--  holding vkit/commands/verfiy.lua is an unknown subcommand.
function M.load_command(name)
  if not name:match "^[%w_]+$" then return nil end
  local module = "vkit.commands." .. name
  -- require opens the file once; the library is searched again (a second
  -- open) only when it fails, to tell an unknown command from one that
  -- cannot load
  local ok, command = pcall(require, module)
  if ok then return command end
  if not package.searchpath(module, ("%s/lua/?.lua;%s/lua/?/init.lua"):format(boot.root, boot.root)) then
    return nil
  end
  error(command, 0)
end

function M.help()
  local lines = { "usage: vkit SUBCOMMAND [ARGS...]", "", "subcommands:" }
  for _, name in ipairs(M.command_names()) do
    lines[#lines + 1] = ("  %-10s %s"):format(name, M.load_command(name).summary)
  end
  lines[#lines + 1] = ""
  lines[#lines + 1] = "'vkit help SUBCOMMAND [ACTION]' (or 'vkit SUBCOMMAND [ACTION] --help') describes one command;"
  lines[#lines + 1] = "'vkit -V' (or 'vkit --version') prints the versions."
  lines[#lines + 1] = ""
  lines[#lines + 1] = M.EXIT_TEXT
  return table.concat(lines, "\n") .. "\n"
end

--- The action names of a command that has actions (its help table), sorted.
function M.action_names(command)
  return tables.sorted_keys(type(command.help) == "table" and command.help or {})
end

function M.main(argv)
  local name = argv[1]
  if name == nil then
    io.stderr:write(M.help())
    return 2
  end
  if name == "--help" or name == "-h" or (name == "help" and #argv == 1) then
    io.stdout:write(M.help())
    return 0
  end
  -- `vkit help change certify` is `vkit change certify --help`, word for word
  if name == "help" then
    local asked = table.move(argv, 2, #argv, 1, {})
    asked[#asked + 1] = "--help"
    return M.main(asked)
  end
  if name == "--version" or name == "-V" then name = "version" end
  local command = M.load_command(name)
  if not command then
    return M.usage_error(("unknown subcommand %q%s"):format(name, suggest.hint(name, M.command_names())))
  end
  local rest = table.move(argv, 2, #argv, 1, {})
  -- A mistyped action (`vkit run shwo`) of a command that answers its own
  -- errors otherwise: named, with the nearest actions, before it runs.
  local action = rest[1]
  if not command.own_help and action and not action:match "^%-" and type(command.help) == "table"
      and not command.help[action] then
    local hint = suggest.hint(action, M.action_names(command))
    if hint ~= "" then return M.usage_error(("unknown action %q of vkit %s%s"):format(action, name, hint), name) end
  end
  if command.usage and args.wants_help(rest) and not command.own_help then
    local text = command.help and action and command.help[action]
    io.stdout:write(text or command.usage, "\n")
    return 0
  end
  return command.run(rest) or 0
end

return M
