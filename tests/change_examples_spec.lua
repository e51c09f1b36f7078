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
    assert.matches("^" .. c1:sub(1, 12) .. " +bound +samples_within_contract +observed_conformance +%- +all_inputs_conform"
      .. " +sampled 4, checked 100 of 100 accepted inputs %(exhaustive%)$", rows[2])
    assert.matches("^" .. c2:sub(1, 12) .. " +bound +observed_violation +observed_violation +0 +observed_violation", rows[3])
  end)
end)

describe("scripts/check_change_witness.lua (the qualification)", function()
  it("binds, imports the labelled transcript, runs the captured sources natively and re-verifies the witness", function()
    local dir, cleanup = t.tempdir()
    local out = dir .. "/q"
    local r = t.vkit { "script", vkit.root .. "/scripts/check_change_witness.lua", "--output", out }
    assert.equal(0, r.code, r.stderr .. r.stdout)
    assert.matches("decoded as proof_rejected", r.stdout)
    assert.matches("native run of the captured sources: observed_violation input 5", r.stdout)
    assert.matches("verified again: kind proof_rejected", r.stdout)
    local w = assert(vkit.json.decode(assert(vkit.fs.read(out .. "/witness.v1.json", 1 << 20))))
    assert.equal(vkit.json.null, w.native_playback)
    assert.matches("constructed", w.reason)
    -- a changed retained byte is refused on import
    local binding = w.binding
    t.write(out .. "/retained/kani/stdout.txt", "edited\n")
    local witness = require "vkit.change.witness"
    assert.equal("witness-artifact-changed", select(3, witness.import_file(out .. "/witness.v1.json", out .. "/retained", binding)))
    assert.equal(2, t.vkit({ "script", vkit.root .. "/scripts/check_change_witness.lua", "--output", out }).code)
    cleanup()
  end)
end)
