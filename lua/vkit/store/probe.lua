--- The "probe" job kind: checks that the store and its worker work.
--
-- It runs no process: it waits payload.ms milliseconds (at most 60 s),
-- watching for cancellation (its one progress line says so), writes probe.json into its attempt directory,
-- and reports outcome "ok" (or raises when payload.fail is set, to show how
-- a failing handler is recorded).
local sys = require "vkit.sys"
local fs = require "vkit.fs"
local json = require "vkit.json"

local M = {}

--- A probe's "ok" is believed only with the probe.json its attempt wrote.
function M.outcome_from_evidence(run, n, files)
  local bytes, message = files.read("probe.json", 4096)
  if not bytes then return nil, "probe.json", "report-missing", "the attempt does not retain it: " .. tostring(message) end
  local doc = json.decode(bytes)
  if json.kind(doc) ~= "object" or doc.attempt ~= n then
    return nil, "probe.json", "report-invalid", ("it is not attempt %d's record"):format(n)
  end
  return "ok"
end

function M.run(job, ctx)
  local ms = math.min(math.tointeger(job.payload.ms) or 0, 60000)
  local deadline = sys.monotonic_ms() + ms
  ctx.progress(("probe: waiting %d ms"):format(ms))
  while sys.monotonic_ms() < deadline do
    if ctx.cancelled() then return { outcome = "cancelled" } end
    sys.sleep(0.02)
  end
  if ctx.cancelled() then return { outcome = "cancelled" } end
  if job.payload.fail then error("probe asked to fail: " .. tostring(job.payload.fail)) end
  local dir <close> = assert(fs.opendir(ctx.attempt_dir))
  assert(dir:write_atomic("probe.json", json.encode({ attempt = ctx.attempt, waited_ms = ms }, { indent = 2 }) .. "\n"))
  return { outcome = "ok", summary = { waited_ms = ms, attempt = ctx.attempt } }
end

return M
