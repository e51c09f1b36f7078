--- Helpers that `vkit repl --project DIR` preloads for walking runs.
--
--   runs([n])   the n most recent runs (default 20), as summaries
--   run(id)     one run: state, job, and per attempt its record, result,
--               checker request, receipt, evidence digests and logs
--   pp(value)   pretty-prints any value
--   store       the project's job store
local json = require "vkit.json"
local pretty = require "vkit.pretty"
local store_mod = require "vkit.store"

local M = {}

local CAP = require("vkit.policy").store.read_artifact_bytes

--- Everything retained by attempt n of a run, read through the store
--  (the attempt directory, or the evidence store, verified).
function M.attempt(store, run, n)
  local function text(rel) return store:read_artifact(run, n, rel, CAP) end
  local function doc(rel)
    local bytes = text(rel)
    return bytes and json.decode(bytes) or nil
  end
  local a = {
    record = store:attempt_record(run, n),
    result = doc "result.json",
    job = doc "job.json",
    request = doc "checker/request.json",
    receipt = doc "checker/receipt.json",
    logs = {},
  }
  if run.dir then a.dir = ("%s/attempts/%d"):format(run.dir, n) end
  a.evidence = a.result and a.result.evidence or nil
  for _, artifact in ipairs(store:artifacts(run, n)) do
    local role, stream = artifact.path:match "^logs/(%w+)%.(%w+)$"
    if role then
      a.logs[role] = a.logs[role] or {}
      a.logs[role][stream] = stream == "json" and doc(artifact.path) or text(artifact.path)
    end
  end
  return a
end

function M.helpers(store)
  local h = { store = store }
  function h.runs(n)
    local out = {}
    for i, entry in ipairs(store:entries()) do
      if i > (n or 20) then break end
      out[#out + 1] = entry.run and store:summary(entry.run) or store_mod.corrupt_summary(entry.corrupt)
    end
    return out
  end
  function h.run(id)
    local r, message = store:get(id)
    if not r then return nil, message end
    local attempts = {}
    for _, n in ipairs(r.attempts) do attempts[n] = M.attempt(store, r, n) end
    return { id = r.id, state = r.state, job = r.job, attempts = attempts, stale = r.stale }
  end
  function h.pp(value) print(pretty.format(value)) end
  return h
end

return M
