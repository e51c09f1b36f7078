--- `vkit ts_admit [--language rust|python|typescript] [--function NAME] [--signature [--contract JSON]
--  [--path PATH]]`:
-- the separate admission process.
--
-- Reads one source from stdin, parses it with the compiled-in tree-sitter
-- grammar of its language (Rust by default), applies the node/depth limits
-- and the language's admission profile (vkit.admission.<language>: Rust's
-- relational profile, the pure-function profiles of Python and
-- TypeScript), and writes exactly one JSON object and a newline to stdout
-- (schema "vkit.ts-admit.v1").  Exit 0 whether the source is admitted or
-- refused; any other exit, any stderr output, or any other stdout makes
-- the parent (vkit.relational.admission) fail the admission.  Running the
-- parser here keeps a crash, a hang or a flood of output in a process the
-- parent can bound and kill.  --signature applies the profile's signature
-- option (issue 34: 1 to 4 parameters of bool and fixed-width integers,
-- tuple results; policies/signatures.lua); without it, the seed's one
-- u32 -> u32, which the Rust relational method always asks for.
-- --contract adds that the function's declared signature must admit the
-- contract's (vkit.admission.signature.refusal: reason
-- signature_mismatch), decided here because it parses the source too;
-- --path names the source in that refusal's sentence.
local vkit = require "vkit"
local LANGUAGES = { rust = true, python = true, typescript = true }

local M = {
  summary = "internal: parse and admit one source from stdin (used by admission)",
  usage = [==[usage: vkit ts_admit [--language rust|python|typescript] [--function NAME]
                      [--signature [--contract SIGNATURE-JSON] [--path PATH]] < SOURCE

Internal: parses one source from standard input with the compiled-in
tree-sitter grammar of its language (default rust), applies that
language's admission profile's limits and rules, and writes one JSON
object (schema vkit.ts-admit.v1) to standard output.  --signature admits
a function of 1 to 4 parameters of bool and fixed-width integer types
returning one or a tuple (policies/signatures.lua) instead of the one
u32 -> u32 of the seed.  --contract SIGNATURE-JSON (a contract's
signature, {"params": [{"name", "type"}], "returns": ...}) refuses a
function whose declared types exclude it (reason signature_mismatch);
--path names the source in that sentence.  The Rust relational
method and the admission of change candidates run it as a separate
process they can bound and kill.

exit codes: 0 (admitted or refused: the JSON says which), 2 usage]==],
}

M.schema = "vkit.ts-admit.v1"

--- The response object for one source (a pure function of its inputs).
function M.response(source, result, parser)
  local null = vkit.json.null
  local response = {
    schema = M.schema,
    source_sha256 = vkit.hash.sha256(source),
    source_bytes = #source,
    admitted = result.admitted,
    nodes = result.nodes or null,
    depth = result.depth or null,
    parser = parser,
  }
  if result.admitted then
    response["function"], response.parameter = result["function"], result.parameter
  else
    for _, k in ipairs { "reason", "offset", "line", "column", "kind", "message" } do
      response[k] = result[k]
    end
  end
  return response
end

function M.run(argv)
  local opts, err = require("vkit.args").parse(argv, { options = { ["function"] = "string", language = "string",
                                                                    contract = "string", path = "string" },
                                                        flags = { signature = true }, max = 0 })
  if not opts then return require("vkit.cli").usage_error(err, "ts_admit") end
  local contract
  if opts.contract then
    if not (opts.signature and opts["function"]) then
      return require("vkit.cli").usage_error("--contract needs --signature and --function", "ts_admit")
    end
    local message
    contract, message = require("vkit.change.signature").parse(vkit.json.decode(opts.contract))
    if not contract then return require("vkit.cli").usage_error("--contract: " .. tostring(message), "ts_admit") end
  end
  local language = opts.language or "rust"
  if not LANGUAGES[language] then
    return require("vkit.cli").usage_error(("unknown language %q"):format(language), "ts_admit")
  end
  local profile = require("vkit.admission." .. language)
  local limits = vkit.policies.limits.admission
  -- One byte past the limit is enough to refuse the source as too large.
  local source = io.stdin:read(limits.max_source_bytes + 1) or ""
  local ts = require "vkit.ts"
  local result = profile.admit(ts, source, limits, { expected_function = opts["function"],
    signature = opts.signature and vkit.policies.signatures or nil })
  if contract and result.admitted then
    local refusal = require("vkit.admission.signature").refusal(ts, language, source, opts["function"], limits,
      vkit.policies.signatures, contract, opts.path)
    if refusal then
      refusal.nodes, refusal.depth = result.nodes, result.depth
      result = refusal
    end
  end
  io.stdout:write(vkit.json.encode(M.response(source, result, ts.identity(language))), "\n")
  return 0
end

return M
