-- The exhaustive method (issue 15) on real repositories, real interpreters
-- and compilers, through the library call scripts use
-- (vkit.change.run_exhaustive: its own preflight, its own budget).
local vkit = require "vkit"
local json = vkit.json
local intents = require "tests.support.intents"
local authoring = require "vkit.change.authoring"
local limits = vkit.policies.limits.paired

local BASE = "def score(x):\n    return min(2 * x, 100)\n"
local GOOD = "def score(x):\n    return min(x + x, 100)\n"

-- A project in `language` whose base is `source`; opts.contract,
-- opts.guards (a difference policy), opts.observation.
local function project(language, source, opts)
  opts = opts or {}
  local ext = ({ python = "py", rust = "rs", typescript = "ts" })[language]
  local path = "src/score." .. ext
  local artifacts = intents.artifacts_for(language, path, opts.observation)
  local extra
  if opts.guards then
    local probe = intents.project { contract = opts.contract, artifacts = artifacts, source_path = path, source = source }
    local policy_path, bytes = authoring.difference_policy(probe.digest, opts.guards)
    probe.cleanup()
    extra = { [policy_path] = bytes }
  end
  local p = intents.project { contract = opts.contract, artifacts = artifacts, source_path = path, source = source,
                              extra = extra }
  p.path = path
  return p
end

local function exhaustive(p, candidate_source, opts)
  opts = opts or {}
  local candidate = p.commit({ [p.path] = candidate_source }, p.target)
  local dir = p.dir .. "/run-" .. vkit.sys.random_hex(4)
  local result = assert(vkit.change.run_exhaustive(p.repo, p.request(candidate), p.target, {
    dir = dir, run_id = opts.run_id or "spec-run", deadline_ms = opts.deadline_ms, max_invocations = opts.max_invocations,
    sampled = opts.sampled }))
  local written = assert(json.decode(assert(vkit.fs.read(dir .. "/" .. result.report, 1 << 26))))
  return result.record, written, dir, result
end

-- Legal outputs 100 or 101 for inputs 50..99 (a guard approves both), so
-- only the method's own rules can stop an unstable candidate.
local GUARDED = { guards = { { name = "either", inputs = { { from = 50, to = 99 } }, outputs = { 100, 101 } } } }

