-- The PostgreSQL job store against a real PostgreSQL 15 started by the
-- spec (tests/support/postgres.lua): URLs, migration, privileges, claims
-- and leases, cancellation, the evidence store, project caches, corrupt
-- records.  Skipped (and said so) only where PostgreSQL is not installed.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local postgres = require "tests.support.postgres"
local url = require "vkit.store.url"
local store_mod = require "vkit.store"
local worker = require "vkit.store.worker"

describe("the store URL", function()
  it("selects PostgreSQL for postgresql:// and postgres://, the file store otherwise", function()
    assert.equal("postgresql", url.parse("postgresql:///vkit?host=/tmp/x").backend)
    assert.equal("postgresql", url.parse("postgres://db.example/vkit?sslmode=verify-full").backend)
    assert.same({ backend = "files", dir = "/srv/p" }, url.parse "file:///srv/p")
    assert.same({ backend = "files", dir = "rel/p" }, url.parse "file:rel/p")
    assert.same({ backend = "files", dir = "/srv/p" }, url.parse "/srv/p")
    assert.equal("bad-store-url", select(3, url.parse "mysql://h/db"))
    assert.equal("bad-store-url", select(3, url.parse ""))
    assert.equal("bad-store-url", select(3, url.parse "postgresql://h/db?nosuchoption=1"))
  end)

  it("refuses a password in the URL, however it is spelt", function()
    for _, bad in ipairs { "postgresql://u:secret@h/db", "postgresql://u:@h/db", "postgres://u%3Asecret@h/db",
                           "postgresql://h/db?password=secret", "postgresql:///db?host=/tmp&password=x" } do
      local chosen, message, code = url.parse(bad)
      assert.is_nil(chosen, bad)
      assert.equal("password-in-url", code, bad)
      assert.is_nil(message:find("secret", 1, true))
    end
    local r = t.vkit { "run", "list", "--store", "postgresql://u:hunter2@127.0.0.1:1/db" }
    assert.equal(3, r.code)
    assert.is_nil((r.stdout .. r.stderr):find("hunter2", 1, true))
    assert.truthy(r.stderr:find("PGPASSWORD", 1, true), r.stderr)
  end)
end)

if postgres.missing("the PostgreSQL store") then return end

