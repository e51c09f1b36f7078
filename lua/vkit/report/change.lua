--- The report model of a change certification (seed 001): the change and
--  its accepted intent, each method with its coverage and findings (read
--  from the method's own retained report), what blocked it, and the
--  retained reports with their digests.
local json = require "vkit.json"
local records = require "vkit.report.records"

local M = {}

M.FINDINGS_KEPT = 200

-- A method result that makes the method's claim for every accepted input,
-- and one that holds only for the inputs sampled (never read as a pass:
-- JUnit shows it skipped, with its coverage).
M.ALL_INPUTS_HOLD = { all_inputs_conform = true, verified = true }
M.SAMPLES_HOLD = { samples_within_contract = true, observed_conformance = true, samples_conform = true }

local function present(v) return v ~= nil and v ~= json.null end

-- The list a method report keeps its findings in: an array, or a listed
-- object {items | list, total}.
local function listed(v)
  if json.kind(v) == "array" then return v, #v end
  if json.kind(v) == "object" then
    local items = v.items or v.list or v.first
    if json.kind(items) == "array" then return items, math.tointeger(v.total) or #items end
  end
  return {}, 0
end

local function finding_of(f)
  if type(f) ~= "table" then return { title = tostring(f), detail = "" } end
  local fields = {}
  for _, k in ipairs { "base", "candidate", "allowed", "rule" } do
    if present(f[k]) then fields[#fields + 1] = { label = k, value = json.kind(f[k]) == "array" and json.encode(f[k]) or tostring(f[k]) } end
  end
  return { title = present(f.input) and ("input " .. tostring(f.input)) or tostring(f.rule or f.verdict or "finding"),
           detail = tostring(f.message or f.reason or ""), fields = fields, input = math.tointeger(f.input) }
end

local function method_model(dir, m)
  local coverage = json.kind(m.coverage) == "object" and m.coverage or nil
  local method = {
    name = m.method, result = m.result, findings = {},
    coverage = coverage and { checked = coverage.checked, total = coverage.accepted, unit = "inputs",
                              text = coverage.statement, complete = coverage.checked == coverage.accepted } or nil,
    notes = {},
  }
  for _, cut in ipairs(json.kind(m.cuts) == "array" and m.cuts or {}) do
    local ok, coverage_mod = pcall(require, "vkit.change.coverage")
    method.notes[#method.notes + 1] = ok and coverage_mod.cut_sentence and coverage_mod.cut_sentence(cut)
      or json.encode(cut)
  end
  if present(m.reason) then method.notes[#method.notes + 1] = "reason: " .. tostring(m.reason) end
  if dir and type(m.report) == "string" then
    local path = dir .. "/" .. m.report
    method.report = { path = path, sha256 = m.report_sha256 }
    local doc = records.read_json(path)
    if type(doc) == "table" then
      local total = 0
      for _, key in ipairs { "violations", "findings" } do
        local items, n = listed(doc[key])
        for _, f in ipairs(items) do
          local finding = finding_of(f)
          if (f.verdict == nil or f.verdict == "violation") and #method.findings < M.FINDINGS_KEPT then
            method.findings[#method.findings + 1] = finding
          end
        end
        if n > 0 then total = math.max(total, n) break end
      end
      method.findings_total = math.max(total, #method.findings)
    end
  end
  method.findings_total = method.findings_total or #method.findings
  return method
end

function M.model(store, run)
  local model = records.base(run, "change certification")
  local change_cli = require "vkit.change.cli"
  local shadow = change_cli.shadow(store, run)
  local payload = run.job.payload
  if present(shadow.requirement) then
    model.subject[#model.subject + 1] = { label = "requirement", value = ("%s: %s"):format(shadow.requirement.source,
      shadow.requirement.statement) }
  end
  for _, f in ipairs { { "intent", shadow.intent_digest }, { "base (trusted target)", shadow.target or payload.trusted_target },
                       { "candidate", shadow.candidate }, { "method", payload.method } } do
    if present(f[2]) then model.subject[#model.subject + 1] = { label = f[1], value = tostring(f[2]) } end
  end
  local dir = records.attempt_dir(run)
  for _, m in ipairs(shadow.methods or {}) do model.methods[#model.methods + 1] = method_model(dir, m) end
  model.passing = change_cli.exit_code(run) == 0
  for _, m in ipairs(model.methods) do
    m.passing = M.ALL_INPUTS_HOLD[m.result] == true
    m.sampled = M.SAMPLES_HOLD[m.result] == true
  end
  if present(shadow.blocked) then
    model.reason, model.message = shadow.blocked.reason, ("blocked at %s: %s"):format(shadow.blocked.stage,
      shadow.blocked.message)
  elseif model.error then
    model.reason, model.message = "failed", model.error
  elseif present(shadow.outcome_meaning) then
    model.reason, model.message = model.outcome, shadow.outcome_meaning
  end
  if present(shadow.coverage) and shadow.coverage.statement then
    model.subject[#model.subject + 1] = { label = "coverage", value = shadow.coverage.statement }
  end
  model.headline = ("%s %s"):format(model.outcome or model.status:upper(), model.run_id)
  if model.passing then
    model.established = { ("every accepted input was checked and conforms (%s)"):format(tostring(model.outcome)) }
  end
  local ok, methods = pcall(require, "vkit.change.methods")
  for _, m in ipairs(model.methods) do
    local known = ok and methods.LIST and methods.LIST[m.name]
    if known then model.not_established[#model.not_established + 1] = m.name .. ": " .. known.not_established end
  end
  if #model.not_established == 0 and change_cli.NOT_ESTABLISHED then
    model.not_established[1] = change_cli.NOT_ESTABLISHED
  end
  model.not_established[#model.not_established + 1] = "source_proof: false, approval_authority: false"
  if dir then
    for _, m in ipairs(model.methods) do
      if m.report then model.artifacts[#model.artifacts + 1] = records.artifact(m.report.path, m.report.sha256) end
    end
    for _, rel in ipairs { "preflight.json", "result.json", "progress.log" } do
      local a = records.artifact(dir .. "/" .. rel)
      if not a.missing then model.artifacts[#model.artifacts + 1] = a end
    end
  end
  return model
end

return M
