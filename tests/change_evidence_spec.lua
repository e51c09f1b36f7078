-- A certification's outcome is what its retained, hash-checked reports say
-- (issue 29, item 4): a state or attempt record rewritten after the fact,
-- a summary that disagrees with its reports, a changed report, or records
-- with no reports at all are CORRUPT with their reason in `run show`,
-- `run wait`, `run report` and `run list` (exit 3), never the outcome they
-- claim.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local corrupt = require "tests.support.corrupt"

local function rewrite_json(path, change)
  local doc = assert(json.decode(assert(vkit.fs.read(path, 1 << 26))))
  change(doc)
  assert(vkit.fs.write_atomic(path, json.encode(doc, { indent = 2 }) .. "\n"))
end

describe("a certification's outcome, derived from its retained reports", function()
  local p, run_dir, run_id
  local function vk(...)
    local argv = { ... }
    argv[#argv + 1] = "--project"
    argv[#argv + 1] = p.dir .. "/project"
    return t.vkit(argv)
  end
  local function assert_corrupt(reason)
    corrupt.assert_corrupt(vk, run_id, reason, "all_inputs_conform")
  end

  before_each(function()
    p = intents.language_project("python", { max_inputs = 4, shrink_limit = 1 })
    local out = intents.certify(p, p.commit({ [intents.SOURCES.python.path] = intents.SOURCES.python.bad }, p.target))
    assert.equal("observed_violation", out.outcome)
    run_id = out.run_id
    run_dir = p.dir .. "/project/.vkit/runs/" .. run_id
    -- untouched, it shows what its reports say
    local shown = vk("run", "show", "--run", run_id, "--json")
    assert.equal(0, shown.code)
    assert.equal("observed_violation", json.decode(shown.stdout).outcome)
  end)
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  it("a state and attempt record rewritten to all_inputs_conform are corrupt: outcome-not-in-evidence", function()
    for _, rel in ipairs { "state.json", "attempts/1/attempt.json" } do
      rewrite_json(run_dir .. "/" .. rel, function(doc) doc.outcome = "all_inputs_conform" end)
    end
    assert_corrupt "outcome-not-in-evidence"
  end)

  it("a summary that claims conformance over its unchanged reports is corrupt", function()
    local forged
    rewrite_json(run_dir .. "/attempts/1/certification.v1.json", function(doc)
      doc.outcome = "all_inputs_conform"
      for _, m in ipairs(doc.methods) do m.result = m.method == "exhaustive" and "all_inputs_conform" or m.result end
      forged = doc
    end)
    -- (the state shows the forged summary too, as a careful forger's would)
    rewrite_json(run_dir .. "/state.json", function(doc)
      doc.outcome = "all_inputs_conform"
      doc.summary = forged
    end)
    rewrite_json(run_dir .. "/attempts/1/attempt.json", function(doc) doc.outcome = "all_inputs_conform" end)
    assert_corrupt "outcome-not-in-evidence"
  end)

  it("a state whose summary is not the retained one is corrupt: summary-not-in-evidence", function()
    rewrite_json(run_dir .. "/state.json", function(doc)
      doc.summary.coverage = { checked = 4294967296, domain = 4294967296 }
    end)
    assert_corrupt "summary-not-in-evidence"
  end)

  it("a report changed after the certification recorded its hash is corrupt: report-changed", function()
    rewrite_json(run_dir .. "/attempts/1/exhaustive/exhaustive-report.v1.json", function(doc)
      doc.status = "all_inputs_conform"
    end)
    assert_corrupt "report-changed"
  end)

  it("records that no report backs are corrupt: report-missing", function()
    assert(os.remove(run_dir .. "/attempts/1/exhaustive/exhaustive-report.v1.json"))
    assert_corrupt "report-missing"
  end)

  it("a run written by hand, with no evidence at all, is corrupt, never done", function()
    local forged = "r-20261201T000000Z-0123456789ab"
    local dir = p.dir .. "/project/.vkit/runs/" .. forged
    assert(vkit.fs.mkdirs(dir .. "/attempts/1"))
    local job = assert(json.decode(assert(vkit.fs.read(run_dir .. "/job.json", 1 << 20))))
    job.run_id = forged
    t.write(dir .. "/job.json", json.encode(job))
    t.write(dir .. "/state.json", json.encode { schema_version = 1, status = "done", attempts = 1,
      outcome = "all_inputs_conform", summary = json.null, error = json.null, created_at = "2026-12-01T00:00:00Z",
      updated_at = "2026-12-01T00:00:00Z" })
    t.write(dir .. "/attempts/1/attempt.json", json.encode { attempt = 1, status = "done", outcome = "all_inputs_conform" })
    run_id = forged
    assert_corrupt "report-missing"
  end)
end)
