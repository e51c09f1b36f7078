--- run_paired_execution: base and candidate side by side (seed 001).
--
-- Captures the bound source of both exact commits once, generates fixed
-- drivers, builds where the language needs it, and runs both sides on the
-- same selected accepted inputs, each observation repeated.  Limits from
-- policies/limits.lua (paired): at most 128 process invocations including
-- builds, 64 KiB of combined output per invocation, and a 300-second
-- deadline that starts after Git preflight.  Exhaustion returns incomplete
-- evidence, never a pass.
--
-- Everything is retained under the run directory and listed with its
-- SHA-256; the hashes are checked again before the report is written, and
-- each launch's input bytes are checked against its input first.  The
-- report (paired-execution-report.v1.json) has one of four statuses:
--   samples_within_contract  every selected observation is stable and the
--                            candidate meets the request claim on them
--   observed_violation       a stable candidate observation violates the claim
--   unknown                  timeout, cancellation, budget, unsupported
--                            declaration or unstable observation
--   infrastructure_failure   build, launch, protocol, pin, source or
--                            retained-artifact checks failed
-- It always records source_proof:false and dependency_closure_checked:false,
-- and os_sandbox true only if a sandbox was really applied to every launch.
local boot = require "vkit.boot"
local json = require "vkit.json"
local fs = require "vkit.fs"
local contract = require "vkit.change.contract"
local ranges = require "vkit.change.ranges"
local drivers = require "vkit.change.drivers"
local toolchain = require "vkit.change.toolchain"
local select_mod = require "vkit.change.select"
local runner_mod = require "vkit.change.runner"
local sides_mod = require "vkit.change.sides"
local bound_mod = require "vkit.change.bound"
local limits = require("vkit.policy").limits.paired

local M = {}

M.REPORT = "paired-execution-report.v1.json"
M.SIDES = sides_mod.SIDES

-- ---------------------------------------------------------------------
-- Observation.

--- Runs one side on one input `reps` times; returns the side observation
--  {state = value|unstable|failed|protocol-error|timeout|not-run, value, runs}.
local function observe(runner, setup, side, input, reps, deadline_ms)
  local language = setup.binding.language
  local runs = json.array()
  for r = 1, reps do
    local bytes = drivers.encode_inputs { input }
    -- The input bytes are checked against the input right before launch.
    if not drivers.inputs_match(bytes, { input }) then
      runner:problem("infrastructure_failure", "input-encoding",
        ("the stdin bytes for input %d do not encode that input"):format(input))
      return { state = "protocol-error", runs = runs, reason = "input-encoding" }
    end
    local spec = toolchain.run_spec(language, setup, side, bytes)
    local result, why = runner:launch(("run %s input %d rep %d"):format(side.name, input, r), spec, deadline_ms,
      { setting = "process_deadline_ms" })
    if not result then return { state = "not-run", reason = why, runs = runs } end
    local value = result.status == "exited" and result.code == 0 and drivers.parse_output(result.stdout or "") or nil
    runs[#runs + 1] = { invocation = runner.invocations, status = result.status, code = result.code or json.null,
                        value = value or json.null }
    if result.status == "pin-mismatch" or result.status == "launch-failed" then
      runner:problem("infrastructure_failure", result.status, result.message or result.status)
      return { state = "failed", runs = runs, reason = result.status }
    end
    if result.status == "cancelled" then return { state = "not-run", reason = "cancelled", runs = runs } end
    if result.status == "timeout" then return { state = "timeout", runs = runs } end
    if result.status == "exited" and result.code == 0 and value == nil then
      runner:problem("infrastructure_failure", "protocol",
        ("the %s driver for input %d did not print one canonical decimal u32 line"):format(side.name, input))
      return { state = "protocol-error", runs = runs }
    end
    if result.status == "exited" and (result.code == 3 or result.code == 4) then
      runner:problem("infrastructure_failure", "protocol",
        ("the %s driver for input %d reported a protocol failure (exit %d)"):format(side.name, input, result.code))
      return { state = "protocol-error", runs = runs }
    end
  end
  local first = runs[1] and runs[1].value
  local all_values, same = true, true
  for _, run in ipairs(runs) do
    if run.value == json.null then all_values = false end
    if run.value ~= first then same = false end
  end
  if all_values and same then return { state = "value", value = first, runs = runs } end
  local any_value = false
  for _, run in ipairs(runs) do if run.value ~= json.null then any_value = true end end
  if any_value then return { state = "unstable", runs = runs } end
  return { state = "failed", runs = runs }
