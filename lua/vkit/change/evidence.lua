--- A certification's outcome, derived from its retained reports (issue 29):
-- never from a state file or a database row alone.
--
-- The attempt retains certification.v1.json (the summary the run wrote)
-- and one report per method, each named in the summary with its SHA-256.
-- `derive` re-reads every report the summary names, checks its hash, takes
-- each method's status, coverage and the candidate's admission from the
-- report itself (finite_paired's admission from the paired-execution
-- report its analysis names by hash), and runs the one combiner
-- (vkit.change.combine) with the host's --trust-candidate-code as the job
-- recorded it.  The outcome a store shows must be that outcome; a run
-- whose records claim another is corrupt (vkit.store), and so is one whose
-- reports are missing or changed.
--
-- I/O at the edge only: read(rel, max_bytes) -> bytes | nil, message.
local json = require "vkit.json"
local hash = require "vkit.hash"
local combine = require "vkit.change.combine"
local tables = require "vkit.tables"

local M = {}

M.SUMMARY = "certification.v1.json"
local MAX_REPORT = require("vkit.policy").change.caps.report_bytes

local function fail(file, reason, message)
  return nil, file, reason, message
end

-- A retained JSON document whose hash is known: decoded, or the failure.
local function read_pinned(read, rel, sha256)
  local bytes, message = read(rel, MAX_REPORT)
  if not bytes then return fail(rel, "report-missing", "the report is not retained: " .. tostring(message)) end
  if sha256 and hash.sha256(bytes) ~= sha256 then
    return fail(rel, "report-changed", "its SHA-256 is not the one the certification recorded")
  end
  local doc, dmessage = json.decode(bytes)
  if json.kind(doc) ~= "object" then return fail(rel, "report-invalid", "not a JSON object: " .. tostring(dmessage)) end
  return doc
end

-- The candidate's admission as a method's reports record it (nil: none).
local function admitted_in(read, method, report_rel, report)
  local paired = report
  if method == "finite_paired" then
    local ref = report.paired_report
    if json.kind(ref) ~= "object" then return nil end
    local dir = report_rel:match "^(.*)/[^/]+$"
    local doc, file, reason, message = read_pinned(read, dir .. "/" .. ref.path, ref.sha256)
    if not doc then return nil, file, reason, message end
    paired = doc
  end
  local a = json.kind(paired.admission) == "object" and paired.admission.candidate
  if json.kind(a) ~= "object" then return false end
  return a.admitted == true
end

--- The outcome the retained evidence supports: outcome, or nil, file,
--  reason, message.  trust: the job's trust_candidate_code; recorded: the
--  summary the run's state shows (it must be the retained one: a state
--  showing other coverage or methods over genuine reports is not that run).
function M.derive(read, trust, recorded)
  local summary, file, reason, message = read_pinned(read, M.SUMMARY)
  if not summary then return nil, file, reason, message end
  if json.kind(recorded) == "object" and not tables.json_equal(recorded, summary) then
    return fail("state.json", "summary-not-in-evidence", "its summary is not the one " .. M.SUMMARY .. " retains")
  end
  -- A run that never reached a method: preflight or the method plan
  -- refused it, or it was cancelled first.  Neither reads as a pass.
  if json.kind(summary.blocked) == "object" then return "blocked" end
  if summary.outcome == "cancelled" then return "cancelled" end
  if json.kind(summary.methods) ~= "array" then return fail(M.SUMMARY, "report-invalid", "it lists no methods") end
  local results = {}
  for _, m in ipairs(summary.methods) do
    if type(m.report) ~= "string" or not hash.is_digest(m.report_sha256) then
      return fail(M.SUMMARY, "report-invalid", "a method names no report with its SHA-256")
    end
    local report
    report, file, reason, message = read_pinned(read, m.report, m.report_sha256)
    if not report then return nil, file, reason, message end
    local status = report.status
    if type(status) ~= "string" then return fail(m.report, "report-invalid", "it records no status") end
    local admitted
    admitted, file, reason, message = admitted_in(read, m.method, m.report, report)
    if admitted == nil and file then return nil, file, reason, message end
    local c = report.coverage
    results[#results + 1] = { method = m.method, status = status, admitted = admitted,
                              coverage = json.kind(c) == "object" and math.type(c.checked) == "integer" and c or nil }
  end
  return combine.combine(results, { trust_candidate_code = trust == true }).outcome
end

return M
