--- The exhaustive certification method (issue 15): every accepted input of
-- the domain, for any binding the paired profile accepts (Rust, Python,
-- TypeScript).
--
-- Base and candidate are captured and built exactly as for paired
-- execution (same pinned tools, closed environment and pins), with fixed
-- batch drivers (vkit.change.batch_drivers) that read every input before
-- loading the candidate and print one line per input.  The domain is split
-- into batches that fit the 64 KiB output cap (vkit.change.batches); each
-- batch runs on each side at least twice in fresh processes, ascending and
-- in a run-id-derived order.  A batch whose output still reaches the cap is
-- split in two and run again.
--
-- Per input and side, the outcomes of all passes must agree: outputs that
-- differ between passes make the input undecided (unstable: behaviour
-- depends on order or is not deterministic), never conforming.  When
-- finite_paired ran first, its per-input observations are compared with
-- the batch outcomes on the same inputs; a difference makes the input
-- undecided too (the side behaves differently in isolation).  Every
-- outcome is then judged by the one pure assessment (vkit.change.assess:
-- standing requirements, the target's difference policy, guard
-- intersection, repairs), so this verdict and the sampled one never differ
-- on the rules, only on coverage.
--
-- Limits (policies/limits.lua paired; this method's own budget): 128
-- invocations including builds, 64 KiB of combined output per invocation,
-- 300 s from the method's start (after Git preflight).  Running out of any
-- of them is unknown with the inputs checked so far.
--
-- exhaustive-report.v1.json, status:
--   all_inputs_conform      every accepted input checked, and each conforms
--   observed_violation      a stable candidate outcome breaks a rule
--   unknown                 some input unchecked: unstable, different in
--                           isolation, raised, or budget/deadline/cancelled
--   infrastructure_failure  build, launch, protocol, pin, source or
--                           retained-artifact check failed
local boot = require "vkit.boot"
local json = require "vkit.json"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local ranges = require "vkit.change.ranges"
local runs = require "vkit.change.runs"
local assess = require "vkit.change.assess"
local drivers = require "vkit.change.drivers"
local batch_drivers = require "vkit.change.batch_drivers"
local batches = require "vkit.change.batches"
local batch_run = require "vkit.change.batch_run"
local runner_mod = require "vkit.change.runner"
local sides_mod = require "vkit.change.sides"
local bound_mod = require "vkit.change.bound"
local coverage = require "vkit.change.coverage"
local limits = require("vkit.policy").limits.paired
local cfg = require("vkit.policy").change.exhaustive

local M = {}

M.REPORT = "exhaustive-report.v1.json"
M.STATUSES = { "all_inputs_conform", "observed_violation", "unknown", "infrastructure_failure" }

local SIDES = sides_mod.SIDES

function M.runner_identity()
  return { runner = "vkit-exhaustive-u32", vkit_version = boot.version,
           vkit_exe_sha256 = assert(require("vkit.hash").file(boot.exe)),
           code = sides_mod.code_identity { "exhaustive", "batch_run", "batches", "batch_drivers", "runner", "sides", "drivers",
                                            "toolchain", "assess", "contract", "ranges", "artifacts" } }
end

-- ---------------------------------------------------------------------
-- Running batches.  outcomes[side][input][pass] = {value} | {marker} | {lost}

local function describe(o)
  if not o then return "not run" end
  if o.value then return tostring(o.value) end
  if o.marker then return "!" .. o.marker end
  return o.lost
end

local function stage(staged, side, x, pass, outcome)
  staged[side][x] = staged[side][x] or {}
  staged[side][x][pass] = outcome
end

-- Runs one batch in every pass on both sides.  Returns nil when it ran,
-- "split" when an output reached the cap, or the reason to stop.
local function run_batch(runner, setup, batch, passes, run_id, outcomes)
  local staged = { base = {}, candidate = {} }
  local function commit()
    for _, s in ipairs(SIDES) do
      for x, by_pass in pairs(staged[s]) do
        outcomes[s][x] = outcomes[s][x] or {}
        for pass, o in pairs(by_pass) do outcomes[s][x][pass] = o end
      end
    end
  end
  for pass = 1, passes do
    local order = batches.order(batch.inputs, run_id, batch.index, pass)
    for _, s in ipairs(SIDES) do
      local bytes = drivers.encode_inputs(order)
      -- The input bytes are checked against the batch right before launch.
      if not drivers.inputs_match(bytes, order) then
        runner:problem("infrastructure_failure", "input-encoding",
          ("the stdin bytes of batch %s do not encode its inputs"):format(batch.index))
        return "input-encoding"
      end
      local kind, got = batch_run.launch(runner, setup, s, batch, pass, bytes, commit)
      if kind == "stop" then return got end
      if kind == "ran" then
        local parsed, problem = batch_drivers.parse(got.stdout or "", order)
        if not parsed then return batch_run.protocol(runner, s, batch, problem) end
        for i, x in ipairs(order) do stage(staged, s, x, pass, parsed[i]) end
      else
        for _, x in ipairs(order) do stage(staged, s, x, pass, { lost = got }) end
      end
    end
  end
  commit()
  return nil
end

-- ---------------------------------------------------------------------
-- From outcomes to side observations, the shape vkit.change.assess reads.

local function same(a, b)
  return a.value == b.value and a.marker == b.marker and a.lost == b.lost
end

-- {state = value|failed|unstable|not-run, value, why, outputs}
local function side_observation(by_pass, passes)
  if not by_pass then return { state = "not-run" } end
  for pass = 1, passes do
    if not by_pass[pass] then return { state = "not-run" } end
  end
  local first = by_pass[1]
  for pass = 2, passes do
    if not same(first, by_pass[pass]) then
      local outputs = json.array()
      for p = 1, passes do outputs[p] = describe(by_pass[p]) end
      return { state = "unstable", outputs = outputs }
    end
  end
  if first.value then return { state = "value", value = first.value } end
  return { state = "failed", why = describe(first), marker = first.marker }
end

-- What a sampled per-input run returned, comparable with a batch outcome:
-- {value}, {marker = "raise"|"range"}, or nil (a timeout, protocol
-- failure, crash or cancellation is not comparable).
local function sampled_outcome(run)
  if run.value ~= nil and run.value ~= json.null then return { value = run.value } end
  if run.status ~= "exited" or run.code == 0 or run.code == json.null then return nil end
  if run.code == 4 then return { marker = "range" } end
  if run.code == 3 or run.code == 5 then return nil end
  return { marker = "raise" }
end

-- Compares the sampled per-input observations (a paired report) with the
-- batch observations; marks differing sides and returns the differences
-- and how many sampled runs were compared.
local function cross_check(sampled, observations)
  local differences, compared = {}, 0
  if not sampled then return differences, 0 end
  local by_input = {}
  for _, o in ipairs(observations) do by_input[o.input] = o end
  for _, so in ipairs(sampled.observations or {}) do
    local o = by_input[so.input]
    for _, s in ipairs(SIDES) do
      local side = o and o[s]
      if side and (side.state == "value" or (side.state == "failed" and side.marker)) then
        local batch = side.state == "value" and { value = side.value } or { marker = side.marker }
        for _, run in ipairs(so[s] and so[s].runs or {}) do
          local got = sampled_outcome(run)
          if got then
            compared = compared + 1
            if not same(got, batch) then
              differences[#differences + 1] = { input = so.input, side = s, batch = describe(batch), isolated = describe(got) }
              o[s] = { state = "isolation-difference" }
              break
            end
          end
        end
      end
    end
  end
  return differences, compared
end

-- ---------------------------------------------------------------------

local listed = batch_run.listed

local function observe_all(domain, outcomes, passes)
  local observations, unstable, failed = {}, {}, {}
  for x in ranges.values(domain) do
    local o = { input = x }
    for _, s in ipairs(SIDES) do
      o[s] = side_observation(outcomes[s][x], passes)
      if o[s].state == "unstable" then unstable[#unstable + 1] = { input = x, side = s, outputs = o[s].outputs } end
      if o[s].state == "failed" then failed[#failed + 1] = { input = x, side = s, outcome = o[s].why } end
    end
    observations[#observations + 1] = o
  end
  return observations, unstable, failed
end

--- Runs the method for a BoundChangeRequest that preflight returned
--  (internal: scripts call vkit.change.run_exhaustive).
--  opts = {repo, dir (fresh), ctx = {run_process, cancelled}, deadline_at,
--  run_id, sampled (a paired-execution report to cross-check), progress,
--  max_invocations (<= the policy's)}
--  Returns {status, reason, report = REPORT, coverage, cuts, budget, record}.
function M.run(bound, opts)
  assert(bound_mod.genuine(bound))
  -- the multi-parameter profile (issue 34) has its own method
  if bound.intent.contract.profile == "multi" then return require("vkit.change.multi.exhaustive").run(bound, opts) end
  if opts.sampled and not (type(opts.sampled.binding) == "table"
      and opts.sampled.binding.request_digest == bound.request.digest
      and opts.sampled.binding.intent_digest == bound.intent.digest) then
    error("vkit.change.exhaustive: the sampled report is not a paired execution of this request", 2)
  end
  local started = sys.monotonic_ms()
  local runner = runner_mod.new(opts)
  assert(fs.mkdirs(runner.dir))
  local run_id = opts.run_id or ("library-" .. sys.random_hex(8))
  local domain = bound.intent.contract.domain.inputs
  local accepted = ranges.count(domain)
  local report = runner:report(bound)
  report.method = "exhaustive"
  report.inputs_accepted, report.inputs_checked, report.run_id = accepted, 0, run_id
  report.approval_authority, report.native_compiler_correspondence = false, false
  report.runner_identity = M.runner_identity()
  report.semantic_artifacts = bound.policy_blobs.artifacts
  local function finish(status, reason, message)
    return batch_run.finish(runner, report, M.REPORT, started,
      coverage.record("exhaustive", report.inputs_checked, accepted, "all_inputs"), status, reason, message)
  end

  local setup, status, reason, message, partial = sides_mod.prepare(opts.repo, bound, runner, batch_drivers.driver, opts)
  if not batch_run.record_setup(report, setup, partial) then return finish(status, reason, message) end

  local passes
  passes, report.passes, report.observation_policy = batch_run.passes(setup.observation_policy)
  report.batches = { size = batches.size(domain, limits.output_cap, cfg.stderr_reserve_bytes),
                     stderr_reserve_bytes = cfg.stderr_reserve_bytes, ran = json.array(), split = json.array() }
  local outcomes = { base = {}, candidate = {} }
  local stop = batch_run.run_batches(batches.plan(domain, limits.output_cap, cfg.stderr_reserve_bytes), report.batches,
    function(batch) return run_batch(runner, setup, batch, passes, run_id, outcomes) end)

  -- Observations, the cross-check with the sampled method, the assessment.
  local observations, unstable, failed = observe_all(domain, outcomes, passes)
  local isolation, compared = cross_check(opts.sampled, observations)
  local result = assess.assess(bound.intent.contract, bound.difference_policy.guards, observations,
    { selected = accepted, omitted = 0 })
  local violations = {}
  for _, f in ipairs(result.findings) do
    if f.verdict == "violation" then
      violations[#violations + 1] = { input = f.input, base = math.tointeger(tonumber(f.base)) or f.base,
                                      candidate = math.tointeger(tonumber(f.candidate)) or f.candidate, rule = f.rule,
                                      allowed = f.allowed, message = f.message }
    end
  end
  report.inputs_checked = result.coverage.conforming + result.coverage.violations
  report.inputs_conforming = result.coverage.conforming
  report.inputs_undecided = result.coverage.undecided
  report.violations = listed(violations)
  report.violations.smallest = violations[1] or json.null
  -- Every violation and every output in runs, past the listing's cap (the reports' ranges and chart).
  report.violations.ranges = runs.violation_ranges(violations)
  report.outputs = runs.outputs(observations, cfg.output_runs_kept)
  report.unstable = listed(unstable)
  report.failed_inputs = listed(failed)
  report.isolation = listed(isolation)
  report.isolation.compared = compared
  report.isolation.sampled_report = opts.sampled and "finite_paired" or json.null

  -- Retained hashes are checked before the report is serialised.
  local retained_ok = runner:check_retained()
  report.os_sandbox = runner:os_sandbox()
  report.sandbox = runner:sandbox_record(setup.plan)
  if not retained_ok then return finish("infrastructure_failure", "retained-artifact-changed") end
  if #violations > 0 then
    local v = violations[1]
    return finish("observed_violation", v.rule, ("%d violating input%s; the smallest: %s"):format(#violations,
      #violations == 1 and "" or "s", v.message))
  end
  if #runner.problems > 0 then
    return finish(runner.problems[1].status, runner.problems[1].reason, runner.problems[1].message)
  end
  if report.inputs_checked == accepted then return finish("all_inputs_conform", "all-accepted-inputs-checked") end
  local why = batch_run.reason_for_unchecked(stop, unstable, isolation, failed)
  return finish("unknown", why, ("%d of %d accepted inputs checked (%s)"):format(report.inputs_checked, accepted, why))
end

return M