describe("the exhaustive method", function()
  local p
  after_each(function() if p then p.cleanup() end p = nil end)

  it("checks every accepted input twice per side and reports all_inputs_conform", function()
    p = project("python", BASE)
    local r, written, dir = exhaustive(p, GOOD)
    assert.equal("all_inputs_conform", r.status)
    assert.equal(100, r.inputs_accepted)
    assert.equal(100, r.inputs_checked)
    assert.equal("checked 100 of 100 accepted inputs (exhaustive)", r.coverage.statement)
    assert.equal(2, r.passes.count)
    assert.equal(2 * 2, r.invocations)          -- one batch, two passes, two sides, no build
    assert.same(r.status, written.status)
    for _, flag in ipairs { "source_proof", "approval_authority", "native_compiler_correspondence",
                            "dependency_closure_checked" } do
      assert.is_false(written[flag], flag)
    end
    -- every launch had the full sandbox: namespaces, a private root, an unprivileged uid, Landlock
    assert.is_true(written.os_sandbox)
    assert.is_true(written.sandbox.isolated)
    assert.is_true(written.sandbox.roles.run.full)
    assert.equal(4, written.sandbox.roles.run.launches)
    assert.equal("mount pid network ipc uts cgroup", written.sandbox.roles.run.applied.isolation.namespaces)
    assert.equal(65534, written.sandbox.roles.run.applied.isolation.uid)
    -- drivers and tools, retained with their hashes
    assert.equal(2, #written.drivers)
    for _, d in ipairs(written.drivers) do assert.equal(d.sha256, vkit.hash.file(dir .. "/" .. d.path), d.path) end
    for _, f in ipairs(written.retained) do assert.equal(f.sha256, vkit.hash.file(dir .. "/" .. f.path), f.path) end
    assert.is_table(written.runtime_identity.tools.python3)
    assert.is_string(written.runner_identity.code.batch_drivers)
    -- each run got every input, the second in a permutation derived from the run id
    local stdin1 = vkit.fs.read(dir .. "/" .. written.invocation_records[1].stdin.path, 1 << 20)
    local stdin3 = vkit.fs.read(dir .. "/" .. written.invocation_records[3].stdin.path, 1 << 20)
    assert.equal(400, #stdin1)
    assert.equal(string.pack("<I4", 0), stdin1:sub(1, 4))
    assert.are_not.equal(stdin1, stdin3)
    assert.equal(vkit.hash.sha256(stdin3), written.invocation_records[3].stdin.sha256)
  end)

  it("finds a violation at one input that sampling misses, with both outputs and the rule it breaks", function()
    p = project("python", BASE)
    local r = exhaustive(p, "def score(x):\n    if x == 77:\n        return 101\n    return min(x + x, 100)\n")
    assert.equal("observed_violation", r.status)
    assert.equal(100, r.inputs_checked)
    assert.equal(1, r.violations.total)
    assert.same({ input = 77, base = 100, candidate = 101, rule = "unapproved-difference", allowed = { { 100, 100 } } },
      { input = r.violations.smallest.input, base = r.violations.smallest.base, candidate = r.violations.smallest.candidate,
        rule = r.violations.smallest.rule, allowed = r.violations.smallest.allowed })
  end)

  it("lists violating inputs up to its cap, with the total count and the smallest", function()
    local contract = { inputs = { { from = 0, to = 299 } }, observations = { { from = 0, to = 1000 } }, requirements = {} }
    p = project("python", "def score(x):\n    return x\n", { contract = contract })
    local r = exhaustive(p, "def score(x):\n    return x + 1\n")
    assert.equal("observed_violation", r.status)
    assert.equal(300, r.violations.total)
    assert.equal(vkit.policies.change.exhaustive.listed_inputs, #r.violations.items)
    assert.equal(0, r.violations.smallest.input)
    assert.equal(1, r.violations.smallest.candidate)
  end)

  it("applies the difference policy to batch outputs: guards intersect, outside them a difference is a violation", function()
    local contract = { inputs = { { from = 60, to = 70 }, 80 }, observations = { { from = 0, to = 200 } },
                       requirements = { { inputs = { { from = 60, to = 70 }, 80 }, outputs = { { from = 100, to = 200 } } } } }
    p = project("python", "def score(x):\n    return 100\n", { contract = contract, guards = {
      { name = "raise", inputs = { { from = 60, to = 70 } }, outputs = { { from = 100, to = 150 } } },
      { name = "cap", inputs = { { from = 60, to = 70 } }, outputs = { { from = 120, to = 200 } } } } })
    assert.equal("all_inputs_conform", exhaustive(p, "def score(x):\n    return 140 if x <= 70 else 100\n").status)
    local r = exhaustive(p, "def score(x):\n    return 110 if x <= 70 else 100\n")
    assert.equal("observed_violation", r.status)
    assert.equal("guard", r.violations.smallest.rule)
    assert.matches("raise, cap", r.violations.smallest.message)
    assert.same({ { 120, 150 } }, r.violations.smallest.allowed)
    r = exhaustive(p, "def score(x):\n    return 140 if x <= 70 else 101\n")
    assert.equal("observed_violation", r.status)
    assert.equal("unapproved-difference", r.violations.smallest.rule)
    assert.equal(80, r.violations.smallest.input)
  end)

  describe("is unknown, naming the inputs, never conformance", function()
    local function assert_unstable(r)
      assert.equal("unknown", r.status)
      assert.equal("unstable", r.reason)
      assert.is_true(r.unstable.total > 0)
      assert.is_true(r.inputs_checked < r.inputs_accepted)
      for _, u in ipairs(r.unstable.items) do
        assert.equal("candidate", u.side)
        assert.is_true(u.input >= 50)
        assert.are_not.equal(u.outputs[1], u.outputs[2])
      end
    end

    -- A candidate that keeps state is outside the pure profile: it is not
    -- called in one batch but in fresh state per input (a fresh module in
    -- Python, a fork in Rust), so state that changes its answer after some
    -- calls never shows, it answers as in real use, and its conformance is
    -- the method's only as unadmitted (never the run's all_inputs_conform).
    local function assert_fresh(r, mode, rule)
      assert.equal("all_inputs_conform", r.status)
      local admission = r.admission.candidate
      assert.is_false(admission.admitted)
      assert.equal(rule, admission.refusal.rule)
      assert.is_true(r.admission.base.admitted)
      assert.equal(mode, r.semantics.candidate.mode)
      assert.equal("batch", r.semantics.base.mode)
      assert.equal("unadmitted_conform", require("vkit.change.combine").combine({
        { method = "exhaustive", status = r.status, coverage = r.coverage, admitted = admission.admitted } }).outcome)
    end

    it("for hidden state that changes the answer after some calls (order dependence): observed fresh per input",
      function()
        p = project("python", BASE, GUARDED)
        assert_fresh(exhaustive(p, [[
calls = 0
def score(x):
    global calls
    calls += 1
    if x < 50:
        return 2 * x
    return 101 if calls > 60 else 100
]]), "fresh-module-per-input", "admission-global")
      end)

    it("for a Rust candidate with a static counter: observed fresh per input", function()
      p = project("rust", "pub fn score(x: u32) -> u32 {\n    if x >= 50 { 100 } else { x * 2 }\n}\n", GUARDED)
      assert_fresh(exhaustive(p, [[
use std::sync::atomic::{AtomicU32, Ordering};
static CALLS: AtomicU32 = AtomicU32::new(0);
pub fn score(x: u32) -> u32 {
    let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if x < 50 { return x * 2; }
    if calls > 60 { 101 } else { 100 }
}
]]), "fork-per-input", "admission-use")
    end)

    it("for a candidate that reads the clock", function()
      p = project("python", BASE, GUARDED)
      assert_unstable(exhaustive(p, "import time\ndef score(x):\n    return 2 * x if x < 50 else 100 + time.time_ns() % 2\n"))
    end)

    it("for a candidate that reads a random source", function()
      p = project("python", BASE, GUARDED)
      assert_unstable(exhaustive(p, "import random\ndef score(x):\n    return 2 * x if x < 50 else random.choice([100, 101])\n"))
    end)

    it("for a candidate that behaves differently in isolation than in a batch", function()
      p = project("python", BASE, GUARDED)
      -- 101 when run alone (the per-input driver), 100 in a batch: both legal, never the same behaviour.
      local source = "import sys\ndef score(x):\n    if x < 50:\n        return 2 * x\n"
        .. "    return 100 if sys.argv[0].endswith('batch.py') else 101\n"
      local candidate = p.commit({ [p.path] = source }, p.target)
      local sampled = assert(vkit.change.run_paired_execution(p.repo, p.request(candidate), p.target,
        { dir = p.dir .. "/paired" }))
      assert.equal("samples_within_contract", sampled.status)
      local r = exhaustive(p, source, { sampled = sampled })
      assert.equal("unknown", r.status)
      assert.equal("isolation-difference", r.reason)
      assert.is_true(r.isolation.total > 0)
      assert.is_true(r.isolation.compared > 0)
      local d = r.isolation.items[1]
      assert.same({ "candidate", "100", "101" }, { d.side, d.batch, d.isolated })
      -- the batch alone cannot see it
      assert.equal("all_inputs_conform", exhaustive(p, source).status)
    end)

    it("for inputs on which the candidate raises, while every other input is still checked", function()
      p = project("python", BASE)
      local r = exhaustive(p, "def score(x):\n    if x in (13, 14):\n        raise ValueError(x)\n    return min(2 * x, 100)\n")
      assert.equal("unknown", r.status)
      assert.equal("candidate-failed", r.reason)
      assert.equal(98, r.inputs_checked)
      assert.equal(2, r.failed_inputs.total)
      assert.same({ input = 13, side = "candidate", outcome = "!raise" }, r.failed_inputs.items[1])
      -- a violation elsewhere stays visible
      r = exhaustive(p, "def score(x):\n    if x == 13:\n        raise ValueError(x)\n    return 101 if x == 77 else min(2 * x, 100)\n")
      assert.equal("observed_violation", r.status)
      assert.equal(77, r.violations.smallest.input)
      assert.equal(1, r.failed_inputs.total)
    end)

    it("for a Rust candidate that panics and a TypeScript candidate that throws on an input", function()
      p = project("rust", "pub fn score(x: u32) -> u32 {\n    if x >= 50 { 100 } else { x * 2 }\n}\n")
      local r = exhaustive(p, "pub fn score(x: u32) -> u32 {\n    if x == 13 { panic!(\"no\"); }\n"
        .. "    if x >= 50 { 100 } else { x * 2 }\n}\n")
      assert.same({ "unknown", "candidate-failed", 99 }, { r.status, r.reason, r.inputs_checked })
      assert.same({ input = 13, side = "candidate", outcome = "!raise" }, r.failed_inputs.items[1])
      p.cleanup()
      p = project("typescript", "export function score(x: number): number {\n  return Math.min(2 * x, 100);\n}\n")
      r = exhaustive(p, "export function score(x: number): number {\n  if (x === 13) throw new Error('no');\n"
        .. "  if (x === 14) return -1;\n  return Math.min(2 * x, 100);\n}\n")
      assert.same({ "unknown", "candidate-failed", 98 }, { r.status, r.reason, r.inputs_checked })
      assert.same({ "!raise", "!range" }, { r.failed_inputs.items[1].outcome, r.failed_inputs.items[2].outcome })
    end)
  end)

  describe("within the seed's limits", function()
    -- 4,096 inputs with 5-digit values and 10-digit outputs: 17-byte lines, two batches.
    local WIDE = { inputs = { { from = 10000, to = 14095 } }, observations = { { from = 3999990000 + 10000, to = 3999990000 + 14095 } },
                   requirements = {} }
    local WIDE_BASE = "def score(x):\n    return 3999990000 + x\n"

    it("splits the domain into batches that fit the 64 KiB output cap, each its own invocation", function()
      p = project("python", WIDE_BASE, { contract = WIDE })
      local r = exhaustive(p, "def score(x):\n    return x + 3999990000\n")
      assert.equal("all_inputs_conform", r.status)
      assert.equal(4096, r.inputs_checked)
      assert.equal(2, r.batches.planned)
      assert.equal(0, #r.batches.split)
      assert.equal(2 * 2 * 2, r.invocations)
      for _, inv in ipairs(r.invocation_records) do
        assert.equal("exited", inv.status)
        local out = type(inv.stdout) == "table" and inv.stdout.bytes or #inv.stdout
        assert.is_true(out <= limits.output_cap)
        assert.is_true(out > 60000 or out < 9000, "a batch fills the cap or is the remainder")
      end
    end)

    it("splits a batch again when the candidate's own output makes it reach the cap", function()
      p = project("python", WIDE_BASE, { contract = WIDE })
      local r = exhaustive(p, "import sys\ndef score(x):\n    sys.stderr.write('#' * 30)\n    return 3999990000 + x\n")
      assert.equal("all_inputs_conform", r.status)
      assert.equal(4096, r.inputs_checked)
      assert.is_true(#r.batches.split > 0)
      local capped = 0
      for _, inv in ipairs(r.invocation_records) do
        if inv.status == "output-capped" then capped = capped + 1 end
      end
      assert.is_true(capped > 0)
      assert.is_true(r.invocations <= limits.max_invocations)
    end)

    it("is unknown with the inputs checked so far when the invocation budget runs out mid-domain", function()
      p = project("python", WIDE_BASE, { contract = WIDE })
      local r = exhaustive(p, WIDE_BASE, { max_invocations = 5 })
      assert.equal("unknown", r.status)
      assert.equal("budget", r.reason)
      assert.equal(5, r.invocations)
      assert.equal(3614, r.inputs_checked)
      assert.equal("checked 3614 of 4096 accepted inputs (exhaustive)", r.coverage.statement)
    end)

    it("keeps a violation found before the budget ran out", function()
      p = project("python", WIDE_BASE, { contract = WIDE })
      local r = exhaustive(p, "def score(x):\n    return 1 if x == 10005 else 3999990000 + x\n", { max_invocations = 5 })
      assert.equal("observed_violation", r.status)
      assert.equal(10005, r.violations.smallest.input)
      assert.equal(3614, r.inputs_checked)
    end)

    it("is unknown with the inputs checked so far when the deadline passes mid-domain", function()
      p = project("python", WIDE_BASE, { contract = WIDE })
      -- The second batch hangs; the first takes well under a second.
      local r = exhaustive(p, "import time\ndef score(x):\n    if x >= 13614:\n        time.sleep(3600)\n"
        .. "    return 3999990000 + x\n", { deadline_ms = 12000 })
      assert.equal("unknown", r.status)
      assert.equal("deadline", r.reason)
      assert.equal(3614, r.inputs_checked)
      assert.equal("timeout", r.invocation_records[#r.invocation_records].status)
    end)
  end)

  describe("is an infrastructure failure", function()
    it("for a candidate that writes to stdout (the batch protocol breaks)", function()
      p = project("python", BASE)
      local r = exhaustive(p, "def score(x):\n    print('debug', x)\n    return min(2 * x, 100)\n")
      assert.equal("infrastructure_failure", r.status)
      assert.equal("protocol", r.reason)
    end)

    it("for a tool whose bytes differ from its pin, before anything runs", function()
      local artifacts = intents.artifacts_for("python", "src/score.py")
      local env = json.decode(artifacts.environment_model.bytes)
      env.toolchains.python.python3.sha256 = ("0"):rep(64)
      artifacts.environment_model.bytes = json.encode(env)
      p = intents.project { artifacts = artifacts }
      p.path = "src/score.py"
      local r = exhaustive(p, GOOD)
      assert.equal("infrastructure_failure", r.status)
      assert.equal("pin-mismatch", r.reason)
      assert.equal(0, r.invocations)
      assert.equal("checked 0 of 100 accepted inputs (exhaustive)", r.coverage.statement)
    end)
  end)
end)
