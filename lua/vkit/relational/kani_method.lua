--- The rust_kani certification method: preparation, then
-- run_kani_relational with the host-supplied toolchain pin.
local json = require "vkit.json"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local prepare = require "vkit.relational.prepare"
local kani = require "vkit.relational.kani"
local toolchain = require "vkit.relational.toolchain"
local limits = require("vkit.policy").limits.kani

local M = {}

M.REPORT = "kani-method.v1.json"

--- opts = {repo, dir, ctx, kani_toolchain (decoded pin), deadline_at}
function M.run(bound, opts)
  local record = { schema = "vkit.kani-method.v1", source_proof = false, native_compiler_correspondence = false,
                   approval_authority = false }
  local function finish(status, reason, message)
    record.status, record.reason, record.message = status, reason, message or json.null
    assert(fs.write_atomic(opts.dir .. "/" .. M.REPORT, json.encode(record, { indent = 2 }) .. "\n"))
    return { status = status, reason = reason, report = M.REPORT }
  end
  local program, message, code = prepare.from_bound(opts.repo, bound, "kani")
  if not program then return finish("unknown", code, message) end
  record.program = prepare.to_json(program)
  local pin, perr = toolchain.parse(json.encode(opts.kani_toolchain))
  if not pin then return finish("unknown", "invalid_pin", tostring(perr)) end
  local remaining = opts.deadline_at and (opts.deadline_at - sys.monotonic_ms()) or limits.max_deadline_ms
  local report = kani.run_kani_relational(program, pin, opts.dir .. "/kani",
    { deadline_ms = math.max(1, math.min(limits.max_deadline_ms, remaining)) })
  record.kani = report
  return finish(report.outcome, report.reason, report.message)
end

return M
