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
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local contract = require "vkit.change.contract"
local ranges = require "vkit.change.ranges"
local artifacts = require "vkit.change.artifacts"
local intent = require "vkit.change.intent"
local drivers = require "vkit.change.drivers"
local toolchain = require "vkit.change.toolchain"
local select_mod = require "vkit.change.select"
local limits = require("vkit.policy").limits.paired
local change_policy = require("vkit.policy").change

local M = {}

M.REPORT = "paired-execution-report.v1.json"
M.SIDES = { "base", "candidate" }

-- ---------------------------------------------------------------------
-- A run's mutable bookkeeping: budget, deadline, retained files, events.

local Runner = {}
Runner.__index = Runner

local function new_runner(opts)
  return setmetatable({
    dir = opts.dir,
    ctx = opts.ctx,
    deadline_at = opts.deadline_at,
    progress = opts.progress or function() end,
    invocations = 0,
    records = json.array(),
    retained = {},      -- relative path -> sha256
    problems = {},      -- {status, reason, message}
    sandboxes = {},
  }, Runner)
end

function Runner:retain(rel, bytes)
  local path = self.dir .. "/" .. rel
  local parent = path:match "^(.*)/[^/]+$"
  assert(fs.mkdirs(parent))
  assert(fs.write_atomic(path, bytes))
  self.retained[rel] = hash.sha256(bytes)
  return path
end

function Runner:retain_existing(rel)
  self.retained[rel] = assert(hash.file(self.dir .. "/" .. rel))
end

