--- Run reports: one model of what a run established, built from its retained
-- records, and pure renderings of it.  `vkit run show`, `vkit run report`,
-- the REPL and MCP use these same functions, so they never disagree.
-- @module vkit.report
local report = require "vkit.report"
local handles = require "vkit.api.handles"

local M = {}

--- The formats `render` writes: `text`, `md`, `html`, `json`, `junit`.
-- @table FORMATS
M.FORMATS = {}
for i, f in ipairs(report.FORMATS) do M.FORMATS[i] = f end

--- The report model of a run (schema `vkit-run-report.v1`): its kind,
-- outcome, whether its strongest claim holds (`passing`), each method with
-- its coverage and findings, the accepted domain as checked / omitted /
-- violating inputs, what is and is not established, and the retained
-- artifacts with their SHA-256 (hashed now, beside the digest the run recorded).
-- @tparam Store store `vkit.store.open`'s
-- @tparam string|table run a run id, or a run `store:get` returned
-- @treturn table the model
-- @return nil, message (no such run, a kind without a report)
function M.model(store, run)
  local internal = handles.internal(store)
  if type(run) == "string" then
    local got, message = internal:get(run)
    if not got then return nil, message end
    run = got
  end
  return report.model(internal, run)
end

--- The model of a VAC verification's JSON result (the document `vkit vac verify` prints as JSON).
-- @tparam table doc
-- @string path the bundle's path
-- @treturn table the model
function M.vac_model(doc, path)
  return report.vac_model(doc, path)
end

--- Renders a model (plain text without terminal colour; Markdown, self-contained
-- HTML, JSON or JUnit XML).
-- @tparam table model
-- @string format one of `FORMATS`
-- @treturn string
-- @raise on an unknown format
function M.render(model, format)
  return report.render(model, format)
end

return M
