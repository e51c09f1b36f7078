-- examples/external/demo.lua (`make demo-external`): the bundled z3 + cvc5
-- backend through the public API, PASS, a replay that PASSes, and a false
-- law that is BLOCKED; the script exits 0 only when all three are so.
local vkit = require "vkit"
local t = require "tests.support.run"

describe("make demo-external", function()
  it("verifies, replays and blocks a false law, as it says", function()
    local dir, cleanup = t.tempdir()
    local r = t.vkit { "script", vkit.root .. "/examples/external/demo.lua", "--dir", dir .. "/demo" }
    t.kill_workers(dir .. "/demo/project")
    cleanup()
    assert.equal(0, r.code, r.stdout .. r.stderr)
    assert.matches("\n1. PASS     as expected\n2. PASS     as expected\n3. BLOCKED  as expected\n", r.stdout, 1, true)
    assert.matches("obligation negation-inverse   unknown", r.stdout, 1, true)
    assert.matches("BLOCKED is inconclusive, never a counterexample.", r.stdout, 1, true)
  end)

  it("is what the Makefile target runs", function()
    local makefile = assert(vkit.fs.read(vkit.root .. "/Makefile"))
    assert.matches("\ndemo%-external: vkit\n\t%./vkit script examples/external/demo%.lua\n", makefile)
  end)
end)
