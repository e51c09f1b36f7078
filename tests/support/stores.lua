--- The store backends the end-to-end specs run against: the file store,
--  and (when PostgreSQL is installed) a real PostgreSQL started for the
--  spec file, selected for every vkit process through VKIT_STORE.
--
--   for _, backend in ipairs(stores.backends()) do
--     describe("... (" .. backend.name .. " store)", function()
--       setup(backend.setup); teardown(backend.teardown)
--       backend.open(project)                  -> the store
--       backend.attempt_file(project, run_id, rel [, n]) -> bytes | nil
--       backend.attempt_path(project, run_id, n) -> the attempt's working directory
--       backend.kill_workers(project)
--       backend.fresh()    -- a store no earlier spec used (a new database)
--     end)
--   end
local vkit = require "vkit"
local t = require "tests.support.run"
local postgres = require "tests.support.postgres"
local store_mod = require "vkit.store"

local M = {}

local function last_attempt(store, run_id, n)
  local run = assert(store:get(run_id))
  return run, n or run.state.attempts
end

local function files()
  local b = { name = "files" }
  function b.setup() end
  function b.teardown() end
  function b.open(project) return store_mod.open(project) end
  function b.attempt_path(project, run_id, n)
    return ("%s/.vkit/runs/%s/attempts/%d"):format(vkit.fs.realpath(project), run_id, n)
  end
  function b.attempt_file(project, run_id, rel, n)
    local store = b.open(project)
    local run, a = last_attempt(store, run_id, n)
    return store:read_artifact(run, a, rel, 1 << 24)
  end
  function b.kill_workers(project) t.kill_workers(project) end
  function b.fresh() end
  function b.url() return nil end
  return b
end

local function postgresql()
  local b = { name = "postgresql" }
  local cache_cleanup
  function b.setup()
    b.server = postgres.start()
    b.db = b.server:database()
    b.cache, cache_cleanup = t.tempdir()
    t.env = { VKIT_STORE = b.db.url, VKIT_CACHE = b.cache }
  end
  function b.teardown()
    t.env = nil
    t.kill_matching("--store " .. b.db.url)
    b.server:stop()
    cache_cleanup()
  end
  function b.open(project) return store_mod.open { store = b.db.url, project = project, cache = b.cache } end
  function b.attempt_path(_, run_id, n) return ("%s/attempts/%s/%d"):format(b.cache, run_id, n) end
  function b.attempt_file(project, run_id, rel, n)
    local store = b.open(project)
    local run, a = last_attempt(store, run_id, n)
    local bytes, message, code = store:read_artifact(run, a, rel, 1 << 24)
    store:close()
    return bytes, message, code
  end
  --- The evidence-store object holding a retained file.
  function b.evidence_object(project, run_id, rel, n)
    local store = b.open(project)
    local run, a = last_attempt(store, run_id, n)
    for _, art in ipairs(store:artifacts(run, a)) do
      if art.path == rel then return ("%s/%s/%s"):format(b.db.evidence_root, art.sha256:sub(1, 2), art.sha256) end
    end
  end
  function b.kill_workers() t.kill_matching("--store " .. b.db.url) end
  function b.url() return b.db.url end
  function b.fresh()
    b.db = b.server:database()
    t.env.VKIT_STORE = b.db.url
  end
  return b
end

function M.backends()
  local list = { files() }
  if postgres.available() then list[#list + 1] = postgresql() end
  return list
end

return M
