--- `vkit change certify`: bind a candidate to its accepted intent and run
-- the certification methods as one durable job.  Two forms:
--
--   --base REV --candidate REV [--trusted-target REV] [--intent D]
--     [--timeout T]   the one command for CI: the accepted intent whose
--     bound function the change touches (or --intent), its request built in
--     memory, the trusted target the resolved base (which must be the
--     --trusted-target or in its history when one is named), and a wait up
--     to T (default policies/store.lua certify_timeout_seconds) for the
--     verdict and its exit status;
--   --request FILE --trusted-target REV [--wait S]           the request
--     built beforehand (`vkit change request`).
--
-- Revisions (HEAD, main~1, a tag, a unique prefix) are resolved here, once,
-- to full ids before anything is bound (vkit.cli.repository); the request
-- and the job hold only full ids.
local args = require "vkit.args"
local json = require "vkit.json"
local fs = require "vkit.fs"
local change_runs = require "vkit.runs.change"
local outcomes = require "vkit.cli.outcomes"
local exit = require "vkit.cli.exit"
local repository = require "vkit.cli.repository"
local duration = require "vkit.cli.duration"
local store_mod = require "vkit.store"
local combine = require "vkit.change.combine"
local scaffold = require "vkit.change.scaffold"
local intent_for = require "vkit.commands.change.intent_for"
local trusted_base = require "vkit.change.trusted_base"
local policy = require("vkit.policy").store

local cli = require "vkit.cli"

local M = {}

