-- Issue 33 item 5: `vkit verify` checks the commit at HEAD, so it says so
-- when tracked files differ from it (uncommitted changes, staged or not):
-- a warning on stderr and in --json's "warnings" list; untracked files are
-- not counted, and a clean tree has no warning.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local project = dofile(vkit.root .. "/examples/external/project.lua")

local function sh(dir, script)
  local p = io.popen(("cd %s && (%s) 2>&1"):format(t.quote(dir), script))
  local out = p:read "a"
  p:close()
  return out
end

describe("vkit verify and the working tree", function()
  it("warns when tracked files differ from HEAD, as a line on stderr and in --json", function()
    local dir, cleanup = t.tempdir()
    finally(function()
      t.kill_workers(dir)
      cleanup()
    end)
    local p = project.build(dir)
    sh(p.path, "git reset -q --hard")  -- the example project is built as Git objects: check its files out
    local tracked = sh(p.path, "git ls-files"):match "([^\n]+)"
    local head = sh(p.path, "git rev-parse HEAD"):match "%x+"
    local function verify()
      local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--wait", "0", "--json" }
      local out = json.decode(r.stdout)
      assert.is_table(out, r.stderr .. r.stdout)
      return out, r
    end

    -- clean, with an untracked file: nothing to say
    t.write(p.path .. "/notes.txt", "untracked\n")
    local out, r = verify()
    assert.same({}, out.warnings)
    assert.not_matches("warning", r.stderr, 1, true)

    -- a tracked file changed (not staged) and another staged
    t.write(p.path .. "/" .. tracked, assert(vkit.fs.read(p.path .. "/" .. tracked, 1 << 24)) .. "\n")
    out, r = verify()
    local expected = ("the working tree differs from HEAD %s in 1 tracked path(s) (%s): vkit verify checks the commit, "
      .. "not the working tree"):format(head:sub(1, 12), tracked)
    assert.equal(1, #out.warnings)
    assert.matches(expected, out.warnings[1], 1, true)
    assert.matches("vkit: warning: " .. expected, r.stderr, 1, true)
    t.write(p.path .. "/staged.txt", "staged\n")
    sh(p.path, "git add staged.txt")
    out = verify()
    assert.matches("in 2 tracked path(s)", out.warnings[1], 1, true)
  end)
end)
