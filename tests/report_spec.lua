-- Reports are views of what a run established (vkit.report): the same
-- model rendered as text, Markdown, HTML, JSON and JUnit XML; run-supplied
-- text can never add markup; the HTML page is checked in headless Chromium
-- and the JUnit XML read by junit2json, a consumer CI dashboards use.
local vkit = require "vkit"
local json = vkit.json
local fs = vkit.fs
local t = require "tests.support.run"
local report = require "vkit.report"
local browser = require "tests.support.browser"
local support = require "tests.support.protocol"

local HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"> | *bold* [link](http://x) \27[31mred'
  .. "\u{202e}evil\n# heading"

-- A model as a change run's report would hold it: a violation found at one
-- input of a domain where two ranges were checked.
local function sample_model()
  return {
    schema = "vkit-run-report.v1", kind = "change-certify", kind_title = "change certification",
    run_id = "r-20261201T000000Z-000000000000", status = "done", outcome = "observed_violation", passing = false,
    reason = "observed_violation", message = HOSTILE, updated_at = "2026-12-01T00:00:00Z",
    subject = { { label = "requirement", value = HOSTILE }, { label = "base", value = ("a"):rep(40) } },
    methods = {
      { name = "exhaustive", result = "observed_violation", passing = false,
        coverage = { checked = 200, total = 300, unit = "inputs", text = "checked 200 of 300 accepted inputs (exhaustive)" },
        findings = { { title = "input 250", input = 250, rule = "guard", detail = HOSTILE,
                       fields = { { label = "candidate", value = HOSTILE } } } },
        ranges = { { from = 250, to = 256, count = 7, rule = "guard" } }, findings_total = 7 },
      { name = "finite_paired", result = "samples_within_contract", passing = false, sampled = true,
        coverage = { checked = 12, total = 300, unit = "inputs", text = "checked 12 of 300 accepted inputs (finite_paired, sampled)" },
        findings = {} },
    },
    domain = { from = 0, to = 299, checked = { { 0, 99 }, { 200, 299 } }, violating = { 250, 251, 252, 253, 254, 255, 256 } },
    established = {}, not_established = { "sampled observations do not cover omitted inputs" },
    artifacts = { { path = "/tmp/x/report.json", sha256 = ("b"):rep(64), size = 10, changed = false },
                  { path = "/tmp/x/gone.json", sha256 = json.null, size = json.null, missing = true } },
  }
end

