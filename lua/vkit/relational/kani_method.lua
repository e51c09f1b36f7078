--- The rust_kani certification method: preparation, then
-- run_kani_relational with the host-supplied toolchain pin.
local json = require "vkit.json"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local prepare = require "vkit.relational.prepare"
local kani = require "vkit.relational.kani"
local toolchain = require "vkit.relational.toolchain"
local coverage = require "vkit.change.coverage"
local limits = require("vkit.policy").limits.kani

local M = {}

M.REPORT = "kani-method.v1.json"

--- opts = {repo, dir, ctx = {run_process, cancelled}, kani_toolchain
--  (decoded pin), kani_deadline_ms (the engine's own deadline, <= 300 s)}.
--  The deadline is Kani's own, for the engine process alone: whatever
--  another method used does not shorten it.  The run's cancellation
--  reaches the engine through ctx.run_process.
function M.run(bound, opts)
  local started = sys.monotonic_ms()
  local deadline_ms = math.min(opts.kani_deadline_ms or limits.max_deadline_ms, limits.max_deadline_ms)
  local accepted = require("vkit.change.ranges").count(bound.intent.contract.domain.inputs)
  local record = { schema = "vkit.kani-method.v1", source_proof = false, native_compiler_correspondence = false,
                   approval_authority = false, engine_deadline_ms = deadline_ms }
  local function finish(status, reason, message)
    record.status, record.reason, record.message = status, reason, message or json.null
    record.coverage = coverage.record("rust_kani", status == "verified" and accepted or 0, accepted, "model")
    assert(fs.write_atomic(opts.dir .. "/" .. M.REPORT, json.encode(record, { indent = 2 }) .. "\n"))
    return { status = status, reason = reason, report = M.REPORT, coverage = record.coverage, cuts = json.array(),
             budget = { engine_deadline_ms = deadline_ms, elapsed_ms = sys.monotonic_ms() - started } }
  end
  local program, message, code = prepare.from_bound(opts.repo, bound, "kani")
  if not program then return finish("unknown", code, message) end
  record.program = prepare.to_json(program)
  local pin, perr = toolchain.parse(json.encode(opts.kani_toolchain))
  if not pin then return finish("unknown", "invalid_pin", tostring(perr)) end
  if opts.ctx and opts.ctx.cancelled() then return finish("unknown", "cancelled", "the run was cancelled") end
  local report = kani.run_kani_relational(program, pin, opts.dir .. "/kani",
    { deadline_ms = deadline_ms, run_process = opts.ctx and opts.ctx.run_process })
  record.kani = report
  return finish(report.outcome, report.reason, report.message)
end

return M
