--- Runs as the MCP tools report them, and waiting for them within a bound.
--
-- A certification run is reported as the compact shadow summary that
-- `vkit change certify --json` prints (vkit.change.cli.shadow); any other
-- run as the summary `vkit run show --json` prints.
local json = require "vkit.json"
local sys = require "vkit.sys"
local store_mod = require "vkit.store"
local results = require "vkit.mcp.results"
local named = require "vkit.runs.named"

local M = {}

function M.summary(store, run)
  if run.job.kind == "change-certify" then return require("vkit.report").certification_summary(store, run) end
  return store:summary(run)
end

function M.terminal(run)
  return store_mod.TERMINAL[run.state.status] == true
end

--- A sentence when the run is a refusal the caller must not read as a
--  result (failed, cancelled or blocked), else nil.  A finding (a
--  violation, unknown coverage) or a pending run is a result, not a refusal.
function M.refusal(run, summary)
  local s = run.state
  if s.status == "failed" then
    return ("run %s failed (infrastructure): %s"):format(run.id, tostring(s.error ~= json.null and s.error or "no error recorded"))
  end
  if s.status == "cancelled" then return ("run %s was cancelled"):format(run.id) end
  if s.status == "done" and (s.outcome == "blocked" or s.outcome == "BLOCKED") then
    local why = summary and (summary.blocked ~= json.null and summary.blocked or summary.summary)
    if json.kind(why) == "object" and why.reason and why.message then
      return ("run %s is blocked%s: %s (%s)"):format(run.id, why.stage and (" at " .. why.stage) or "",
        tostring(why.message), tostring(why.reason))
    end
    return ("run %s is blocked"):format(run.id)
  end
  return nil
end

--- Starts a worker when the run needs one (queued, or running without a
--  live worker), as `vkit run show/wait` do.
function M.revive(store, run)
  if run.stale or run.state.status == "queued" then store:ensure_worker() end
end

--- Waits up to `seconds` for every run in `ids` to be terminal, calling
--  progress(elapsed_s, total_s, message) every interval_ms while it waits.
--  Returns the runs (in `ids` order) or nil, message.
function M.wait_all(store, ids, seconds, progress, interval_ms)
  local start = sys.monotonic_ms()
  local deadline = start + math.floor(seconds * 1000)
  local runs = {}
  for i, id in ipairs(ids) do
    local run, message = store:get(id)
    if not run then return nil, message end
    runs[i] = run
  end
  local next_report = start + interval_ms
  for i, id in ipairs(ids) do
    while not M.terminal(runs[i]) do
      local now = sys.monotonic_ms()
      if now >= deadline then return runs end
      local slice = math.min(deadline, next_report) - now
      local run, message = store:wait(id, math.max(slice, 1) / 1000)
      if not run then return nil, message end
      runs[i] = run
      now = sys.monotonic_ms()
      if progress and now >= next_report and not M.terminal(run) then
        progress((now - start) / 1000, seconds, ("run %s is %s"):format(id, run.state.status))
        next_report = now + interval_ms
      end
    end
  end
  return runs
end

--- The run a client names in `store`: its whole id, a unique prefix of it
--  or of its hex tail, or `latest` (vkit.runs.named, as `vkit run` takes
--  it).  run, or nil and the refusal result: the sentence with its code,
--  "(unknown-run)" or "(ambiguous-run)" after the candidates.
function M.named(store, name)
  local id, why, code = named.resolve(store, name)
  if not id then return nil, results.refused(("%s (%s)"):format(why, code)) end
  local run, message = store:get(id)
  if not run then return nil, results.refused(message) end
  return run
end

--- The tool result for the run `name` denotes (M.named) after waiting up
--  to `seconds`: its summary, refused (isError) when the run is a refusal
--  or cannot be read.  ctx: {project, progress, progress_interval_ms}
--  (vkit.mcp.server).
function M.answer(ctx, name, seconds)
  local store, message = ctx.project:store()
  if not store then return results.refused(message) end
  local run, refused = M.named(store, name)
  if not run then return refused end
  M.revive(store, run)
  local waited
  waited, message = M.wait_all(store, { run.id }, seconds, ctx.progress, ctx.progress_interval_ms)
  if not waited then return results.refused(message) end
  local summary = M.summary(store, waited[1])
  local refusal = M.refusal(waited[1], summary)
  if refusal then return results.refused(refusal, summary) end
  return results.ok(summary)
end

return M
