--- `vkit run list|show|wait|cancel|replay|worker`: the job lifecycle.
--
-- Human output is short; --json prints the stable run summary object
-- (run_id, kind, status, outcome, attempts, created_at, updated_at, error,
-- summary, cancel_requested).  Exit codes: 0 found (and for wait: terminal),
-- 1 the run ended other than "done" or is still running after the wait,
-- 2 usage, 3 the store cannot be read or a run in it is corrupt (its
-- job.json or state.json unreadable, not strict JSON, not its schema, or a
-- state its attempts do not bear out: `run list` lists it as CORRUPT, with
-- the file and the reason).
local args = require "vkit.args"
local json = require "vkit.json"
local store_mod = require "vkit.store"
local policy = require("vkit.policy").store

local USAGE = [[usage: vkit run list [--project DIR] [--json]
       vkit run show --run ID [--project DIR] [--json]
       vkit run wait --run ID [--wait S] [--project DIR] [--json]
       vkit run cancel --run ID [--project DIR] [--json]
       vkit run replay --run ID [--wait S] [--project DIR] [--json]
       vkit run worker [--project DIR] [--store URL] [--concurrency N] [--until-idle] [--lease-seconds S]
Every action takes --store URL (or VKIT_STORE): postgresql://... (libpq syntax,
no password in it) selects the shared PostgreSQL store; default: the project's file store.]]

local function usage_error(message)
  return require("vkit.cli").usage_error(message, "run")
end

local function print_run(store, run, as_json)
  local summary = store:summary(run)
  if as_json then
    print(json.encode(summary, { indent = 2 }))
  else
    print(("%s  %-14s %-9s %s  attempts %d  %s"):format(summary.run_id, summary.kind, summary.status,
      summary.outcome ~= json.null and tostring(summary.outcome) or "-", summary.attempts, summary.updated_at))
    if summary.error ~= json.null then print("  " .. summary.error) end
  end
end

local function exit_status(run)
  return run.state.status == "done" and 0 or 1
end

local actions = {}

function actions.list(store, opts)
  local rows = json.array()
  local status = 0
  for _, entry in ipairs(store:entries()) do
    local run, corrupt = entry.run, entry.corrupt
    if run then
      if opts.json then rows[#rows + 1] = store:summary(run) else print_run(store, run, false) end
    else
      status = 3
      if opts.json then
        rows[#rows + 1] = store_mod.corrupt_summary(corrupt)
      else
        print(("%s  %-14s %-9s %s: %s (%s)"):format(corrupt.run_id, "?", "CORRUPT", corrupt.file, corrupt.message,
          corrupt.reason))
      end
    end
  end
  if opts.json then print(json.encode(rows, { indent = 2 })) end
  return status
end

local function with_run(store, opts, fn)
  if not opts.run then return usage_error("--run ID is required") end
  local run, message, code = store:get(opts.run)
  if not run then
    io.stderr:write("vkit: ", message, "\n")
    return code == "corrupt-run" and 3 or 1
  end
  return fn(run)
end

function actions.show(store, opts)
  return with_run(store, opts, function(run)
    if run.stale then store:ensure_worker() end
    print_run(store, run, opts.json)
    return 0
  end)
end

function actions.wait(store, opts)
  return with_run(store, opts, function(run)
    if run.stale or run.state.status == "queued" then store:ensure_worker() end
    local done = assert(store:wait(run.id, opts.wait or policy.max_wait_seconds))
    print_run(store, done, opts.json)
    return store_mod.TERMINAL[done.state.status] and exit_status(done) or 1
  end)
end

function actions.cancel(store, opts)
  return with_run(store, opts, function(run)
    print_run(store, assert(store:cancel(run.id)), opts.json)
    return 0
  end)
end

function actions.replay(store, opts)
  return with_run(store, opts, function(run)
    return require("vkit.protocol.cli").replay(store, run, opts)
  end)
end

function actions.worker(store, opts)
  return require("vkit.store.worker").serve(store, opts)
end

return {
  summary = "list, show, wait for, cancel or replay runs in the job store",
  usage = USAGE,
  run = function(argv)
    local action = argv[1]
    if not action or not actions[action] then return usage_error("run needs one of: list, show, wait, cancel, replay") end
    local opts, err = args.parse(table.move(argv, 2, #argv, 1, {}), {
      flags = { json = true, until_idle = true },
      options = { project = "string", run = "string", wait = "number", store = "string", concurrency = "number",
                  lease_seconds = "number" },
    })
    if not opts then return usage_error(err) end
    if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
      return usage_error(("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds))
    end
    local problem = require("vkit.store.worker").check_options(action, opts)
    if problem then return usage_error(problem) end
    local ok, store = pcall(store_mod.open, { store = opts.store, project = opts.project or ".",
                                              lease_seconds = opts.lease_seconds })
    if not ok then
      io.stderr:write("vkit: cannot open the job store: ", tostring(store), "\n")
      return 3
    end
    return actions[action](store, opts)
  end,
}
