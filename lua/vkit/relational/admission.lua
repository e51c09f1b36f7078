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
local vkit = require "vkit"
local profile = require "vkit.relational.profile"

local M = {}

M.schema = "vkit.rust-source-admission.v1"
M.response_schema = "vkit.ts-admit.v1"

--- The files whose bytes define admission (paths under vkit.root).
M.code_files = {
  "lua/vkit/commands/ts_admit.lua",
  "lua/vkit/relational/admission.lua",
  "lua/vkit/relational/profile.lua",
}

M.failures = {
  admission_unavailable = "the process launcher (vkit.proc) is not available",
  admission_launch_failed = "the admission process could not be started",
  admission_crashed = "the admission process was killed by a signal",
  admission_timeout = "the admission process exceeded its deadline",
  admission_output_capped = "the admission process exceeded its output cap",
  admission_exit_status = "the admission process exited with a failure status",
  admission_malformed_response = "the admission process gave a malformed response",
  admission_source_mismatch = "the admission process answered for different source bytes",
  admission_parser_mismatch = "the admission process reported a different parser identity",
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

local function is_int(v, min, max)
  return math.type(v) == "integer" and v >= min and (max == nil or v <= max)
end

local function is_name(v)
  return type(v) == "string" and v:match "^[%a_][%w_]*$" ~= nil
end

local COMMON = { "schema", "source_sha256", "source_bytes", "admitted", "nodes", "depth", "parser" }
local ADMITTED = { "function", "parameter" }
local REFUSED = { "reason", "offset", "line", "column", "kind", "message" }

-- nil when the response is well formed for this source, else why not.
local function response_problem(r, source)
  if vkit.json.kind(r) ~= "object" then return "the response is not a JSON object" end
  if r.schema ~= M.response_schema then return "unknown response schema" end
  local expected = {}
  for _, k in ipairs(COMMON) do expected[k] = true end
  for _, k in ipairs(r.admitted == true and ADMITTED or REFUSED) do expected[k] = true end
  for k in pairs(r) do
    if not expected[k] then return ("unexpected field %q"):format(tostring(k)) end
  end
  for k in pairs(expected) do
    if r[k] == nil then return ("missing field %q"):format(k) end
  end
  if type(r.admitted) ~= "boolean" then return "admitted is not a boolean" end
  if not vkit.hash.is_digest(r.source_sha256) then -- 64 lowercase hex digits, as vkit writes them
    return "source_sha256 is not a SHA-256"
  end
  if not is_int(r.source_bytes, 0) then return "source_bytes is not a count" end
  local null = vkit.json.null
  if not ((r.nodes == null and r.depth == null) or (is_int(r.nodes, 1) and is_int(r.depth, 1))) then
    return "nodes and depth must both be counts or both null"
  end
  if vkit.json.kind(r.parser) ~= "object" then return "parser is not an object" end
  if r.admitted then
    if not is_name(r["function"]) or not is_name(r.parameter) then return "function or parameter is not a name" end
    if r.nodes == null then return "an admitted source must report its tree size" end
  else
    if not profile.reasons[r.reason] then return ("unknown refusal reason %q"):format(tostring(r.reason)) end
    if not is_int(r.offset, 0, #source) then return "offset is outside the source" end
    if not is_int(r.line, 1) or not is_int(r.column, 1) then return "line or column is not a position" end
    if type(r.kind) ~= "string" or type(r.message) ~= "string" then return "kind or message is not text" end
  end
  return nil
end

-- Exactly one JSON document and one newline, decoded strictly.
local function decode_response(stdout)
  if stdout:sub(-1) ~= "\n" then return nil, "the response does not end with a newline" end
  local body = stdout:sub(1, -2)
  if body:find("\n", 1, true) then return nil, "the response is more than one line" end
  local value, message = vkit.json.decode(body)
  if value == nil then return nil, "the response is not JSON: " .. tostring(message) end
  return value
end

local function same(a, b)
  return vkit.json.canonical(a) == vkit.json.canonical(b)
end

--- The bounds of the admission process: the policy's deadline and cap;
-- a caller may only lower the deadline.
function M.bounds(opts)
  local limits = vkit.policies.limits.admission
  local deadline = limits.deadline_ms
  if opts and opts.deadline_ms then deadline = math.min(deadline, opts.deadline_ms) end
  return {
    max_source_bytes = limits.max_source_bytes,
    max_nodes = limits.max_nodes,
    max_depth = limits.max_depth,
    deadline_ms = deadline,
    output_cap = limits.output_cap,
  }
end

-- Maps a process result to a failure reason, or nil for a clean exit.
function M.process_failure(result)
  local status = result.status
  if status == "exited" then
    if result.code ~= 0 then return "admission_exit_status", ("exit status %s"):format(tostring(result.code)) end
    if result.stderr ~= nil and result.stderr ~= "" then
      return "admission_malformed_response", "the admission process wrote to stderr"
    end
    return nil
  end
  if status == "signaled" then return "admission_crashed", ("signal %s"):format(tostring(result.signal)) end
  if status == "timeout" then return "admission_timeout", nil end
  if status == "output-capped" then return "admission_output_capped", nil end
  if status == "launch-failed" or status == "pin-mismatch" then return "admission_launch_failed", result.message or result.error end
  return "admission_launch_failed", ("process status %s"):format(tostring(status))
end

--- Admits one source.  opts: expected_function (the binding's declared
-- name), deadline_ms (may only lower the policy deadline), and launcher
-- {exe, argv} to run another program in place of `vkit ts_admit` (the
-- specs use it to run crashing, hanging and flooding processes).
function M.admit(source, opts)
  opts = opts or {}
  assert(type(source) == "string", "source must be a string")
  local bounds = M.bounds(opts)
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

  local ok, proc = pcall(require, "vkit.proc")
  if not ok or type(proc) ~= "table" or type(proc.run) ~= "function" then return fail("admission_unavailable") end
  local launcher = opts.launcher or { exe = vkit.exe, argv = { vkit.exe, "ts_admit" } }
  local argv = table.move(launcher.argv, 1, #launcher.argv, 1, {})
  if opts.expected_function and not opts.launcher then
    argv[#argv + 1] = "--function"
    argv[#argv + 1] = opts.expected_function
  end
  local result = proc.run {
    exe = launcher.exe,
    argv = argv,
    env = {},
    stdin = source,
    deadline_ms = bounds.deadline_ms,
    output_cap = bounds.output_cap,
  }
  record.process = {
    status = result.status, code = result.code or null, signal = result.signal or null,
    wall_ms = result.wall_ms or null,
  }
  local reason, detail = M.process_failure(result)
  if reason then return fail(reason, detail) end
  local response, why = decode_response(result.stdout or "")
  if not response then return fail("admission_malformed_response", why) end
  why = response_problem(response, source)
  if why then return fail("admission_malformed_response", why) end
  if response.source_sha256 ~= record.source.sha256 or response.source_bytes ~= #source then
    return fail("admission_source_mismatch")
  end
  if not same(response.parser, ts_identity) then return fail("admission_parser_mismatch") end
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