describe("run reports", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  describe("rendered from one model", function()
    it("keep run-supplied text inert in every format", function()
      local m = sample_model()
      local html = report.render(m, "html")
      assert.is_nil(html:find("<script>alert", 1, true))
      assert.is_nil(html:find("<img src=x", 1, true))
      assert.truthy(html:find("&lt;script&gt;alert(1)&lt;/script&gt;", 1, true))
      assert.is_nil(html:find("\u{202e}", 1, true), "no bidi override reaches the page")
      assert.truthy(html:find("\\u202e", 1, true))
      local md = report.render(m, "md")
      -- Inside a code span nothing is markup (CommonMark), and no backtick
      -- in the text can end one; outside, nothing may be.
      for span in md:gmatch "`([^`\n]*)`" do assert.is_nil(span:find("\n", 1, true)) end
      local prose = md:gsub("`[^`\n]*`", "")
      assert.is_nil(prose:find("<script>", 1, true))
      assert.is_nil(prose:find("[link](", 1, true))
      local _, ticks = md:gsub("`", "")
      assert.equal(0, ticks % 2, "every code span is closed")
      local markup = require "vkit.report.markup"
      assert.equal("a'b [x] c", markup.md_code("a`b\n[x] c"), "a backtick cannot end a code span")
      assert.is_nil(md:find("\n# heading", 1, true), "a newline cannot start a heading")
      for _, line in ipairs { md:match "\n(| requirement |[^\n]*)" } do
        local _, pipes = line:gsub("[^\\]|", "")
        assert.equal(2, pipes, "a pipe in the text cannot add a table cell: " .. line)
      end
      local text = report.render(m, "text")
      assert.is_nil(text:find("\27", 1, true), "no escape sequence reaches the terminal")
      local xml = report.render(m, "junit")
      assert.is_nil(xml:find("\27", 1, true), "XML 1.0 cannot hold the byte at all")
      assert.is_nil(xml:find("<script>", 1, true))
    end)

    it("say what was checked: coverage of each method, findings first then a count", function()
      local m = sample_model()
      local text = report.render(m, "text")
      assert.matches("checked 200 of 300 accepted inputs %(exhaustive%)", text)
      assert.matches("checked 12 of 300 accepted inputs %(finite_paired, sampled%)", text)
      assert.matches("findings (1):\n  - 250..256 (7 inputs): at input 250: <script>", text, 1, true)
      assert.matches("\n      seen by%s+exhaustive\n", text)
      for i = 1, 7 do
        m.methods[2].findings[i] = { title = "input " .. (i * 2), input = i * 2, rule = "guard", detail = "x" }
      end
      assert.matches("findings %(8%):.*%.%.%. and 3 more", report.render(m, "text"))
      assert.matches("not established:\n  sampled observations", text)
      local md = report.render(m, "md")
      assert.matches("Nothing: this run does not make its claim", md)
      assert.matches("| `" .. ("b"):rep(64) .. "` | 10 | /tmp/x/report.json |", md, 1, true)
      assert.matches("/tmp/x/gone.json (gone)", md, 1, true)
    end)

    it("keep the model whole in JSON", function()
      local m = sample_model()
      local back = assert(json.decode(report.render(m, "json")))
      assert.equal("vkit-run-report.v1", back.schema)
      assert.equal(250, back.domain.violating[1])
      assert.equal("array", json.kind(back.established), "an empty list stays a list")
      assert.equal(300, back.methods[1].coverage.total)
    end)

    it("write one JUnit case per method, a non-passing method a failure carrying its findings", function()
      local xml = report.render(sample_model(), "junit")
      local check = vkit.proc.run { exe = "/usr/bin/xmllint", argv = { "xmllint", "--noout", "-" }, stdin = xml }
      assert.equal(0, check.code, check.stderr)
      assert.matches('<testsuites name="vkit" tests="2" failures="1" errors="0" skipped="1">', xml, 1, true)
      assert.matches('<failure message="observed_violation: checked 200 of 300 accepted inputs %(exhaustive%)"', xml)
      assert.matches("... and 6 more", xml, 1, true)
    end)
  end)

  describe("of real runs", function()
    local function consume_junit(xml)
      assert(os.execute("make -s -C " .. t.quote(vkit.root) .. " junit-consumer >&2"), "make junit-consumer failed")
      local r = vkit.proc.run { exe = "/usr/bin/node", argv = { "node", vkit.root .. "/tests/junit/read.mjs" },
                                stdin = xml, cwd = vkit.root .. "/tests/junit", env = { PATH = "/usr/bin:/bin" } }
      assert.equal(0, r.code, r.stderr)
      return assert(json.decode(r.stdout))
    end

    local function report_of(p, run, format)
      local r = t.vkit { "run", "report", "--run", run.run_id, "--project", p.path, "--format", format }
      assert.equal(0, r.code, r.stderr)
      return r.stdout
    end

    it("report a PASSing external check in every format", function()
      local p = support.build(dir, {})
      local run = support.verify(p)
      assert.equal("PASS", run.outcome)
      local md = report_of(p, run, "md")
      assert.matches("# vkit external check `" .. run.run_id .. "`: PASS", md, 1, true)
      assert.matches("3 of 3 accepted obligations established by a valid accepting receipt", md, 1, true)
      assert.matches("| `%x+` | %d+ | %.vkit/runs/" .. run.run_id:gsub("%p", "%%%0") .. "/attempts/1/checker/receipt%.json |", md)
      local junit = consume_junit(report_of(p, run, "junit"))
      assert.equal(1, junit.tests)
      assert.equal(0, junit.failures)
      assert.equal("external checker", junit.testsuite[1].testcase[1].name)
      local model = json.decode(report_of(p, run, "json"))
      assert.is_true(model.passing)
      for _, a in ipairs(model.artifacts) do
        assert.equal(vkit.hash.file(a.path), a.sha256, a.path)
      end
    end)

    it("report a BLOCKED one as a failure with its reason, and a changed artifact as changed", function()
      local p = support.build(dir, { checker_mode = "reorder" })
      local run = support.verify(p)
      assert.equal("BLOCKED", run.outcome)
      local junit = consume_junit(report_of(p, run, "junit"))
      assert.equal(1, junit.failures)
      local case = junit.testsuite[1].testcase[1]
      assert.matches("receipt%-obligations%-mismatch", case.failure[1].inner)
      local model = json.decode(report_of(p, run, "json"))
      local z3
      for _, a in ipairs(model.artifacts) do if a.path:match "/evidence/z3%.log$" then z3 = a end end
      t.write(z3.path, "edited after the run\n")
      assert.matches("z3.log (**changed since the run recorded it**)", report_of(p, run, "md"), 1, true)
    end)

    it("report a certification wrong at one input: the finding, the sampled method skipped, the strip", function()
      local intents = require "tests.support.intents"
      local p = intents.language_project("python", { max_inputs = 6 })
      local ok, err = pcall(function()
        local s = intents.SOURCES.python
        local bad = intents.certify(p, p.commit({ [s.path] = s.one_input }, p.target))
        local project_path = p.dir .. "/project"
        local function report_for(format)
          local r = t.vkit { "run", "report", "--run", bad.run_id, "--project", project_path, "--format", format }
          assert.equal(0, r.code, r.stderr)
          return r.stdout
        end
        local shown = t.vkit { "run", "show", "--run", bad.run_id, "--project", project_path }
        assert.matches("exhaustive%s+observed_violation%s+checked 100 of 100 accepted inputs %(exhaustive%)", shown.stdout)
        assert.matches("input 77: the candidate returned 99", shown.stdout, 1, true)
        assert.is_nil(shown.stdout:find("PASS means", 1, true))
        local junit = consume_junit(report_for "junit")
        assert.same({ 2, 1, 1 }, { junit.tests, junit.failures, junit.skipped })
        local model = json.decode(report_for "json")
        assert.same({ 77 }, model.domain.violating)
        assert.same({ { 0, 99 } }, model.domain.checked)
        -- The REPL's run(id) loads the same: preflight, method reports, findings.
        local session = ('r = run(%q)\nr.findings[1].input\nr.findings[1].method\nr.attempts[1].preflight.scope\n'
          .. 'r.attempts[1].reports.exhaustive.report.inputs_checked\n#r.report.methods\n'):format(bad.run_id)
        local repl = t.vkit({ "repl", "--project", project_path }, session)
        assert.equal(0, repl.code, repl.stderr)
        assert.equal('77\n"exhaustive"\n"request_preflight"\n100\n2\n', repl.stdout)
        local page = dir .. "/change.html"
        t.write(page, report_for "html")
        if browser.available() then
          local dom = browser.dom(dir, page)
          assert.matches('<rect class="violating"[^>]*data%-input="77"', dom)
          assert.matches('data%-method="finite_paired" data%-result="observed_conformance" data%-passing="false" '
            .. 'data%-sampled="true"', dom)
        end
      end)
      intents.finish(p)
      assert(ok, err)
    end)

    it("report a VAC verification: structural only, every failure named, the replay not established", function()
      local valid, refused = vkit.root .. "/fixtures/vac/valid/v01", vkit.root .. "/fixtures/vac/tampered/sha256-mismatch"
      local r = t.vkit { "vac", "verify", valid, "--report", "md" }
      assert.equal(0, r.code, r.stderr)
      assert.matches("# vkit VAC structural verification `v01`: PASS", r.stdout, 1, true)
      assert.matches("replay (not run by vkit): $ ", r.stdout, 1, true)
      assert.matches("| `%x+` | %d+ | " .. valid:gsub("%p", "%%%0") .. "/vac%.json |", r.stdout)
      local bad = t.vkit { "vac", "verify", refused, "--report", "junit" }
      assert.equal(1, bad.code)
      local junit = consume_junit(bad.stdout)
      assert.same({ 1, 1 }, { junit.tests, junit.failures })
      assert.matches("sha256%-mismatch: evidence/narrative%.json", junit.testsuite[1].testcase[1].failure[1].inner)
      local out = dir .. "/vac.html"
      assert.equal(1, t.vkit({ "vac", "verify", refused, "--report", "html", "--output", out }).code)
      assert.matches('<span id="verdict" class="verdict fail" data%-passing="false">FAIL</span>', t.slurp(out))
      assert.equal(2, t.vkit({ "vac", "verify", valid, refused, "--report", "md" }).code, "one bundle per report")
      assert.equal(2, t.vkit({ "vac", "verify", valid, "--report", "pdf" }).code)
    end)

    it("render in headless Chromium: the verdict, each method, the domain strip, nothing run-supplied executed", function()
      if not browser.available() then
        error("chromium is not installed: scripts/deps installs it (Debian package chromium)")
      end
      local page = dir .. "/report.html"
      t.write(page, report.render(sample_model(), "html"))
      local dom = browser.dom(dir, page)
      assert.matches('<span id="verdict" class="verdict fail" data%-passing="false">observed_violation</span>', dom)
      local methods = {}
      for name, result, checked, total in dom:gmatch 'class="method" data%-method="([^"]+)" data%-result="([^"]+)" data%-passing="%a+" data%-sampled="%a+" data%-checked="(%d+)" data%-total="(%d+)"' do
        methods[#methods + 1] = ("%s %s %s/%s"):format(name, result, checked, total)
      end
      assert.same({ "exhaustive observed_violation 200/300", "finite_paired samples_within_contract 12/300" }, methods)
      local _, checked = dom:gsub('<rect class="checked"', "")
      local _, violating = dom:gsub('<rect class="violating"[^>]*data%-input="250"', "")
      assert.equal(2, checked)
      assert.equal(1, violating)
      assert.is_nil(dom:find("<script", 1, true), "no script element in the loaded page")
      assert.is_nil(dom:find("<img", 1, true), "no image element from a finding")
      assert.truthy(dom:find("&lt;script&gt;alert(1)&lt;/script&gt;", 1, true))
      local png = browser.screenshot(dir, page, 1100, 1400)
      local bytes = assert(fs.read(png, 1 << 26))
      assert.equal("\137PNG\r\n\26\n", bytes:sub(1, 8))
      assert.equal(1100, string.unpack(">I4", bytes, 17))
      assert.equal(1400, string.unpack(">I4", bytes, 21))
    end)
  end)
end)
