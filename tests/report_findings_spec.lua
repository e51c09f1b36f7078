-- A change report a reviewer reads in a pull request: the subject first
-- (repository-relative file and line, function, language, base and
-- candidate by short id), one findings list per run whose violating
-- inputs are ranges with their rule and the methods that saw each, and
-- artifact paths relative to the project (absolute only in --json).
local vkit = require "vkit"
local json = vkit.json
local findings = require "vkit.report.findings"
local runs = require "vkit.change.runs"
local subject = require "vkit.report.subject"
local reports = require "tests.support.reports"

describe("one findings list per run", function()
  it("merges every method's findings into ranges of inputs with one rule, naming the methods that saw each", function()
    local model = { methods = {
      { name = "finite_paired", findings = {
        { input = 4000, rule = "standing-requirement", title = "input 4000", detail = "the candidate returned 200",
          fields = { { label = "base", value = "62" }, { label = "rule", value = "standing-requirement" } } },
        { input = 4095, rule = "standing-requirement", title = "input 4095", detail = "the candidate returned 200" },
        { input = 7, rule = "guard", title = "input 7", detail = "outside the guard" } } },
      { name = "exhaustive", ranges = { { from = 4000, to = 4095, count = 96, rule = "standing-requirement" },
                                        { from = 7, to = 7, count = 1, rule = "guard" },
                                        { from = 8, to = 9, count = 2, rule = "standing-requirement" } },
        findings = { { input = 8, rule = "standing-requirement", title = "input 8", detail = "the candidate returned 1" } } },
      { name = "checker", findings = { { title = "receipt", detail = "mismatch" } } },
    } }
    local list = findings.of(model)
    assert.same({ "input 7", "8..9 (2 inputs)", "4000..4095 (96 inputs)", "receipt" },
      { list[1].title, list[2].title, list[3].title, list[4].title })
    local range = list[3]
    assert.same({ 4000, 4095, 96, "standing-requirement" }, { range.from, range.to, range.count, range.rule })
    assert.equal("finite_paired (2 of 96), exhaustive", range.seen)
    assert.same({ { method = "finite_paired", count = 2 }, { method = "exhaustive", count = 96 } }, range.seen_by)
    assert.equal("at input 4000: the candidate returned 200", range.detail)
    assert.same({ { label = "base", value = "62" } }, range.fields, "the rule is said once, not again as a field")
    assert.equal("finite_paired, exhaustive", list[1].seen)
    assert.equal("exhaustive", list[2].seen)
    assert.equal("checker", list[4].seen)
    assert.equal(99, findings.inputs(list))
  end)

  it("keeps a range apart where the rule changes or an input is missing", function()
    local r = runs.violation_ranges { { input = 1, rule = "a" }, { input = 2, rule = "a" }, { input = 3, rule = "b" },
                                      { input = 5, rule = "b" } }
    assert.same({ { from = 1, to = 2, count = 2, rule = "a" }, { from = 3, to = 3, count = 1, rule = "b" },
                  { from = 5, to = 5, count = 1, rule = "b" } }, r)
    assert.equal("array", json.kind(runs.violation_ranges {}))
  end)

  it("keeps both sides' outputs only up to the policy's number of runs", function()
    local obs = {}
    for x = 0, 9 do obs[#obs + 1] = { input = x, base = { state = "value", value = x }, candidate = { state = "value", value = 0 } } end
    assert.same({ { 0, 9, 0 } }, runs.outputs(obs, 10).candidate)
    assert.same({ omitted = "more than 9 runs of one output on a side" }, runs.outputs(obs, 9))
  end)

  it("keeps what a side returned as runs of one value, none where it returned no value", function()
    local obs = {}
    for x = 0, 5 do
      obs[#obs + 1] = { input = x, base = { state = "value", value = x // 3 },
                        candidate = x == 4 and { state = "failed" } or { state = "value", value = "1" } }
    end
    assert.same({ { 0, 2, 0 }, { 3, 5, 1 } }, runs.series(obs, "base"))
    assert.same({ { 0, 3, 1 }, { 4, 4, json.null }, { 5, 5, 1 } }, runs.series(obs, "candidate"))
  end)

  it("finds the line of the function in each language", function()
    assert.equal(4, subject.definition_line("python", reports.BASE, "score"))
    assert.equal(2, subject.definition_line("rust", "use x;\npub fn score(x: u32) -> u32 { x }\n", "score"))
    assert.equal(3, subject.definition_line("typescript",
      "//\n\nexport function score(x: number): number { return x; }\n", "score"))
    assert.is_nil(subject.definition_line("python", "def scores(x):\n    return x\n", "score"))
  end)

  it("takes the line from the syntax tree: a planted look-alike in a comment or string does not move it", function()
    assert.equal(3, subject.definition_line("typescript",
      "// function score(x) {}\nconst s = 'function score(';\nexport function score(x: number): number { return x; }\n",
      "score"))
    assert.equal(3, subject.definition_line("python", "# def score(x):\nS = 'def score(x):'\ndef score(x):\n    return x\n",
      "score"))
    assert.equal(2, subject.definition_line("rust", "// pub fn score(x: u32) -> u32\npub fn score(x: u32) -> u32 { x }\n",
      "score"))
    assert.is_nil(subject.definition_line("python", "def score(x:\n", "score"), "a source that does not parse")
    assert.same({ { label = "file", value = "a.py:3" }, { label = "base", value = ("a"):rep(12) } },
      subject.rows { file = "a.py", line = 3, base = ("a"):rep(40) })
  end)
end)

describe("the subject read from a retained binding map", function()
  it("points at no line when the function is defined twice: the later Python def is the one that runs", function()
    local t = require "tests.support.run"
    local dir, cleanup = t.tempdir()
    local run = dir .. "/run"
    assert(os.execute(("mkdir -p %s/exhaustive/artifacts %s/exhaustive/captures/candidate/src"):format(
      t.quote(run), t.quote(run))))
    t.write(run .. "/exhaustive/artifacts/binding_map.json",
      json.encode { source = "src/score.py", ["function"] = "score", language = "python" })
    t.write(run .. "/exhaustive/captures/candidate/src/score.py",
      "# x\ndef score(x):\n    return x\n\n\ndef score(x):\n    return 0\n")
    local s = subject.of(run, ("a"):rep(40), ("b"):rep(40))
    cleanup()
    assert.is_nil(s.line)
    assert.same({ 2, 6 }, s.lines)
    assert.same({ label = "file", value = "src/score.py (score is defined 2 times, at lines 2, 6)" },
      subject.rows(s)[1])
    -- Rust: an item compiled out by an attribute beside the live one
    assert.same({ 2, 3 }, require("vkit.admission.shape").definition_lines(require "vkit.ts", "rust",
      "#[cfg(any())]\npub fn f(x: u32) -> u32 { x }\npub fn f(x: u32) -> u32 { 0 }\n", "f",
      require("vkit.policy").limits.admission))
  end)

  it("a method entry naming its report or method with `..` is not followed outside the run", function()
    local t = require "tests.support.run"
    local records = require "vkit.report.records"
    local dir, cleanup = t.tempdir()
    local run = dir .. "/run"
    assert(os.execute(("mkdir -p %s"):format(t.quote(run))))
    t.write(dir .. "/secret.json", json.encode { violations = { ranges = { { 1, 2 } } }, invocation_records = json.array {} })
    local read, opened = records.read_json, {}
    records.read_json = function(path)
      opened[#opened + 1] = path
      return read(path)
    end
    local ok, method = pcall(require("vkit.report.change").method, run,
      { method = "../run/..", result = "observed_violation", report = "../secret.json" })
    local causes = pcall(require("vkit.report.causes").of_method, run, { method = "..", report = "x.json" })
    records.read_json = read
    cleanup()
    assert.truthy(ok, method)
    assert.truthy(causes)
    assert.is_nil(method.ranges)
    assert.is_nil(method.report)
    for _, path in ipairs(opened) do
      assert.is_nil(path:sub(#run + 2):find("%.%."), path)
      assert.equal(run .. "/", path:sub(1, #run + 1), path)
    end
  end)

  it("never reads a source outside the run: a `..` or absolute source is shown, not opened", function()
    local t = require "tests.support.run"
    local dir, cleanup = t.tempdir()
    local run = dir .. "/run"
    assert(os.execute(("mkdir -p %s/exhaustive/artifacts %s/exhaustive/captures/candidate %s/secret"):format(
      t.quote(run), t.quote(run), t.quote(dir))))
    t.write(dir .. "/secret/outside.py", "def score(x):\n    return x\n")
    -- up from run/exhaustive/captures/candidate to dir
    for _, source in ipairs { "../../../../secret/outside.py", dir .. "/secret/outside.py" } do
      t.write(run .. "/exhaustive/artifacts/binding_map.json",
        json.encode { source = source, ["function"] = "score", language = "python" })
      local s = subject.of(run, ("a"):rep(40), ("b"):rep(40))
      assert.equal(source, s.file)
      assert.is_nil(s.line, source)
    end
    -- a normal relative source inside the capture still gives the line
    assert(os.execute(("mkdir -p %s/exhaustive/captures/candidate/src"):format(t.quote(run))))
    t.write(run .. "/exhaustive/captures/candidate/src/score.py", "# x\ndef score(x):\n    return x\n")
    t.write(run .. "/exhaustive/artifacts/binding_map.json",
      json.encode { source = "src/score.py", ["function"] = "score", language = "python" })
    assert.equal(2, subject.of(run, ("a"):rep(40), ("b"):rep(40)).line)
    cleanup()
  end)
end)

describe("the report of a certification wrong at 96 inputs 4000..4095", function()
  local ctx
  setup(function() ctx = reports.violation_run() end)
  teardown(function() if ctx then ctx.finish() end end)

  it("opens with the subject: file and line, function, language, base and candidate by short id", function()
    assert.equal("observed_violation", ctx.outcome)
    local md = ctx.report "md"
    local rows = md:match "\n| | |\n|%-%-%-|%-%-%-|\n(.-)\n\n"
    local base = ctx.p.target
    assert.equal(table.concat({ "| file | src/score.py:4 |", "| function | score |", "| language | python |",
      "| base | " .. base:sub(1, 12) .. " |", "| candidate | " .. ctx.candidate:sub(1, 12) .. " |" }, "\n"),
      rows:match "^(| file .-| candidate |[^\n]*)")
    local text = ctx.report "text"
    assert.matches("\n  file%s+src/score%.py:4\n  function%s+score\n  language%s+python\n", text)
    local model = json.decode(ctx.report "json")
    assert.same({ "src/score.py", 4, "score", "python", base, ctx.candidate }, { model.target.file, model.target.line,
      model.target["function"], model.target.language, model.target.base, model.target.candidate })
  end)

  it("says the 96 violating inputs in one line, with the rule and the methods that saw them", function()
    local md = ctx.report "md"
    assert.matches("## Findings (1)", md, 1, true)
    local line = md:match "\n(%- %*%*4000[^\n]*)"
    assert.truthy(line, md)
    assert.matches("4000\\..4095 (96 inputs)**: `standing-requirement` — at input 4000: the candidate returned 200",
      line, 1, true)
    assert.matches("%(seen by finite\\_paired %(%d of 96%), exhaustive%)$", line)
    assert.is_nil(md:find("input 4001", 1, true), "no line per input")
    assert.is_nil(md:find("### exhaustive: findings", 1, true), "no list per method")
    local text = ctx.report "text"
    assert.matches("findings (1):\n  - 4000..4095 (96 inputs): at input 4000:", text, 1, true)
    assert.matches("\n      seen by%s+finite_paired %(%d of 96%), exhaustive\n", text)
    local html = ctx.report "html"
    assert.matches('<li class="finding" data-from="4000" data-to="4095" data-count="96" '
      .. 'data-rule="standing-requirement" data-seen="finite_paired (', html, 1, true)
  end)

  it("keeps every violation in the exhaustive report's ranges, past its listing's cap, beside the existing fields", function()
    local model = json.decode(ctx.report "json")
    local exhaustive
    for _, a in ipairs(model.artifacts) do if a.path:match "exhaustive%-report%.v1%.json$" then exhaustive = a end end
    local doc = json.decode(assert(vkit.fs.read(exhaustive.path, 1 << 24)))
    assert.same({ { from = 4000, to = 4095, count = 96, rule = "standing-requirement" } }, doc.violations.ranges)
    assert.equal(96, doc.violations.total)
    assert.equal(doc.violations.cap, #doc.violations.items, "the listing still stops at its cap")
    assert.equal(4000, doc.violations.smallest.input)
    assert.same({ 4000, 4095, 200 }, doc.outputs.candidate[#doc.outputs.candidate])
    assert.equal(96, #model.domain.violating, "the strip marks every violating input")
  end)

  it("names artifacts by their path in the project; only --json has the machine's absolute paths", function()
    local root = ctx.project
    for _, format in ipairs { "md", "text", "html" } do
      local out = ctx.report(format)
      assert.is_nil(out:find(root, 1, true), format .. " names no absolute path of this machine")
      assert.matches(".vkit/runs/" .. ctx.run_id .. "/attempts/1/", out:gsub("\\_", "_"), 1, true)
    end
    local model = json.decode(ctx.report "json")
    for _, a in ipairs(model.artifacts) do
      assert.equal(root .. "/" .. a.display, a.path)
      assert.equal("/", a.path:sub(1, 1))
    end
    assert.equal(root .. "/" .. model.methods[1].report.display, model.methods[1].report.path)
  end)

  it("finds the subject in the repository when no method retained the binding, only with the digest preflight bound", function()
    local attempt = ("%s/.vkit/runs/%s/attempts/1"):format(ctx.project, ctx.run_id)
    for _, method in ipairs { "exhaustive", "finite_paired" } do
      assert(os.remove(("%s/%s/artifacts/binding_map.json"):format(attempt, method)))
    end
    local model = json.decode(ctx.report "json")
    assert.same({ "src/score.py", 4, "score", "python" }, { model.target.file, model.target.line,
      model.target["function"], model.target.language })
    local pre = json.decode(assert(vkit.fs.read(attempt .. "/preflight.json", 1 << 24)))
    pre.intent.revision.artifacts.binding_map.sha256 = ("0"):rep(64)
    require("tests.support.run").write(attempt .. "/preflight.json", json.encode(pre))
    model = json.decode(ctx.report "json")
    assert.is_nil(model.target.file, "a binding map with another digest is not the one the run bound")
    assert.matches("| base | " .. ctx.p.target:sub(1, 12) .. " |", ctx.report "md", 1, true)
  end)
end)
