--- The report model of an external check or replay (seed 000): the
--  checker's verdict on each accepted obligation, what BLOCKED it, and the
--  retained evidence, requests, receipt and logs with their digests.
local json = require "vkit.json"
local records = require "vkit.report.records"
local claims = require "vkit.protocol.claims"

local M = {}

-- The attempt's files a reviewer checks; the snapshots are identified by
-- their input digest instead (they hold the captured inputs).
local RETAINED = { "job.json", "capture.json", "identity.json", "producer-request.json", "checker/request.json",
                   "checker/receipt.json", "result.json" }

local function obligations(model, request, receipt, result)
  local accepted = request and json.kind(request.obligations) == "array" and request.obligations or {}
  local results = {}
  if receipt and json.kind(receipt.obligations) == "array" then
    for _, o in ipairs(receipt.obligations) do
      if type(o) == "table" and type(o.name) == "string" then results[o.name] = o.result end
    end
  end
  local method = {
    name = "external checker",
    result = result and (result.checker_verdict ~= json.null and result.checker_verdict or result.reason) or model.status,
    passing = model.outcome == "PASS",
    findings = {},
  }
  local ok = 0
  for _, name in ipairs(accepted) do
    local r = results[name]
    if r == "accepted" and method.passing then ok = ok + 1 end
    if r ~= "accepted" or not method.passing then
      method.findings[#method.findings + 1] = {
        title = ("obligation %s"):format(name),
        detail = r and ("the checker's result: %s"):format(tostring(r)) or "no accepted result in a valid receipt",
      }
    end
  end
  method.coverage = {
    checked = ok, total = #accepted, unit = "obligations", complete = method.passing and ok == #accepted,
    text = ("%d of %d accepted obligations established by a valid accepting receipt"):format(ok, #accepted),
  }
  method.findings_total = #method.findings
  return method
end

function M.model(store, run)
  local model = records.base(run, run.job.kind == "external-replay" and "external replay" or "external check")
  local p = run.job.payload
  model.subject = {
    { label = "component", value = p.component }, { label = "check", value = p.check_id },
    { label = "commit", value = p.commit },
  }
  if p.of_run then model.subject[#model.subject + 1] = { label = "replay of", value = p.of_run } end
  local dir = records.attempt_dir(run)
  local result = dir and records.read_json(dir .. "/result.json")
  local request = dir and records.read_json(dir .. "/checker/request.json")
  local receipt = dir and records.read_json(dir .. "/checker/receipt.json")
  if type(result) == "table" then
    model.reason, model.message = result.reason, result.message
    model.subject[#model.subject + 1] = { label = "input digest", value = tostring(result.input_digest) }
    model.subject[#model.subject + 1] = { label = "evidence digest", value = tostring(result.evidence_digest) }
    if json.kind(result.sandbox) == "object" then
      model.subject[#model.subject + 1] = { label = "sandbox", value = ("producer %s, checker %s"):format(
        tostring(result.sandbox.producer or "not run"), tostring(result.sandbox.checker or "not run")) }
    end
  elseif model.error then
    model.reason, model.message = "failed", model.error
  end
  local method = obligations(model, request, receipt, type(result) == "table" and result or nil)
  if type(result) == "table" and not method.passing and result.reason then
    table.insert(method.findings, 1, { title = result.reason, detail = tostring(result.message) })
    method.findings_total = #method.findings
  end
  if type(result) == "table" and json.kind(result.tampering) == "array" then
    for _, tamper in ipairs(result.tampering) do
      method.findings[#method.findings + 1] = { title = "run directory tampered: " .. tostring(tamper.path),
        detail = ("%s, found when %s"):format(tostring(tamper.kind), tostring(tamper.found_when)) }
    end
    method.findings_total = #method.findings
  end
  model.methods = { method }
  model.passing = method.passing
  model.headline = ("%s %s/%s: %s"):format(model.outcome or model.status:upper(), p.component, p.check_id,
    model.message or model.error or model.status)
  if model.passing then model.established = { claims.ESTABLISHES } end
  model.not_established = { claims.DOES_NOT }
  if dir then
    local recorded = {}
    if type(result) == "table" and json.kind(result.evidence) == "array" then
      for _, e in ipairs(result.evidence) do recorded["evidence/" .. tostring(e.path)] = e.sha256 end
    end
    for _, rel in ipairs(RETAINED) do
      local a = records.artifact(dir .. "/" .. rel)
      if not a.missing then model.artifacts[#model.artifacts + 1] = a end
    end
    records.add_tree(model, dir .. "/evidence", recorded, "evidence/")
    records.add_tree(model, dir .. "/logs", nil, "logs/")
  end
  return model
end

return M
