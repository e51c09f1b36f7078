-- prepare_rust_relational, the rust_exhaustive method and the rust_kani
-- method's honest refusal, on real repositories and the real rustc.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local prepare = require "vkit.relational.prepare"

local BASE = "pub fn score(x: u32) -> u32 {\n    if x >= 50 {\n        return 100;\n    }\n    x * 2\n}\n"
local GOOD = "pub fn score(x: u32) -> u32 {\n    let doubled: u32 = x * 2;\n    if doubled > 100 { 100 } else { doubled }\n}\n"
-- Diverges only at input 77: sampling may well miss it; exhaustion cannot.
local PLANTED = "pub fn score(x: u32) -> u32 {\n    if x == 77 {\n        return 101;\n    }\n    if x >= 50 {\n        return 100;\n    }\n    x * 2\n}\n"

local function rust_project()
  return intents.project { artifacts = intents.artifacts_for("rust", "src/score.rs", { max_inputs = 4 }),
                           source_path = "src/score.rs", source = BASE }
end

describe("prepare_rust_relational", function()
  it("binds, admits both modules and generates the harness, without any verdict", function()
    local p = rust_project()
    local candidate = p.commit({ ["src/score.rs"] = GOOD }, p.target)
    local program = assert(prepare.prepare_rust_relational(p.repo, p.request(candidate), p.target))
    p.cleanup()
    assert.equal("admitted", program.admissions.base.outcome)
    assert.equal("admitted", program.admissions.candidate.outcome)
    assert.equal(vkit.hash.sha256(GOOD), program.captures.candidate.files[1].sha256)
    assert.equal(4, #program.harness.assertions)
    assert.matches('#%[path = "base/src/score.rs"%]', program.harness.bytes)
    assert.is_nil(program.harness.bytes:find("x * 2", 1, true), "module bodies are never copied into the harness")
    assert.is_false(program.source_proof)
    assert.is_nil(program.verdict)
    assert.is_nil(program.status)
  end)

  it("refuses a binding that is not Rust, and a module the profile does not admit", function()
    local p = intents.project { artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 2 }) }
    assert.equal("unsupported_binding", select(3, prepare.prepare_rust_relational(p.repo, p.request(p.target), p.target)))
    p.cleanup()
    p = rust_project()
    local macro = p.commit({ ["src/score.rs"] = "pub fn score(x: u32) -> u32 {\n    println!(\"hi\");\n    x\n}\n" }, p.target)
    local ok, message, code = prepare.prepare_rust_relational(p.repo, p.request(macro), p.target)
    p.cleanup()
    assert.is_nil(ok)
    assert.equal("admission_rejected", code)
    assert.matches("macro", message)
  end)
end)

describe("certification methods for Rust", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  local function certify(candidate, method, pin)
    local extra = { "--method", method }
    if pin then
      t.write(p.dir .. "/pin.json", pin)
      extra[#extra + 1] = "--kani-toolchain"
      extra[#extra + 1] = p.dir .. "/pin.json"
    end
    local out, r = intents.certify(p, candidate, extra)
    assert.is_table(out, r.stderr)
    return out, r
  end

  local function report(out, name)
    local store = require("vkit.store").open(p.dir .. "/project")
    local run = store:get(out.run_id)
    return json.decode(vkit.fs.read(("%s/attempts/%d/%s"):format(run.dir, run.state.attempts, name), 1 << 22))
  end

  it("rust_exhaustive checks every accepted input and finds a planted divergence sampling can miss", function()
    p = rust_project()
    local good = certify(p.commit({ ["src/score.rs"] = GOOD }, p.target), "rust_exhaustive")
    assert.equal("all_inputs_conform", good.outcome)
    assert.equal("all_inputs_conform", good.methods[1].result)
    assert.equal("checked 100 of 100 accepted inputs (rust_exhaustive)", good.methods[1].coverage.statement)
    local r = report(good, "rust_exhaustive/rust-exhaustive-report.v1.json")
    assert.is_true(r.exhaustive_native)
    assert.equal(100, r.inputs_checked)
    assert.is_false(r.source_proof)
    assert.is_table(r.rustc)
    local bad = certify(p.commit({ ["src/score.rs"] = PLANTED }, p.target), "rust_exhaustive")
    assert.equal("observed_violation", bad.outcome)
    r = report(bad, "rust_exhaustive/rust-exhaustive-report.v1.json")
    assert.equal(77, r.violation.input)
    assert.equal(78, r.inputs_checked) -- inputs 0..77, in order, up to the first broken assertion
    assert.equal(101, r.violation.candidate_output)
    assert.is_false(r.exhaustive_native)
  end)

  it("rust_kani without a usable toolchain is unknown (unsupported_platform), never verified", function()
    p = rust_project()
    -- A closed-format pin of a toolchain that is no longer installed.
    local install_dir, remove_install = t.tempdir()
    local pin = json.encode(assert(require("vkit.relational.toolchain").capture(
      require("tests.kani_support").install(install_dir))))
    remove_install()
    local out = certify(p.commit({ ["src/score.rs"] = GOOD }, p.target), "rust_kani", pin)
    assert.equal("rust_kani", out.methods[1].method)
    assert.equal("unknown", out.methods[1].result)
    assert.equal("unsupported_platform", out.methods[1].reason)
    assert.is_not.equal("all_inputs_conform", out.outcome)
    assert.is_not.equal("verified", out.outcome)
    local r = report(out, "rust_kani/kani-method.v1.json")
    assert.is_false(r.source_proof)
    assert.is_false(r.native_compiler_correspondence)
  end)
end)
