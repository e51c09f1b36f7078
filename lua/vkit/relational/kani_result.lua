--- The Kani result decoder (seed 001): a pure function from what one Kani
-- 0.68.0 run left behind (its `--export-json` document, its stdout and exit
-- status) and what vkit generated (the harness file, harness function and
-- the four assertions with their locations) to an outcome:
--
--   verified                the qualified export, all four assertions SUCCESS
--                           at their generated locations, consistent counters,
--                           every other (safety) property SUCCESS or UNREACHABLE
--   proof_rejected          a consistent export with at least one FAILURE
--   unknown                 incomplete: UNDETERMINED/UNKNOWN/ERROR properties,
--                           an unreachable (vacuous) generated assertion
--   infrastructure_failure  a missing, oversized, truncated or malformed export,
--                           an unqualified engine, a missing, duplicated or
--                           misplaced generated assertion, inconsistent counters
--
-- The export format is kani-driver's v1 `--export-json` document (metadata
-- version "1.0": metadata, harness_metadata, verification_results,
-- error_details, property_details; statuses in Rust Debug casing), and the
-- stdout lines are those of `--output-format regular` (`Checking harness`,
-- ` ** F of N failed`, `VERIFICATION:- SUCCESSFUL|FAILED`, `Complete - ...`).
-- A rejection carries no imported concrete input: it is not a native
-- counterexample.  Kani's own generation of a complete property inventory
-- stays trusted: self-consistent JSON cannot prove that nothing is missing.
local vkit = require "vkit.core"

local M = {}

M.outcomes = { verified = true, proof_rejected = true, unknown = true, infrastructure_failure = true }

M.reasons = {
  verified = "every generated assertion and safety property holds in the engine model",
  property_failed = "the engine reports a failing property",
  missing_export = "the engine left no export document",
  export_too_large = "the export document exceeds the import limit",
  malformed_export = "the export document is not the expected JSON (truncated or malformed)",
  unqualified_export = "the export does not come from the qualified Kani version and target",
  harness_mismatch = "the export does not describe exactly the generated harness",
  inconsistent_counters = "the engine's counters, verdicts and exit status disagree",
  missing_assertion = "a generated assertion is missing from the engine's properties",
  duplicate_assertion = "a generated assertion appears more than once",
  wrong_location = "a generated assertion is reported at a location other than its own",
  unexpected_property = "the engine reports a property kind the harness cannot produce",
  undetermined_properties = "some properties were not decided",
  vacuous_assertion = "a generated assertion is unreachable, so it holds only vacuously",
}

M.statuses = {
  Success = true, Failure = true, Unreachable = true, Undetermined = true, Unknown = true,
  Error = true, Satisfied = true, Unsatisfiable = true, Covered = true, Uncovered = true,
}

local Stop = {}
local function stop(outcome, reason, detail)
  error(setmetatable({ outcome = outcome, reason = reason, detail = detail }, Stop), 0)
end
local function infra(reason, detail) stop("infrastructure_failure", reason, detail) end

local function object(v) return vkit.json.kind(v) == "object" end
local function array(v) return vkit.json.kind(v) == "array" end
local function count(v) return math.type(v) == "integer" and v >= 0 end

local function need(cond, reason, detail)
  if not cond then infra(reason, detail) end
end

