--- The report model of a VAC verification (seed 003), from the JSON
--  result `vkit vac verify --json` prints: structural verification only,
--  every failure named, the bundle's replay block as what is not
--  established.
local json = require "vkit.json"
local records = require "vkit.report.records"

local M = {}

function M.model(doc, path)
  local passing = doc.verdict == "pass"
  local model = {
    schema = "vkit-run-report.v1", kind = "vac-verify", kind_title = "VAC structural verification",
    run_id = doc.bundle, status = "done", outcome = passing and "PASS" or "FAIL", passing = passing,
    reason = passing and "structural-pass" or table.concat(doc.reasons, ", "),
    message = passing and "the bundle is internally honest: every declared number re-earned from its artifacts"
      or ("%d named failure(s)"):format(#doc.failures),
    subject = { { label = "bundle", value = doc.bundle } },
    established = {}, not_established = { doc.statement }, artifacts = {},
  }
  if json.kind(doc.replay) == "object" then
    if doc.replay.issuer_commit ~= json.null then
      model.subject[#model.subject + 1] = { label = "issuer commit", value = doc.replay.issuer_commit }
    end
    for _, c in ipairs(doc.replay.commands) do
      model.not_established[#model.not_established + 1] = "replay (not run by vkit): $ " .. c
    end
  end
  local method = { name = "structural verification", result = doc.verdict, passing = passing, findings = {},
                   coverage = { unit = "bundles", checked = 1, total = 1, complete = true,
                                text = passing and "every check of the bundle passed"
                                  or ("%d failure(s): %s"):format(#doc.failures, table.concat(doc.reasons, ", ")) } }
  for i, f in ipairs(doc.failures) do method.findings[i] = { title = f.reason, detail = f.detail } end
  method.findings_total = #method.findings
  model.methods = { method }
  if passing then
    model.established = { "manifest schema, artifact presence and sha256, bundle closure, stated limitations, "
      .. "stamp agreement, and every declared result recomputed from the artifacts" }
  end
  model.headline = ("%s %s"):format(model.outcome, doc.bundle)
  if path and require("vkit.fs").lstat(path) and require("vkit.fs").lstat(path).kind == "dir" then
    records.add_tree(model, path)
  elseif path then
    model.artifacts[1] = records.artifact(path)
  end
  return model
end

return M