end

local function observe_pair(runner, setup, input)
  local policy = setup.observation_policy
  local o = { input = input }
  for _, s in ipairs(M.SIDES) do
    o[s] = observe(runner, setup, setup.sides[s], input, policy.repetitions,
      policy.process_deadline_ms)
  end
  return o
end

-- A stable candidate observation outside the claim's legal outputs.
local function violates(claim, o)
  return o.candidate.state == "value" and not ranges.contains(contract.legal(claim, o.input), o.candidate.value)
end

-- ---------------------------------------------------------------------

function M.runner_identity()
  return { runner = "vkit-paired-u32", vkit_version = boot.version, vkit_exe_sha256 = assert(require("vkit.hash").file(boot.exe)),
           code = sides_mod.code_identity { "paired", "runner", "sides", "drivers", "toolchain", "select", "contract",
                                            "ranges", "artifacts" },
           limits = { max_invocations = limits.max_invocations, output_cap = limits.output_cap,
                      deadline_ms = limits.deadline_ms } }
end

local function decide_status(runner, observations, selected, claim, retained_ok)
  if not retained_ok then return "infrastructure_failure", "retained-artifact-changed" end
  for _, o in ipairs(observations) do
    if violates(claim, o) then return "observed_violation", "claim-violated" end
  end
  if #runner.problems > 0 then return runner.problems[1].status, runner.problems[1].reason end
  for _, o in ipairs(observations) do
    for _, s in ipairs(M.SIDES) do
      local st = o[s].state
      if st ~= "value" then return "unknown", st == "not-run" and (o[s].reason or "not-run") or st end
    end
  end
  if #observations < selected then return "unknown", "incomplete" end
  if selected == 0 then return "unknown", "nothing-selected" end
  return "samples_within_contract", "within-contract"
end

local function side_json(side)
  local s = { state = side.state, runs = side.runs or json.array() }
  if side.value ~= nil then s.value = side.value end
  if side.reason then s.reason = side.reason end
  return s
end

-- Selection: as many accepted inputs as the remaining budget allows,
-- keeping room for shrinking.  A max_inputs the budget cuts is recorded.
local function choose_inputs(runner, bound, policy)
  local domain = bound.intent.contract.domain.inputs
  local n, cut = select_mod.affordable(runner.max_invocations - runner.invocations, policy, ranges.count(domain))
  if cut then runner:cut("max_inputs", policy.max_inputs, cut, "max_invocations", runner.max_invocations) end
  return select_mod.select(domain, policy.selection, n)
end