M.USAGE = [[usage: vkit change certify --base REV --candidate REV [--trusted-target REV]
                           [--intent DIGEST|FILE] [--timeout T] [--project DIR] [options]
       vkit change certify --request REQUEST.json --trusted-target REV [--wait S | --timeout T]
                           [--project DIR] [options]
options: [--method auto|finite_paired|exhaustive|rust_exhaustive|rust_kani]
         [--kani-toolchain PIN.json] [--trust-candidate-code] [--store URL] [--json]

The first form is the one command for CI:

  vkit change certify --base origin/main --candidate HEAD --timeout 10m

finds the intent the base accepts whose bound function the change touches
(or takes --intent), builds the request for its contract in memory, binds
it with the resolved base as the trusted target, runs the methods as one
durable job, waits up to T for the verdict, prints it in words and exits
with its status (0 only when every accepted input was checked and conforms).

Intents are read from the base only; the candidate's edits to them are
refused by preflight.  With --trusted-target (the branch the host
protects), the base must be that commit or in its history, and the intent
must still be accepted there under the same difference policy
(base-not-in-trusted-target, intent-not-accepted-at-trusted-target,
difference-policy-differs-at-trusted-target: exit 1, nothing queued); without
it, the base the caller gave is the trusted target, and the output says so:
  --base "$(git merge-base origin/main HEAD)" --trusted-target origin/main
is the form for a job whose base the change's author could choose.
When several accepted intents bind the changed file, the one whose
function's definition changed is taken only if nothing else of that
language changed (the rest of the file, another .rs/.py/.ts file or one
it loads: .so, .pyc, .js, .json, Cargo.toml, ...) and
nothing else names it; the others are named "not certified".
Otherwise name one with --intent, and certify each.

The second form binds a request written beforehand (`vkit change request`)
to the accepted intent at --trusted-target; with --wait S (0..60, default 0)
it returns as soon as S passes, and `vkit run wait latest` follows the run.

A revision is anything `git rev-parse` names: a full id, a unique prefix,
HEAD, a branch or tag, main~1.  It is resolved once, here, to a full commit
id; the request and the run record only full ids.  The project is the Git
work tree holding --project (default: the current directory), found upward
as git does.

options:
  --base REV             the base, also the trusted target: the commit whose
                         accepted intents bind the change (with
                         --trusted-target: that commit or in its history)
  --candidate REV        the candidate commit
  --intent D             the accepted intent revision: its digest, or its
                         revision file (default: found, see above)
  --request FILE         a finite request written beforehand, strict JSON
  --trusted-target REV   the host's target commit; with --base, the trusted
                         branch the base must be (or be in the history of)
  --timeout T            wait up to T for the verdict: 90, 90s, 10m, 2h (at
                         most 6h); the one command's default is 30m
  --wait S               seconds to wait, a decimal from 0 to 60
  --project DIR          the repository (default: the current directory's)
  --store URL            the job store: postgresql://... (libpq syntax, no password
                         in it) or VKIT_STORE; default the project's file store
  --method M             auto (default: finite_paired, then exhaustive, and
                         rust_kani with a closed-format pin on a Rust binding),
                         finite_paired, exhaustive, rust_exhaustive (vkit's
                         own) or rust_kani
  --kani-toolchain FILE  the host's closed-format Kani toolchain pin (JSON)
  --trust-candidate-code accept a candidate outside the pure-function profile
                         at exit 0 when every accepted input conforms
                         (outcome all_inputs_conform_trusted); without it such
                         a candidate ends unadmitted_conform, exit 8
  --json                 the run summary as JSON on stdout
  --help                 this text

A malformed argument or a revision that names no commit is a usage error
before anything is queued; a request that does not bind to the accepted
intent is a blocked run (exit 1, as is an --intent the base does not
hold).  Still pending when the wait ends: exit 4, and `vkit run wait
latest --timeout T` goes on waiting.

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

-- The options, checked: opts and how long to wait, or nil and why.
local function check(opts)
  local one = opts.base or opts.candidate
  if one then
    if opts.request then
      return nil, "give --base and --candidate, or --request and --trusted-target, not both"
    end
    if not (opts.base and opts.candidate) then return nil, "--base and --candidate go together" end
    if opts.wait then return nil, "the one command waits with --timeout T (--wait belongs to --request)" end
  else
    if opts.intent then return nil, "--intent belongs to --base and --candidate" end
    for _, required in ipairs { "request", "trusted_target" } do
      if not opts[required] then
        return nil, ("--%s is required (or --base and --candidate)"):format(required:gsub("_", "-"))
      end
    end
  end
  if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
    return nil, ("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds)
  end
  if opts.wait and opts.timeout then return nil, "give --wait or --timeout, not both" end
  local seconds = opts.wait or (one and policy.certify_timeout_seconds or 0)
  if opts.timeout then
    local why
    seconds, why = duration.parse(opts.timeout)
    if not seconds then return nil, why end
  end
  local problem = change_runs.method_problem(opts.method or "auto")
  if problem then return nil, problem end
  return opts, seconds
end

-- Resolves each revision option in place to its full commit id.
local function resolve_all(repo, where, opts, names)
  for _, name in ipairs(names) do
    if opts[name] then
      local id, why = repository.resolve(repo, opts[name], where)
      if not id then return nil, ("--%s %s"):format(name:gsub("_", "-"), why) end
      opts[name] = id
    end
  end
  return true
end

-- The request of the one command, built in memory: {request, found (the
-- intent intent_for found; nil with --intent)}, or nil, why and an exit
-- status.  With --trusted-target the base must stand on it
-- (vkit.change.trusted_base).
local function build_request(repo, where, opts)
  local digest, found, why, code
  if opts.trusted_target then
    local ok
    ok, code, why = trusted_base.contains(repo, opts.trusted_target, opts.base)
    if not ok then return nil, ("%s (%s)"):format(why, code), cli.EXIT.refused end
  end
  if opts.intent then
    digest, why = intent_for.named(opts.intent)
    if not digest then return nil, why end
  else
    found, why = intent_for.find(repo, opts.base, opts.candidate, where)
    if not found then
      if opts.base == opts.candidate then why = "the candidate is the base: nothing changed; " .. why end
      return nil, why
    end
    digest = found.digest
    local escape = require("vkit.terminal").escape
    io.stderr:write(("vkit: intent %s (%s, %s in %s)\n"):format(digest:sub(1, 12), escape(tostring(found.requirement)),
      escape(tostring(found["function"])), escape(tostring(found.source))))
    local uncertified = intent_for.uncertified_line(found)
    if uncertified then io.stderr:write("vkit: ", (uncertified:gsub("\n", "\nvkit: ")), "\n") end
  end
  if opts.trusted_target then
    local ok
    ok, code, why = trusted_base.still_accepted(repo, opts.trusted_target, opts.base, digest)
    if not ok then return nil, ("%s (%s)"):format(why, code), cli.EXIT.refused end
  end
  local bytes
  bytes, why = scaffold.request(repo, { base = opts.base, candidate = opts.candidate, intent = digest })
  -- as `vkit change request` answers it: the base holds no such revision
  if not bytes then return nil, why, cli.EXIT.refused end
  return { request = json.decode(bytes), found = found }
end

-- Which commit the run trusted, in words (the run's report says the same).
local function trusted_line(opts)
  return "trusted target: " .. trusted_base.describe(opts.base, opts.trusted_target)
end

-- The verdict in words, last, where a CI log's reader looks.  A failed
-- run's error is run-supplied text: escaped, so a line break in it cannot
-- start a line of its own (a CI runner reads `::error ...` at a line's
-- start as a command).
function M.verdict(run, code, seconds)
  if not store_mod.TERMINAL[run.state.status] then
    return ("verdict: still %s after %s; `vkit run wait %s --timeout 30m` goes on waiting (exit %d)"):format(
      run.state.status, seconds >= 60 and ("%gm"):format(seconds / 60) or ("%gs"):format(seconds), run.id, code)
  end
  if run.state.status == "failed" then
    return ("verdict: the run failed: %s (exit %d)"):format(require("vkit.terminal").escape(tostring(run.state.error)),
      code)
  end
  local known = combine.outcome(run.state.outcome)
  return ("verdict: %s: %s (exit %d)"):format(require("vkit.terminal").escape(tostring(run.state.outcome)),
    known and known.meaning or "", code)
end

function M.run(argv)
  local opts, err = args.parse(argv, {
    flags = { json = true, trust_candidate_code = true },
    options = { project = "string", request = "string", trusted_target = "string", method = "string",
                kani_toolchain = "string", wait = "number", store = "string", base = "string",
                candidate = "string", intent = "string", timeout = "string" },
  })
  if not opts then return usage_error(err) end
  local seconds
  opts, seconds = check(opts)
  if not opts then return usage_error(seconds) end
  local request, message
  if opts.request then
    request, message = read_json_file(opts.request, "request")
    if not request then return usage_error(message) end
  end
  local pin
  if opts.kani_toolchain then
    pin, message = read_json_file(opts.kani_toolchain, "Kani toolchain pin")
    if not pin then return usage_error(message) end
  end
  local repo, where = repository.open(opts.project or ".")
  if not repo then return cli.fail(cli.EXIT.not_a_repository, "the project %s", where) end
  local ok, why, code = resolve_all(repo, where, opts, { "base", "candidate", "trusted_target" })
  local found
  if ok and opts.base then
    local built
    built, why, code = build_request(repo, where, opts)
    ok = built ~= nil
    if built then request, found = built.request, built.found end
  end
  repo:close()
  if not ok then
    if code then return cli.fail(code, "%s", why) end
    return usage_error(why)
  end
  local store, status = cli.open_store(where, { git = true, store = opts.store })
  if not store then return status end
  local id
  -- the one command binds at the base (preflight: the base is the target)
  -- and records the trusted branch it checked the base against, or that
  -- the caller's base was taken as given
  id, message = change_runs.submit(store, { request = request, trusted_target = opts.base or opts.trusted_target,
                                           method = opts.method, kani_toolchain = pin,
                                           trust_candidate_code = opts.trust_candidate_code or nil,
                                           trusted_branch = opts.base and opts.trusted_target or nil,
                                           base_from_caller = (opts.base and not opts.trusted_target) or nil })
  if not id then return usage_error(message) end
  local run = change_runs.wait(store, id, seconds, function(text) io.stderr:write(text) end)
  local code = exit.change_exit(run)
  if opts.json then
    print(json.encode(require("vkit.report").certification_summary(store, run), { indent = 2 }))
  elseif store_mod.TERMINAL[run.state.status] then
    -- Done: what the run established, as `vkit run show` prints it.
    local report = require "vkit.report"
    io.stdout:write(report.render(assert(report.model(store, run)), "text",
      require("vkit.terminal").style(io.stdout, false)))
  else
    outcomes.print_change(change_runs.shadow(store, run), nil, require("vkit.report.records").attempt_dir(run))
  end
  if opts.json and opts.base then io.stderr:write("vkit: ", trusted_line(opts), "\n") end
  if not opts.json and opts.base then
    print(trusted_line(opts))
    local uncertified = intent_for.uncertified_line(found)
    if uncertified then print(uncertified) end
    print(M.verdict(run, code, seconds))
  end
  return code
end

return M
