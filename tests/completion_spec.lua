-- Shell completion (issue 33 item 6): the bash script `make install`
-- writes completes commands, actions and options, the values of the
-- options that take one of a fixed set — from the very tables the command
-- checks them against — and run ids from the project's own job store.
-- Driven through a real bash sourcing the generated script.
local vkit = require "vkit"
local t = require "tests.support.run"
local manual = require "vkit.commands.help.manual"
local report = require "vkit.report"
local methods = require "vkit.change.methods"
local policy = require "vkit.policy"
local store_mod = require "vkit.store"

describe("bash completion", function()
  local dir, cleanup, script
  before_each(function()
    dir, cleanup = t.tempdir()
    script = dir .. "/vkit.bash"
    local r = t.vkit { "script", vkit.root .. "/scripts/manual.lua", "bash", script }
    assert.equal(0, r.code, r.stderr)
  end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  -- What bash offers for the line (a trailing space: a new, empty word),
  -- completing with the vkit under test; run in cwd.
  local function complete(line, cwd)
    local words = { t.quote(vkit.exe) }
    for w in line:gmatch "%S+" do words[#words + 1] = t.quote(w) end
    if line:match " $" then words[#words + 1] = "''" end
    local program = ("source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _vkit; printf '%%s\\n' \"${COMPREPLY[@]}\"")
      :format(t.quote(script), table.concat(words, " "), #words - 1)
    local h = assert(io.popen(("cd %s && bash -c %s 2>&1"):format(t.quote(cwd or dir), t.quote(program))))
    local out = h:read "a"
    h:close()
    local got = {}
    for w in out:gmatch "[^\n]+" do got[#got + 1] = w end
    return got
  end

  it("completes commands, actions and options as before", function()
    assert.same({ "change" }, complete "ch")
    assert.same({ "replay", "report" }, complete "run rep")
    assert.same({ "--toolchain-root" }, complete "change intent --tool")
  end)

  it("completes option values from the tables the commands check them against", function()
    assert.same(report.FORMATS, complete "run report --format ")
    assert.same({ "html" }, complete "run report --format h")
    assert.same(report.FORMATS, complete "vac verify b.tgz --report ")
    assert.same(methods.NAMES, complete "change certify --method ")
    assert.same({ "exhaustive" }, complete "change certify --method exh")
    assert.same(policy.change.languages, complete "change intent init --language ")
    -- the same tables, not copies: a value added there is completed
    table.insert(report.FORMATS, "braille")
    local ok, text = pcall(manual.bash)
    local expected = ('"run "report" --format") words="%s"'):format(table.concat(report.FORMATS, " "))
    table.remove(report.FORMATS)
    assert.is_true(ok, text)
    assert.matches(expected, text, 1, true)
  end)

  it("completes --run with the project's run ids, from the store --project names", function()
    assert(vkit.git.init(dir))
    assert.same({}, complete("run show --run ", dir), "no runs, no ids")
    local store = store_mod.open(dir)
    local first = store:submit("probe", { ms = 0 })
    local second = store:submit("probe", { ms = 0 })
    local ids = { first, second }
    table.sort(ids)
    local got = complete("run show --run ", dir)
    table.sort(got)
    assert.same(ids, got)
    assert.same({ first }, complete("run wait --run " .. first:sub(1, #first - 2), dir))
    -- from elsewhere, the store of the project the line names
    local elsewhere = complete("run report --project " .. dir .. " --run ", "/")
    table.sort(elsewhere)
    assert.same(ids, elsewhere)
  end)
end)
