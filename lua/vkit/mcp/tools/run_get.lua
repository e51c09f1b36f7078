--- run_get: one run's summary now (seed 001: the compact shadow summary
--  for a certification run).
local S = require "vkit.mcp.schemas"
local runs = require "vkit.mcp.runs"

return {
  name = "run_get",
  title = "Get a run's summary",
  description = "Returns a run's current summary from the project's job store without waiting. A certification run "
    .. "is reported as its compact shadow summary (requirement citation, intent digest, each method result and report "
    .. "reference, source_proof: false, approval_authority: false; no method plan or input vectors). A run that lost "
    .. "its worker gets a new worker, which retries it. A blocked or failed run is reported with isError: true.",
  annotations = { readOnlyHint = true, openWorldHint = false },
  input = S.object({
    run_id = S.run_name(),
  }, { "run_id" }, { additionalProperties = false }),
  output = S.run(),
  run = function(args, ctx)
    return runs.answer(ctx, args.run_id, 0)
  end,
}
