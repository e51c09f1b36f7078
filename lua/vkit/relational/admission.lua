--- Source admission in a separate process (seed 001).
--
-- `admit(source, opts)` re-runs this vkit binary as `vkit ts_admit` under
-- vkit.proc with the admission deadline (10 s) and combined output cap
-- (64 KiB) from policies/limits.lua, sends the source on stdin, and accepts
-- only a clean exit with empty stderr and exactly one well-formed response
-- on stdout.  A launch failure, crash, deadline, capped output, non-zero
-- exit or malformed response fails admission; it never admits.
--
-- The returned record (schema "vkit.rust-source-admission.v1") holds the
-- outcome, the source identity, the refusal with its byte offset, the
-- parser identity (package versions, grammar ABI), the native module hashes
-- (the vkit binary that parsed, the runtime and grammar objects it was built
-- from) and the SHA-256 of the admission code.  The deadline and cap bound
-- time and output only: there is no OS memory quota.
local vkit = require "vkit.core"
local profile = require "vkit.admission.rust"
local process = require "vkit.admission.process"

local M = {}

M.schema = "vkit.rust-source-admission.v1"
M.response_schema = process.response_schema
M.failures = process.failures
M.bounds = process.bounds
M.process_failure = process.process_failure

--- The files whose bytes define admission (paths under vkit.root).
M.code_files = {
  "lua/vkit/commands/ts_admit.lua",
  "lua/vkit/relational/admission.lua",
  "lua/vkit/admission/rust.lua",
  "lua/vkit/admission/syntax.lua",
  "lua/vkit/admission/process.lua",
}

--- SHA-256 of the admission code: the evidence digest of its files.
function M.code_identity()
  local files = {}
  for _, rel in ipairs(M.code_files) do
    local sha = assert(vkit.hash.file(vkit.root .. "/" .. rel))
    files[#files + 1] = { path = rel, sha256 = sha }
  end
  return { sha256 = assert(vkit.hash.evidence_digest(files)), files = files }
end

--- Admits one source.  opts: expected_function (the binding's declared
-- name), deadline_ms (may only lower the policy deadline), and launcher
-- {exe, argv} to run another program in place of `vkit ts_admit` (the
-- specs use it to run crashing, hanging and flooding processes).
function M.admit(source, opts)
  opts = opts or {}
  assert(type(source) == "string", "source must be a string")
  local bounds = process.bounds(opts)
  local null = vkit.json.null
  local ts_identity = require("vkit.ts").identity()
  local exe_sha = vkit.hash.file(vkit.exe)
  local record = {
    schema = M.schema,
    source = { sha256 = vkit.hash.sha256(source), bytes = #source },
    limits = bounds,
    parser = ts_identity,
    packages = {
      [ts_identity.runtime.package] = ts_identity.runtime.version,
      [ts_identity.grammar.package] = ts_identity.grammar.version,
    },
    grammar_abi = ts_identity.grammar.abi,
    native_modules = {
      vkit_binary = { path = vkit.exe, sha256 = exe_sha or null },
      runtime_object_sha256 = ts_identity.runtime.object_sha256,
      grammar_object_sha256 = ts_identity.grammar.object_sha256,
    },
    admission_code = M.code_identity(),
    ["function"] = null, parameter = null, tree = null, rejection = null, failure = null, process = null,
  }
  local function fail(reason, detail)
    record.outcome, record.admitted = "failed", false
    record.failure = { reason = reason, message = M.failures[reason] .. (detail and (": " .. detail) or "") }
    return record
  end

  -- Refused before any process runs: the parser never sees oversize input.
  if #source > bounds.max_source_bytes then
    record.outcome, record.admitted = "rejected", false
    local r = profile.refusal(source, "too_large", bounds.max_source_bytes, "source",
      ("%d bytes, limit %d"):format(#source, bounds.max_source_bytes))
    record.rejection = { reason = r.reason, offset = r.offset, line = r.line, column = r.column, kind = r.kind, message = r.message }
    return record
  end

  local args = opts.expected_function and { "--function", opts.expected_function } or {}
  local response, reason, detail, process_record = process.run(source, args, profile.reasons, opts)
  if not response then
    record.process = process_record or null
    return fail(reason, detail)
  end
  record.process = reason
  if not process.same(response.parser, ts_identity) then return fail("admission_parser_mismatch") end
  if response.admitted and opts.expected_function and response["function"] ~= opts.expected_function then
    return fail("admission_malformed_response", "the admitted function is not the requested one")
  end

  if response.nodes ~= null then record.tree = { nodes = response.nodes, depth = response.depth } end
  if response.admitted then
    record.outcome, record.admitted = "admitted", true
    record["function"], record.parameter = response["function"], response.parameter
  else
    record.outcome, record.admitted = "rejected", false
    record.rejection = {
      reason = response.reason, offset = response.offset, line = response.line,
      column = response.column, kind = response.kind, message = response.message,
    }
  end
  return record
end

return M
