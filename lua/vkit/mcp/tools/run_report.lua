--- run_report: a run's self-contained report (vkit.report), as `vkit run
--  report --run ID --format F` writes it.
local json = require "vkit.json"
local S = require "vkit.mcp.schemas"
local results = require "vkit.mcp.results"
local runs = require "vkit.mcp.runs"
local report = require "vkit.report"

return {
  name = "run_report",
  title = "Report what a run established",
  description = "Returns a run's report: what was verified, each method with its coverage (inputs checked of "
    .. "accepted), the findings, what is and is not established, and the retained artifacts with their SHA-256 "
    .. "(hashed now; one changed since the run recorded it is marked). format md (default), text, html, junit, "
    .. "sarif, github or json; the report is the text content, and for json also the structured content.",
  annotations = { readOnlyHint = true, idempotentHint = true, openWorldHint = false },
  input = S.object({
    run_id = S.run_name(),
    format = S.enum(report.FORMATS, "md (default), text, html, junit, sarif, github or json", { default = "md" }),
  }, { "run_id" }, { additionalProperties = false }),
  output = S.object({
    run_id = S.typed "string",
    format = S.typed "string",
    report = S.typed("string", "the rendered report"),
    passing = S.typed("boolean", "whether the run makes its claim"),
  }, { "run_id", "format", "report", "passing" }),
  run = function(args, ctx)
    local store, message = ctx.project:store()
    if not store then return results.refused(message) end
    local run, refused = runs.named(store, args.run_id)
    if not run then return refused end
    local model
    model, message = report.model(store, run)
    if not model then return results.refused(message) end
    local format = args.format or "md"
    return results.ok(json.object { run_id = run.id, format = format, report = report.render(model, format),
                                    passing = model.passing == true })
  end,
}
