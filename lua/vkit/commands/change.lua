--- `vkit change certify|intent init|request`: certify a candidate against
-- its accepted intent; scaffold an intent for review; build a request.
local args = require "vkit.args"
local json = require "vkit.json"
local fs = require "vkit.fs"
local schema = require "vkit.schema"
local change_runs = require "vkit.runs.change"
local outcomes = require "vkit.cli.outcomes"
local exit = require "vkit.cli.exit"
local store_mod = require "vkit.store"
local policy = require("vkit.policy").store

local cli = require "vkit.cli"
local intent_command = require "vkit.commands.change.intent"
local request_command = require "vkit.commands.change.request"

local USAGE = [[usage: vkit change certify --project PATH --request REQUEST.json --trusted-target COMMIT
                           [--method auto|finite_paired|exhaustive|rust_exhaustive|rust_kani]
                           [--kani-toolchain PIN.json] [--trust-candidate-code]
                           [--store URL] [--wait S] [--json]

Binds the request (base and candidate commits, accepted intent digest,
finite claim) to the accepted intent at the host's exact --trusted-target,
then runs the selected methods as one durable background job and prints the run
summary with each method's coverage; the job continues in the background.
`vkit run wait --run ID`, `vkit run show --run ID` and `vkit run report --run
ID` follow it.

options:
  --project PATH         the project, a Git repository
  --store URL            the job store: postgresql://... (libpq syntax, no password
                         in it) or VKIT_STORE; default the project's file store
  --request FILE         the finite request, strict JSON
  --trusted-target OID   the host's exact target commit (40 or 64 hex digits)
  --method M             auto (default: finite_paired, then exhaustive, and
                         rust_kani with a closed-format pin on a Rust binding),
                         finite_paired, exhaustive, rust_exhaustive (vkit's
                         own) or rust_kani
  --kani-toolchain FILE  the host's closed-format Kani toolchain pin (JSON)
  --trust-candidate-code accept a candidate outside the pure-function profile
                         at exit 0 when every accepted input conforms
                         (outcome all_inputs_conform_trusted); without it such
                         a candidate ends unadmitted_conform, exit 8
  --wait S               seconds to wait, a decimal from 0 to 60 (default 0)
  --json                 the run summary as JSON on stdout
  --help                 this text

A malformed argument is a usage error before anything is queued; a request
that does not bind to the accepted intent is a blocked run.

]] .. cli.EXIT_TEXT

local function usage_error(message)
  return cli.usage_error(message, "change certify")
end

local function read_json_file(path, what)
  local bytes, message = fs.read(path, 1024 * 1024)
  if not bytes then return nil, ("cannot read the %s %s: %s"):format(what, path, message) end
  local doc, dmessage = json.decode(bytes)
  if doc == nil then return nil, ("the %s %s is not valid JSON: %s"):format(what, path, dmessage) end
  return doc
end

local CHANGE_USAGE = [[usage: vkit change certify --project PATH --request REQUEST.json --trusted-target COMMIT [...]
       vkit change intent init --language L --source PATH --function NAME --domain SET --observations SET [...]
       vkit change request --intent DIGEST --base COMMIT --candidate COMMIT [...]

Change certification: `certify` binds a candidate to its accepted
intent and runs the certification methods; `intent init` writes a proposed
intent for review (it never accepts anything); `request` builds the finite
request certify reads.  `vkit change ACTION --help` describes one action.

]] .. cli.EXIT_TEXT

return {
  summary = "certify a change against its accepted intent; scaffold an intent; build a request",
  usage = CHANGE_USAGE,
  help = { certify = USAGE, intent = intent_command.USAGE, request = request_command.USAGE },
  run = function(argv)
    if argv[1] == "intent" then
      if argv[2] ~= "init" then
        local near = argv[2] and require("vkit.cli.suggest").hint(argv[2], { "init" }) or ""
        return cli.usage_error("change intent needs the action: init" .. near, "change intent init")
      end
      return intent_command.init(table.move(argv, 3, #argv, 1, {}))
    end
    if argv[1] == "request" then return request_command.run(table.move(argv, 2, #argv, 1, {})) end
    if argv[1] ~= "certify" then
      return cli.usage_error("change needs one of the actions: certify, intent init, request", "change")
    end
    local opts, err = args.parse(table.move(argv, 2, #argv, 1, {}), {
      flags = { json = true, trust_candidate_code = true },
      options = { project = "string", request = "string", trusted_target = "string", method = "string",
                  kani_toolchain = "string", wait = "number", store = "string" },
    })
    if not opts then return usage_error(err) end
    for _, required in ipairs { "project", "request", "trusted_target" } do
      if not opts[required] then return usage_error(("--%s is required"):format(required:gsub("_", "-"))) end
    end
    if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
      return usage_error(("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds))
    end
    -- The host's exact target: a full commit id, never a name Git would
    -- resolve (a branch, a tag, an abbreviation).
    if not schema.is_commit_id(opts.trusted_target) then
      return usage_error(("--trusted-target must be a full commit id (40 or 64 lowercase hex digits), not %q")
        :format(opts.trusted_target))
    end
    local problem = change_runs.method_problem(opts.method or "auto")
    if problem then return usage_error(problem) end
    local request, message = read_json_file(opts.request, "request")
    if not request then return usage_error(message) end
    local pin
    if opts.kani_toolchain then
      pin, message = read_json_file(opts.kani_toolchain, "Kani toolchain pin")
      if not pin then return usage_error(message) end
    end
    local store, status = cli.open_store(opts.project, { git = true, store = opts.store })
    if not store then return status end
    local id
    id, message = change_runs.submit(store, { request = request, trusted_target = opts.trusted_target,
                                             method = opts.method, kani_toolchain = pin,
                                             trust_candidate_code = opts.trust_candidate_code or nil })
    if not id then return usage_error(message) end
    local run = change_runs.wait(store, id, opts.wait or 0, function(text) io.stderr:write(text) end)
    local shadow = change_runs.shadow(store, run)
    if opts.json then
      print(json.encode(shadow, { indent = 2 }))
    elseif store_mod.TERMINAL[run.state.status] then
      -- Done: what the run established, as `vkit run show` prints it.
      local report = require "vkit.report"
      io.stdout:write(report.render(assert(report.model(store, run)), "text",
        require("vkit.terminal").style(io.stdout, false)))
    else
      outcomes.print_change(shadow)
    end
    return exit.change_exit(run)
  end,
}
