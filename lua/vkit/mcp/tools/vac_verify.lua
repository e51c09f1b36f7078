--- vac_verify: seed 003's structural verification of a VAC bundle (a
--  directory or a .tar/.tar.gz/.tgz archive); the result is the object
--  `vkit vac verify --json` prints.
local json = require "vkit.json"
local S = require "vkit.mcp.schemas"
local results = require "vkit.mcp.results"

return {
  name = "vac_verify",
  title = "Verify a VAC evidence bundle",
  description = "Structurally verifies a VAC capability evidence bundle (manifest schema, artifact presence and "
    .. "sha256, bundle closure, stated limitations, and every declared result recomputed from the artifacts). "
    .. "Structural verification is not semantic replay; the result echoes the bundle's replay block. A refused "
    .. "bundle is reported with isError: true and its named reasons.",
  annotations = { readOnlyHint = true, idempotentHint = true, openWorldHint = false },
  input = S.object({
    bundle = S.typed("string", "the bundle directory or archive; a relative path is taken from the project directory",
      { minLength = 1 }),
  }, { "bundle" }, { additionalProperties = false }),
  output = S.object({
    bundle = S.typed "string",
    verdict = S.enum({ "pass", "fail" }),
    reasons = S.array_of(S.typed "string", "the sorted set of failure reason names"),
    failures = S.array_of(S.object({ reason = S.typed "string", detail = S.typed "string" }, { "reason", "detail" })),
    structural_only = S.enum({ true }),
    statement = S.typed "string",
    replay = S.object({
      commands = S.array_of(S.typed "string"),
      expected = S.typed { "string", "null" },
      issuer_commit = S.typed { "string", "null" },
    }, { "commands", "expected", "issuer_commit" }, { type = json.array { "object", "null" } }),
  }, { "bundle", "verdict", "reasons", "failures", "structural_only", "statement", "replay" }),
  run = function(args, ctx)
    local result, why = require("vkit.vac").verify(ctx.project:path(args.bundle))
    if not result then return results.refused(why) end
    local doc = assert(json.decode(require("vkit.vac.output").json(result)))
    if doc.verdict ~= "pass" then
      return results.refused(("bundle %s refused: %s"):format(doc.bundle, table.concat(doc.reasons, ", ")), doc)
    end
    return results.ok(doc)
  end,
}