-- Shrinking: only smaller accepted inputs, within its limit.
local function shrink(runner, bound, setup, observations, claim)
  local policy = setup.observation_policy
  local shrinking = { limit = policy.shrink_limit, tried = json.array(), smallest_violation = json.null }
  local first_bad, last_good = nil, nil
  for _, o in ipairs(observations) do
    if violates(claim, o) then first_bad = o break end
    if o.candidate.state == "value" then last_good = o.input end
  end
  if not first_bad then return shrinking end
  shrinking.from = first_bad.input
  local next_input, tried, smallest = select_mod.shrinker(bound.intent.contract.domain.inputs, first_bad.input,
                                                           last_good, policy.shrink_limit)
  local last
  while true do
    local v = next_input(last)
    if not v then break end
    runner.progress(("shrinking: trying %d"):format(v))
    local o = observe_pair(runner, setup, v)
    o.shrink = true
    observations[#observations + 1] = o
    if o.base.state == "not-run" or o.candidate.state == "not-run" then
      local why = o.base.reason or o.candidate.reason
      if why == "budget" or why == "deadline" then
        runner:cut("shrink_limit", policy.shrink_limit, #tried - 1, why == "budget" and "max_invocations" or "deadline_ms",
          why == "budget" and runner.max_invocations or limits.deadline_ms)
      end
      break
    end
    if o.candidate.state ~= "value" then break end
    last = violates(claim, o)
  end
  shrinking.tried = json.array(tried)
  shrinking.smallest_violation = smallest()
  return shrinking
end

--- Runs the paired execution for a BoundChangeRequest that preflight
--  returned (internal: scripts call vkit.change.run_paired_execution,
--  which does its own preflight and starts the deadline after it).
--  opts = {repo, dir (fresh), ctx = {run_process, cancelled}, deadline_at,
--  progress, max_invocations (<= the policy's)}
--  Returns the report table (also written to dir/paired-execution-report.v1.json).
function M.run(bound, opts)
  assert(bound_mod.genuine(bound))
  local runner = runner_mod.new(opts)
  assert(fs.mkdirs(runner.dir))
  local report = runner:report(bound)
  report.runner_identity = M.runner_identity()
  local function finish(status, reason, message, extra)
    report.status, report.reason, report.message = status, reason, message or json.null
    for k, v in pairs(extra or {}) do report[k] = v end
    return runner:write_report(report, M.REPORT)
  end

  local setup, status, reason, message, partial = sides_mod.prepare(opts.repo, bound, runner, toolchain.driver, opts)
  report.language = (setup or partial or {}).binding and (setup or partial).binding.language or json.null
  -- what admission said stays in the report even when a build then failed
  if (setup or partial or {}).admission and next((setup or partial).admission) then
    report.admission = (setup or partial).admission
  end
  if not setup then return finish(status, reason, message) end
  report.runtime_identity = setup.runtime_identity
  report.source_captures = setup.source_captures
  report.semantics = { mode = "process-per-input", meaning = "process-per-input: each input and repetition in its "
    .. "own process, which imports the module and calls it once, as in real use" }

  local claim = bound.request.claim
  local policy = setup.observation_policy
  local selected, omitted = choose_inputs(runner, bound, policy)
  report.selection = { domain = ranges.count(bound.intent.contract.domain.inputs), selected = #selected, omitted = omitted,
                       how = policy.selection, repetitions = policy.repetitions, inputs = selected }
  local observations = {}
  for i, input in ipairs(selected) do
    runner.progress(("input %d of %d: %d"):format(i, #selected, input))
    local o = observe_pair(runner, setup, input)
    observations[#observations + 1] = o
    if o.base.state == "not-run" or o.candidate.state == "not-run" then break end
  end
  report.shrinking = shrink(runner, bound, setup, observations, claim)

  local obs_json = json.array()
  for i, o in ipairs(observations) do
    obs_json[i] = { input = o.input, shrink = o.shrink or false, base = side_json(o.base), candidate = side_json(o.candidate),
                    violates_claim = violates(claim, o) }
  end
  report.observations = obs_json
  report.semantic_artifacts = bound.policy_blobs.artifacts

  -- Retained hashes are checked before the report is serialised.
  local retained_ok = runner:check_retained()
  report.os_sandbox = runner:os_sandbox()
  report.sandbox = runner:sandbox_record(setup.plan)
  local selected_observed = 0
  for _, o in ipairs(observations) do if not o.shrink then selected_observed = selected_observed + 1 end end
  local final_status, final_reason = decide_status(runner, observations, #selected, claim, retained_ok)
  if selected_observed < #selected and final_status == "samples_within_contract" then
    final_status, final_reason = "unknown", "incomplete"
  end
  return finish(final_status, final_reason, nil, { observed = selected_observed })
end

--- The observations in the shape vkit.change.assess expects.
function M.for_assessment(report)
  local out = {}
  for _, o in ipairs(report.observations or {}) do
    local function side(s)
      if s.state == "value" then return { state = "value", value = s.value } end
      return { state = s.state }
    end
    out[#out + 1] = { input = o.input, base = side(o.base), candidate = side(o.candidate), shrink = o.shrink }
  end
  return out
end

return M
