--- Reports are views: one model of what a run established, built from the
--  retained records, and pure renderings of it (text, Markdown, HTML, JSON,
--  JUnit XML).  The CLI (`vkit run show`, `vkit run report`), the REPL and
--  MCP all call these, so they can never disagree.
--
--   model(store, run)        -> model | nil, message   (reads the retained records)
--   vac_model(doc, path)     -> model                  (a VAC verification's JSON result)
--   render(model, format [, style]) -> string          (format: text, md, html, json, junit;
--                                                       style: vkit.terminal.style, text only)
--
-- The model (schema "vkit-run-report.v1"):
--   kind, run_id, status, outcome, passing (the strongest claim the run
--   makes holds), headline (one line), reason, message,
--   subject = {{label, value}, ...}            what was verified
--   methods = {{name, result, passing, coverage = {checked, total, unit,
--              text, complete}, findings = {{title, detail, fields =
--              {{label, value}}}}, findings_total, report = {path, sha256}}}
--   domain = {from, to, checked = {{lo, hi}}, violating = {n...}} | nil
--   established = {sentences}, not_established = {sentences}
--   artifacts = {{path (absolute), sha256, size, changed}}
local M = {}

M.FORMATS = { "text", "md", "html", "json", "junit" }

local RENDERERS = { text = "vkit.report.text", md = "vkit.report.markdown", html = "vkit.report.html",
                    json = "vkit.report.json", junit = "vkit.report.junit" }

local KINDS = { ["external-check"] = "vkit.report.external", ["external-replay"] = "vkit.report.external",
                ["change-certify"] = "vkit.report.change", probe = "vkit.report.probe" }

function M.model(store, run)
  local module = KINDS[run.job.kind]
  if not module then return nil, ("no report for runs of kind %s"):format(run.job.kind) end
  return require(module).model(store, run)
end

function M.vac_model(doc, path)
  return require("vkit.report.vac").model(doc, path)
end

function M.render(model, format, style)
  local module = RENDERERS[format]
  if not module then error(("unknown report format %q (one of %s)"):format(tostring(format), table.concat(M.FORMATS, ", ")), 2) end
  return require(module).render(model, style)
end

return M
