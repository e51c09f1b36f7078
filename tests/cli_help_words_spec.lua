-- Help a newcomer can read (issue 33 item 6): no text that `--help` prints
-- names the requirement seeds by number ("seed 001"), the internal "shadow
-- job" or a section of a specification ("SPEC §4") — plain words instead.
-- Every command vkit has and every action in its help table is asked, as
-- a person would, through a real process.
local t = require "tests.support.run"
local cli = require "vkit.cli"

-- Lua patterns over the lowered text, each with what it stands for.
local JARGON = {
  { "seed[%s_-]*%d", "a seed number" },
  { "seed's", "the seed's rule" },
  { "shadow", "a shadow job" },
  { "spec §", "a specification section" },
  { "§", "a section sign" },
}

-- Every argv whose --help a person may ask for: the top, each command, each action.
local function levels()
  local out = { {} }
  for _, name in ipairs(cli.command_names()) do
    out[#out + 1] = { name }
    local command = cli.load_command(name)
    for action in pairs(type(command.help) == "table" and command.help or {}) do out[#out + 1] = { name, action } end
  end
  return out
end

describe("every --help text", function()
  it("speaks plain words: no seed numbers, no shadow job, no specification sections", function()
    local asked = 0
    for _, level in ipairs(levels()) do
      local argv = { table.unpack(level) }
      argv[#argv + 1] = "--help"
      local r = t.vkit(argv)
      local what = "vkit " .. table.concat(argv, " ")
      assert.equal(0, r.code, what)
      local text = r.stdout:lower()
      for _, rule in ipairs(JARGON) do
        local at = text:find(rule[1])
        assert.is_nil(at, ("%s names %s: %q"):format(what, rule[2], at and r.stdout:sub(math.max(1, at - 30), at + 30)))
      end
      asked = asked + 1
    end
    assert.is_true(asked > 20, "only " .. asked .. " help texts")
  end)
end)
