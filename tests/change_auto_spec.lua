-- `vkit change certify` with the default method (auto = finite_paired +
-- exhaustive): a one-input bug that sampling cannot see, in Rust, Python
-- and TypeScript; exit 0 only for every accepted input checked; coverage
-- on every surface that shows a result.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"

local SOURCES = intents.SOURCES

local function project(language, observation)
  return intents.language_project(language, observation or { max_inputs = 6 })
end

local function report(p, out, path)
  local run = assert(require("vkit.store").open(p.dir .. "/project"):get(out.run_id))
  return assert(json.decode(assert(vkit.fs.read(("%s/attempts/%d/%s"):format(run.dir, run.state.attempts, path), 1 << 24))))
end

describe("certification with auto", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  for _, language in ipairs { "rust", "python", "typescript" } do
    it(("finds a one-input %s bug that sampling misses, and exits 0 only for a candidate checked on every input"):format(
      language), function()
      p = project(language)
      local s = SOURCES[language]
      local bad, r = intents.certify(p, p.commit({ [s.path] = s.one_input }, p.target))
      assert.equal(1, r.code, r.stderr .. r.stdout)
      assert.equal("observed_violation", bad.outcome)
      assert.same({ "finite_paired", "observed_conformance" }, { bad.methods[1].method, bad.methods[1].result })
      assert.same({ "exhaustive", "observed_violation" }, { bad.methods[2].method, bad.methods[2].result })
      assert.equal("checked 6 of 100 accepted inputs (finite_paired)", bad.methods[1].coverage.statement)
      assert.equal("checked 100 of 100 accepted inputs (exhaustive)", bad.methods[2].coverage.statement)
      local x = report(p, bad, bad.methods[2].report)
      assert.same({ 77, 100, 99 }, { x.violations.smallest.input, x.violations.smallest.base, x.violations.smallest.candidate })
      assert.equal(language, x.language)
      local good
      good, r = intents.certify(p, p.commit({ [s.path] = s.good }, p.target))
      assert.equal(0, r.code, r.stderr .. r.stdout)
      assert.equal("all_inputs_conform", good.outcome)
      assert.equal("checked 100 of 100 accepted inputs (exhaustive)", good.coverage.statement)
    end)
  end

  it("reports a sampled-only conformance as sampled, with its coverage and its own exit status", function()
    p = project "python"
    local out, r = intents.certify(p, p.commit({ [SOURCES.python.path] = SOURCES.python.one_input }, p.target),
      { "--method", "finite_paired" })
    assert.equal(5, r.code, r.stderr)
    assert.equal("samples_conform", out.outcome)
    assert.equal("checked 6 of 100 accepted inputs (finite_paired)", out.coverage.statement)
    assert.matches("the other accepted inputs were not checked", out.outcome_meaning)
    assert.equal(1, #out.methods)
  end)

  it("shows coverage, and the setting a limit cut, wherever a result is shown", function()
    p = project("python", { max_inputs = 301, shrink_limit = 6 })
    local candidate = p.commit({ [SOURCES.python.path] = SOURCES.python.good }, p.target)
    t.write(p.dir .. "/request.json", p.request(candidate))
    local project_dir = p.dir .. "/project"
    local r = intents.certify_cli(p, p.dir .. "/request.json")
    assert.equal(0, r.code, r.stderr .. r.stdout)
    -- (128 invocations - 6 shrink steps x 4) / 4 per input = 26 inputs
    local cut = "max_inputs 301 cut to 26 by the 128-invocation budget"
    for _, line in ipairs { "checked 26 of 100 accepted inputs (finite_paired)",
                            "checked 100 of 100 accepted inputs (exhaustive)", cut } do
      assert.is_truthy(r.stdout:find(line, 1, true), line .. "\n" .. r.stdout)
    end
    assert.matches("\n  finite_paired: finite_paired results are sampled", r.stdout)
    assert.matches("\n  exhaustive: exhaustive ran every accepted input", r.stdout)
    local id = r.stdout:match "^%S+%s+(r%-%S+)"

    local shown = t.vkit { "run", "show", "--run", id, "--project", project_dir }
    for _, line in ipairs { "checked 26 of 100 accepted inputs (finite_paired)",
                            "checked 100 of 100 accepted inputs (exhaustive)", cut } do
      assert.is_truthy(shown.stdout:find(line, 1, true), line .. "\n" .. shown.stdout)
    end
    local listed = t.vkit { "run", "list", "--project", project_dir }
    assert.is_truthy(listed.stdout:find("exhaustive all_inputs_conform: checked 100 of 100 accepted inputs (exhaustive)",
      1, true), listed.stdout)
    local as_json = json.decode(t.vkit({ "run", "show", "--run", id, "--project", project_dir, "--json" }).stdout)
    assert.equal("checked 100 of 100 accepted inputs (exhaustive)", as_json.summary.coverage.statement)
    assert.same({ setting = "max_inputs", requested = 301, applied = 26, limit = "max_invocations", limit_value = 128 },
      as_json.summary.methods[1].cuts[1])
    local certify_json = json.decode(intents.certify_cli(p, p.dir .. "/request.json", nil, true).stdout)
    assert.equal("checked 26 of 100 accepted inputs (finite_paired)", certify_json.methods[1].coverage.statement)
    assert.equal(26, certify_json.methods[1].cuts[1].applied)

    local repl = t.vkit({ "repl", "--project", project_dir }, ("for _, l in ipairs(run(%q).coverage) do print(l) end\n"):format(id))
    assert.equal(0, repl.code, repl.stderr)
    assert.is_truthy(repl.stdout:find("exhaustive all_inputs_conform: checked 100 of 100 accepted inputs (exhaustive)", 1, true),
      repl.stdout)
    assert.is_truthy(repl.stdout:find(cut, 1, true), repl.stdout)
  end)
end)
