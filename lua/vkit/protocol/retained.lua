--- An external check's outcome, derived from what its attempt retained
-- (issue 30, item 2): never from a state file or a database row alone.
--
-- A PASS is believed only when the attempt retains, for this very run and
-- attempt:
--   * checker/request.json, the fresh request vkit wrote, naming this run
--     and attempt (run_id "<run>/<n>") and, for a check, the queued job;
--   * exactly the evidence it names: every file under evidence/ re-hashed,
--     and the evidence digest recomputed from those hashes;
--   * logs/checker.json, the checker's process record (exited, status 0);
--   * checker/receipt.json, which the seed's own judge (vkit.protocol.
--     receipt), run again on the request's values, accepts;
--   * result.json agreeing with all of that and recording no tampering.
-- Anything missing or changed is a named reason (the store lists the run
-- CORRUPT); a receipt the judge no longer accepts derives BLOCKED, and a
-- record claiming PASS over it is `outcome-not-in-evidence`.
--
-- What it cannot establish: a writer of the store who forges the request,
-- the receipt and the evidence together, consistently, makes a record this
-- check believes; it binds a PASS to a complete, self-consistent retained
-- check of this run, not to who wrote it (docs/deployment.md).
--
-- Pure but for the reader: files.read(rel, max_bytes) -> bytes | nil,
-- message; files.sha256(rel) -> hex | nil, message, code (evidence-corrupt:
-- the bytes kept no longer hash to their recorded name).
local json = require "vkit.json"
local hash = require "vkit.hash"
local tables = require "vkit.tables"
local receipt = require "vkit.protocol.receipt"
local policy = require("vkit.policy").protocol

local M = {}

-- The fields of the run's summary copied from result.json (vkit.protocol.job).
M.SUMMARY_FIELDS = { "outcome", "reason", "message", "checker_verdict", "component", "check_id", "commit", "job_id",
                     "input_digest", "specification_digest", "evidence_digest", "replay_of", "sandbox",
                     "containment", "tampering" }

local function fail(file, reason, fmt, ...)
  return nil, file, reason, fmt:format(...)
end

local function read_object(files, rel, max_bytes)
  local bytes, message = files.read(rel, max_bytes)
  if not bytes then return fail(rel, "report-missing", "the attempt does not retain it: %s", tostring(message)) end
  local doc, dmessage = json.decode(bytes)
  if json.kind(doc) ~= "object" then
    return fail(rel, "report-invalid", "not a JSON object: %s", tostring(dmessage))
  end
  return doc
end

local function present(v)
  return v ~= nil and v ~= json.null
end

-- The run's summary must be result.json's (a summary naming another
-- check, commit or digest over a genuine attempt is not that attempt).
local function summary_matches(summary, result)
  if json.kind(summary) ~= "object" then return true end
  for _, k in ipairs(M.SUMMARY_FIELDS) do
    if (present(summary[k]) or present(result[k])) and not tables.json_equal(summary[k], result[k]) then
      return false, k
    end
  end
  return true
end

-- The evidence the request names, re-hashed: nil when it matches, else
-- the failure.
local function evidence_matches(files, request)
  if json.kind(request.evidence) ~= "array" or not hash.is_digest(request.evidence_digest) then
    return fail("checker/request.json", "report-invalid", "it names no evidence and digest")
  end
  local rehashed = json.array()
  for _, e in ipairs(request.evidence) do
    if json.kind(e) ~= "object" or type(e.path) ~= "string" or not hash.is_digest(e.sha256) then
      return fail("checker/request.json", "report-invalid", "an evidence entry is not {path, sha256}")
    end
    local rel = "evidence/" .. e.path
    local sha, message, code = files.sha256(rel)
    if not sha and code == "evidence-corrupt" then return fail(rel, "evidence-changed", "%s", tostring(message)) end
    if not sha then return fail(rel, "report-missing", "the declared evidence is not retained: %s", tostring(message)) end
    if sha ~= e.sha256 then return fail(rel, "evidence-changed", "it no longer hashes to what the checker was given") end
    rehashed[#rehashed + 1] = { path = e.path, sha256 = sha }
  end
  if hash.evidence_digest(rehashed) ~= request.evidence_digest then
    return fail("checker/request.json", "evidence-changed", "its evidence digest is not the digest of its evidence")
  end
end

-- The request must be this run's: this attempt, and for a check the job
-- that was queued.
local function request_is_this_runs(request, run, n)
  local expected_run = ("%s/%d"):format(run.id, n)
  if request.run_id ~= expected_run then
    return fail("checker/request.json", "evidence-of-another-run", "it names run %s, not %s", tostring(request.run_id),
      expected_run)
  end
  local payload = run.job.payload or {}
  for _, k in ipairs { { "job_key", "job_id" }, { "check_id", "check_id" } } do
    local want = payload[k[1]]
    if want ~= nil and request[k[2]] ~= want then
      return fail("checker/request.json", "evidence-of-another-run", "its %s is not the queued job's", k[2])
    end
  end
end

-- What the retained receipt establishes when judged again.
local function judged(files, request)
  local record, file, reason, message = read_object(files, "logs/checker.json", policy.caps.document_bytes)
  if not record then return nil, file, reason, message end
  local bytes = files.read("checker/receipt.json", policy.caps.receipt_bytes)
  local paths = json.array()
  for _, e in ipairs(request.evidence) do paths[#paths + 1] = e.path end
  return receipt.judge({ status = record.status, code = record.code }, bytes, {
    job_id = request.job_id, run_id = request.run_id, check_id = request.check_id,
    check_digest = request.check_digest, specification_digest = request.specification_digest,
    identity = request.identity, evidence_digest = request.evidence_digest,
    obligations = json.kind(request.obligations) == "array" and request.obligations or {}, evidence = paths,
  })
end

--- The outcome attempt n's retained files support: outcome, or nil, file,
--  reason, message.  run: the store's run record (id, job, state).
function M.derive(run, n, files)
  local result, file, reason, message = read_object(files, "result.json", policy.caps.document_bytes)
  if not result then return nil, file, reason, message end
  local same, field = summary_matches(run.state.summary, result)
  if not same then
    return fail("state.json", "summary-not-in-evidence", "its summary's %s is not the one result.json records", field)
  end
  if result.outcome ~= "PASS" then
    -- A run that established nothing claims nothing; it is what it says.
    if result.reason == "cancelled" then return "cancelled" end
    if result.outcome ~= "BLOCKED" then
      return fail("result.json", "report-invalid", "its outcome %s is neither PASS nor BLOCKED", tostring(result.outcome))
    end
    return "BLOCKED"
  end
  if json.kind(result.tampering) ~= "array" or #result.tampering > 0 then return "BLOCKED" end
  local request
  request, file, reason, message = read_object(files, "checker/request.json", policy.caps.document_bytes)
  if not request then return nil, file, reason, message end
  file, reason, message = select(2, request_is_this_runs(request, run, n))
  if file then return nil, file, reason, message end
  file, reason, message = select(2, evidence_matches(files, request))
  if file then return nil, file, reason, message end
  if result.evidence_digest ~= request.evidence_digest then
    return fail("result.json", "evidence-changed", "its evidence digest is not the one the checker was given")
  end
  local verdict
  verdict, file, reason, message = judged(files, request)
  if not verdict then return nil, file, reason, message end
  return verdict.outcome
end

return M
