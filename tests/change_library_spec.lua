-- The library API of seed 001 (issue 16 item 4): run_paired_execution and
-- run_change_analysis (and run_exhaustive) take a request and a separately
-- supplied trusted target, do their own preflight, and start a
-- caller-supplied deadline (at most 300 s) after Git preflight; the
-- bound-level functions accept only what preflight returned.
local vkit = require "vkit"
local intents = require "tests.support.intents"
local support = require "tests.support.paired"
local preflight = require("vkit.change").preflight
local paired = require "vkit.change.paired"
local exhaustive = require "vkit.change.exhaustive"
local analysis = require "vkit.change.analysis"

describe("the change library API", function()
  local p
  before_each(function() p = intents.language_project("python", { max_inputs = 2, shrink_limit = 0 }) end)
  after_each(function() p.cleanup() end)

  it("does its own preflight: a refused request returns the refusal and runs nothing", function()
    local candidate = p.commit({ ["src/score.py"] = "def score(x):\n    return 0\n" }, p.target)
    local request = p.request(candidate, nil, candidate)   -- the base is not the trusted target
    for name, fn in pairs { run_paired_execution = vkit.change.run_paired_execution,
                            run_change_analysis = vkit.change.run_change_analysis,
                            run_exhaustive = vkit.change.run_exhaustive } do
      local dir = p.dir .. "/" .. name
      local ok, message, code = fn(p.repo, request, p.target, { dir = dir })
      assert.is_nil(ok, name)
      assert.equal("base-not-target", code, name)
      assert.is_string(message)
      assert.is_nil(vkit.fs.lstat(dir), name .. " wrote nothing")
    end
    -- a project path works as well as an open repository
    local report = assert(vkit.change.run_paired_execution(p.dir .. "/project", p.request(p.target), p.target,
      { dir = p.dir .. "/by-path" }))
    assert.equal("samples_within_contract", report.status)
  end)

  it("returns the analysis with the paired report it judged", function()
    local result, report, bound = vkit.change.run_change_analysis(p.repo, p.request(p.target), p.target,
      { dir = p.dir .. "/analysis" })
    assert.equal("observed_conformance", result.status)
    assert.equal("samples_within_contract", report.status)
    assert.equal(bound.digest, report.binding.preflight_digest)
  end)

  it("runs within the caller's deadline, which starts after preflight, and never beyond 300 s", function()
    local report = assert(vkit.change.run_paired_execution(p.repo, p.request(p.target), p.target,
      { dir = p.dir .. "/late", deadline_ms = 1 }))
    assert.equal("unknown", report.status)
    assert.equal("deadline", report.reason)
    assert.equal(0, report.invocations)
    for _, bad in ipairs { 0, 300001, 1.5, "60" } do
      assert.has_error(function()
        vkit.change.run_paired_execution(p.repo, p.request(p.target), p.target, { dir = p.dir .. "/x", deadline_ms = bad })
      end)
    end
    assert.has_error(function()
      vkit.change.run_exhaustive(p.repo, p.request(p.target), p.target, { dir = p.dir .. "/y", max_invocations = 129 })
    end)
    assert.has_error(function() vkit.change.run_paired_execution(p.repo, p.request(p.target), p.target, {}) end)
    -- a deadline the caller places beyond the policy is cut to the policy's
    local bound = assert(preflight(p.repo, p.request(p.target), p.target))
    local runner = require("vkit.change.runner").new { dir = p.dir .. "/r", ctx = support.ctx(),
                                                       deadline_at = vkit.sys.monotonic_ms() + 10 * 300000 }
    assert.is_true(runner:remaining_ms() <= vkit.policies.limits.paired.deadline_ms)
    assert.is_table(bound)
  end)

  it("starts the deadline after Git preflight, however long preflight took", function()
    -- Preflight takes 10 s here (each exact-commit lookup sleeps 5 s); the
    -- 9 s deadline is for the runs alone (4 launches of a Python driver,
    -- far less than 9 s even on a loaded machine): a deadline that counted
    -- preflight would have expired before the first launch.
    local q = intents.language_project("python", { max_inputs = 1, shrink_limit = 0 })
    local methods = getmetatable(q.repo).__index
    local commit = methods.commit
    methods.commit = function(...)
      vkit.sys.sleep(5)
      return commit(...)
    end
    local ok, report = pcall(vkit.change.run_paired_execution, q.repo, q.request(q.target), q.target,
      { dir = q.dir .. "/slow-preflight", deadline_ms = 9000 })
    methods.commit = commit
    q.cleanup()
    assert(ok, report)
    assert.equal("samples_within_contract", report.status)
    assert.equal(4, report.invocations)
  end)

  describe("keeps the bound-level functions internal", function()
    local function opts(dir)
      return { repo = p.repo, dir = p.dir .. "/" .. dir, ctx = support.ctx(), deadline_at = vkit.sys.monotonic_ms() + 300000 }
    end

    it("refusing a bound that preflight did not return", function()
      local bound = assert(preflight(p.repo, p.request(p.target), p.target))
      local copy = {}
      for k, v in pairs(bound) do copy[k] = v end
      for name, run in pairs { paired = paired.run, analysis = analysis.run, exhaustive = exhaustive.run } do
        local ok, err = pcall(run, copy, opts(name))
        assert.is_false(ok, name)
        assert.matches("not a BoundChangeRequest returned by vkit.change.preflight", err)
      end
    end)

    it("refusing a bound changed after preflight", function()
      local bound = assert(preflight(p.repo, p.request(p.target), p.target))
      bound.intent.contract.requirements = {}            -- drop every standing requirement
      local ok, err = pcall(exhaustive.run, bound, opts "changed")
      assert.is_false(ok)
      assert.matches("changed after preflight", err)
      bound = assert(preflight(p.repo, p.request(p.target), p.target))
      bound.difference_policy.guards[1] = { name = "anything", inputs = { { 0, 99 } }, outputs = { { 0, 200 } } }
      ok, err = pcall(paired.run, bound, opts "guards")
      assert.is_false(ok)
      assert.matches("changed after preflight", err)
    end)

    it("refusing to cross-check against a paired report of another request", function()
      local other = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x, 100)\n" }, p.target)
      local sampled = assert(vkit.change.run_paired_execution(p.repo, p.request(other), p.target, { dir = p.dir .. "/other" }))
      assert.has_error(function()
        vkit.change.run_exhaustive(p.repo, p.request(p.target), p.target, { dir = p.dir .. "/mixed", sampled = sampled })
      end, "vkit.change.exhaustive: the sampled report is not a paired execution of this request")
    end)

    it("refusing to run without a deadline", function()
      local bound = assert(preflight(p.repo, p.request(p.target), p.target))
      local o = opts "no-deadline"
      o.deadline_at = nil
      assert.has_error(function() paired.run(bound, o) end)
    end)
  end)
end)
