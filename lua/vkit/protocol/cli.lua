--- Human and JSON output for external checks, and their submission.
--
-- Exit codes of `vkit verify` and `vkit run replay`:
--   0 PASS (every check), 1 BLOCKED or cancelled, 2 usage,
--   3 infrastructure failure (a run failed), 4 still pending after --wait.
local json = require "vkit.json"
local sys = require "vkit.sys"
local git = require "vkit.git"
local run = require "vkit.protocol.run"
local store_mod = require "vkit.store"

local M = {}

M.ESTABLISHES = "PASS means: the pinned checker accepted every approved obligation with a valid receipt bound to "
  .. "this job, identity and evidence, under the declared checker contract."
M.DOES_NOT = "It does not establish: isolation beyond each run's sandbox (Landlock write confinement where the "
  .. "kernel offers it; reads, network and other processes are not confined), the dependency closure beyond what was "
  .. "declared and pinned, or anything the checker itself does not check. BLOCKED is inconclusive, never a counterexample."

--- Queues every check of a component at the project's HEAD commit.
--  insist = {policy_sha256, package_sha256} (each optional): the exact pins
--  the caller reviewed; the manifest's must be the same, else nothing is
--  queued (component-policy-pin-mismatch, package-pin-mismatch).
--  Returns the run ids or nil, message, code.
function M.submit_component(store, project, component, insist)
  -- A store that cannot take the job (this login may not queue, no worker
  -- could keep its files) refuses it before anything is queued.
  local refusal, refusal_code = store.submit_problem and store:submit_problem()
  if refusal then return nil, refusal, refusal_code end
  local repo, message, code = git.open(project)
  if not repo then return nil, message, code end
  local head
  head, message, code = repo:head()
  if not head then return nil, "the project has no HEAD commit: " .. tostring(message), code end
  local resolved
  resolved, message, code = run.resolve(repo, head, component)
  if not resolved then return nil, message, code end
  for _, pin in ipairs { { "policy", "component-policy", "component policy" }, { "package", "package", "package" } } do
    local wanted = insist and insist[pin[1] .. "_sha256"]
    local actual = resolved.pins[pin[1]].sha256
    if wanted and wanted ~= actual then
      return nil, ("component %s: the manifest at %s pins the %s %s as %s, not the %s you gave"):format(component,
        head, pin[3], resolved.pins[pin[1]].path, actual, wanted), pin[2] .. "-pin-mismatch"
    end
  end
  local ids = {}
  for _, check in ipairs(resolved.policy.checks) do
    local one = assert(run.resolve(repo, head, component, check.id))
    ids[#ids + 1] = store:submit("external-check", {
      project = store.project, component = component, check_id = check.id, commit = head, job_key = run.job_key(one),
    })
  end
  return ids
end

--- The exit status of `vkit verify` for these runs (also `vkit run wait`'s).
function M.exit_code(runs)
  local code = 0
  for _, r in ipairs(runs) do
    local s = r.state
    if s.status == "failed" then return 3 end
    if not store_mod.TERMINAL[s.status] then code = math.max(code, 4)
    elseif s.outcome ~= "PASS" then code = math.max(code, 1) end
  end
  return code
end

--- Prints the runs after waiting up to opts.wait seconds for all of them
--  (one bound for the lot): a finished run as what it established (the
--  report's text view, with the PASS paragraph only for a PASS), one still
--  going as its status.  Returns the exit status.
function M.report(store, ids, opts)
  local report = require "vkit.report"
  local deadline = sys.monotonic_ms() + math.floor((opts.wait or 0) * 1000)
  local runs = {}
  for i, id in ipairs(ids) do
    runs[i] = assert(store:wait(id, math.max(deadline - sys.monotonic_ms(), 0) / 1000))
  end
  if opts.json then
    local out = json.array()
    for i, r in ipairs(runs) do out[i] = store:summary(r) end
    print(json.encode({ runs = out, establishes = M.ESTABLISHES, does_not_establish = M.DOES_NOT }, { indent = 2 }))
    return M.exit_code(runs)
  end
  local style = require("vkit.terminal").style(io.stdout, false)
  for _, r in ipairs(runs) do
    local model = store_mod.TERMINAL[r.state.status] and report.model(store, r)
    if model then
      io.stdout:write(report.render(model, "text", style))
    else
      print(("%s  %s  %s: queued or running; `vkit run wait --run %s` follows it"):format(r.state.status:upper(), r.id,
        r.job.payload.check_id or "", r.id))
    end
  end
  return M.exit_code(runs)
end

--- Queues a replay of a finished external check run: the run id, or nil,
--  message, code (`not-replayable`: not an external check; `no-attempt`:
--  nothing retained to replay).  Replay runs the currently pinned checker
--  on the retained evidence, never the producer.
function M.submit_replay(store, original)
  if original.job.kind ~= "external-check" and original.job.kind ~= "external-replay" then
    return nil, ("run %s is a %s run: only external-check runs can be replayed"):format(original.id, original.job.kind),
      "not-replayable"
  end
  local last = original.attempts[#original.attempts]
  if not last then return nil, ("run %s has no attempt with retained evidence"):format(original.id), "no-attempt" end
  local refusal, refusal_code = store.submit_problem and store:submit_problem()
  if refusal then return nil, refusal, refusal_code end
  local p = original.job.payload
  local repo, message, code = git.open(store.project)
  if not repo then return nil, message, code end
  local head
  head, message, code = repo:head()
  repo:close()
  if not head then return nil, "the project has no HEAD commit: " .. tostring(message), code end
  local id = store:submit("external-replay", {
    project = store.project, of_run = original.id, component = p.component, check_id = p.check_id, commit = head,
    of_attempt = last,
  })
  store:ensure_worker()
  return id
end

--- `vkit run replay --run ID`: queues a replay of a finished check run.
function M.replay(store, original, opts)
  local id, message, code = M.submit_replay(store, original)
  if not id then
    io.stderr:write("vkit: ", message, "\n")
    return code == "not-replayable" and 2 or 1
  end
  return M.report(store, { id }, opts)
end

return M
