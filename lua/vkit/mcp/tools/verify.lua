--- verify: seed 000's external verifier for one component, as
--  `vkit verify COMPONENT --json` (vkit.protocol.cli.submit_component):
--  one durable job per accepted check, queued at the project's HEAD commit.
local json = require "vkit.json"
local S = require "vkit.mcp.schemas"
local results = require "vkit.mcp.results"
local runs = require "vkit.mcp.runs"
local external_runs = require "vkit.runs.external"
local claims = require "vkit.protocol.claims"

return {
  name = "verify",
  title = "Run a component's external verification",
  description = "Resolves the component's version 2 claim from verification/manifest.json at the project's HEAD "
    .. "commit, queues one job per accepted check (pinned producer, then an independent pinned checker whose receipt "
    .. "is validated), waits up to `wait` seconds and returns the run summaries; the jobs continue in the background "
    .. "(follow them with run_wait). PASS only on a valid accepting receipt; anything else is BLOCKED, which is "
    .. "reported with isError: true. Give component_policy_sha256 and package_sha256 to insist on the exact pins you "
    .. "reviewed: when the manifest's differ nothing is queued and the answer is an error naming the pin.",
  annotations = { readOnlyHint = false, destructiveHint = false, idempotentHint = false, openWorldHint = false },
  input = S.object({
    component = S.typed("string", "the component name in verification/manifest.json", { minLength = 1 }),
    wait = S.wait(0, "seconds to wait for the runs before answering (0..60, default 0)"),
    component_policy_sha256 = S.typed("string", "the exact SHA-256 the manifest must pin the component policy with",
      { pattern = "^[0-9a-f]{64}$" }),
    package_sha256 = S.typed("string", "the exact SHA-256 the manifest must pin the package with",
      { pattern = "^[0-9a-f]{64}$" }),
  }, { "component" }, { additionalProperties = false }),
  output = S.object({
    runs = S.array_of(S.run(), "one run per accepted check"),
    establishes = S.typed "string",
    does_not_establish = S.typed "string",
  }, { "runs", "establishes", "does_not_establish" }),
  run = function(args, ctx)
    local store, message = ctx.project:store()
    if not store then return results.refused(message) end
    local ids
    ids, message = external_runs.submit_component(store, store.project, args.component,
      { policy_sha256 = args.component_policy_sha256, package_sha256 = args.package_sha256 })
    if not ids then return results.refused(message) end
    store:ensure_worker()
    local waited
    waited, message = runs.wait_all(store, ids, args.wait or 0, ctx.progress, ctx.progress_interval_ms)
    if not waited then return results.refused(message) end
    local out = json.object { runs = json.array(), establishes = claims.ESTABLISHES,
                              does_not_establish = claims.DOES_NOT }
    local refusals = {}
    for i, run in ipairs(waited) do
      out.runs[i] = runs.summary(store, run)
      refusals[#refusals + 1] = runs.refusal(run, out.runs[i])
    end
    if #refusals > 0 then return results.refused(table.concat(refusals, "\n"), out) end
    return results.ok(out)
  end,
}
