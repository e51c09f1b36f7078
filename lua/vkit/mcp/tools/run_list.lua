--- run_list: the runs of the project's job store, newest first, as `vkit
--  run list --json` prints them (a corrupt run listed as such, never
--  skipped).
local json = require "vkit.json"
local S = require "vkit.mcp.schemas"
local results = require "vkit.mcp.results"
local runs = require "vkit.mcp.runs"
local store_mod = require "vkit.store"

return {
  name = "run_list",
  title = "List the job store's runs",
  description = "Lists the runs in the project's job store, newest first (at most `limit`, default 20): each run's "
    .. "summary as run_get returns it (a certification as its compact shadow summary, with each method's coverage). "
    .. "A run whose records cannot be believed is listed with status \"corrupt\" and the file and reason, never "
    .. "skipped; the answer is then isError: true.",
  annotations = { readOnlyHint = true, openWorldHint = false },
  input = S.object({
    limit = S.typed("integer", "at most this many runs, newest first (1..1000, default 20)",
      { minimum = 1, maximum = 1000, default = 20 }),
  }, {}, { additionalProperties = false }),
  output = S.object({
    runs = S.array_of(S.object({ run_id = S.typed "string", status = S.typed "string" }, { "run_id", "status" }),
      "the runs, newest first: summaries, or {run_id, status: \"corrupt\", corrupt: {file, reason, message}}"),
    total = S.typed("integer", "how many runs the store holds"),
  }, { "runs", "total" }),
  run = function(args, ctx)
    local store, message = ctx.project:store()
    if not store then return results.refused(message) end
    local entries = store:entries()
    local out = json.object { runs = json.array(), total = #entries }
    local corrupt = {}
    for i, entry in ipairs(entries) do
      if i > (args.limit or 20) then break end
      if entry.run then
        out.runs[#out.runs + 1] = runs.summary(store, entry.run)
      else
        out.runs[#out.runs + 1] = store_mod.corrupt_summary(entry.corrupt)
        corrupt[#corrupt + 1] = ("run %s is corrupt: %s: %s"):format(entry.corrupt.run_id, entry.corrupt.file,
          entry.corrupt.reason)
      end
    end
    if #corrupt > 0 then return results.refused(table.concat(corrupt, "\n"), out) end
    return results.ok(out)
  end,
}
