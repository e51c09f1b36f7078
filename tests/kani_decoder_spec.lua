-- The Kani result decoder on the labelled transcripts in fixtures/kani, and
-- on single-fault mutations of the verified one.
local vkit = require "vkit"
local H = require "vkit.relational.harness"
local D = require "vkit.relational.kani_result"

local DIR = vkit.root .. "/fixtures/kani/"

local function read(path, limit)
  return vkit.fs.read(path, limit or (1 << 21))
end

local function harness()
  local spec = assert(vkit.json.decode(assert(read(DIR .. "harness-spec.json"))))
  return assert(H.generate(spec))
end

local function transcripts()
  local out = {}
  for _, name in ipairs(assert(vkit.fs.list(DIR))) do
    local meta = read(DIR .. name .. "/meta.json")
    if meta then
      out[#out + 1] = {
        name = name,
        meta = assert(vkit.json.decode(meta)),
        export = read(DIR .. name .. "/export.json"),
        stdout = assert(read(DIR .. name .. "/stdout.txt")),
      }
    end
  end
  return out
end

local function input(tr, h)
  return {
    export = tr.export, stdout = tr.stdout, exit_code = tr.meta.exit_code,
    harness = { file = "vkit_harness.rs", ["function"] = h.harness_function, assertions = h.assertions },
  }
end

