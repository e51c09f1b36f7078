-- How much a report keeps and shows lives once, in policies/report.lua
-- (issue 32): each number is what the renderers do, at the limit and one
-- past it.
local vkit = require "vkit"
local policy = vkit.policies.report
local report = require "vkit.report"
local change = require "vkit.report.change"
local subject = require "vkit.report.subject"
local t = require "tests.support.run"

-- A model of one method with n findings, each its own input (no ranges).
local function model_with(n)
  local list = {}
  for i = 1, n do list[i] = { title = ("input %d"):format(i * 2), detail = "the candidate returned 7", input = i * 2 } end
  local model = { kind = "change-certify", run_id = "r-1", status = "finished", outcome = "observed_violation",
                  headline = "a violation", subject = {}, methods = { { name = "finite_paired", result = "observed_violation",
                  findings = list, findings_total = n, notes = {} } }, established = {}, not_established = {},
                  artifacts = {} }
  model.findings = require("vkit.report.findings").of(model)
  return model
end

local FORMATS = {
  { name = "text", format = "text", more = "... and 1 more" },
  { name = "markdown", format = "md", more = "… and 1 more" },
  { name = "html", format = "html", more = "… and 1 more" },
}

describe("policies/report.lua", function()
  for _, f in ipairs(FORMATS) do
    it(("findings_shown.%s: %d findings are all listed, one more is counted, not listed"):format(f.name,
      policy.findings_shown[f.name]), function()
      local n = policy.findings_shown[f.name]
      local at = report.render(model_with(n), f.format)
      assert.matches(("input %d"):format(n * 2), at, 1, true)
      assert.is_nil(at:find(f.more, 1, true))
      local past = report.render(model_with(n + 1), f.format)
      assert.is_nil(past:find(("input %d[^%%d]"):format((n + 1) * 2)))
      assert.matches(f.more, past, 1, true)
    end)
  end

  it("findings_kept: the model keeps that many findings of a method and counts the rest", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local function kept(n)
      local items = {}
      for i = 1, n do items[i] = { input = i, verdict = "violation", rule = "guard", message = "outside" } end
      t.write(dir .. "/report.json", vkit.json.encode { violations = items })
      return change.method(dir, { method = "exhaustive", result = "observed_violation", report = "report.json" })
    end
    local at = kept(policy.findings_kept)
    assert.equal(policy.findings_kept, #at.findings)
    assert.equal(policy.findings_kept, at.findings_total)
    local past = kept(policy.findings_kept + 1)
    assert.equal(policy.findings_kept, #past.findings)
    assert.equal(policy.findings_kept + 1, past.findings_total)
  end)

  it("short_id_digits: a subject names commits by that many digits", function()
    local id = ("0123456789abcdef"):rep(3):sub(1, 40)
    assert.equal(id:sub(1, policy.short_id_digits), subject.short(id))
    assert.equal(policy.short_id_digits, #subject.short(id))
  end)
end)

describe("policies/change.lua caps", function()
  it("witness_bytes: a witness file one byte past the cap is refused before it is parsed", function()
    local witness = require "vkit.change.witness"
    local cap = vkit.policies.change.caps.witness_bytes
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    t.write(dir .. "/at.json", ("x"):rep(cap))
    t.write(dir .. "/past.json", ("x"):rep(cap + 1))
    local at, at_message = witness.import_file(dir .. "/at.json", dir)
    assert.is_nil(at)
    assert.is_nil(at_message:find("cannot read the witness", 1, true), at_message)  -- read, then refused as JSON
    local past, message, code = witness.import_file(dir .. "/past.json", dir)
    assert.is_nil(past)
    assert.matches("cannot read the witness", message, 1, true)
    assert.equal("too-large", code)
  end)
end)

describe("policies/report.lua stderr_tail_bytes", function()
  -- A cause line read from a retained stderr file: the last
  -- stderr_tail_bytes bytes are read, nothing before them.
  local causes = require "vkit.report.causes"
  local function with_stderr(text)
    local dir, cleanup = t.tempdir()
    assert(vkit.fs.mkdirs(dir .. "/exhaustive/invocations"))
    t.write(dir .. "/exhaustive/exhaustive-report.v1.json", vkit.json.encode { invocation_records = {
      { n = 1, label = "batch 1 pass 1 candidate", status = "exited", code = 0 } } })
    t.write(dir .. "/exhaustive/invocations/001.stderr", text)
    local found = causes.of_method(dir, { report = "exhaustive/exhaustive-report.v1.json", method = "exhaustive" })
    cleanup()
    return found
  end
  it("a cause line that starts the tail exactly is read; one byte earlier, it is cut and not read", function()
    local line = "vkit driver: range 3 59 -1\n"
    local function filler(n) return ("z"):rep(n - 1) .. "\n" end
    local at = with_stderr(line .. filler(policy.stderr_tail_bytes - #line))
    assert.same({ { side = "candidate", text = "returned -1, not a u32", count = 3, unit = "inputs", first = 59 } }, at)
    assert.same({}, with_stderr(line .. filler(policy.stderr_tail_bytes - #line + 1)))
  end)
end)

describe("policies/change.lua caps.report_bytes", function()
  -- A certification's outcome is derived from its retained reports, each
  -- read under this cap (vkit.change.evidence).
  local evidence = require "vkit.change.evidence"
  it("the summary is read under the cap: at the cap it is read (then judged), one byte past it is not", function()
    local cap = vkit.policies.change.caps.report_bytes
    local function derive(size)
      local bytes = "{}" .. (" "):rep(size - 2)
      return evidence.derive(function(rel, max)
        assert.equal(cap, max)
        if #bytes > max then return nil, "larger than " .. max end
        return bytes
      end, false, nil)
    end
    local _, file, reason = derive(cap)
    assert.same({ evidence.SUMMARY, "report-invalid" }, { file, reason })  -- read: a JSON object listing no methods
    _, file, reason = derive(cap + 1)
    assert.same({ evidence.SUMMARY, "report-missing" }, { file, reason })
  end)
end)
