--- Admission before trust (issue 29): whether a side's captured source is
-- inside its language's pure-function profile (vkit.admission.rust,
-- .python, .typescript), decided by the separate admission process
-- (vkit.admission.process: `vkit ts_admit --language L --function F`).
--
-- A candidate's observations establish what it does in real use only if
-- it cannot hold state between calls, look at its surroundings, or touch
-- what reports its value: that is what the profiles exclude.  A candidate
-- outside its profile is still observed (each input in fresh state where
-- that is cheap), but its conformance is a distinct outcome with a
-- distinct exit status, unless the host accepts it with
-- --trust-candidate-code.
--
-- The record (schema "vkit.pure-admission.v1"):
--   {schema, language, profile, admitted, outcome = admitted | refused |
--    failed, source = {path, sha256, bytes}, function, refusal = {rule
--    ("admission-<reason>"), reason, at ("<path>:<line>"), line, column,
--    offset, kind, message} | null, failure = {reason, message} | null,
--    parser (package versions and object hashes), admission_code
--    ({sha256, files}), process}
-- A failed admission process (crash, deadline, malformed answer) never
-- admits.
local vkit = require "vkit.core"
local json = require "vkit.json"
local hash = require "vkit.hash"
local process = require "vkit.admission.process"

local M = {}

M.SCHEMA = "vkit.pure-admission.v1"

M.code_files = {
  "lua/vkit/commands/ts_admit.lua",
  "lua/vkit/change/admission.lua",
  "lua/vkit/admission/process.lua",
  "lua/vkit/admission/syntax.lua",
  "lua/vkit/admission/shape.lua",
  "lua/vkit/admission/signature.lua",
  "lua/vkit/change/signature.lua",
  "lua/vkit/admission/rust.lua",
  "lua/vkit/admission/python.lua",
  "lua/vkit/admission/typescript.lua",
}

local code_identity
--- SHA-256 of the admission code (the evidence digest of its files).
function M.code_identity()
  if not code_identity then
    local files = {}
    for _, rel in ipairs(M.code_files) do
      files[#files + 1] = { path = rel, sha256 = assert(hash.file(vkit.root .. "/" .. rel)) }
    end
    code_identity = { sha256 = assert(hash.evidence_digest(files)), files = files }
  end
  return code_identity
end

--- The rule name of a refusal reason: "admission-<reason>" with dashes.
function M.rule(reason)
  return "admission-" .. tostring(reason):gsub("_", "-")
end

-- Admission is a pure function of (language, function, source bytes) and
-- this binary: decided once per process.
local memo = {}

--- Admits the source of one side.  path: its path in the repository (for
--  messages); opts.launcher / deadline_ms as vkit.admission.process.run;
--  opts.signature: the profile's signature option (issue 34: `ts_admit
--  --signature`, the profile named pure-<language>-signature);
--  opts.contract: with it, the contract's signature (its JSON form,
--  vkit.change.multi.contract.signature_json).  The source's declared
--  signature must then admit it (as many parameters, each declared type
--  admitting the contract's at its position, the same result shape): a
--  side called with values its own declared types exclude (a TypeScript
--  `bigint` given a number, a Python `bool` given an int) is observed in
--  calls its typed callers cannot make, so it is refused with rule
--  admission-signature-mismatch.  The admission process decides it
--  (`ts_admit --contract`), as it parses the source.
function M.admit(language, path, source, fn, opts)
  local signature = opts and opts.signature and true or false
  local contract = signature and opts.contract and json.encode(opts.contract) or nil
  local key = table.concat({ language, fn, hash.sha256(source), tostring(signature), contract or "", path }, "\0")
  if memo[key] and not (opts and opts.launcher) then
    local copy = {}
    for k, v in pairs(memo[key]) do copy[k] = v end
    copy.source = { path = path, sha256 = copy.source.sha256, bytes = copy.source.bytes }
    return copy
  end
  local profile = require("vkit.admission." .. language)
  local ts_identity = require("vkit.ts").identity(language)
  local record = {
    schema = M.SCHEMA, language = language, profile = "pure-" .. language .. (signature and "-signature" or ""),
    ["function"] = fn, source = { path = path, sha256 = hash.sha256(source), bytes = #source },
    parser = ts_identity, admission_code = M.code_identity(),
    refusal = json.null, failure = json.null, process = json.null,
  }
  local args = { "--language", language, "--function", fn }
  if signature then args[#args + 1] = "--signature" end
  local reasons = profile.reasons
  if contract then
    for _, a in ipairs { "--contract", contract, "--path", path } do args[#args + 1] = a end
    reasons = setmetatable({ signature_mismatch = require("vkit.admission.signature").MISMATCH },
      { __index = profile.reasons })
  end
  local response, reason, detail, proc_record = process.run(source, args, reasons, opts)
  local function fail(why, message)
    record.admitted, record.outcome = false, "failed"
    record.failure = { reason = why, message = process.failures[why] .. (message and (": " .. message) or "") }
    record.refusal = { rule = "admission-failed", reason = why, at = path, message = record.failure.message }
    return record
  end
  if not response then
    record.process = proc_record or json.null
    return fail(reason, detail)
  end
  record.process = reason
  if not process.same(response.parser, ts_identity) then return fail("admission_parser_mismatch") end
  if response.admitted and response["function"] ~= fn then
    return fail("admission_malformed_response", "the admitted function is not the bound one")
  end
  if response.admitted then
    record.admitted, record.outcome = true, "admitted"
  else
    record.admitted, record.outcome = false, "refused"
    record.refusal = { rule = M.rule(response.reason), reason = response.reason,
                       at = ("%s:%d"):format(path, response.line), line = response.line, column = response.column,
                       offset = response.offset, kind = response.kind, message = response.message }
  end
  if not (opts and opts.launcher) then memo[key] = record end
  return record
end

--- The record of a source that could not be read whole to be admitted
--  (larger than the admission limit, or unreadable): refused.
function M.unread(language, path, fn, message)
  return {
    schema = M.SCHEMA, language = language, profile = "pure-" .. language, ["function"] = fn,
    source = { path = path }, admitted = false, outcome = "refused", failure = json.null, process = json.null,
    parser = require("vkit.ts").identity(language), admission_code = M.code_identity(),
    refusal = { rule = "admission-too-large", reason = "too_large", at = path,
                message = "the source could not be read within the admission limit: " .. tostring(message) },
  }
end

--- The sentence a report prints for a candidate that was not admitted.
function M.not_established(record)
  local r = record.refusal ~= json.null and record.refusal or { rule = "admission-failed", at = record.source.path }
  return ("the candidate is outside the pure profile (%s, %s), so state, observer tampering and environment "
    .. "detection are not excluded"):format(r.rule, r.at)
end

return M
