--- Checker receipt validation and the verdict (seed 000).  Pure.
--
-- judge(checker, receipt, expected) -> { outcome = "PASS" | "BLOCKED",
--   reason = <stable name>, message = <sentence>, checker_verdict = ... }
--
-- checker  = the vkit.proc result of the checker run (status, code)
-- receipt  = the receipt file's bytes; nil when there is none; or
--            {reason, message} when what is there cannot be a receipt (a
--            link, a directory, a FIFO, too many bytes: receipt-is-link,
--            receipt-not-regular, receipt-too-large, receipt-unreadable)
-- expected = { job_id, run_id, check_id, check_digest, specification_digest,
--              identity, evidence_digest, obligations = {names in manifest
--              order}, evidence = {listed artifact paths} }
--
-- PASS only when the checker exited 0 and wrote a receipt with exactly the
-- listed fields, schema_version 1, matching job, run, check, check digest,
-- specification digest, the complete current identity and the evidence
-- digest, every accepted obligation once in manifest order referencing
-- listed artifacts, a top-level verdict that agrees with the obligations,
-- and that verdict is "accepted".  rejected and unknown are BLOCKED and
-- inconclusive: they never establish a counterexample.
local json = require "vkit.json"
local tables = require "vkit.tables"
local policy = require("vkit.policy").protocol

local M = {}

local function blocked(reason, fmt, ...)
  return { outcome = "BLOCKED", reason = reason, message = fmt:format(...) }
end

local VERDICTS = {}
for _, v in ipairs(policy.checker_verdicts) do VERDICTS[v] = true end

local function exact_fields(obj, fields, what)
  if json.kind(obj) ~= "object" then return blocked("receipt-invalid", "%s is not a JSON object", what) end
  local allowed = {}
  for _, f in ipairs(fields) do
    allowed[f] = true
    if obj[f] == nil then return blocked("receipt-field-missing", "%s has no %q field", what, f) end
  end
  local extra = {}
  for k in pairs(obj) do
    if not allowed[k] then extra[#extra + 1] = tostring(k) end
  end
  if #extra > 0 then
    table.sort(extra)
    return blocked("receipt-unknown-field", "%s has the field %q, which the protocol does not define", what, extra[1])
  end
end

-- The verdict the obligation results imply: any rejected -> rejected,
-- else any unknown -> unknown, else accepted.
local function combined(obligations)
  local any_unknown = false
  for _, o in ipairs(obligations) do
    if o.result == "rejected" then return "rejected" end
    if o.result == "unknown" then any_unknown = true end
  end
  return any_unknown and "unknown" or "accepted"
end

local function check_obligations(r, expected)
  if json.kind(r.obligations) ~= "array" then return blocked("receipt-invalid", "obligations is not an array") end
  local listed = {}
  for _, p in ipairs(expected.evidence) do listed[p] = true end
  for i, o in ipairs(r.obligations) do
    local what = ("obligations[%d]"):format(i)
    local bad = exact_fields(o, policy.obligation_fields, what)
    if bad then return bad end
    if o.name ~= expected.obligations[i] then
      return blocked("receipt-obligations-mismatch", "%s is %s, but the accepted obligation %d is %s: every accepted "
        .. "obligation must appear once, in manifest order", what, json.encode(o.name), i, tostring(expected.obligations[i]))
    end
    if type(o.result) ~= "string" or not VERDICTS[o.result] then
      return blocked("receipt-invalid", "%s.result must be accepted, rejected or unknown", what)
    end
    if json.kind(o.evidence) ~= "array" or #o.evidence == 0 then
      return blocked("receipt-obligation-evidence", "%s references no evidence artifact", what)
    end
    for _, e in ipairs(o.evidence) do
      if type(e) ~= "string" or not listed[e] then
        return blocked("receipt-obligation-evidence", "%s references %s, which is not a listed evidence artifact", what,
          json.encode(e))
      end
    end
  end
  if #r.obligations ~= #expected.obligations then
    return blocked("receipt-obligations-mismatch", "the receipt has %d obligations; the accepted claim has %d",
      #r.obligations, #expected.obligations)
  end
end

local MATCHED = {
  { "job_id", "receipt-job-mismatch" },
  { "run_id", "receipt-run-mismatch" },
  { "check_id", "receipt-check-mismatch" },
  { "check_digest", "receipt-check-digest-mismatch" },
  { "specification_digest", "receipt-specification-digest-mismatch" },
  { "identity", "receipt-identity-mismatch" },
  { "evidence_digest", "receipt-evidence-digest-mismatch" },
}

function M.judge(checker, receipt_bytes, expected)
  if checker.status ~= "exited" then
    return blocked("checker-" .. checker.status, "the checker did not finish normally (%s)", checker.status)
  end
  if checker.code ~= 0 then
    return blocked("checker-exit-nonzero", "the checker exited with status %d", checker.code)
  end
  if not receipt_bytes then
    return blocked("receipt-missing", "the checker exited 0 but wrote no receipt: exit status alone never suffices")
  end
  if type(receipt_bytes) == "table" then return blocked(receipt_bytes.reason, "%s", receipt_bytes.message) end
  local r, message = json.decode(receipt_bytes)
  if r == nil then return blocked("receipt-invalid-json", "the receipt is not valid JSON: %s", message) end
  local bad = exact_fields(r, policy.receipt_fields, "the receipt")
  if bad then return bad end
  if r.schema_version ~= 1 or math.type(r.schema_version) ~= "integer" then
    return blocked("receipt-schema-version", "the receipt's schema_version must be 1")
  end
  for _, m in ipairs(MATCHED) do
    local field, reason = m[1], m[2]
    -- Compared as values, never through canonical encoding, which would
    -- raise on a hostile receipt's integer beyond 2^53.
    if not tables.json_equal(r[field], expected[field]) then
      return blocked(reason, "the receipt's %s does not match the current %s", field, field:gsub("_", " "))
    end
  end
  if type(r.verdict) ~= "string" or not VERDICTS[r.verdict] then
    return blocked("receipt-invalid", "the receipt's verdict must be accepted, rejected or unknown")
  end
  bad = check_obligations(r, expected)
  if bad then return bad end
  if combined(r.obligations) ~= r.verdict then
    return blocked("receipt-verdict-inconsistent", "the top-level verdict %s disagrees with the obligation results "
      .. "(they imply %s)", r.verdict, combined(r.obligations))
  end
  local result = { outcome = policy.outcomes[r.verdict], checker_verdict = r.verdict }
  if r.verdict == "accepted" then
    result.reason = "accepted"
    result.message = "the checker accepted every obligation with a valid receipt"
  else
    result.reason = "checker-" .. r.verdict
    result.message = ("the checker's verdict is %s: inconclusive, not a counterexample"):format(r.verdict)
  end
  return result
end

return M