describe("the PostgreSQL store", function()
  local server, db, dir, cleanup
  setup(function() server = postgres.start() end)
  teardown(function() if server then server:stop() end end)
  before_each(function()
    db = server:database()
    dir, cleanup = t.tempdir()
  end)
  after_each(function()
    t.kill_matching("--store " .. db.url)
    cleanup()
  end)

  local function open(opts)
    opts = opts or {}
    return store_mod.open { store = db.url, project = dir, lease_seconds = opts.lease_seconds }
  end

  local wait_for = t.wait_for

  -- The worker role's connection, for what a spec checks in the database.
  local function sql(text, params, as_owner)
    local conn = assert(require("vkit.pg").connect(as_owner and db.owner_url or db.url))
    local result, message, code = conn:exec(text, params)
    conn:close()
    return result, message, code
  end

  describe("migration", function()
    it("records a versioned schema, is idempotent, and never prints a password", function()
      local r = t.vkit { "store", "migrate", "--store", db.owner_url, "--json" }
      assert.equal(0, r.code, r.stderr)
      local out = json.decode(r.stdout)
      local latest = require("vkit.store.schema").LATEST
      assert.equal(latest, out.to)
      assert.same({}, out.applied)
      assert.equal(tostring(latest), sql("SELECT max(version) AS v FROM vkit.schema_version").rows[1].v)
      for _, secret in ipairs(server.secrets) do
        assert.is_nil((r.stdout .. r.stderr):find(secret, 1, true))
        local listed = t.vkit { "run", "list", "--store", db.url, "--json" }
        assert.is_nil((listed.stdout .. listed.stderr):find(secret, 1, true))
      end
    end)

    it("refuses a database that was never migrated, naming the command to run", function()
      server:admin "CREATE DATABASE empty_one OWNER vkit_owner"
      local r = t.vkit { "run", "list", "--store", server:url("vkit_owner", "empty_one") }
      assert.equal(3, r.code)
      assert.truthy(r.stderr:find("vkit store migrate", 1, true), r.stderr)
      assert.equal(2, t.vkit({ "store", "migrate" }).code)
      assert.equal(2, t.vkit({ "store", "migrate", "--store", dir }).code)
      assert.equal(2, t.vkit({ "store", "frob", "--store", db.owner_url }).code)
    end)

    -- A store made by an earlier vkit (schema 1: no live progress column)
    -- is refused until `vkit store migrate` brings it to this vkit's.
    it("upgrades a schema 1 store to this vkit's, refusing it until then", function()
      sql("ALTER TABLE vkit.attempts DROP COLUMN progress", nil, true)
      sql("DELETE FROM vkit.schema_version WHERE version > 1", nil, true)
      local r = t.vkit { "run", "list", "--store", db.url }
      assert.equal(3, r.code)
      assert.truthy(r.stderr:find("schema version 1", 1, true) and r.stderr:find("vkit store migrate", 1, true), r.stderr)
      r = t.vkit { "store", "migrate", "--store", db.owner_url, "--json" }
      assert.equal(0, r.code, r.stderr)
      local out = json.decode(r.stdout)
      assert.equal(1, out.from)
      local later = {}
      for v = 2, require("vkit.store.schema").LATEST do later[#later + 1] = v end
      assert.same(later, out.applied)
      assert.equal(0, t.vkit({ "run", "list", "--store", db.url }).code)
    end)

    it("refuses a schema newer than this vkit", function()
      sql("INSERT INTO vkit.schema_version (version) VALUES (99)", nil, true)
      local r = t.vkit { "store", "migrate", "--store", db.owner_url }
      assert.equal(3, r.code)
      assert.truthy(r.stderr:find("newer than this vkit", 1, true), r.stderr)
      assert.equal(3, t.vkit({ "run", "list", "--store", db.url }).code)
    end)
  end)

  describe("the worker role's privileges", function()
    it("can queue and run jobs but never delete, truncate, alter, or rewrite a queued job", function()
      local store = open()
      local id = store:submit("probe", { ms = 0 })
      for _, statement in ipairs {
        "DELETE FROM vkit.runs", "TRUNCATE vkit.runs", "DROP TABLE vkit.artifacts", "DELETE FROM vkit.attempts",
        "UPDATE vkit.runs SET job = '{}'", "UPDATE vkit.runs SET kind = 'probe'", "CREATE TABLE vkit.x (a int)",
        "UPDATE vkit.settings SET value = '/elsewhere'", "INSERT INTO vkit.schema_version VALUES (2)",
        "UPDATE vkit.artifacts SET sha256 = sha256", "ALTER TABLE vkit.runs DISABLE TRIGGER runs_stay_finished" } do
        local result, message, code = sql(statement)
        assert.is_nil(result, statement)
        assert.truthy(code == "42501" or code == "42P01", statement .. ": " .. tostring(message))
      end
      assert.equal(1, worker.scan(store))
      assert.equal("done", store:get(id).state.status)
      store:close()
    end)

    it("cannot change a finished run (a trigger refuses it, whoever asks)", function()
      local store = open()
      local id = store:submit("probe", { ms = 0 })
      worker.scan(store)
      for _, as_owner in ipairs { false, true } do
        local result, message, code = sql("UPDATE vkit.runs SET status = 'queued' WHERE run_id = $1", { id }, as_owner)
        assert.is_nil(result)
        assert.equal("P0001", code, message)
      end
      assert.equal("done", store:get(id).state.status)
      store:close()
    end)

    it("sends every value as a parameter: a hostile payload or run id is data, never SQL", function()
      local store = open()
      local hostile = "'); DROP TABLE vkit.runs; --"
      local id = store:submit("probe", { ms = 0, note = hostile })
      assert.equal(hostile, store:get(id).job.payload.note)
      assert.equal("unknown-run", select(3, store:get("r-20260101T000000Z-000000000000' OR '1'='1")))
      assert.equal("unknown-run", select(3, store:get "r-20260101T000000Z-abcdefabcdef"))
      assert.equal(1, #store:list())
      store:close()
    end)
  end)

  -- What the probe handler writes before its "ok" (the outcome a finished
  -- run shows is derived from it: vkit.store.common.check_evidence).
  local function probe_record(claim)
    assert(vkit.fs.write_atomic(claim.attempt_dir .. "/probe.json", json.encode { attempt = claim.attempt }))
    return claim
  end

  describe("claims and leases", function()
    it("never gives one run to two claimers (FOR UPDATE SKIP LOCKED)", function()
      local a, b = open(), open()
      local first, second = a:submit("probe", { ms = 0 }), a:submit("probe", { ms = 0 })
      local ca, cb = assert(a:claim "a"), assert(b:claim "b")
      assert.are_not.equal(ca.run.id, cb.run.id)
      local got = { [ca.run.id] = true, [cb.run.id] = true }
      assert.is_true(got[first] and got[second])
      assert.is_nil(a:claim "a")
      assert.is_true(a:complete(ca, { status = "done", outcome = "ok" }))
      assert.is_true(b:complete(cb, { status = "done", outcome = "ok" }))
      a:close()
      b:close()
    end)

    it("skips a run another claimer holds locked instead of waiting for it", function()
      local store = open()
      local first = store:submit("probe", { ms = 0 })
      local second = store:submit("probe", { ms = 0 })
      -- Another claimer, mid-transaction, holds the oldest row.
      local other = assert(require("vkit.pg").connect(db.url))
      assert(other:exec "BEGIN")
      assert(other:exec("SELECT run_id FROM vkit.runs WHERE run_id = $1 FOR UPDATE", { first }))
      local claim = assert(store:claim "w")
      assert.equal(second, claim.run.id)
      assert(other:exec "ROLLBACK")
      other:close()
      assert.is_true(store:complete(claim, { status = "done", outcome = "ok" }))
      assert.equal(first, assert(store:claim "w").run.id)
      store:close()
    end)

    it("reclaims a run whose lease expired, records the attempt abandoned, and discards the stale result", function()
      local a, b = open { lease_seconds = 2 }, open { lease_seconds = 2 }
      local id = a:submit("probe", { ms = 0 })
      local stale = assert(a:claim "paused")
      assert.is_true((a:heartbeat(stale)))
      assert.is_nil(b:claim "other", "a live lease is not claimable")
      -- The first worker stops renewing (paused, cut off): its lease lapses
      -- by the database's clock.
      assert.is_true(wait_for(function() return b:get(id).stale end, 60))
      assert.is_false((a:heartbeat(stale)), "an expired lease cannot be renewed")
      local fresh = assert(b:claim "other")
      assert.equal(id, fresh.run.id)
      assert.equal(2, fresh.attempt)
      assert.equal("abandoned", b:attempt_record(fresh.run, 1).status)
      assert.is_false(a:complete(stale, { status = "done", outcome = "STALE" }))
      assert.is_true(b:complete(probe_record(fresh), { status = "done", outcome = "ok" }))
      local run = b:get(id)
      assert.equal("ok", run.state.outcome)
      assert.equal(2, run.state.attempts)
      assert.is_false(a:complete(stale, { status = "done", outcome = "STALE" }), "never, even after the newer one")
      assert.equal("ok", b:get(id).state.outcome)
      a:close()
      b:close()
    end)

    -- A worker cut off between two statements of a transaction (a
    -- partition, a paused machine) holds its run's row lock, and every
    -- claim skips a locked row: without the server ending that session the
    -- run would wait for TCP to notice, hours later.
    it("has the server end a session cut off inside a transaction, so that its run is reclaimed", function()
      local a, b = open { lease_seconds = 2 }, open { lease_seconds = 2 }
      local ms = require("vkit.policy").store.idle_transaction_timeout_ms
      assert.equal(tostring(ms // 1000) .. "s", a:query("SHOW idle_in_transaction_session_timeout").rows[1]
        .idle_in_transaction_session_timeout)
      local id = a:submit("probe", { ms = 0 })
      local stale = assert(a:claim "cut-off")
      local conn = a:connection()
      local backend = assert(conn:exec "SELECT pg_backend_pid() AS pid").rows[1].pid
      assert(conn:exec "BEGIN")
      assert(conn:exec("SELECT run_id FROM vkit.runs WHERE run_id = $1 FOR UPDATE", { id }))
      -- a says nothing more: the server ends its session, and the lock goes with it
      assert.is_true(wait_for(function()
        return assert(sql("SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1", { backend })).rows[1].n == "0"
      end, 120), "the server ended the session")
      assert.is_true(wait_for(function() return b:get(id).stale end, 60))
      local fresh = assert(b:claim "other", "the run is claimable again")
      assert.equal(id, fresh.run.id)
      assert.equal(2, fresh.attempt)
      assert.is_true(b:complete(probe_record(fresh), { status = "done", outcome = "ok" }))
      -- a comes back on a new session and learns that its result is discarded
      assert.is_false(a:complete(stale, { status = "done", outcome = "STALE" }))
      assert.equal("ok", b:get(id).state.outcome)
      a:close()
      b:close()
    end)

    -- A worker's first completion looked up the evidence root in the
    -- database; an outage at that moment once failed a run that had
    -- succeeded ("cannot retain the attempt's files: cannot reach the store").
    -- (A worker now resolves it before it claims; the completion is still
    -- retried, whichever of its steps meets the outage.)
    it("retries retaining a finished attempt's files while the database is down, and the run ends done", function()
      local store = open { lease_seconds = 600 }
      local id = store:submit("probe", { ms = 0 })
      local ready, go, answer, log = dir .. "/ready", dir .. "/go", dir .. "/answer", dir .. "/complete.log"
      local script = dir .. "/complete.lua"
      t.write(script, ([[
local vkit = require "vkit"
local store = require("vkit.store").open { store = %q, project = %q, lease_seconds = 600 }
local claim = assert(store:claim "outage")
assert(vkit.fs.write_atomic(claim.attempt_dir .. "/probe.json", vkit.json.encode { attempt = claim.attempt }))
assert(vkit.fs.write_atomic(%q, ""))
while not vkit.fs.lstat(%q) do vkit.sys.sleep(0.01) end
assert(vkit.fs.write_atomic(%q, tostring(store:complete(claim, { status = "done", outcome = "ok" }))))
]]):format(db.url, dir, ready, go, answer))
      local pid = assert(require("vkit.sys").spawn_detached { exe = vkit.exe, argv = { vkit.exe, "script", script },
        cwd = dir, log = log, env = { "PATH=/usr/bin:/bin", "HOME=" .. dir, "VKIT_CACHE=" .. dir .. "/cache" } })
      finally(function() os.execute("kill -KILL " .. pid .. " 2>/dev/null") end) -- a failed spec leaves no worker retrying
      assert.is_true(wait_for(function() return vkit.fs.lstat(ready) ~= nil end, 120), "the claim was made: " .. (vkit.fs.lstat(log) and t.slurp(log) or "no log"))
      local down = true
      finally(function() if down then pcall(server.start_server, server) end end)
      server:stop_server()
      t.write(go, "")
      assert.is_true(wait_for(function()
        local said = t.slurp(log) or ""
        return said:find("retaining the files of run " .. id, 1, true) ~= nil
          or said:find("recording run " .. id, 1, true) ~= nil
      end, 120), "the worker said it is retrying")
      server:start_server()
      down = false
      assert.is_true(wait_for(function() return vkit.fs.lstat(answer) ~= nil end, 120), t.slurp(log))
      assert.equal("true", t.slurp(answer), t.slurp(log))
      local run = store:get(id)
      assert.equal("done", run.state.status)
      assert.equal("ok", run.state.outcome)
      assert.equal(1, #store:artifacts(run, 1)) -- probe.json
      store:close()
    end)

    it("holds a lease that is renewed, and discards a result offered after it expired unclaimed", function()
      local a = open { lease_seconds = 2 }
      local id = a:submit("probe", { ms = 0 })
      local claim = assert(a:claim "w")
      assert.is_true(wait_for(function() return a:get(id).stale end, 60))
      assert.is_false(a:complete(claim, { status = "done", outcome = "late" }))
      local run = a:get(id)
      assert.equal("running", run.state.status)
      assert.is_true(run.stale)
      assert.matches("discarded", a:attempt_record(run, 1).note)
      worker.scan(a)
      assert.equal("ok", a:get(id).state.outcome)
      assert.equal(2, a:get(id).state.attempts)
      a:close()
    end)

    it("fails a run whose workers died max_attempts times, each attempt recorded", function()
      local a = open { lease_seconds = 2 }
      local id = a:submit("probe", { ms = 0 })
      for n = 1, 3 do
        local claim = assert(a:claim "dies")
        assert.equal(n, claim.attempt)
        assert.is_true(wait_for(function() return a:get(id).stale end, 60))
      end
      assert.is_nil(a:claim "last")
      local run = a:get(id)
      assert.equal("failed", run.state.status)
      assert.matches("no attempts remain", run.state.error)
      for n = 1, 3 do assert.equal("abandoned", a:attempt_record(run, n).status) end
      a:close()
    end)
  end)

  describe("with detached workers", function()
    it("runs a queued job through `vkit run wait --store`, and cancellation reaches the worker holding a job", function()
      local store = open()
      local id = store:submit("probe", { ms = 50 })
      local long = store:submit("probe", { ms = 60000 })
      store:ensure_worker()
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "60", "--store", db.url, "--json" }
      assert.equal(0, r.code, r.stderr)
      assert.equal("ok", json.decode(r.stdout).outcome)
      assert.is_true(wait_for(function() return store:get(long).state.status == "running" end, 60))
      assert.equal(0, t.vkit({ "run", "cancel", "--run", long, "--store", db.url }).code)
      local waited = t.vkit { "run", "wait", "--run", long, "--wait", "60", "--store", db.url, "--json" }
      local out = json.decode(waited.stdout)
      assert.equal("cancelled", out.status, waited.stdout)
      assert.equal("cancelled while running", out.error)
      store:close()
    end)

    it("serves with --concurrency N: N workers claim at once", function()
      local store = open()
      local ids = {}
      for i = 1, 4 do ids[i] = store:submit("probe", { ms = 3000 }) end
      local pid = require("vkit.sys").spawn_detached { exe = vkit.exe, argv = { vkit.exe, "run", "worker", "--store", db.url,
        "--concurrency", "4", "--until-idle" }, env = { "PATH=/usr/bin:/bin", "HOME=" .. dir }, cwd = dir,
        log = dir .. "/workers.log" }
      assert.is_number(pid)
      -- All four are running at the same moment: four workers hold leases.
      assert.is_true(wait_for(function()
        local running = 0
        for _, id in ipairs(ids) do if store:get(id).state.status == "running" then running = running + 1 end end
        return running == 4
      end, 60), t.slurp(dir .. "/workers.log"))
      for _, id in ipairs(ids) do assert.equal("done", store:wait(id, 60).state.status) end
      assert.equal(2, t.vkit({ "run", "worker", "--store", db.url, "--concurrency", "0" }).code)
      assert.equal(2, t.vkit({ "run", "worker", "--store", db.url, "--lease-seconds", "1" }).code)
      assert.equal(2, t.vkit({ "run", "list", "--store", db.url, "--concurrency", "2" }).code)
      store:close()
    end)
  end)

  describe("--store on every command that uses a store", function()
    it("verify, run, repl and mcp take it as they take VKIT_STORE, and nothing goes to the file store", function()
      local project = dofile(vkit.root .. "/examples/external/project.lua")
      local p = project.build(dir)
      local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--store", db.url, "--wait", "60", "--json" }
      assert.equal(0, r.code, r.stderr .. r.stdout)
      local id = json.decode(r.stdout).runs[1].run_id
      assert.is_nil(vkit.fs.lstat(p.path .. "/.vkit"), "nothing in the file store")
      local shown = t.vkit({ "run", "show", "--run", id, "--store", db.url, "--json" }, nil, { cd = "/" })
      assert.equal("PASS", json.decode(shown.stdout).outcome)
      local text = t.vkit({ "run", "show", "--run", id, "--store", db.url }, nil, { cd = "/" })
      assert.equal(0, text.code, text.stderr)
      assert.matches("PASS", text.stdout)
      -- The report reads every retained file from the evidence store, verified.
      local rep = t.vkit({ "run", "report", "--run", id, "--store", db.url, "--format", "json" }, nil, { cd = "/" })
      assert.equal(0, rep.code, rep.stderr)
      local doc = json.decode(rep.stdout)
      assert.is_true(#doc.artifacts >= 4, rep.stdout)
      for _, a in ipairs(doc.artifacts) do
        assert.is_false(a.missing, a.path)
        assert.is_false(a.changed, a.path)
      end
      local repl = t.vkit({ "repl", "--store", db.url }, ("r = run(%q)\nr.state.outcome\nr.attempts[1].receipt.verdict\n")
        :format(id), { cd = "/" })
      assert.equal(0, repl.code, repl.stderr)
      assert.equal('"PASS"\n"accepted"\n', repl.stdout)
      local session = table.concat({
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},'
          .. '"clientInfo":{"name":"spec","version":"0"}}}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_get","arguments":{"run_id":"%s"}}}'):format(id),
      }, "\n") .. "\n"
      local served = t.vkit({ "mcp", "--project", dir, "--store", db.url }, session)
      assert.equal(0, served.code, served.stderr)
      local last = json.decode(served.stdout:match "([^\n]+)\n$")
      assert.equal("PASS", last.result.structuredContent.outcome)
      assert.is_nil(vkit.fs.lstat(dir .. "/.vkit"))
    end)
  end)

  describe("retained artifacts", function()
    it("are content-addressed, recorded with their SHA-256, and verified on every read", function()
      local store = open()
      local id = store:submit("probe", { ms = 0 })
      worker.scan(store)
      local run = store:get(id)
      local artifacts = store:artifacts(run, 1)
      local probe
      for _, a in ipairs(artifacts) do if a.path == "probe.json" then probe = a end end
      assert.truthy(probe)
      local object = ("%s/%s/%s"):format(db.evidence_root, probe.sha256:sub(1, 2), probe.sha256)
      assert.equal(probe.sha256, vkit.hash.file(object))
      assert.equal(probe.size, vkit.fs.lstat(object).size)
      local bytes = assert(store:read_artifact(run, 1, "probe.json", 1 << 20))
      assert.equal(1, json.decode(bytes).attempt)
      -- An object changed in the evidence root is refused, never served.
      assert(vkit.fs.chmod(object, tonumber("644", 8)))
      t.write(object, '{"attempt": 1, "waited_ms": 999999}\n')
      local read, message, code = store:read_artifact(run, 1, "probe.json", 1 << 20)
      assert.is_nil(read)
      assert.equal("evidence-corrupt", code, message)
      os.remove(object)
      assert.equal("evidence-missing", select(3, store:read_artifact(run, 1, "probe.json", 1 << 20)))
      assert.equal("ENOENT", select(3, store:read_artifact(run, 1, "nothing.json", 1 << 20)))
      store:close()
    end)
  end)

  describe("project caches", function()
    it("fetch the exact commits a job names into a bare cache, by id when no ref holds them", function()
      local src = assert(vkit.git.init(dir .. "/src"))
      local tree = assert(src:write_tree { { path = "a.txt", bytes = "one\n" } })
      local loose = assert(src:commit_tree { tree = tree, message = "on no ref\n" })
      local head = assert(src:commit_tree { tree = tree, parents = { loose }, message = "m\n", ref = "refs/heads/main" })
      -- No branch or tag reaches this one (as a candidate never pushed).
      local orphan = assert(src:commit_tree { tree = assert(src:write_tree { { path = "o.txt", bytes = "o\n" } }),
                                             parents = { head }, message = "orphan\n" })
      src:close()
      local projects = require "vkit.store.projects"
      local cache = dir .. "/cache"
      local unreachable = assert(src and vkit.git.init(dir .. "/other"))
      local other = assert(unreachable:commit_tree { tree = assert(unreachable:write_tree { { path = "b", bytes = "b" } }),
                                                    message = "x\n" })
      unreachable:close()
      for _, location in ipairs { dir .. "/src", "file://" .. dir .. "/src" } do
        local repo_dir = assert(projects.fetch(cache, location, { commit = loose, nested = { other, orphan } }))
        local repo = assert(vkit.git.open(repo_dir))
        assert.is_nil(repo:workdir(), "a bare repository: no working tree")
        assert.truthy(repo:commit(loose))
        assert.truthy(repo:commit(head))
        if location:sub(1, 1) == "/" then
          assert.truthy(repo:commit(orphan), "copied from the local repository's objects")
          assert.equal("o\n", repo:read(orphan, "o.txt", 10).bytes)
        end
        assert.equal("not-an-exact-commit", select(3, repo:commit(other)))
        repo:close()
      end
      assert.equal("fetch-failed", select(3, projects.fetch(cache, dir .. "/missing", {})))
    end)
  end)

  describe("records that cannot be believed", function()
    local function forged(statement)
      local store = open()
      local healthy = store:submit("probe", { ms = 0 })
      local id = store:submit("probe", { ms = 0 })
      worker.scan(store)
      -- The owner bypasses the trigger the way a restore or a hand edit would.
      server:admin("ALTER TABLE vkit.runs DISABLE TRIGGER runs_stay_finished", db.name)
      server:admin(statement:gsub("%$ID", id), db.name)
      return store, healthy, id
    end
    local cases = {
      { "an outcome its attempt does not record", "UPDATE vkit.runs SET outcome = 'PASS' WHERE run_id = '$ID'",
        "state.json", "unrecorded-outcome" },
      { "a summary that is not strict JSON", [[UPDATE vkit.runs SET summary = '{"a":1,"a":2}' WHERE run_id = '$ID']],
        "state.json", "duplicate-key" },
      { "a job record naming another run", [[UPDATE vkit.runs SET job = replace(job, run_id, 'r-20260101T000000Z-000000000000')
        WHERE run_id = '$ID']], "job.json", "wrong-run" },
      { "a status outside the schema's", "UPDATE vkit.runs SET attempts = 7 WHERE run_id = '$ID'", "state.json",
        "attempts-mismatch" },
    }
    for _, case in ipairs(cases) do
      it("is listed as corrupt: " .. case[1], function()
        local store, healthy, id = forged(case[2])
        local _, _, code, corruption = store:get(id)
        assert.equal("corrupt-run", code)
        assert.equal(case[3], corruption.file)
        assert.equal(case[4], corruption.reason)
        local listed = t.vkit { "run", "list", "--store", db.url }
        assert.equal(3, listed.code)
        local line = listed.stdout:match("[^\n]*" .. id:gsub("%-", "%%-") .. "[^\n]*")
        assert.truthy(line and line:find("CORRUPT   " .. case[3] .. ": ", 1, true), listed.stdout)
        assert.truthy(listed.stdout:find(healthy:gsub("%-", "%%-") .. "  probe%s+done"), listed.stdout)
        local shown = t.vkit { "run", "show", "--run", id, "--store", db.url }
        assert.equal(3, shown.code)
        store:close()
      end)
    end
  end)
end)
