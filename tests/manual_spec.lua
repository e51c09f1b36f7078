-- The man page a newcomer reads (issue 33 item 6): EXAMPLES and
-- ENVIRONMENT beside the commands, and every environment variable the
-- code reads documented.  The variables are found by reading the sources
-- (lua/ and csrc/), so a variable added without a line in
-- lua/vkit/commands/help/environment.lua fails here.
local vkit = require "vkit"
local t = require "tests.support.run"
local manual = require "vkit.commands.help.manual"
local environment = require "vkit.commands.help.environment"
local examples = require "vkit.commands.help.examples"
local cli = require "vkit.cli"

local ROOT = vkit.root

local function sources()
  local out = {}
  for _, dir in ipairs { "lua", "csrc" } do
    for _, e in ipairs(assert(vkit.fs.walk(ROOT .. "/" .. dir))) do
      if e.kind == "file" and (e.path:match "%.lua$" or e.path:match "%.[ch]$") then
        out[#out + 1] = dir .. "/" .. e.path
      end
    end
  end
  return out
end

--- The environment variables the code reads, each with a file reading it:
--  a name given to getenv (os.getenv "X", getenv("X"), secure_getenv("X")),
--  and a string literal that is a whole VKIT_ or libpq PG variable name
--  (names handed to getenv through a table or a constant, as the store's
--  VKIT_STORE and the worker's pass-through list are).
local function variables_read()
  local found = {}
  for _, path in ipairs(sources()) do
    local text = assert(vkit.fs.read(ROOT .. "/" .. path))
    for name in text:gmatch "getenv%s*%(?%s*\"([%u%d_]+)\"" do found[name] = found[name] or path end
    for name in text:gmatch "\"(VKIT_[%u%d_]+)\"" do found[name] = found[name] or path end
    for name in text:gmatch "\"(PG[%u%d_]+)\"" do found[name] = found[name] or path end
  end
  return found
end

local function documented()
  local out = {}
  for _, entry in ipairs(environment) do
    for name in entry.name:gmatch "%S+" do out[name] = entry end
  end
  return out
end

describe("the man page", function()
  local page
  setup(function()
    local dir, cleanup = t.tempdir()
    local path = dir .. "/vkit.1"
    local r = t.vkit { "script", ROOT .. "/scripts/manual.lua", "man", path }
    assert.equal(0, r.code, r.stderr)
    assert.equal(manual.roff(vkit.version), vkit.fs.read(path))
    local h = assert(io.popen(("MANWIDTH=200 man -l %s 2>&1"):format(t.quote(path))))
    page = h:read "a"
    h:close()
    cleanup()
  end)

  it("has the sections a man page has, EXAMPLES and ENVIRONMENT among them", function()
    for _, section in ipairs { "NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES",
                               "EXAMPLES", "SEE ALSO" } do
      assert.matches("\n" .. section .. "\n", page, 1, true)
    end
    for _, e in ipairs(examples) do
      local first = e.command:match "^[^\n\\]+":gsub("%s+$", "")
      assert.matches(first, page, 1, true)
    end
    assert.matches("\n       VKIT_STORE\n", page, 1, true)
  end)

  it("documents every environment variable the code reads, and none it does not", function()
    local read, docs = variables_read(), documented()
    assert.is_not_nil(read.VKIT_STORE, "the grep finds the store's variable")
    assert.is_not_nil(read.NO_COLOR, "the grep finds os.getenv calls")
    for name, path in pairs(read) do
      assert.is_table(docs[name], ("%s (read in %s) is not in lua/vkit/commands/help/environment.lua"):format(name, path))
      assert.matches(name, page, 1, true)
    end
    for name in pairs(docs) do
      assert.is_not_nil(read[name], name .. " is documented but the code no longer reads it")
    end
  end)

  it("shows examples that name commands and options vkit has", function()
    local commands = {}
    for _, name in ipairs(cli.command_names()) do commands[name] = cli.load_command(name) end
    for _, e in ipairs(examples) do
      local words = {}
      for w in e.command:gmatch "%S+" do words[#words + 1] = w end
      assert.equal("vkit", words[1], e.command)
      local name, action = words[2], words[3]
      if name == "help" then name, action = words[3], words[4] end
      local command = assert(commands[name], e.command .. ": no command " .. name)
      local help = type(command.help) == "table" and command.help[action] or command.usage
      for option in e.command:gmatch "%s(%-%-[%w-]+)" do
        assert.matches(option, help, 1, true, e.command .. ": " .. option .. " is not in the help of vkit " .. name)
      end
    end
  end)
end)
