--- Reports are views: one model of what a run established, built from the
--  retained records, and pure renderings of it (text, Markdown, HTML, JSON,
--  JUnit XML).  The CLI (`vkit run show`, `vkit run report`), the REPL and
--  MCP all call these, so they can never disagree.
--
--   model(store, run)        -> model | nil, message   (reads the retained records)
--   vac_model(doc, path)     -> model                  (a VAC verification's JSON result)
--   render(model, format [, style]) -> string          (format: text, md, html, json, junit,
--                                                       sarif, github; style: vkit.terminal.style,
--                                                       text only)
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
--   findings = one list for the run, merged across methods (vkit.report.findings)
--   target = {file, function, language, line, base, candidate} (change runs; full ids)
--   artifacts = {{path (absolute), display (relative to the project), sha256, size, changed}}
local findings = require "vkit.report.findings"

local M = {}

M.FORMATS = { "text", "md", "html", "json", "junit", "sarif", "github" }

local RENDERERS = { text = "vkit.report.text", md = "vkit.report.markdown", html = "vkit.report.html",
                    json = "vkit.report.json", junit = "vkit.report.junit", sarif = "vkit.report.sarif",
                    github = "vkit.report.github" }

-- A path as a reviewer can find it in the project (".vkit/runs/…"), not as
-- it is on the machine that ran the check; absolute when outside it.
local function relative(path, root)
  if type(path) ~= "string" or type(root) ~= "string" or root == "" then return path end
  root = root:gsub("/+$", "")
  if path:sub(1, #root + 1) == root .. "/" then return path:sub(#root + 2) end
  return path
end

local KINDS = { ["external-check"] = "vkit.report.external", ["external-replay"] = "vkit.report.external",
                ["change-certify"] = "vkit.report.change", probe = "vkit.report.probe" }

function M.model(store, run)
  local module = KINDS[run.job.kind]
  if not module then return nil, ("no report for runs of kind %s"):format(run.job.kind) end
  local model, message = require(module).model(store, run)
  if not model then return nil, message end
  model.findings = findings.of(model)
  for _, a in ipairs(model.artifacts) do a.display = relative(a.path, store.project) end
  for _, m in ipairs(model.methods) do
    if m.report then m.report.display = relative(m.report.path, store.project) end
  end
  return model
end

--- A certification's summary as every front gives it (`run show --json`,
--  `change certify --json`, MCP's run_get and run_wait): the compact shadow
--  summary (vkit.runs.change) and the causes why inputs could not be
--  checked, one per method and side (vkit.report.causes.of_model).
function M.certification_summary(store, run)
  local summary = require("vkit.runs.change").shadow(store, run)
  summary.causes = require("vkit.report.causes").of_model((M.model(store, run)))
  return summary
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
