--- The report model of a change certification (seed 001): the change and
--  its accepted intent, each method with its coverage, cuts and findings
--  (read from the method's own retained report), the shrinking path, what
--  blocked it, the accepted domain as checked / omitted / violating inputs,
--  and the retained reports with their digests.
local json = require "vkit.json"
local records = require "vkit.report.records"
local change_runs = require "vkit.runs.change"
local coverage_mod = require "vkit.change.coverage"
local methods_mod = require "vkit.change.methods"
local ranges = require "vkit.change.ranges"
local runs = require "vkit.change.runs"
local subject = require "vkit.report.subject"
local FINDINGS_KEPT = require("vkit.policy").report.findings_kept

local M = {}

-- A method result that makes the method's claim for every accepted input,
-- and one that holds only for the inputs sampled (never read as a pass:
-- JUnit shows it skipped, with its coverage).
M.ALL_INPUTS_HOLD = { all_inputs_conform = true, all_inputs_conform_trusted = true, verified = true }
M.SAMPLES_HOLD = { samples_within_contract = true, observed_conformance = true, samples_conform = true }

local function present(v) return v ~= nil and v ~= json.null end

-- The items of a method report's list: an array, or {total, items, cap}.
local function listed(v)
  if json.kind(v) == "array" then return v, #v end
  if json.kind(v) == "object" and json.kind(v.items) == "array" then return v.items, math.tointeger(v.total) or #v.items end
  return {}, 0
end

local function finding_of(f)
  local fields = {}
  for _, k in ipairs { "base", "candidate", "allowed", "rule" } do
    if present(f[k]) then
      fields[#fields + 1] = { label = k, value = json.kind(f[k]) == "array" and json.encode(f[k]) or tostring(f[k]) }
    end
  end
  local title = present(f.input) and ("input " .. tostring(f.input)) or tostring(f.rule or f.verdict or "finding")
  local detail = tostring(f.message or f.reason or ""):gsub("^input %d+: ", "")
  return { title = title, detail = detail, fields = fields, input = math.tointeger(f.input),
           rule = present(f.rule) and tostring(f.rule) or nil }
end

-- A box of violating inputs of the multi-parameter profile (issue 34):
-- "clamp(x=0..9, lo=3, hi=-2) (10 inputs)", every parameter named, with the
-- first violating input in it as the detail.
local function box_finding(b)
  local count = math.tointeger(b.count) or 1
  local example = present(b.example) and tostring(b.example) or ""
  -- one input: the title names it already; a box: its first input, named whole
  local detail = count == 1 and example:sub(1, #tostring(b.call) + 2) == tostring(b.call) .. ": "
    and example:sub(#tostring(b.call) + 3) or ("first: " .. example)
  return { title = tostring(b.call) .. (count > 1 and (" (%d inputs)"):format(count) or ""), detail = detail,
           fields = { { label = "rule", value = tostring(b.rule) }, { label = "inputs", value = tostring(count) } },
           rule = present(b.rule) and tostring(b.rule) or nil }
end

-- What a native method's report says of its sandbox, in one line.
local function sandbox_note(doc)
  local sb = type(doc) == "table" and doc.sandbox
  if type(sb) ~= "table" then return nil end
  if not sb.os_sandbox then
    return "no full OS sandbox: " .. tostring(present(sb.reason) and sb.reason or "not applied to every launch")
  end
  local roles = {}
  for role, r in pairs(type(sb.roles) == "table" and sb.roles or {}) do
    local iso = type(r.applied) == "table" and r.applied.isolation
    roles[#roles + 1] = ("%s: %s namespaces, uid %s, %s"):format(role, type(iso) == "table" and iso.namespaces or "no",
      type(iso) == "table" and tostring(iso.uid) or "?", tostring(r.applied and r.applied.landlock))
  end
  table.sort(roles)
  return "sandbox (every launch): " .. table.concat(roles, "; ")
end

-- What the method's report says beyond its result: how it sampled or
-- batched, the shrinking path, the sandbox, the semantics of its observations.
local function notes_of(name, doc, paired)
  local notes = {}
  local sandboxed = sandbox_note(name == "finite_paired" and paired or doc)
  if sandboxed then notes[#notes + 1] = sandboxed end
  local semantics = type(doc) == "table" and doc.semantics
  if name == "exhaustive" and type(semantics) == "table" then
    for _, side in ipairs { "base", "candidate" } do
      if type(semantics[side]) == "table" then notes[#notes + 1] = side .. " observed " .. tostring(semantics[side].meaning) end
    end
  end
  if name == "finite_paired" and type(paired) == "table" then
    local sel = paired.selection
    if type(sel) == "table" then
      notes[#notes + 1] = ("sampled %s inputs (%s), each side %s times, %s process runs"):format(tostring(sel.selected),
        tostring(sel.how), tostring(sel.repetitions), tostring(paired.invocations))
    end
    local shrink = paired.shrinking
    if type(shrink) == "table" and present(shrink.smallest_violation) then
      notes[#notes + 1] = ("shrinking: from input %s to the smallest violating input %s (tried %s; limit %s)"):format(
        tostring(shrink.from), tostring(shrink.smallest_violation),
        json.kind(shrink.tried) == "array" and table.concat(shrink.tried, ", ") or "-", tostring(shrink.limit))
    end
  elseif name == "exhaustive" and type(doc) == "table" and type(doc.batches) == "table" then
    local ran = json.kind(doc.batches.ran) == "array" and #doc.batches.ran or 0
    notes[#notes + 1] = ("every input in %d batch process(es) per side and pass, %s passes, %s process runs"):format(ran,
      tostring(type(doc.passes) == "table" and doc.passes.count or "?"), tostring(doc.invocations))
  end
  return notes
end

--- One method of the model, from its summary entry `m` and the attempt
--  directory `dir` holding its retained report.
function M.method(dir, m)
  local c = json.kind(m.coverage) == "object" and m.coverage or nil
  local method = {
    name = m.method, result = m.result, findings = {}, notes = {},
    passing = M.ALL_INPUTS_HOLD[m.result] == true, sampled = M.SAMPLES_HOLD[m.result] == true,
    coverage = c and { checked = c.checked, total = c.accepted, unit = "inputs", text = c.statement,
                       complete = c.checked == c.accepted } or nil,
  }
  for _, cut in ipairs(json.kind(m.cuts) == "array" and m.cuts or {}) do
    method.notes[#method.notes + 1] = coverage_mod.cut_sentence(cut)
  end
  local total = 0
  local path = records.inside(dir, m.report)
  if path then
    method.report = { path = path, sha256 = m.report_sha256 }
    local doc = records.read_json(path)
    local paired = m.method == "finite_paired" and records.read_json(dir .. "/finite_paired/paired-execution-report.v1.json")
    for _, note in ipairs(notes_of(m.method, doc, paired)) do method.notes[#method.notes + 1] = note end
    if type(doc) == "table" then
      -- every violating input, past the listing's cap (vkit.change.runs)
      if type(doc.violations) == "table" and json.kind(doc.violations.ranges) == "array" then
        method.ranges = doc.violations.ranges
      end
      local boxes = type(doc.violations) == "table" and doc.violations.boxes
      if type(boxes) == "table" then
        local items, n = listed(boxes)
        for _, b in ipairs(items) do
          if type(b) == "table" and #method.findings < FINDINGS_KEPT then method.findings[#method.findings + 1] = box_finding(b) end
        end
        total = n
        local grouped, of = math.tointeger(boxes.grouped), math.tointeger(boxes.of)
        if grouped and of and grouped < of then
          method.notes[#method.notes + 1] = ("%d violating inputs: the boxes group the first %d of each rule"):format(of,
            grouped)
        end
      end
      for _, key in ipairs(type(boxes) == "table" and {} or { "violations", "findings" }) do
        local items, n = listed(doc[key])
        for _, f in ipairs(items) do
          if type(f) == "table" and (f.verdict == nil or f.verdict == "violation") and #method.findings < FINDINGS_KEPT then
            method.findings[#method.findings + 1] = finding_of(f)
          end
        end
        if n > 0 then
          total = key == "violations" and n or #method.findings
          break
        end
      end
    end
  end
  require("vkit.report.causes").add(method, dir, m)  -- why inputs could not be checked (issue 33)
  if present(m.reason) and #method.findings == 0 and not method.passing then
    method.notes[#method.notes + 1] = "reason: " .. tostring(m.reason)
      .. (type(m.message) == "string" and (": " .. m.message) or "")
  end
  method.findings_total = math.max(total, #method.findings)
  return method
end

-- What base and candidate returned over the domain, for the chart: every
-- input from the exhaustive method, else the inputs the sampled method ran.
local function series_of(dir)
  local doc = records.read_json(dir .. "/exhaustive/exhaustive-report.v1.json")
  if type(doc) == "table" and type(doc.outputs) == "table" and json.kind(doc.outputs.base) == "array" then
    return { base = doc.outputs.base, candidate = doc.outputs.candidate, sampled = false }
  end
  local paired = records.read_json(dir .. "/finite_paired/paired-execution-report.v1.json")
  local obs = type(paired) == "table" and json.kind(paired.observations) == "array" and paired.observations
  if not obs or #obs == 0 then return nil end
  local sorted = {}
  for i, o in ipairs(obs) do sorted[i] = o end
  table.sort(sorted, function(a, b) return a.input < b.input end)
  return { base = runs.series(sorted, "base"), candidate = runs.series(sorted, "candidate"), sampled = true }
end

-- The accepted domain for the strip: its span, the inputs checked (the
-- whole domain when a method checked every input, else the inputs the
-- sampled method ran) and every violating input found.
local function domain_of(run, dir, model)
  local claim = type(run.job.payload.request) == "table" and run.job.payload.request.claim
  local inputs = type(claim) == "table" and type(claim.domain) == "table" and ranges.normalize(claim.domain.inputs)
  if not inputs or #inputs == 0 then return nil end
  local d = { from = inputs[1][1], to = inputs[#inputs][2], checked = {}, violating = {} }
  local complete = false
  for _, m in ipairs(model.methods) do complete = complete or (m.coverage and m.coverage.complete) end
  if complete then
    d.checked = inputs
  elseif dir then
    local paired = records.read_json(dir .. "/finite_paired/paired-execution-report.v1.json")
    local sel = type(paired) == "table" and type(paired.selection) == "table" and paired.selection.inputs
    if json.kind(sel) == "array" then
      for _, v in ipairs(sel) do d.checked[#d.checked + 1] = { v, v } end
    end
  end
  local seen = {}
  local function violating(x)
    if not seen[x] then
      seen[x] = true
      d.violating[#d.violating + 1] = x
    end
  end
  for _, m in ipairs(model.methods) do
    for _, r in ipairs(m.ranges or {}) do
      for x = r.from, r.to do violating(x) end
    end
    for _, f in ipairs(m.findings) do
      if f.input then violating(f.input) end
    end
  end
  table.sort(d.violating)
  d.series = dir and series_of(dir)
  return d
end

-- The grid of a multi-parameter run (issue 34; vkit.report.grid): the
-- claim's parameters and sets, and what its exhaustive report retained of
-- every input (the index ranges run, every violating index range, the
-- undecided inputs it listed).  nil for the seed's profile (its claim's
-- signature is text) and above the exhaustive cap (nothing ran).
local function grid_of(claim, dir)
  if type(claim) ~= "table" or json.kind(claim.signature) ~= "object" or type(claim.domain) ~= "table" then return nil end
  local params = {}
  for i, p in ipairs(claim.signature.params) do
    params[i] = { name = p.name, type = p.type, set = claim.domain.inputs[p.name] }
  end
  local doc = dir and records.read_json(dir .. "/exhaustive/exhaustive-report.v1.json")
  doc = type(doc) == "table" and doc or {}
  local g = { params = params, ran = {}, undecided = {}, violating = {}, undecided_total = doc.inputs_undecided }
  local batches = type(doc.batches) == "table" and json.kind(doc.batches.ran) == "array" and doc.batches.ran or {}
  for i, b in ipairs(batches) do g.ran[i] = { b.first, b.last } end
  if type(doc.violations) == "table" and json.kind(doc.violations.index_ranges) == "array" then
    g.violating = doc.violations.index_ranges
  end
  -- undecided: unstable, failed, and (auto) per-input runs that differed from their batch
  for _, key in ipairs { "unstable", "failed_inputs", "isolation" } do
    for _, u in ipairs((listed(doc[key]))) do g.undecided[#g.undecided + 1] = math.tointeger(u.index) end
  end
  return require("vkit.report.grid").build(g)
end

function M.model(store, run)
  local model = records.base(run, "change certification")
  local shadow = change_runs.shadow(store, run)
  local payload = run.job.payload
  local dir = records.attempt_dir(run)
  local request = type(payload.request) == "table" and payload.request or {}
  -- What changed, first: file, function, language, base and candidate
  -- (short ids here; the full ones in model.target).
  model.target = subject.of(dir, present(shadow.target) and shadow.target or payload.trusted_target,
    present(shadow.candidate) and shadow.candidate or request.candidate, store.project)
  for _, row in ipairs(subject.rows(model.target)) do model.subject[#model.subject + 1] = row end
  if present(shadow.requirement) then
    model.subject[#model.subject + 1] = { label = "requirement", value = ("%s: %s"):format(shadow.requirement.source,
      shadow.requirement.statement) }
  end
  for _, f in ipairs { { "intent", shadow.intent_digest }, { "method", payload.method } } do
    if present(f[2]) then model.subject[#model.subject + 1] = { label = f[1], value = tostring(f[2]) } end
  end
  if present(shadow.coverage) and shadow.coverage.statement then
    model.subject[#model.subject + 1] = { label = "coverage", value = shadow.coverage.statement }
  end
  -- Whether the candidate's observations can carry the claim (issue 29).
  local a = shadow.candidate_admission
  if present(a) then
    model.subject[#model.subject + 1] = { label = "candidate admission", value = a.admitted
      and ("admitted: %s is inside the %s profile"):format(a.source, a.profile)
      or ("not admitted: %s at %s: %s"):format(tostring(a.rule), tostring(a.at), tostring(a.message)) }
  end
  -- How the one command chose its trusted target (vkit change certify --base).
  if type(payload.trusted_branch) == "string" or payload.base_from_caller == true then
    model.subject[#model.subject + 1] = { label = "trusted target", value = require("vkit.change.trusted_base")
      .describe(tostring(request.base), type(payload.trusted_branch) == "string" and payload.trusted_branch or nil) }
  end
  if shadow.trust_candidate_code then
    model.subject[#model.subject + 1] = { label = "trust-candidate-code", value = "used: the host accepts a "
      .. "candidate outside the pure profile" }
  end
  for _, m in ipairs(shadow.methods or {}) do model.methods[#model.methods + 1] = M.method(dir, m) end
  model.passing = change_runs.certified(run)
  if present(shadow.blocked) then
    model.reason, model.message = shadow.blocked.reason, ("blocked at %s: %s"):format(shadow.blocked.stage,
      shadow.blocked.message)
  elseif model.error then
    model.reason, model.message = "failed", model.error
  elseif present(shadow.outcome_meaning) then
    model.reason, model.message = model.outcome, shadow.outcome_meaning
  end
  model.headline = ("%s %s"):format(model.outcome or model.status:upper(), model.run_id)
  model.domain = domain_of(run, dir, model)
  model.grid = grid_of(request.claim, dir)
  if model.passing then
    model.established = { ("%s: %s"):format(tostring(model.outcome), tostring(shadow.outcome_meaning)) }
  end
  for _, line in ipairs(json.kind(shadow.not_established) == "array" and shadow.not_established or {}) do
    model.not_established[#model.not_established + 1] = line
  end
  for _, m in ipairs(model.methods) do
    local known = methods_mod.LIST[m.name]
    if known then model.not_established[#model.not_established + 1] = m.name .. ": " .. known.not_established end
  end
  model.not_established[#model.not_established + 1] = methods_mod.NEVER_PASSING
  model.not_established[#model.not_established + 1] = "source_proof: false, approval_authority: false"
  if dir then
    for _, m in ipairs(model.methods) do
      if m.report then model.artifacts[#model.artifacts + 1] = records.artifact(m.report.path, m.report.sha256) end
    end
    for _, rel in ipairs { "certification.v1.json", "preflight.json", "finite_paired/paired-execution-report.v1.json",
                           "progress.log" } do
      local a = records.artifact(dir .. "/" .. rel)
      if not a.missing then model.artifacts[#model.artifacts + 1] = a end
    end
  end
  return model
end

return M
