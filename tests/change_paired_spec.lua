-- Paired execution and change analysis (seed 001) on real repositories,
-- real interpreters and compilers.
local vkit = require "vkit"
local json = vkit.json
local intents = require "tests.support.intents"
local support = require "tests.support.paired"
local authoring = require "vkit.change.authoring"
local limits = vkit.policies.limits.paired

local function python_project(source, observation, extra)
  return intents.project { artifacts = intents.artifacts_for("python", "src/score.py", observation), source = source,
                           extra = extra }
end

local CONFORMING = "def score(x):\n    return min(x + x, 100)\n"
-- Off by one from input 20 on: inputs 20..49 must return exactly 2x.
local VIOLATING = "def score(x):\n    return 2 * x if x < 20 else min(2 * x + 1, 100)\n"

describe("paired execution", function()
  local p
  after_each(function() if p then p.cleanup() end p = nil end)

  it("reports samples_within_contract and observed_conformance for a conforming change", function()
    p = python_project()
    local candidate = p.commit({ ["src/score.py"] = CONFORMING }, p.target)
    local result, report, dir = support.analyse(p, candidate)
    assert.equal("samples_within_contract", report.status)
    assert.equal("observed_conformance", result.status)
    assert.equal(6, report.selection.selected)
    assert.equal(94, report.selection.omitted)
    assert.equal(6 * 2 * 2, report.invocations)
    assert.is_false(report.source_proof)
    assert.is_false(report.dependency_closure_checked)
    assert.is_true(report.os_sandbox)
    assert.is_true(report.sandbox.roles.run.full)
    assert.is_false(result.source_proof)
    assert.is_false(result.approval_authority)
    -- repeated raw observations are retained, and every retained file hashes as recorded
    local o = report.observations[2]
    assert.equal(2, #o.candidate.runs)
    for _, r in ipairs(report.retained) do assert.equal(r.sha256, vkit.hash.file(dir .. "/" .. r.path), r.path) end
    assert.equal("file", vkit.fs.lstat(dir .. "/drivers/candidate/driver.py").kind)
    assert.equal(p.target, report.source_captures.base.commit)
    assert.is_table(report.runtime_identity.tools.python3)
  end)

  it("reports observed_violation and shrinks to the smallest violating input, recording what it tried", function()
    p = python_project(nil, { max_inputs = 8 })
    local candidate = p.commit({ ["src/score.py"] = VIOLATING }, p.target)
    local result, report = support.analyse(p, candidate)
    assert.equal("observed_violation", report.status)
    assert.equal("observed_violation", result.status)
    assert.equal(20, report.shrinking.smallest_violation)
    assert.is_true(#report.shrinking.tried >= 1)
    assert.is_true(#report.shrinking.tried <= report.shrinking.limit)
    for _, v in ipairs(report.shrinking.tried) do assert.is_true(v < report.shrinking.from) end
    local found = false
    for _, f in ipairs(result.findings) do
      if f.verdict == "violation" and f.rule == "standing-requirement" then found = true end
    end
    assert.is_true(found)
  end)

  it("reports unknown for an unstable observation", function()
    p = python_project(nil, { max_inputs = 2, shrink_limit = 0 })
    -- Input 99 may return 100 or 101 (both legal).  A candidate can no
    -- longer keep a file from one process for the next (the sandbox gives
    -- each a fresh root), so the second candidate run of input 99 is made
    -- to print 101 where the first printed 100: repeated observations that
    -- disagree, deterministically.
    local candidate = p.commit({ ["src/score.py"] = CONFORMING }, p.target)
    local ctx, runs = support.ctx(), 0
    local run = ctx.run_process
    ctx.run_process = function(spec)
      local result = run(spec)
      if support.side_of(spec) == "candidate" and spec.stdin == string.pack("<I4", 99) then
        runs = runs + 1
        if runs == 2 then result.stdout = "101\n" end
      end
      return result
    end
    local result, report = support.analyse(p, candidate, nil, ctx)
    assert.equal("unknown", report.status)
    assert.equal("unstable", report.reason)
    assert.equal("unstable", report.observations[2].candidate.state)
    assert.equal("unknown", result.status)
  end)

  it("reports unknown when every run is stable but a side keeps failing to return (timeout)", function()
    p = python_project(nil, { max_inputs = 1, repetitions = 1, process_deadline_ms = 300, shrink_limit = 0 })
    local candidate = p.commit({ ["src/score.py"] = "import time\ndef score(x):\n    time.sleep(30)\n    return 0\n" }, p.target)
    local result, report = support.analyse(p, candidate)
    assert.equal("unknown", report.status)
    assert.equal("timeout", report.observations[1].candidate.state)
    assert.equal("unknown", result.status)
  end)

  it("reports infrastructure_failure for a driver that prints garbage", function()
    p = python_project(nil, { max_inputs = 2, shrink_limit = 0 })
    local candidate = p.commit({ ["src/score.py"] = "def score(x):\n    print('debug', x)\n    return min(2 * x, 100)\n" }, p.target)
    local result, report = support.analyse(p, candidate)
    assert.equal("infrastructure_failure", report.status)
    assert.equal("protocol", report.reason)
    assert.equal("protocol-error", report.observations[1].candidate.state)
    assert.equal("unknown", result.status) -- garbage is never a returned value
  end)

  it("caps each invocation's combined output at 64 KiB", function()
    p = python_project(nil, { max_inputs = 1, repetitions = 1, shrink_limit = 0 })
    local candidate = p.commit({ ["src/score.py"] =
      "import sys\ndef score(x):\n    sys.stderr.write('x' * 200000)\n    return min(2 * x, 100)\n" }, p.target)
    local _, report, dir = support.analyse(p, candidate)
    local capped = report.invocation_records[2]
    assert.equal("output-capped", capped.status)
    local out = vkit.fs.read(dir .. "/invocations/002.stdout", 1 << 20)
    local err = vkit.fs.read(dir .. "/invocations/002.stderr", 1 << 20)
    assert.equal(limits.output_cap, #out + #err)
    assert.equal("failed", report.observations[1].candidate.state)
  end)

  it("never exceeds 128 invocations, builds included, and records what it omitted", function()
    p = python_project(nil, { repetitions = 8, max_inputs = 4096, shrink_limit = 0 })
    local candidate = p.commit({ ["src/score.py"] = CONFORMING }, p.target)
    local _, report = support.analyse(p, candidate)
    assert.is_true(report.invocations <= 128)
    assert.equal(128 // 16, report.selection.selected)
    assert.equal(100 - 8, report.selection.omitted)
    assert.equal("samples_within_contract", report.status)
  end)

  it("returns incomplete evidence (unknown) once the 300-second deadline after preflight has passed", function()
    p = python_project(nil, { max_inputs = 2 })
    local bound = assert(require("vkit.change").preflight(p.repo, p.request(p.target), p.target))
    local paired = require "vkit.change.paired"
    local report = paired.run(bound, { repo = p.repo, dir = p.dir .. "/late", ctx = support.ctx(),
                                       deadline_at = vkit.sys.monotonic_ms() - 1 })
    assert.equal("unknown", report.status)
    assert.equal("deadline", report.reason)
    assert.equal(0, report.invocations)
  end)

  it("refuses changed tool bytes: infrastructure_failure before anything runs", function()
    local artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 1 })
    local env = json.decode(artifacts.environment_model.bytes)
    env.toolchains.python.python3.sha256 = ("0"):rep(64)
    artifacts.environment_model.bytes = json.encode(env)
    p = intents.project { artifacts = artifacts }
    local _, report = support.analyse(p, p.target)
    assert.equal("infrastructure_failure", report.status)
    assert.equal("pin-mismatch", report.reason)
    assert.equal(0, report.invocations)
  end)

  it("applies the target's difference policy: overlapping guards intersect", function()
    -- Inputs 60..70 and 80, each allowed 100..200 by the standing intent.
    local contract = { inputs = { { from = 60, to = 70 }, 80 }, observations = { { from = 0, to = 200 } },
                       requirements = { { inputs = { { from = 60, to = 70 }, 80 }, outputs = { { from = 100, to = 200 } } } } }
    local artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 12, shrink_limit = 0 })
    local probe = intents.project { contract = contract, artifacts = artifacts }
    local path, bytes = authoring.difference_policy(probe.digest, {
      { name = "raise", inputs = { { from = 60, to = 70 } }, outputs = { { from = 100, to = 150 } } },
      { name = "cap", inputs = { { from = 60, to = 70 } }, outputs = { { from = 120, to = 200 } } },
    })
    probe.cleanup()
    p = intents.project { contract = contract, artifacts = artifacts, extra = { [path] = bytes },
                          source = "def score(x):\n    return 100\n" }
    -- 140 is inside both guards: approved; 80 is outside any guard and preserved.
    local ok_candidate = p.commit({ ["src/score.py"] = "def score(x):\n    return 140 if x <= 70 else 100\n" }, p.target)
    local result = support.analyse(p, ok_candidate)
    assert.equal("observed_conformance", result.status)
    -- 110 is allowed by "raise" but not by "cap": the intersection refuses it.
    local bad_candidate = p.commit({ ["src/score.py"] = "def score(x):\n    return 110 if x <= 70 else 100\n" }, p.target)
    result = support.analyse(p, bad_candidate)
    assert.equal("observed_violation", result.status)
    assert.equal("guard", result.findings[1].rule)
    assert.matches("raise, cap", result.findings[1].message)
    -- outside the guards, a difference is unapproved even where the intent allows it
    local drift = p.commit({ ["src/score.py"] = "def score(x):\n    return 140 if x <= 70 else 101\n" }, p.target)
    result = support.analyse(p, drift)
    assert.equal("observed_violation", result.status)
    assert.equal("unapproved-difference", result.findings[1].rule)
  end)
end)
