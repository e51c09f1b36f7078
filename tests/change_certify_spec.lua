-- `vkit change certify` through the job store, in all three languages.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local stores = require "tests.support.stores"

local SOURCES = intents.SOURCES
local certify = intents.certify

for _, backend in ipairs(stores.backends()) do
describe("vkit change certify (" .. backend.name .. " store)", function()
  local p
  setup(backend.setup)
  teardown(backend.teardown)
  after_each(function()
    if p then backend.kill_workers(p.dir) end
    intents.finish(p)
    p = nil
  end)

  for _, language in ipairs { "rust", "typescript" } do
    it(("observes conformance and a violation in %s, with real compilers"):format(language), function()
      local s = SOURCES[language]
      p = intents.language_project(language, { max_inputs = 6, shrink_limit = 6 })
      local good, r = certify(p, p.commit({ [s.path] = s.good }, p.target))
      assert.equal(0, r.code, r.stderr .. r.stdout)
      assert.equal("all_inputs_conform", good.outcome)
      assert.equal("finite_paired", good.methods[1].method)
      assert.equal("exhaustive", good.methods[2].method)
      assert.equal("checked 100 of 100 accepted inputs (exhaustive)", good.coverage.statement)
      assert.is_false(good.source_proof)
      assert.is_false(good.approval_authority)
      assert.equal("ISSUE-42", good.requirement.source)
      assert.equal(p.digest, good.intent_digest)
      local bad
      bad, r = certify(p, p.commit({ [s.path] = s.bad }, p.target))
      assert.equal(1, r.code)
      assert.equal("observed_violation", bad.outcome)
      -- vkit run show works on the same durable run
      local shown = t.vkit { "run", "show", "--run", bad.run_id, "--project", p.dir .. "/project", "--json" }
      assert.equal("observed_violation", json.decode(shown.stdout).outcome)
    end)
  end

  it("blocks an explicitly requested method that cannot run, without falling back", function()
    p = intents.project { artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 2 }) }
    local out, r = certify(p, p.target, { "--method", "rust_kani" })
    assert.equal(1, r.code)
    assert.equal("blocked", out.outcome)
    assert.equal("unsupported_binding", out.blocked.reason)
    assert.equal(0, #out.methods)
  end)

  it("records a preflight refusal as a blocked shadow job", function()
    p = intents.project { artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 2 }) }
    local bad_candidate = p.commit({ ["verification/codec.json"] = "{}\n" }, p.target)
    local out, r = certify(p, bad_candidate)
    assert.equal(1, r.code)
    assert.equal("blocked", out.outcome)
    assert.equal("preflight", out.blocked.stage)
    assert.equal("artifact-changed-in-candidate", out.blocked.reason)
  end)

  it("answers usage errors with exit 2", function()
    p = intents.project()
    assert.equal(2, t.vkit({ "change" }).code)
    assert.equal(2, t.vkit({ "change", "certify", "--project", p.dir .. "/project" }).code)
    t.write(p.dir .. "/bad.json", "{")
    assert.equal(2, t.vkit({ "change", "certify", "--project", p.dir .. "/project", "--request", p.dir .. "/bad.json",
                             "--trusted-target", p.target }).code)
    t.write(p.dir .. "/request.json", p.request(p.target))
    assert.equal(2, t.vkit({ "change", "certify", "--project", p.dir .. "/project", "--request", p.dir .. "/request.json",
                             "--trusted-target", p.target, "--method", "guess" }).code)
    assert.equal(2, t.vkit({ "change", "certify", "--project", p.dir .. "/project", "--request", p.dir .. "/request.json",
                             "--trusted-target", p.target, "--wait", "61" }).code)
  end)
end)
end
