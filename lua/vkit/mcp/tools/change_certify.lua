--- change_certify: seed 001's named MCP tool.  The same request as
--  `vkit change certify`, through the same job store, worker and retry
--  path (vkit.change.cli.submit); the result carries the fields the CLI's
--  --json prints.
local S = require "vkit.mcp.schemas"
local results = require "vkit.mcp.results"
local runs = require "vkit.mcp.runs"
local change_runs = require "vkit.runs.change"
local certify = require "vkit.certify"

return {
  name = "change_certify",
  title = "Certify a change against its accepted intent",
  description = "Binds a change request (base and candidate commits, accepted intent digest, finite claim) to the "
    .. "accepted intent at the host's exact trusted target commit and queues the selected certification methods as one "
    .. "durable shadow job in the project's job store. Returns the run summary at once, or after waiting up to `wait` "
    .. "seconds; follow it with run_wait / run_get. Each method reports its coverage (\"checked N of M accepted "
    .. "inputs (method)\"); only all_inputs_conform (or verified) means every accepted input was checked and the "
    .. "candidate is inside its language's pure-function profile; unadmitted_conform means every input conformed but "
    .. "the candidate is outside it (candidate_admission names the rule and line), and all_inputs_conform_trusted "
    .. "that the host accepted such a candidate (trust_candidate_code, a host-side option no tool argument sets). "
    .. "source_proof and approval_authority are always false. A blocked or failed run is reported with isError: true; "
    .. "so is a request that is not a change request document, a trusted_target_oid that is not a full commit id, or a "
    .. "Kani pin not in the closed format, and then nothing is queued.",
  annotations = { readOnlyHint = false, destructiveHint = false, idempotentHint = false, openWorldHint = false },
  input = S.object({
    request = S.typed("object", "the change request document: {schema_version: 1, base, candidate (full commit ids), "
      .. "intent (accepted revision digest), claim (a contract)}; see docs/change.md"),
    trusted_target_oid = S.typed("string", "the host's exact trusted target commit, a full commit id (40 or 64 "
      .. "lowercase hex digits); it must equal the request's base", { pattern = "^([0-9a-f]{40}|[0-9a-f]{64})$" }),
    method = S.enum(certify.METHODS, "auto (default) runs finite_paired and exhaustive, and adds rust_kani only where "
      .. "it can run; an explicitly requested method that cannot run gives a blocked run, never a fallback",
      { default = "auto" }),
    kani_toolchain = S.typed("object", "the host-owned, closed-format Kani toolchain pin document (what "
      .. "--kani-toolchain PIN.json holds); a pin not in the closed format is refused"),
    wait = S.wait(0, "seconds to wait for the run before answering (0..60, default 0); the job continues either way"),
  }, { "request", "trusted_target_oid" }, { additionalProperties = false }),
  output = S.shadow(),
  run = function(args, ctx)
    local store, message = ctx.project:store()
    if not store then return results.refused(message) end
    local id
    id, message = change_runs.submit(store, { request = args.request, trusted_target = args.trusted_target_oid,
                                             method = args.method, kani_toolchain = args.kani_toolchain })
    if not id then return results.refused(message) end
    return runs.answer(ctx, id, args.wait or 0)
  end,
}
