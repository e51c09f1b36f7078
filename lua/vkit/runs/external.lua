--- External check runs (seed 000): queueing a component's checks or a
-- replay, and waiting for several runs under one bound.  The command line,
-- MCP and vkit.api call these; printing and exit statuses are
-- vkit.cli.outcomes'.
local sys = require "vkit.sys"
local git = require "vkit.git"
local run = require "vkit.protocol.run"

local M = {}

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

--- The runs after waiting up to `seconds` for all of them (one bound for
--  the lot): each as store:wait returns it, finished or not.
function M.wait_all(store, ids, seconds)
  local deadline = sys.monotonic_ms() + math.floor((seconds or 0) * 1000)
  local runs = {}
  for i, id in ipairs(ids) do
    runs[i] = assert(store:wait(id, math.max(deadline - sys.monotonic_ms(), 0) / 1000))
  end
  return runs
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

return M