function Runner:problem(status, reason, message)
  self.problems[#self.problems + 1] = { status = status, reason = reason, message = message }
end

function Runner:remaining_ms()
  return self.deadline_at - sys.monotonic_ms()
end

-- Text fit for JSON: valid UTF-8 up to 4 KiB is kept; anything else is
-- described by size and hash (the raw bytes are retained in a file).
local function text(s)
  if #s <= 4096 and utf8.len(s) then return s end
  return { bytes = #s, sha256 = hash.sha256(s) }
end

--- Launches one process within the budget and the deadline.  Returns the
--  vkit.proc result, or nil and a reason when the budget or time is gone.
function Runner:launch(label, spec, deadline_ms)
  if self.invocations >= limits.max_invocations then return nil, "budget" end
  local remaining = self:remaining_ms()
  if remaining <= 0 then return nil, "deadline" end
  if self.ctx.cancelled() then return nil, "cancelled" end
  self.invocations = self.invocations + 1
  spec.deadline_ms = math.max(1, math.min(deadline_ms, remaining))
  spec.output_cap = limits.output_cap
  local n = self.invocations
  local result = self.ctx.run_process(spec)
  local base = ("invocations/%03d"):format(n)
  self:retain(base .. ".stdout", result.stdout or "")
  self:retain(base .. ".stderr", result.stderr or "")
  self.sandboxes[#self.sandboxes + 1] = result.sandbox or "none"
  local record = {
    n = n, label = label, argv = spec.argv, status = result.status, code = result.code or json.null,
    signal = result.signal or json.null, wall_ms = result.wall_ms or json.null,
    stdout = text(result.stdout or ""), stderr = text(result.stderr or ""),
    stdin_hex = spec.stdin and (spec.stdin:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) or json.null,
    exe_sha256 = result.exe_sha256 or json.null, error = result.error or json.null,
  }
  self.records[#self.records + 1] = record
  return result
end

-- ---------------------------------------------------------------------
-- Preparation: artifacts, toolchain, captures, drivers, builds.

local function read_artifacts(repo, bound, runner)
  local parsed = {}
  for _, name in ipairs(intent.ARTIFACTS) do
    local pin = bound.intent.artifacts[name]
    local blob, message = repo:read(bound.target.commit, pin.path, change_policy.caps.artifact_bytes)
    if not blob or hash.sha256(blob.bytes) ~= pin.sha256 then
      return nil, "infrastructure_failure", "source", ("the %s cannot be re-read at the target: %s"):format(name, tostring(message))
    end
    runner:retain("artifacts/" .. name .. ".json", blob.bytes)
    local doc, pmessage = artifacts.parse(name, blob.bytes)
    if not doc then return nil, "unknown", "unsupported-declaration", pmessage end
    parsed[name] = doc
  end
  return parsed
end

-- Measures the declared tools now: the runtime identity is what vkit
-- hashed, never what a document said.
local function measure_toolchain(chain, runner)
  local measured = { tools = {}, dependencies = json.array() }
  for name, tool in pairs(chain.tools) do
    if name ~= "dependencies" then
      local actual, message = hash.file(tool.path)
      if actual ~= tool.sha256 then
        return nil, ("%s %s: pinned sha256 %s, actual %s"):format(name, tool.path, tool.sha256, tostring(actual or message))
      end
      measured.tools[name] = { path = tool.path, sha256 = actual }
    end
  end
  for _, dep in ipairs(chain.dependencies) do
    local actual, message = hash.file(dep.path)
    if actual ~= dep.sha256 then
      return nil, ("dependency %s: pinned sha256 %s, actual %s"):format(dep.path, dep.sha256, tostring(actual or message))
    end
    measured.dependencies[#measured.dependencies + 1] = { path = dep.path, sha256 = actual }
  end
  return measured
end

local function capture_side(repo, commit, dir, source, runner, side_name)
  assert(fs.mkdirs(dir .. "/captures"))
  local dest = dir .. "/captures/" .. side_name
  local identity, message, code = repo:capture(commit, dest, { source })
  if not identity then
    return nil, ("cannot capture %s at the %s commit: %s (%s)"):format(source, side_name, message, code)
  end
  local ok, vmessage = require("vkit.git").verify_capture(dest, identity)
  if not ok then return nil, "the capture does not verify: " .. vmessage end
  for _, f in ipairs(identity.inventory) do runner:retain_existing(("captures/%s/%s"):format(side_name, f.path)) end
  return identity, dest .. "/" .. source
end

local function prepare_side(repo, bound, binding, chain, env, runner, side_name)
  local commit = bound[side_name == "base" and "target" or "candidate"].commit
  local capture, module_path = capture_side(repo, commit, runner.dir, binding.source, runner, side_name)
  if not capture then return nil, "source", module_path end
  local side = { name = side_name, capture = capture, module_path = module_path,
                 out_dir = ("%s/build/%s"):format(runner.dir, side_name), work_dir = ("%s/work/%s"):format(runner.dir, side_name) }
  assert(fs.mkdirs(side.out_dir))
  assert(fs.mkdirs(side.work_dir))
  local compiled = binding.language == "typescript" and toolchain.compiled_path(module_path, side.out_dir) or nil
  local driver_name, driver_source = toolchain.driver(binding.language, module_path, binding["function"], compiled)
  side.driver_path = runner:retain(("drivers/%s/%s"):format(side_name, driver_name), driver_source)
  side.driver_pin = toolchain.file_pin(side.driver_path)
  side.module_pin = toolchain.file_pin(module_path)
  local build = toolchain.build_spec(binding.language, chain, side, env)
  if build then
    runner.progress(("building %s (%s)"):format(side_name, binding.language))
    local result, why = runner:launch("build " .. side_name, build, limits.build_deadline_ms)
    if not result then return nil, why, "no budget or time left to build" end
    if result.status == "pin-mismatch" then return nil, "pin", result.message end
    if result.status ~= "exited" or result.code ~= 0 then
      return nil, "build", ("the %s build failed (%s %s): %s"):format(side_name, result.status, tostring(result.code),
        (result.stderr or ""):sub(1, 2000))
    end
    local built = fs.lstat(build.output)
    if not built or built.kind ~= "file" then return nil, "build", "the build produced no " .. build.output end
    side.built = toolchain.file_pin(build.output)
    runner:retain_existing(build.output:sub(#runner.dir + 2))
  end
  return side
end

-- ---------------------------------------------------------------------
-- Observation.

--- Runs one side on one input `reps` times; returns the side observation
--  {state = value|unstable|failed|protocol-error|timeout|not-run, value, runs}.
local function observe(runner, language, chain, side, env, input, reps, deadline_ms)
  local runs = json.array()
  for r = 1, reps do
    local bytes = drivers.encode_input(input)
    -- The input bytes are checked against the input right before launch.
    if #bytes ~= 4 or string.unpack("<I4", bytes) ~= input then
      return { state = "protocol-error", runs = runs, reason = "input encoding" }
    end
    local spec = toolchain.run_spec(language, chain, side, env, bytes)
    local result, why = runner:launch(("run %s input %d rep %d"):format(side.name, input, r), spec, deadline_ms)
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

local function observe_pair(runner, language, chain, sides, env, input, reps, deadline_ms)
  local o = { input = input }
  for _, s in ipairs(M.SIDES) do
    o[s] = observe(runner, language, chain, sides[s], env, input, reps, deadline_ms)
  end
  return o
end

-- A stable candidate observation outside the claim's legal outputs.
local function violates(claim, o)
  return o.candidate.state == "value" and not ranges.contains(contract.legal(claim, o.input), o.candidate.value)
end

-- ---------------------------------------------------------------------

local function runtime_identity(language, measured, env)
  return { language = language, tools = measured.tools, dependencies = measured.dependencies, env = env }
end

function M.runner_identity()
  local vkit = require "vkit"
  local code = {}
  for _, name in ipairs { "paired", "drivers", "toolchain", "select", "contract", "ranges", "artifacts" } do
    code[name] = assert(hash.file(("%s/lua/vkit/change/%s.lua"):format(vkit.root, name)))
  end
  return { runner = "vkit-paired-u32", vkit_version = vkit.version, vkit_exe_sha256 = assert(hash.file(vkit.exe)),
           code = code, limits = { max_invocations = limits.max_invocations, output_cap = limits.output_cap,
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

--- Runs the paired execution for a BoundChangeRequest.
--  opts = {repo, dir (fresh), ctx = {run_process, cancelled}, deadline_at, progress}
--  Returns the report table (also written to dir/paired-execution-report.v1.json).
function M.run(bound, opts)
  local runner = new_runner(opts)
  assert(fs.mkdirs(runner.dir))
  local report = {
    schema_version = 1,
    binding = { request_digest = bound.request.digest, intent_digest = bound.intent.digest, preflight_digest = bound.digest,
                target = bound.target, candidate = bound.candidate },
    limits = { max_invocations = limits.max_invocations, output_cap = limits.output_cap, deadline_ms = limits.deadline_ms },
    source_proof = false,
    dependency_closure_checked = false,
    os_sandbox = false,
    runner_identity = M.runner_identity(),
  }
  local function finish(status, reason, message, extra)
    report.status, report.reason, report.message = status, reason, message or json.null
    for k, v in pairs(extra or {}) do report[k] = v end
    report.invocations = runner.invocations
    report.invocation_records = runner.records
    report.problems = #runner.problems > 0 and runner.problems or json.array()
    local retained = json.array()
    local names = {}
    for rel in pairs(runner.retained) do names[#names + 1] = rel end
    table.sort(names)
    for _, rel in ipairs(names) do retained[#retained + 1] = { path = rel, sha256 = runner.retained[rel] } end
    report.retained = retained
    assert(fs.write_atomic(runner.dir .. "/" .. M.REPORT, json.encode(report, { indent = 2 }) .. "\n"))
    return report
  end

  local parsed, status, reason, message = read_artifacts(opts.repo, bound, runner)
  if not parsed then return finish(status, reason, message) end
  local binding, env_model = parsed.binding_map, parsed.environment_model
  local observation_policy = parsed.observation_policy
  report.language = binding.language
  local chain
  chain, message = artifacts.toolchain(env_model, binding.language)
  if not chain then return finish("unknown", "unsupported-declaration", message) end
  local measured
  measured, message = measure_toolchain(chain, runner)
  if not measured then return finish("infrastructure_failure", "pin-mismatch", message) end
  local env = artifacts.env(env_model)
  report.runtime_identity = runtime_identity(binding.language, measured, env)

  local sides = {}
  report.source_captures = json.object()
  for _, s in ipairs(M.SIDES) do
    local side, why, detail = prepare_side(opts.repo, bound, binding, chain, env, runner, s)
    if not side then
      if why == "budget" or why == "deadline" or why == "cancelled" then return finish("unknown", why, detail) end
      return finish("infrastructure_failure", why, detail)
    end
    sides[s] = side
    report.source_captures[s] = { commit = side.capture.commit, tree = side.capture.tree,
                                  inventory_digest = side.capture.inventory_digest, inventory = side.capture.inventory }
  end

  -- Selection: as many accepted inputs as the remaining budget allows,
  -- keeping room for shrinking.
  local claim = bound.request.claim
  local reps = observation_policy.repetitions
  local per_input = 2 * reps
  local reserve = observation_policy.shrink_limit * per_input
  local budget = math.max(0, (limits.max_invocations - runner.invocations - reserve) // per_input)
  budget = math.min(budget, observation_policy.max_inputs)
  local selected, omitted = select_mod.select(bound.intent.contract.domain.inputs, observation_policy.selection, budget)
  report.selection = { domain = ranges.count(bound.intent.contract.domain.inputs), selected = #selected, omitted = omitted,
                       how = observation_policy.selection, repetitions = reps, inputs = selected }
  local observations = {}
  for i, input in ipairs(selected) do
    runner.progress(("input %d of %d: %d"):format(i, #selected, input))
    local o = observe_pair(runner, binding.language, chain, sides, env, input, reps, observation_policy.process_deadline_ms)
    observations[#observations + 1] = o
    if o.base.state == "not-run" or o.candidate.state == "not-run" then break end
  end

  -- Shrinking: only smaller accepted inputs, within its limit.
  local shrinking = { limit = observation_policy.shrink_limit, tried = json.array(), smallest_violation = json.null }
  local first_bad, last_good = nil, nil
  for _, o in ipairs(observations) do
    if violates(claim, o) then first_bad = o break end
    if o.candidate.state == "value" then last_good = o.input end
  end
  if first_bad then
    shrinking.from = first_bad.input
    local next_input, tried, smallest = select_mod.shrinker(bound.intent.contract.domain.inputs, first_bad.input,
                                                             last_good, observation_policy.shrink_limit)
    local last
    while true do
      local v = next_input(last)
      if not v then break end
      runner.progress(("shrinking: trying %d"):format(v))
      local o = observe_pair(runner, binding.language, chain, sides, env, v, reps, observation_policy.process_deadline_ms)
      o.shrink = true
      observations[#observations + 1] = o
      if o.candidate.state ~= "value" then break end
      last = violates(claim, o)
    end
    shrinking.tried = json.array(tried)
    shrinking.smallest_violation = smallest()
  end
  report.shrinking = shrinking

  local obs_json = json.array()
  for i, o in ipairs(observations) do
    obs_json[i] = { input = o.input, shrink = o.shrink or false, base = side_json(o.base), candidate = side_json(o.candidate),
                    violates_claim = violates(claim, o) }
  end
  report.observations = obs_json
  report.semantic_artifacts = bound.policy_blobs.artifacts

  -- Retained hashes are checked before the report is serialised.
  local retained_ok = true
  for rel, digest in pairs(runner.retained) do
    if hash.file(runner.dir .. "/" .. rel) ~= digest then
      retained_ok = false
      runner:problem("infrastructure_failure", "retained-artifact-changed", rel .. " changed after it was retained")
    end
  end
  local all_sandboxed = #runner.sandboxes > 0
  for _, sb in ipairs(runner.sandboxes) do if sb == "none" then all_sandboxed = false end end
  report.os_sandbox = all_sandboxed
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
