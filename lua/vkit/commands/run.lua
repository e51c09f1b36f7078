--- `vkit run list|show|wait|cancel|replay|report|worker`: the job lifecycle.
--
-- Human output says what a run established (vkit.report's text view);
-- --json prints the stable run summary object (run_id, kind, status,
-- outcome, attempts, created_at, updated_at, error, summary,
-- cancel_requested).  `run wait` exits as the command that queued the run
-- would (vkit.cli's exit codes); the read-only actions never create a
-- .vkit/ store.
local args = require "vkit.args"
local cli = require "vkit.cli"
local outcomes = require "vkit.cli.outcomes"
local exit = require "vkit.cli.exit"
local json = require "vkit.json"
local store_mod = require "vkit.store"
local report = require "vkit.report"
local policy = require("vkit.policy").store
local named = require "vkit.runs.named"
local duration = require "vkit.cli.duration"

local COMMON = [[
  --project DIR   the project whose job store to read (default: the Git work tree
                  holding the current directory, found upward as git does)
  --store URL     another store: postgresql://... (libpq syntax, no password in it), or VKIT_STORE
  --json          the run summary as JSON on stdout
  --help          this text]]

local HELP = {
  list = [[
usage: vkit run list [--project DIR] [--json]

Lists every run of the project's job store, newest first: one line each with
its kind, status, outcome, attempts, last update and, for a certification,
each method's coverage.  A run whose records cannot be believed is listed as
CORRUPT with the file and the reason, never skipped.  An empty store says so.

options:
]] .. COMMON .. "\n\n" .. cli.EXIT_TEXT .. "\n\n" .. [[  (list: 0 listed, 3 a run is corrupt or the store unreadable, 7 not a Git repository)]],
  show = [[
usage: vkit run show [ID | --run ID] [--project DIR] [--json]

Prints what the run established: its outcome, the reason and message of a
blocked or failed run, each method's result with its coverage, the findings
(the first few, then a count), why inputs could not be checked (a "cause"
line per method and side: the exception and its traceback's last lines, a
value that is not a u32, a missing function, a build's first errors), the
retained reports and artifacts with their absolute paths and SHA-256, and
what is not established.  With --json, a certification's summary carries the
same causes as "causes": [{method, side, text, count, unit, first}].

options:
  --run ID        the run (required; also positional): its whole id, a unique
                  prefix of it or of its hex tail, or `latest`
]] .. COMMON .. "\n\n" .. cli.EXIT_TEXT .. "\n\n" .. [[  (show: 0 shown, 2 an ambiguous prefix, 3 the run is corrupt, 6 no such run)]],
  wait = [[
usage: vkit run wait [ID | --run ID] [--wait S | --timeout T] [--project DIR] [--json]

Waits up to S seconds (0..60, default 60), or up to T, for the run to
finish, then prints it as `vkit run show` does.  Exits as the command that
queued the run would for the same outcome (4 still pending): a CI can gate
on `vkit run wait latest --timeout 30m`.

options:
  --run ID        the run (required; also positional): its whole id, a unique
                  prefix of it or of its hex tail, or `latest`
  --wait S        seconds to wait, a decimal from 0 to 60
  --timeout T     how long to wait: 90, 90s, 10m, 2h (at most 6h)
]] .. COMMON .. "\n\n" .. cli.EXIT_TEXT,
  cancel = [[
usage: vkit run cancel [ID | --run ID] [--project DIR] [--json]

Requests cancellation: a queued run is cancelled at once, a running one is
stopped by its worker (its whole process tree).  Prints the run.

options:
  --run ID        the run (required)
]] .. COMMON .. "\n\n" .. cli.EXIT_TEXT .. "\n\n" .. [[  (cancel: 0 requested or already finished, 6 no such run)]],
  replay = [[
usage: vkit run replay [ID | --run ID] [--wait S | --timeout T] [--project DIR] [--json]

Queues a replay of a finished external check (`vkit verify`): its retained
declared evidence is copied into a fresh attempt and the currently pinned
checker runs against the current accepted manifest; the stored status and
receipt are never consulted.  Prints the replay's run as `vkit verify` does.

options:
  --run ID        the external-check run to replay (required)
  --wait S        seconds to wait for the replay, a decimal from 0 to 60
  --timeout T     how long to wait for the replay: 90, 90s, 10m, 2h (at most 6h)
]] .. COMMON .. "\n\n" .. cli.EXIT_TEXT,
  report = [[
usage: vkit run report [ID | --run ID] [--format md|html|json|junit|sarif|github|text] [--output FILE] [--project DIR]

Writes a self-contained report a reviewer reads in a pull request or a
browser: what was verified, each method with its coverage, the findings,
what is and is not established, and the retained artifacts with their
SHA-256 (each hashed now; one changed since the run recorded it is marked).
HTML draws the accepted domain as a strip of checked, omitted and violating
inputs; JUnit XML has one test case per method, for CI test-report views.

options:
  --run ID          the run (required)
  --format F        md (default), html, json, junit, sarif (SARIF 2.1.0), github (annotations) or text
  --output FILE     write there instead of stdout
  --project DIR     the project whose job store to read
  --help            this text

exit codes: 0 written (whatever the run's outcome: gate on `vkit run wait`),
  2 usage, 3 the run is corrupt or FILE cannot be written, 6 no such run,
  7 not a Git repository]],
  worker = [[
usage: vkit run worker [--project DIR] [--store URL] [--concurrency N] [--until-idle] [--lease-seconds S]

Executes queued runs and retries runs whose worker died.  On the file store
it exits when nothing is left (`vkit verify` and `vkit change certify` start
one when needed).  On a PostgreSQL store (--store URL or VKIT_STORE) it
serves until killed, on any machine, unless --until-idle; --concurrency N
runs N workers here (1..64); --lease-seconds S (2..3600, default 30) is the
lease a worker must renew (docs/deployment.md).]],
}

local USAGE = [[
usage: vkit run list [--project DIR] [--json]
       vkit run show [ID | --run ID] [--project DIR] [--json]
       vkit run wait [ID | --run ID] [--wait S | --timeout T] [--project DIR] [--json]
       vkit run cancel [ID | --run ID] [--project DIR] [--json]
       vkit run replay [ID | --run ID] [--wait S | --timeout T] [--project DIR] [--json]
       vkit run report [ID | --run ID] [--format md|html|json|junit|sarif|github|text] [--output FILE] [--project DIR]
       vkit run worker [--project DIR] [--store URL] [--concurrency N] [--until-idle] [--lease-seconds S]
Every action takes --store URL (or VKIT_STORE): postgresql://... (libpq syntax,
no password in it) selects the shared PostgreSQL store; default: the project's file store.

The durable job lifecycle of a project's job store.  A run is named by its
whole id, a unique prefix (of the id or of its hex tail), or `latest`.
`vkit run ACTION --help` describes one action.

]] .. cli.EXIT_TEXT

-- Which actions write to the store (the others never create one).
local WRITES = { cancel = true, replay = true, worker = true }

local function usage_error(message, action)
  return cli.usage_error(message, action and ("run " .. action) or "run")
end

--- The exit status the command that queued this run would give.
local function exit_status(run)
  local kind = run.job.kind
  local code = exit.run_exit(run)
  if code then return code end
  local s = run.state.status
  if s == "failed" then return cli.EXIT.infrastructure end
  if not store_mod.TERMINAL[s] then return cli.EXIT.pending end
  return s == "done" and cli.EXIT.ok or cli.EXIT.refused
end

-- A run's summary as JSON; a certification's also says why inputs could
-- not be checked ("causes", vkit.report.causes.of_model), as `run show`'s
-- text does.
local function print_summary(store, run)
  local summary = store:summary(run)
  if run.job.kind == "change-certify" then
    summary.causes = require("vkit.report.causes").of_model((report.model(store, run)))
  end
  print(json.encode(summary, { indent = 2 }))
end

-- One line of `run list`, and a certification's coverage under it.
local function print_row(store, run)
  local summary = store:summary(run)
  print(("%s  %-15s %-9s %-22s attempts %d  %s"):format(summary.run_id, summary.kind, summary.status,
    summary.outcome ~= json.null and tostring(summary.outcome) or "-", summary.attempts, summary.updated_at))
  if summary.error ~= json.null then print("  " .. summary.error) end
  for _, line in ipairs(require("vkit.change.coverage").lines(summary.summary)) do print("  " .. line) end
end

--- What the run established, in words (the report's text view).
local function print_established(store, run)
  local model = report.model(store, run)
  if model then
    io.stdout:write(report.render(model, "text", require("vkit.terminal").style(io.stdout, false)))
  else
    print_row(store, run)
  end
end

local actions = {}

function actions.list(store, opts)
  local rows = json.array()
  local status = cli.EXIT.ok
  local entries = store:entries()
  for _, entry in ipairs(entries) do
    local run, corrupt = entry.run, entry.corrupt
    if run then
      if opts.json then rows[#rows + 1] = store:summary(run) else print_row(store, run) end
    else
      status = cli.EXIT.infrastructure
      if opts.json then
        rows[#rows + 1] = store_mod.corrupt_summary(corrupt)
      else
        print(("%s  %-15s %-9s %s: %s (%s)"):format(corrupt.run_id, "?", "CORRUPT", corrupt.file, corrupt.message,
          corrupt.reason))
      end
    end
  end
  if opts.json then
    print(json.encode(rows, { indent = 2 }))
  elseif #entries == 0 then
    print(("no runs in %s"):format(store.project))
  end
  return status
end

local function with_run(store, opts, fn, action)
  if not opts.run then return usage_error("--run ID is required", action) end
  local id, why, why_code = named.resolve(store, opts.run)
  if not id then
    if why_code == "ambiguous-run" then return usage_error(why, action) end
    return cli.fail(cli.EXIT.no_such_run, "%s", why)
  end
  local run, message, code = store:get(id)
  if not run then
    return cli.fail(code == "corrupt-run" and cli.EXIT.infrastructure or cli.EXIT.no_such_run, "%s", message)
  end
  return fn(run)
end

function actions.show(store, opts)
  return with_run(store, opts, function(run)
    if run.stale then store:ensure_worker() end
    if opts.json then print_summary(store, run) else print_established(store, run) end
    return cli.EXIT.ok
  end, "show")
end

function actions.wait(store, opts)
  return with_run(store, opts, function(run)
    if run.stale or run.state.status == "queued" then store:ensure_worker() end
    local done = assert(store:wait(run.id, opts.timeout or opts.wait or policy.max_wait_seconds))
    if opts.json then print_summary(store, done) else print_established(store, done) end
    return exit_status(done)
  end, "wait")
end

function actions.cancel(store, opts)
  return with_run(store, opts, function(run)
    local cancelled = assert(store:cancel(run.id))
    if opts.json then print_summary(store, cancelled) else print_row(store, cancelled) end
    return cli.EXIT.ok
  end, "cancel")
end

--- A self-contained report of what the run established (vkit.report).
function actions.report(store, opts)
  local format = opts.format or "md"
  local known = false
  for _, f in ipairs(report.FORMATS) do known = known or f == format end
  if not known then
    return usage_error(("--format must be one of %s"):format(table.concat(report.FORMATS, ", ")), "report")
  end
  return with_run(store, opts, function(run)
    local model, message = report.model(store, run)
    if not model then return cli.fail(cli.EXIT.refused, "%s", message) end
    local text = report.render(model, format)
    if not opts.output then
      io.stdout:write(text)
      return cli.EXIT.ok
    end
    local ok, werr = require("vkit.fs").write_atomic(opts.output, text)
    if not ok then return cli.fail(cli.EXIT.infrastructure, "cannot write the report: %s", werr) end
    return cli.EXIT.ok
  end, "report")
end

function actions.replay(store, opts)
  return with_run(store, opts, function(run)
    local id, message, code = require("vkit.runs.external").submit_replay(store, run)
    if not id then
      io.stderr:write("vkit: ", message, "\n")
      return code == "not-replayable" and cli.EXIT.usage or cli.EXIT.refused
    end
    store:ensure_worker()
    return outcomes.print_external(store, require("vkit.runs.external").wait_all(store, { id }, opts.timeout or opts.wait), opts)
  end, "replay")
end

function actions.worker(store, opts)
  -- A login that may not work, or a machine that cannot keep an attempt's
  -- files, is told so now rather than at every claim.
  local problem = store.worker_problem and store:worker_problem()
  if problem then return cli.fail(cli.EXIT.infrastructure, "%s", problem) end
  return require("vkit.store.worker").serve(store, opts)
end

-- A store's refusal (vkit.store.failure: it cannot be reached, the role
-- lacks a privilege, a guard refused, the evidence root cannot be used) is
-- the command's answer: its message, exit 3.  Anything else is a bug, and
-- keeps its traceback.
local function refusal_or_bug(e)
  if require("vkit.store.failure").is(e) then return e end
  return debug.traceback(type(e) == "string" and e or ("(error object is a %s value)"):format(type(e)), 2)
end

local function act(action, store, opts)
  local ok, status = xpcall(actions[action], refusal_or_bug, store, opts)
  if ok then return status end
  if require("vkit.store.failure").is(status) then return cli.fail(cli.EXIT.infrastructure, "%s", tostring(status)) end
  error(status, 0)
end

return {
  summary = "list, show, wait for, cancel, replay or report runs in the job store",
  usage = USAGE,
  help = HELP,
  run = function(argv)
    local action = argv[1]
    if not action or not actions[action] then
      return usage_error("run needs one of: list, show, wait, cancel, replay, report")
    end
    local opts, err = args.parse(table.move(argv, 2, #argv, 1, {}), {
      flags = { json = true, until_idle = true },
      options = { project = "string", run = "string", wait = "number", format = "string", output = "string",
                  store = "string", concurrency = "number", lease_seconds = "number", timeout = "string" },
      max = 1,
    })
    if not opts then return usage_error(err, action) end
    -- The run, positionally or by --run (one of them).
    if opts[1] then
      if action == "list" or action == "worker" then return usage_error(("unexpected argument %q"):format(opts[1]), action) end
      if opts.run then return usage_error("name the run once: positionally or with --run", action) end
      opts.run = opts[1]
    end
    if opts.timeout then
      if action ~= "wait" and action ~= "replay" then
        return usage_error("--timeout is an option of run wait and run replay", action)
      end
      if opts.wait then return usage_error("give --wait or --timeout, not both", action) end
      local seconds, why = duration.parse(opts.timeout)
      if not seconds then return usage_error(why, action) end
      opts.timeout = seconds
    end
    if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
      return usage_error(("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds), action)
    end
    local problem = require("vkit.store.worker").check_options(action, opts)
    if problem then return usage_error(problem, action) end
    -- The project: the Git work tree holding --project (default the current
    -- directory), as git finds it (cli.open_store), so a subdirectory reads the same store.
    local store, status = cli.open_store(opts.project, { create = WRITES[action] or false, store = opts.store,
                                                         lease_seconds = opts.lease_seconds })
    if not store then return status end
    -- A store that arrived with a clone, or is a link, is said to be one
    -- (its runs are believed only as far as their evidence verifies).
    local origin = store.provenance and store:provenance()
    if origin then io.stderr:write(("vkit: note: %s (%s); outcomes are shown only as far as each run's retained "
      .. "evidence verifies\n"):format(origin.message, origin.reason)) end
    return act(action, store, opts)
  end,
}
