--- run_wait: wait for a run within a bound (0..60 s), then its summary.
--  The only tool whose purpose is to wait; it never waits past its bound.
local S = require "vkit.mcp.schemas"
local runs = require "vkit.mcp.runs"
local policy = require("vkit.policy").mcp

return {
  name = "run_wait",
  title = "Wait for a run",
  description = "Waits up to `wait` seconds (0..60) for a run to finish, then returns its summary as run_get does; "
    .. "a run still queued or running after the bound is returned as it stands (status tells), and the job continues. "
    .. "Requests carrying a progressToken receive a progress notification every second while waiting.",
  annotations = { readOnlyHint = true, openWorldHint = false },
  input = S.object({
    run_id = S.run_name(),
    wait = S.wait(policy.run_wait_default_seconds,
      ("seconds to wait at most (0..60, default %d)"):format(policy.run_wait_default_seconds)),
  }, { "run_id" }, { additionalProperties = false }),
  output = S.run(),
  run = function(args, ctx)
    return runs.answer(ctx, args.run_id, args.wait or policy.run_wait_default_seconds)
  end,
}
