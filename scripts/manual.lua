-- Writes the man page or the bash completion (lua/vkit/commands/help/manual.lua):
--   vkit script scripts/manual.lua man FILE | bash FILE
local vkit = require "vkit"
local manual = require "vkit.commands.help.manual"

local what, path = ...
local text = what == "man" and manual.roff(vkit.version) or what == "bash" and manual.bash() or nil
if not (text and path) then
  io.stderr:write("usage: vkit script scripts/manual.lua man|bash FILE\n")
  os.exit(2)
end
assert(vkit.fs.write_atomic(path, text))