-- The single entry of a per-harness array (or the object itself, the
-- earliest v1 form) that belongs to the harness.
local function harness_entry(v, harness, what)
  if object(v) then
    need(v.harness_id == nil or v.harness_id == harness, "harness_mismatch", what .. " names another harness")
    return v
  end
  need(array(v) and #v == 1, "harness_mismatch", what .. " must describe exactly one harness")
  need(object(v[1]) and (v[1].harness_id == nil or v[1].harness_id == harness), "harness_mismatch",
    what .. " names another harness")
  return v[1]
end

local function lines_matching(text, pattern)
  local found = {}
  for line in (text .. "\n"):gmatch "([^\n]*)\n" do
    local captures = { line:match(pattern) }
    if captures[1] ~= nil then found[#found + 1] = captures end
  end
  return found
end

-- Cross-checks the text output and exit status against the export's counts.
local function check_stdout(input, harness_name, status, tally, summary)
  local stdout = input.stdout or ""
  local checking = lines_matching(stdout, "^Checking harness (.-)%.%.%.$")
  need(#checking == 1 and checking[1][1] == harness_name, "inconsistent_counters",
    "stdout must check exactly the generated harness once")
  local verdicts = lines_matching(stdout, "^VERIFICATION:%- (%u+)$")
  need(#verdicts == 1, "inconsistent_counters", "stdout must hold exactly one VERIFICATION line")
  local expected = status == "Success" and "SUCCESSFUL" or "FAILED"
  need(verdicts[1][1] == expected, "inconsistent_counters",
    ("stdout says %s, the export says %s"):format(verdicts[1][1], status))
  local failed = lines_matching(stdout, "^ %*%* (%d+) of (%d+) failed(.*)$")
  need(#failed == 1, "inconsistent_counters", "stdout must hold exactly one `** F of N failed` line")
  need(tonumber(failed[1][1]) == tally.Failure and tonumber(failed[1][2]) == tally.total, "inconsistent_counters",
    ("stdout counts %s of %s failed, the export %d of %d"):format(failed[1][1], failed[1][2], tally.Failure, tally.total))
  local unreachable = failed[1][3]:match "(%d+) unreachable"
  need(unreachable == nil or tonumber(unreachable) == tally.Unreachable, "inconsistent_counters",
    "stdout and export disagree on unreachable properties")
  local complete = lines_matching(stdout, "^Complete %- (%d+) successfully verified harnesses, (%d+) failures, (%d+) total%.$")
  need(#complete == 1, "inconsistent_counters", "stdout must hold exactly one `Complete - ...` line")
  need(tonumber(complete[1][1]) == summary.successful and tonumber(complete[1][2]) == summary.failed
    and tonumber(complete[1][3]) == summary.total_harnesses, "inconsistent_counters",
    "stdout's harness summary disagrees with the export")
  need(math.type(input.exit_code) == "integer", "inconsistent_counters", "no exit status")
  need((input.exit_code == 0) == (status == "Success"), "inconsistent_counters",
    ("exit status %d with a %s verdict"):format(input.exit_code, status))
end

local function same_file(reported, harness)
  return reported == harness.file or (harness.path ~= nil and reported == harness.path)
end

local function decode(input)
  local q = vkit.policies.relational.kani
  local harness = input.harness
  local name = harness["function"]
  if input.export == nil then infra("missing_export") end
  local doc, message = vkit.json.decode(input.export)
  if doc == nil then infra("malformed_export", message) end
  need(object(doc), "malformed_export", "the export is not an object")

  local meta = doc.metadata
  need(object(meta), "unqualified_export", "no metadata")
  need(meta.version == q.export_metadata_version, "unqualified_export",
    ("metadata.version %s, qualified %s"):format(tostring(meta.version), q.export_metadata_version))
  need(meta.kani_version == q.qualified_version, "unqualified_export",
    ("Kani %s, qualified %s"):format(tostring(meta.kani_version), q.qualified_version))
  need(meta.target == q.qualified_target, "unqualified_export",
    ("target %s, qualified %s"):format(tostring(meta.target), q.qualified_target))

  local hm = harness_entry(doc.harness_metadata, name, "harness_metadata")
  need(hm.pretty_name == name, "harness_mismatch", "harness_metadata names another harness")
  need(object(hm.source) and same_file(hm.source.file, harness), "harness_mismatch",
    "the harness is not declared in the generated file")
  need(object(hm.attributes) and hm.attributes.kind == "Proof" and hm.attributes.should_panic == false,
    "harness_mismatch", "the harness is not a plain proof")

  local vr = doc.verification_results
  need(object(vr) and object(vr.summary) and array(vr.results), "malformed_export", "no verification_results")
  local summary = vr.summary
  for _, k in ipairs { "total_harnesses", "executed", "successful", "failed" } do
    need(count(summary[k]), "malformed_export", "summary." .. k .. " is not a count")
  end
  need(type(summary.status) == "string" and summary.status:lower() == "completed", "inconsistent_counters",
    ("the run's status is %s"):format(tostring(summary.status)))
  need(summary.total_harnesses == 1 and summary.executed == 1 and #vr.results == 1, "inconsistent_counters",
    "the run must select and execute exactly one harness")
  need(summary.successful + summary.failed == summary.executed, "inconsistent_counters",
    "successful + failed differs from executed")
  local result = vr.results[1]
  need(object(result) and result.harness_id == name, "harness_mismatch", "the result names another harness")
  local status = result.status
  need(status == "Success" or status == "Failure", "malformed_export", "harness status must be Success or Failure")
  need(summary.successful == (status == "Success" and 1 or 0), "inconsistent_counters",
    "summary.successful disagrees with the harness status")
  need(array(result.checks), "malformed_export", "no checks")

  local tally = { total = #result.checks }
  for s in pairs(M.statuses) do tally[s] = 0 end
  local ids = {}
  for i, c in ipairs(result.checks) do
    local where = ("checks[%d]"):format(i)
    need(object(c) and object(c.location), "malformed_export", where .. " is not a check")
    need(M.statuses[c.status], "malformed_export", ("%s has status %s"):format(where, tostring(c.status)))
    need(math.type(c.id) == "integer" and not ids[c.id], "malformed_export", where .. " has no unique id")
    need(type(c.description) == "string" and type(c.category) == "string", "malformed_export",
      where .. " lacks a description or category")
    ids[c.id] = true
    tally[c.status] = tally[c.status] + 1
  end

  -- Counters: the property details, the error details, the verdict.
  local pd = harness_entry(doc.property_details, name, "property_details")
  pd = pd.property_details
  need(object(pd), "malformed_export", "no property_details")
  need(pd.total_properties == tally.total and pd.passed == tally.Success and pd.failed == tally.Failure
    and pd.unreachable == tally.Unreachable, "inconsistent_counters",
    "property_details disagrees with the checks")
  if pd.undetermined ~= nil and pd.undetermined ~= vkit.json.null then
    need(pd.undetermined == tally.Undetermined + tally.Unknown, "inconsistent_counters",
      "property_details.undetermined disagrees with the checks")
  end
  local ed = harness_entry(doc.error_details, name, "error_details")
  need(ed.has_errors == (status == "Failure"), "inconsistent_counters", "error_details disagrees with the verdict")
  local undecided = tally.Failure + tally.Undetermined + tally.Unknown + tally.Error
  need(status == "Success" and tally.Failure == 0 or status == "Failure" and undecided > 0, "inconsistent_counters",
    ("harness status %s with %d failing properties"):format(status, tally.Failure))
  check_stdout(input, name, status, tally, summary)

  -- The four generated assertions, each exactly once, where they were generated.
  local assertions = {}
  for _, a in ipairs(harness.assertions) do
    local found = {}
    for _, c in ipairs(result.checks) do
      if c.category == "assertion" and c.description == a.message then found[#found + 1] = c end
    end
    need(#found > 0, "missing_assertion", a.id)
    need(#found == 1, "duplicate_assertion", a.id)
    local c = found[1]
    need(same_file(c.location.file, harness) and c.location.line == tostring(a.line)
      and c.location.column == tostring(a.column) and c["function"] == name, "wrong_location",
      ("%s reported at %s:%s:%s in %s, generated at %s:%d:%d"):format(a.id, tostring(c.location.file),
        tostring(c.location.line), tostring(c.location.column), tostring(c["function"]), harness.file, a.line, a.column))
    c.generated = a.id
    assertions[#assertions + 1] = { id = a.id, status = c.status, line = a.line, column = a.column }
  end

  local failed = {}
  for _, c in ipairs(result.checks) do
    if c.status == "Failure" then
      failed[#failed + 1] = { id = c.id, description = c.description, category = c.category,
        generated = c.generated or vkit.json.null,
        location = { file = c.location.file, line = c.location.line, column = c.location.column } }
    end
  end
  local outcome = { assertions = assertions, properties = tally, failed = failed }
  if tally.Failure > 0 then
    outcome.outcome, outcome.reason = "proof_rejected", "property_failed"
    return outcome
  end
  if tally.Undetermined + tally.Unknown + tally.Error > 0 then
    stop("unknown", "undetermined_properties", ("%d undetermined, %d unknown, %d error"):format(
      tally.Undetermined, tally.Unknown, tally.Error))
  end
  for _, a in ipairs(assertions) do
    if a.status ~= "Success" then stop("unknown", "vacuous_assertion", a.id .. " is " .. a.status) end
  end
  for _, c in ipairs(result.checks) do
    if not c.generated and c.status ~= "Success" and c.status ~= "Unreachable" then
      infra("unexpected_property", ("%s is %s"):format(c.description, c.status))
    end
  end
  outcome.outcome, outcome.reason = "verified", "verified"
  return outcome
end

--- Decodes one run.  input = {export = text | nil, stdout = text,
-- exit_code = integer, harness = {file, path?, function, assertions}}.
-- Returns {outcome, reason, message, assertions?, properties?, failed?}.
function M.decode(input)
  local ok, result = pcall(decode, input)
  if not ok then
    if getmetatable(result) ~= Stop then error(result, 0) end
    result = { outcome = result.outcome, reason = result.reason, detail = result.detail }
  end
  result.message = M.reasons[result.reason] .. (result.detail and (": " .. result.detail) or "")
  result.detail = nil
  return result
end

return M
