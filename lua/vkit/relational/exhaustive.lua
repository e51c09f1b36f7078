--- The rust_exhaustive certification method: vkit's own (issue 7), not
-- one of seed 001's methods.
--
-- Accepted domains are finite (at most 4,096 inputs), so the relational
-- property the Kani harness states can also be checked for EVERY accepted
-- input natively: the captured base and candidate modules are compiled
-- as they are, by the environment model's pinned rustc, into one harness
-- binary (the generator's `native` target) that evaluates all accepted
-- inputs in order and stops at the first broken assertion.
--
-- Report (rust-exhaustive-report.v1.json): status
--   all_inputs_conform      every accepted input satisfied all four assertions
--   observed_violation      an assertion failed: its id, input and both outputs
--   unknown                 timeout, cancellation, budget, unsupported binding
--   infrastructure_failure  build, launch, pin, capture or protocol failure
-- with exhaustive_native = true only when every accepted input was checked,
-- the rustc identity, and source_proof:false, approval_authority:false.
-- It establishes behaviour of these compiled binaries on these inputs under
-- this compiler; it is not a proof about the source for other compilers.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local prepare = require "vkit.relational.prepare"
local kani = require "vkit.relational.kani"
local artifacts = require "vkit.change.artifacts"
local coverage = require "vkit.change.coverage"
local limits = require("vkit.policy").limits.paired
local change_policy = require("vkit.policy").change

local M = {}

M.REPORT = "rust-exhaustive-report.v1.json"

local function rust_toolchain(repo, bound)
  local pin = bound.intent.artifacts.environment_model
  local blob = repo:read(bound.target.commit, pin.path, change_policy.caps.artifact_bytes)
  local env, message, code = artifacts.parse("environment_model", blob and blob.bytes or "")
  if not env then return nil, message, code end
  local chain
  chain, message, code = artifacts.toolchain(env, "rust")
  if not chain then return nil, message, code end
  return chain, artifacts.env(env)
end

-- How many accepted inputs the harness checked: it walks them in order and
-- stops at the first broken assertion (which it checked too).
local function checked_through(domain, input)
  local n = 0
  for _, r in ipairs(domain) do
    if input >= r[2] then n = n + (r[2] - r[1] + 1) elseif input >= r[1] then n = n + (input - r[1] + 1) end
  end
  return n
end

local function pins(chain, files)
  local list = {}
  for _, f in ipairs(files) do list[#list + 1] = f end
  for _, d in ipairs(chain.dependencies) do list[#list + 1] = { path = d.path, sha256 = d.sha256 } end
  return { exe_sha256 = chain.tools.rustc.sha256, files = list }
end

--- opts = {repo, dir, ctx = {run_process, cancelled}, deadline_at}
function M.run(bound, opts)
  local record = { schema = "vkit.rust-exhaustive-report.v1", method = "rust_exhaustive", exhaustive_native = false,
                   source_proof = false, approval_authority = false, violation = json.null, inputs_checked = 0 }
  local domain = bound.intent.contract.domain.inputs
  local accepted = require("vkit.change.ranges").count(domain)
  local started = sys.monotonic_ms()
  local function finish(status, reason, message)
    record.status, record.reason, record.message = status, reason, message or json.null
    record.coverage = coverage.record("rust_exhaustive", record.inputs_checked, accepted, "all_inputs")
    assert(fs.write_atomic(opts.dir .. "/" .. M.REPORT, json.encode(record, { indent = 2 }) .. "\n"))
    return { status = status, reason = reason, report = M.REPORT, coverage = record.coverage, cuts = json.array(),
             budget = { invocations = (record.build and 1 or 0) + (record.run and 1 or 0), max_invocations = 2,
                        deadline_ms = limits.deadline_ms, elapsed_ms = sys.monotonic_ms() - started } }
  end
  local program, message, code = prepare.from_bound(opts.repo, bound, "native")
  if not program then
    local status = (code == "unsupported_binding") and "unknown" or "infrastructure_failure"
    return finish(status, code, message)
  end
  record.program = prepare.to_json(program)
  local chain, env = rust_toolchain(opts.repo, bound)
  if not chain then return finish("unknown", "unsupported-declaration", env) end
  record.rustc = chain.tools.rustc

  -- Materialise both captures and the harness; check them as written.
  local work = opts.dir .. "/work"
  for _, side in ipairs { "base", "candidate" } do
    local dir = work .. "/" .. side
    for _, f in ipairs(program.captures[side].files) do
      local path = dir .. "/" .. f.path
      assert(fs.mkdirs(path:match "^(.*)/[^/]+$"))
      assert(fs.write_atomic(path, f.bytes, 420))
    end
    local problem = kani.capture_problem(program.captures[side], dir)
    if problem then return finish("infrastructure_failure", "capture_mismatch", problem) end
  end
  local harness_path = work .. "/vkit_harness.rs"
  assert(fs.write_atomic(harness_path, program.harness.bytes, 420))
  local module_pins = {}
  for _, side in ipairs { "base", "candidate" } do
    local f = program.captures[side].files[1]
    module_pins[#module_pins + 1] = { path = work .. "/" .. side .. "/" .. f.path, sha256 = f.sha256 }
  end
  module_pins[#module_pins + 1] = { path = harness_path, sha256 = program.harness.sha256 }

  local function remaining() return opts.deadline_at - sys.monotonic_ms() end
  if remaining() <= 0 then return finish("unknown", "deadline", "no time left after preparation") end
  local binary = opts.dir .. "/harness"
  local build = opts.ctx.run_process {
    exe = chain.tools.rustc.path,
    argv = { chain.tools.rustc.path, "--edition=2021", "-C", "opt-level=1", "-C", "debuginfo=0", "--crate-type=bin",
             "--crate-name=vkit_harness", "-o", binary, harness_path },
    env = env, cwd = work, pins = pins(chain, module_pins),
    deadline_ms = math.max(1, math.min(limits.build_deadline_ms, remaining())), output_cap = limits.output_cap,
  }
  record.build = { status = build.status, code = build.code or json.null, wall_ms = build.wall_ms or json.null }
  assert(fs.write_atomic(opts.dir .. "/build.stderr", build.stderr or ""))
  if build.status == "cancelled" or build.status == "timeout" then return finish("unknown", build.status) end
  if build.status ~= "exited" or build.code ~= 0 then
    return finish("infrastructure_failure", "build", ("rustc did not build the harness (%s %s)"):format(build.status,
      tostring(build.code)))
  end
  record.harness_binary = { path = "harness", sha256 = assert(hash.file(binary)) }
  if remaining() <= 0 then return finish("unknown", "deadline", "no time left to run the harness") end
  local run = opts.ctx.run_process {
    exe = binary, argv = { binary }, env = env, cwd = work,
    pins = { exe_sha256 = record.harness_binary.sha256, files = module_pins },
    deadline_ms = math.max(1, remaining()), output_cap = limits.output_cap,
  }
  record.run = { status = run.status, code = run.code or json.null, wall_ms = run.wall_ms or json.null }
  assert(fs.write_atomic(opts.dir .. "/run.stdout", run.stdout or ""))
  if run.status == "cancelled" or run.status == "timeout" then return finish("unknown", run.status) end
  if run.status ~= "exited" then return finish("infrastructure_failure", run.status, "the harness did not exit normally") end
  local out = run.stdout or ""
  local checked = out:match "^checked (%d+)\n$"
  if run.code == 0 and checked then
    record.inputs_checked = math.tointeger(tonumber(checked))
    if record.inputs_checked ~= require("vkit.change.ranges").count(bound.intent.contract.domain.inputs) then
      return finish("infrastructure_failure", "protocol", "the harness checked a different number of inputs")
    end
    record.exhaustive_native = true
    return finish("all_inputs_conform", "all-accepted-inputs-checked")
  end
  local id, input, base, candidate = out:match "^violation (%S+) (%d+) (%d+) (%d+)\n$"
  if run.code == 1 and id then
    record.violation = { assertion = id, input = math.tointeger(tonumber(input)), base_output = math.tointeger(tonumber(base)),
                         candidate_output = math.tointeger(tonumber(candidate)) }
    record.inputs_checked = checked_through(domain, record.violation.input)
    return finish("observed_violation", id, ("input %s: %s (base %s, candidate %s)"):format(input, id, base, candidate))
  end
  return finish("infrastructure_failure", "protocol", "the harness printed neither 'checked N' nor one violation line")
end

return M