describe("the Kani transcripts", function()
  it("are labelled, name their documented formats and cover every required scenario", function()
    local names = {}
    for _, tr in ipairs(transcripts()) do
      names[tr.name] = true
      assert.is_true(tr.meta.label == "recorded" or tr.meta.label == "constructed", tr.name)
      assert.is_true(#tr.meta.formats >= 2, tr.name)
      assert.equal("0.68.0", tr.meta.kani_version)
      assert.is_truthy(D.outcomes[tr.meta.expected.outcome], tr.name)
    end
    for _, required in ipairs { "verified", "failed_assertion", "missing_assertion", "inconsistent_counters",
      "truncated_export", "wrong_location" } do
      assert.is_true(names[required], required)
    end
  end)

  it("belong to the harness generated from harness-spec.json (assertions at lines 47-50)", function()
    local h = harness()
    local lines = {}
    for _, a in ipairs(h.assertions) do lines[#lines + 1] = a.line .. ":" .. a.column end
    assert.same({ "47:5", "48:5", "49:5", "50:5" }, lines)
  end)

  it("decode to their expected outcomes", function()
    local h = harness()
    local outcomes = {}
    for _, tr in ipairs(transcripts()) do
      local r = D.decode(input(tr, h))
      assert.equal(tr.meta.expected.outcome, r.outcome, tr.name .. ": " .. r.message)
      assert.equal(tr.meta.expected.reason, r.reason, tr.name .. ": " .. r.message)
      outcomes[r.outcome] = true
    end
    for outcome in pairs(D.outcomes) do assert.is_true(outcomes[outcome], outcome) end
  end)

  it("reports what failed in a rejection, without claiming a concrete input", function()
    local h = harness()
    for _, tr in ipairs(transcripts()) do
      if tr.name == "failed_assertion" then
        local r = D.decode(input(tr, h))
        assert.equal(1, #r.failed)
        assert.equal("preserved_or_allowed_change", r.failed[1].generated)
        assert.equal("50", r.failed[1].location.line)
        assert.is_nil(r.counterexample)
      end
    end
  end)
end)

describe("the decoder, one fault at a time", function()
  local h, verified
  before_each(function()
    h = harness()
    for _, tr in ipairs(transcripts()) do
      if tr.name == "verified" then verified = tr end
    end
  end)

  -- Decodes the verified transcript after mutate(doc, run) changes its
  -- export document (doc) or its run ({stdout, exit_code}).
  local function decode(mutate)
    local doc = vkit.json.decode(verified.export)
    local run = { stdout = verified.stdout, exit_code = verified.meta.exit_code }
    mutate(doc, run)
    local i = input(verified, h)
    i.export = doc and vkit.json.encode(doc) or nil
    i.stdout, i.exit_code = run.stdout, run.exit_code
    return D.decode(i)
  end

  local function checks(doc) return doc.verification_results.results[1].checks end

  it("verifies the untouched transcript", function()
    local r = decode(function() end)
    assert.equal("verified", r.outcome)
    assert.equal(10, r.properties.total)
    assert.equal(4, #r.assertions)
  end)

  local cases = {
    { "another target", "unqualified_export", function(d) d.metadata.target = "aarch64-unknown-linux-gnu" end },
    { "another export version", "unqualified_export", function(d) d.metadata.version = "2.0" end },
    { "no metadata", "unqualified_export", function(d) d.metadata = nil end },
    { "a second harness", "harness_mismatch", function(d) d.harness_metadata[2] = d.harness_metadata[1] end },
    { "a should_panic harness", "harness_mismatch", function(d) d.harness_metadata[1].attributes.should_panic = true end },
    { "a harness from another file", "harness_mismatch", function(d) d.harness_metadata[1].source.file = "other.rs" end },
    { "two executed harnesses", "inconsistent_counters", function(d) d.verification_results.summary.executed = 2 end },
    { "a timed-out run", "inconsistent_counters", function(d) d.verification_results.summary.status = "timeout" end },
    { "an unknown status", "malformed_export", function(d) checks(d)[1].status = "Maybe" end },
    { "duplicate check ids", "malformed_export", function(d) checks(d)[2].id = 1 end },
    { "a duplicated assertion", "duplicate_assertion", function(d)
      local c = vkit.json.decode(vkit.json.encode(checks(d)[7]))
      c.id = 99
      table.insert(checks(d), c)
      local pd = d.property_details[1].property_details
      pd.total_properties, pd.passed = pd.total_properties + 1, pd.passed + 1
    end, function(run) run.stdout = run.stdout:gsub("0 of 10 failed", "0 of 11 failed") end },
    { "a wrong column", "wrong_location", function(d) checks(d)[8].location.column = "9" end },
    { "a wrong file", "wrong_location", function(d) checks(d)[8].location.file = "base/src/lib.rs" end },
    { "a wrong function", "wrong_location", function(d) checks(d)[8]["function"] = "vkit_base::scale" end },
    { "a cover property", "unexpected_property", function(d) checks(d)[1].status = "Satisfied"
      local pd = d.property_details[1].property_details
      pd.passed = pd.passed - 1
    end, function(run) run.stdout = run.stdout end },
    { "error_details claiming errors", "inconsistent_counters", function(d) d.error_details[1].has_errors = true end },
    { "an error property", "undetermined_properties", function(d)
      checks(d)[2].status = "Error"
      d.verification_results.results[1].status = "Failure"
      d.verification_results.summary.successful, d.verification_results.summary.failed = 0, 1
      d.error_details[1].has_errors = true
      d.property_details[1].property_details.passed = 9
    end, function(run)
      run.stdout = run.stdout:gsub("SUCCESSFUL", "FAILED"):gsub("Complete %- 1 successfully verified harnesses, 0 failures",
        "Complete - 0 successfully verified harnesses, 1 failures")
      run.exit_code = 1
    end },
  }
  for _, c in ipairs(cases) do
    it(("refuses to verify %s (%s)"):format(c[1], c[3] and c[2]), function()
      local r = decode(function(doc, run)
        c[3](doc)
        if c[4] then c[4](run) end
      end)
      assert.are_not.equal("verified", r.outcome)
      assert.equal(c[2], r.reason, r.message)
    end)
  end

  local stdout_cases = {
    { "no Complete line", function(run) run.stdout = run.stdout:gsub("Complete %- [^\n]*\n", "") end },
    { "a second verdict", function(run) run.stdout = run.stdout .. "VERIFICATION:- SUCCESSFUL\n" end },
    { "a verdict that disagrees", function(run) run.stdout = run.stdout:gsub("SUCCESSFUL", "FAILED") end },
    { "failure counts that disagree", function(run) run.stdout = run.stdout:gsub("0 of 10 failed", "0 of 9 failed") end },
    { "another harness checked", function(run) run.stdout = run.stdout:gsub("Checking harness vkit_relational", "Checking harness other") end },
    { "no exit status", function(run) run.exit_code = nil end },
  }
  for _, c in ipairs(stdout_cases) do
    it("refuses to verify when stdout has " .. c[1], function()
      local r = decode(function(_, run) c[2](run) end)
      assert.equal("infrastructure_failure", r.outcome)
      assert.equal("inconsistent_counters", r.reason)
    end)
  end

  it("treats an absent or non-JSON export as infrastructure failure", function()
    local missing = D.decode {
      export = nil, stdout = verified.stdout, exit_code = 0,
      harness = { file = "vkit_harness.rs", ["function"] = "vkit_relational", assertions = h.assertions },
    }
    assert.equal("missing_export", missing.reason)
    local r = D.decode {
      export = verified.export .. "x", stdout = verified.stdout, exit_code = 0,
      harness = { file = "vkit_harness.rs", ["function"] = "vkit_relational", assertions = h.assertions },
    }
    assert.equal("malformed_export", r.reason)
  end)
end)
