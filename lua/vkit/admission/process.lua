--- The separate admission process (seed 001): `vkit ts_admit` parses one
-- source with the compiled-in tree-sitter grammar and applies a profile,
-- in a process this one bounds and kills.  Used by the Rust relational
-- admission (vkit.relational.admission) and the pure-function admission of
-- candidates (vkit.change.admission).
--
-- `run(source, args, opts)` runs it under the admission deadline (10 s)
-- and combined output cap (64 KiB) from policies/limits.lua, sends the
-- source on stdin, and accepts only a clean exit with empty stderr and
-- exactly one well-formed response on stdout (schema "vkit.ts-admit.v1")
-- about these very bytes, parsed by this very parser.  A launch failure,
-- crash, deadline, capped output, non-zero exit or malformed response
-- fails admission; it never admits.  The deadline and cap bound time and
-- output only: there is no OS memory quota.
local vkit = require "vkit.core"

local M = {}

M.response_schema = "vkit.ts-admit.v1"

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
function M.response_problem(r, source, reasons)
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
    if not reasons[r.reason] then return ("unknown refusal reason %q"):format(tostring(r.reason)) end
    if not is_int(r.offset, 0, #source) then return "offset is outside the source" end
    if not is_int(r.line, 1) or not is_int(r.column, 1) then return "line or column is not a position" end
    if type(r.kind) ~= "string" or type(r.message) ~= "string" then return "kind or message is not text" end
  end
  return nil
end

-- Exactly one JSON document and one newline, decoded strictly.
function M.decode_response(stdout)
  if stdout:sub(-1) ~= "\n" then return nil, "the response does not end with a newline" end
  local body = stdout:sub(1, -2)
  if body:find("\n", 1, true) then return nil, "the response is more than one line" end
  local value, message = vkit.json.decode(body)
  if value == nil then return nil, "the response is not JSON: " .. tostring(message) end
  return value
end

function M.same(a, b)
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

--- Runs the admission process on one source.  args: its arguments after
--  `ts_admit` (profile, language, function); opts.launcher {exe, argv} runs
--  another program instead (the specs run crashing, hanging and flooding
--  ones); opts.deadline_ms may only lower the deadline.  reasons: the
--  profile's refusal reasons.  Returns response, process record; or nil,
--  failure reason, detail, process record.
function M.run(source, args, reasons, opts)
  opts = opts or {}
  local bounds = M.bounds(opts)
  local null = vkit.json.null
  local ok, proc = pcall(require, "vkit.proc")
  if not ok or type(proc) ~= "table" or type(proc.run) ~= "function" then return nil, "admission_unavailable" end
  local launcher = opts.launcher or { exe = vkit.exe, argv = { vkit.exe, "ts_admit" } }
  local argv = table.move(launcher.argv, 1, #launcher.argv, 1, {})
  if not opts.launcher then table.move(args, 1, #args, #argv + 1, argv) end
  local result = proc.run {
    exe = launcher.exe, argv = argv, env = {}, stdin = source,
    deadline_ms = bounds.deadline_ms, output_cap = bounds.output_cap,
  }
  local record = { status = result.status, code = result.code or null, signal = result.signal or null,
                   wall_ms = result.wall_ms or null }
  local reason, detail = M.process_failure(result)
  if reason then return nil, reason, detail, record end
  local response, why = M.decode_response(result.stdout or "")
  if not response then return nil, "admission_malformed_response", why, record end
  why = M.response_problem(response, source, reasons)
  if why then return nil, "admission_malformed_response", why, record end
  if response.source_sha256 ~= vkit.hash.sha256(source) or response.source_bytes ~= #source then
    return nil, "admission_source_mismatch", nil, record
  end
  return response, record
end

return M
