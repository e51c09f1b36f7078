-- The example scripts users copy: certify_range.lua on a real chain of commits.
local vkit = require "vkit"
local t = require "tests.support.run"
local intents = require "tests.support.intents"

describe("examples/certify_range.lua", function()
  it("certifies every commit of a range and prints one row per commit", function()
    local p = intents.project { artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 4, shrink_limit = 4 }) }
    local c1 = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x, 100)\n" }, p.target)
    local c2 = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x + 1, 100)\n" }, c1)
    local r = t.vkit { "script", vkit.root .. "/examples/certify_range.lua", "--project", p.dir .. "/project",
                       "--intent", p.digest, "--trusted-target", p.target, "--head", c2 }
    p.cleanup()
    assert.equal(0, r.code, r.stderr)
    local rows = {}
    for line in r.stdout:gmatch "[^\n]+" do rows[#rows + 1] = line end
    assert.equal(3, #rows)
    assert.matches("^" .. c1:sub(1, 12) .. " +bound +samples_within_contract +observed_conformance", rows[2])
    assert.matches("^" .. c2:sub(1, 12) .. " +bound +observed_violation +observed_violation +0", rows[3])
  end)
end)
