-- The PostgreSQL store's roles and guards against a real PostgreSQL 15
-- (tests/support/postgres.lua), each forgery sent as the SQL a holder of
-- that login could send, not through vkit: a submitter (vkit_submitters)
-- cannot claim, renew or record; a worker (vkit_workers) cannot queue or
-- cancel; no login, the owner's included, creates a run that is not
-- queued, ends an attempt without holding its live lease, ends one twice,
-- or changes a finished run, its attempts or its retained files; and a
-- store made before the roles existed is upgraded with its vkit_client
-- logins still working, under the same guards (docs/deployment.md).
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local postgres = require "tests.support.postgres"
local store_mod = require "vkit.store"
local worker = require "vkit.store.worker"
local schema = require "vkit.store.schema"

if postgres.missing("the PostgreSQL store's roles") then return end

describe("the PostgreSQL store's roles", function()
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

  local function open(url, opts)
    return store_mod.open { store = url, project = dir, lease_seconds = opts and opts.lease_seconds,
                            cache = dir .. "/cache" }
  end

  -- One statement on a fresh session of a login: result | nil, message, code.
  local function sql(url, text, params)
    local conn = assert(require("vkit.pg").connect(url))
    local result, message, code = conn:exec(text, params)
    conn:close()
    return result, message, code
  end

  -- The statement is refused with that SQLSTATE (one of them, when a
  -- table is given) and the reason matching `reason`.
  local function refused(codes, reason, url, text, params)
    local result, message, code = sql(url, text, params)
    assert.is_nil(result, ("accepted: %s"):format(text))
    local allowed = type(codes) == "table" and codes or { codes }
    local known = false
    for _, c in ipairs(allowed) do known = known or c == code end
    assert.is_true(known, ("%s: %s %s"):format(text, tostring(code), tostring(message)))
    if reason then assert.matches(reason, message, nil, true) end
  end

  local function row(url, text, params)
    return assert(sql(url, text, params)).rows[1]
  end

  local function run_row(id)
    return row(db.owner_url, "SELECT status, outcome, attempts, lease_token, lease_role FROM vkit.runs WHERE run_id = $1",
      { id })
  end

  local NOT_HELD, NOT_A_STEP, PRIVILEGE, FINISHED = "VK001", "VK002", "42501", "P0001"
  local FORGED_ATTEMPT = [[INSERT INTO vkit.attempts (run_id, attempt, status, worker, lease_token, started_at)
    VALUES ($1, 1, 'running', 'forger', 'forged', '2026-01-01T00:00:00Z')]]

  describe("a submitter's login", function()
    it("queues, reads and cancels, but never claims, renews or records an attempt", function()
      local sub = open(db.submitter_url)
      local id = sub:submit("probe", { ms = 0 })
      assert.equal("queued", sub:get(id).state.status)
      local ok, e = pcall(sub.claim, sub, "submitter")
      assert.is_false(ok)
      assert.equal(PRIVILEGE, e.code)
      assert.matches("vkit_workers", tostring(e), nil, true)
      refused(PRIVILEGE, nil, db.submitter_url, [[UPDATE vkit.runs SET status = 'running', attempts = 1,
        lease_token = 'x', lease_expires_at = clock_timestamp() + interval '1 minute' WHERE run_id = $1]], { id })
      refused(NOT_A_STEP, "no step leads from queued to running", db.submitter_url,
        "UPDATE vkit.runs SET status = 'running' WHERE run_id = $1", { id })
      refused(NOT_HELD, "records an outcome", db.submitter_url, "UPDATE vkit.runs SET status = 'done' WHERE run_id = $1",
        { id })
      refused(PRIVILEGE, nil, db.submitter_url, FORGED_ATTEMPT, { id })
      -- nor does the owner claim, though it holds every column: claiming is a worker's step
      refused(PRIVILEGE, "only a worker role", db.owner_url, [[UPDATE vkit.runs SET status = 'running', attempts = 1,
        lease_token = 'x', lease_expires_at = clock_timestamp() + interval '1 minute' WHERE run_id = $1]], { id })
      -- `vkit run worker` says why at once, and takes nothing
      local r = t.vkit { "run", "worker", "--until-idle", "--store", db.submitter_url }
      assert.equal(3, r.code, r.stderr)
      assert.matches("vkit_workers", r.stderr, nil, true)
      assert.is_nil(r.stderr:find("traceback", 1, true), r.stderr)
      assert.equal("queued", run_row(id).status)
      -- nor does a command it runs start an on-demand worker that would fail
      local started, why = sub:ensure_worker()
      assert.is_nil(started)
      assert.matches("vkit_workers", why, nil, true)
      r = t.vkit { "run", "cancel", "--run", id, "--store", db.submitter_url, "--json" }
      assert.equal(0, r.code, r.stderr)
      assert.equal("cancelled", json.decode(r.stdout).status)
      sub:close()
    end)
  end)

  describe("a worker's login", function()
    it("claims and records runs, but never queues or cancels one", function()
      local wk = open(db.worker_url)
      local ok, e = pcall(wk.submit, wk, "probe", { ms = 0 })
      assert.is_false(ok)
      assert.equal(PRIVILEGE, e.code)
      assert.matches("vkit_submitters", tostring(e), nil, true)
      refused(PRIVILEGE, nil, db.worker_url, [[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
        VALUES ('r-20260101T000000Z-000000000001', 'probe', '{}', 'queued', 'x', 'x')]])
      local id = open(db.submitter_url):submit("probe", { ms = 0 })
      refused(PRIVILEGE, nil, db.worker_url, "UPDATE vkit.runs SET cancel_requested = true WHERE run_id = $1", { id })
      local r = t.vkit { "run", "cancel", "--run", id, "--store", db.worker_url }
      assert.equal(3, r.code, r.stderr)
      assert.matches("vkit_submitters", r.stderr, nil, true)
      assert.is_nil(r.stderr:find("traceback", 1, true), r.stderr)
      assert.equal(1, worker.scan(wk))
      local done = run_row(id)
      assert.equal("done", done.status)
      assert.equal("ci_worker_a", done.lease_role, "the lease was bound to the login that claimed")
      assert.equal("ci_worker_a", row(db.owner_url, "SELECT claimed_by FROM vkit.attempts WHERE run_id = $1", { id })
        .claimed_by)
      wk:close()
    end)
  end)

  describe("no login", function()
    it("creates a run that is not queued, the owner's included", function()
      local finished = [[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
        VALUES ('r-20260101T000000Z-00000000000a', 'probe', '{}', 'done', 'x', 'x')]]
      for _, url in ipairs { db.submitter_url, db.url, db.owner_url } do
        refused(NOT_A_STEP, "must be created queued", url, finished)
      end
      -- with an outcome and an attempt: a submitter cannot even name them
      local passed = [[INSERT INTO vkit.runs (run_id, kind, job, status, attempts, outcome, created_at, updated_at)
        VALUES ('r-20260101T000000Z-00000000000b', 'probe', '{}', 'done', 1, 'PASS', 'x', 'x')]]
      refused(PRIVILEGE, nil, db.submitter_url, passed)
      refused(NOT_A_STEP, "must be created queued", db.owner_url, passed)
      -- the issue's forgery, whole: a finished PASS and the attempt recording it, in one transaction
      local conn = assert(require("vkit.pg").connect(db.url))
      assert(conn:exec "BEGIN")
      local ok, message, code = conn:exec([[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
        VALUES ('r-20260101T000000Z-00000000000c', 'probe', '{}', 'done', 'x', 'x')]])
      assert.is_nil(ok)
      assert.equal(NOT_A_STEP, code, message)
      conn:exec "ROLLBACK"
      conn:close()
      assert.equal("0", row(db.owner_url, "SELECT count(*) AS n FROM vkit.runs").n)
    end)

    it("ends another submitter's queued run without a claim", function()
      local id = open(db.submitter_url):submit("probe", { ms = 0 })
      for _, url in ipairs { db.other_worker_url, db.url, db.owner_url } do
        refused(NOT_HELD, "holding that attempt's live lease", url, FORGED_ATTEMPT, { id })
        refused(NOT_HELD, "records an outcome", url, "UPDATE vkit.runs SET status = 'done', outcome = 'PASS' WHERE run_id = $1",
          { id })
        -- (the owner is no worker: refused for that before the step itself)
        refused({ NOT_A_STEP, PRIVILEGE }, nil, url,
          "UPDATE vkit.runs SET status = 'done', outcome = 'PASS', attempts = 1 WHERE run_id = $1", { id })
      end
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "0", "--store", db.submitter_url, "--json" }
      assert.equal(4, r.code, r.stdout .. r.stderr)
      assert.equal("queued", json.decode(r.stdout).status)
    end)
  end)

  describe("an attempt", function()
    it("is renewed, given files and ended only by the login holding its live lease", function()
      local id = open(db.submitter_url):submit("probe", { ms = 0 })
      local holder = open(db.worker_url, { lease_seconds = 600 })
      local claim = assert(holder:claim "holder")
      -- Every lease token is readable; it proves nothing without the login.
      local token = run_row(id).lease_token
      assert.equal(claim.token, token)
      local stolen = { id, token }
      for _, url in ipairs { db.other_worker_url, db.url } do
        refused(NOT_HELD, "only the login holding its live lease records it", url, [[UPDATE vkit.attempts
          SET status = 'done', outcome = 'PASS', finished_at = 'x' WHERE run_id = $1 AND lease_token = $2]], stolen)
        refused(NOT_HELD, "only the login holding its live lease records it", url,
          "UPDATE vkit.attempts SET progress = 'forged' WHERE run_id = $1 AND lease_token = $2", stolen)
        refused(NOT_HELD, "given up only by its login", url, [[UPDATE vkit.attempts SET status = 'abandoned',
          finished_at = 'x' WHERE run_id = $1 AND lease_token = $2]], stolen)
        refused(NOT_HELD, "only the login holding its live lease renews it", url, [[UPDATE vkit.runs
          SET lease_expires_at = clock_timestamp() + interval '10 minutes' WHERE run_id = $1 AND lease_token = $2]], stolen)
        refused(NOT_HELD, "only the login holding its live lease ends it", url, [[UPDATE vkit.runs
          SET status = 'done', outcome = 'PASS' WHERE run_id = $1 AND lease_token = $2]], stolen)
        refused(NOT_HELD, "retained only by its own login", url, [[INSERT INTO vkit.artifacts (run_id, attempt, path,
          sha256, size) VALUES ($1, 1, 'forged.json', repeat('a', 64), 1)]], { id })
      end
      assert.is_nil(open(db.other_worker_url):claim "other", "a live lease is nobody else's to take")
      -- nor can its holder keep the run for ever
      refused(NOT_A_STEP, "within the bound", db.worker_url,
        "UPDATE vkit.runs SET lease_expires_at = clock_timestamp() + interval '1 year' WHERE run_id = $1", { id })
      -- its holder ends it: the run as its attempt ended, recorded first
      refused(NOT_A_STEP, "recorded first", db.worker_url,
        "UPDATE vkit.runs SET status = 'done', outcome = 'ok' WHERE run_id = $1", { id })
      assert.is_true((holder:heartbeat(claim)))
      assert.is_true(holder:complete(claim, { status = "done", outcome = "ok", summary = { attempt = 1 } }))
      local done = run_row(id)
      assert.equal("done", done.status)
      assert.equal("ok", done.outcome)
      holder:close()
    end)

    it("ends once, as its run ends, and a finished run's attempts and files never change", function()
      local id = open(db.submitter_url):submit("probe", { ms = 0 })
      local holder = open(db.worker_url, { lease_seconds = 600 })
      local claim = assert(holder:claim "holder")
      -- within one transaction of the holder: the attempt's end, then a second one
      local conn = assert(require("vkit.pg").connect(db.worker_url))
      assert(conn:exec "BEGIN")
      assert(conn:exec([[UPDATE vkit.attempts SET status = 'done', outcome = 'ok', finished_at = 'x'
        WHERE run_id = $1 AND attempt = 1]], { id }))
      local again, message, code = conn:exec([[UPDATE vkit.attempts SET status = 'done', outcome = 'PASS',
        finished_at = 'y' WHERE run_id = $1 AND attempt = 1]], { id })
      assert.is_nil(again)
      assert.equal(FINISHED, code, message)
      conn:exec "ROLLBACK"
      -- a run ends only as its attempt did
      assert(conn:exec "BEGIN")
      assert(conn:exec([[UPDATE vkit.attempts SET status = 'done', outcome = 'ok', finished_at = 'x'
        WHERE run_id = $1 AND attempt = 1]], { id }))
      local forged
      forged, message, code = conn:exec("UPDATE vkit.runs SET status = 'done', outcome = 'PASS' WHERE run_id = $1", { id })
      assert.is_nil(forged)
      assert.equal(NOT_A_STEP, code, message)
      conn:exec "ROLLBACK"
      conn:close()
      -- what the probe would have kept: the attempt's files are retained with its end
      t.write(claim.attempt_dir .. "/probe.json", json.encode { attempt = 1, waited_ms = 0 })
      assert.is_true(holder:complete(claim, { status = "done", outcome = "ok", summary = { attempt = 1 } }))
      assert.equal("1", row(db.owner_url, "SELECT count(*) AS n FROM vkit.artifacts WHERE run_id = $1", { id }).n)
      for _, url in ipairs { db.worker_url, db.other_worker_url, db.url, db.owner_url } do
        for _, change in ipairs { "status = 'failed'", "outcome = 'PASS'", "note = 'rewritten'", "progress = 'rewritten'",
                                  "finished_at = 'then'" } do
          refused({ FINISHED, PRIVILEGE }, nil, url, "UPDATE vkit.attempts SET " .. change .. " WHERE run_id = $1", { id })
        end
        refused({ FINISHED, PRIVILEGE }, nil, url, "DELETE FROM vkit.attempts WHERE run_id = $1", { id })
        refused({ FINISHED, PRIVILEGE }, nil, url, "UPDATE vkit.artifacts SET size = size + 1 WHERE run_id = $1", { id })
        refused({ FINISHED, PRIVILEGE }, nil, url, "DELETE FROM vkit.artifacts WHERE run_id = $1", { id })
        refused({ FINISHED, PRIVILEGE }, nil, url, "DELETE FROM vkit.runs WHERE run_id = $1", { id })
      end
      -- the owner is refused by the guards themselves, not by a privilege
      refused(FINISHED, "ended (done): it cannot change", db.owner_url,
        "UPDATE vkit.attempts SET outcome = 'PASS' WHERE run_id = $1", { id })
      refused(FINISHED, "never deleted", db.owner_url, "DELETE FROM vkit.attempts WHERE run_id = $1", { id })
      refused(FINISHED, "never change", db.owner_url, "UPDATE vkit.artifacts SET size = size + 1 WHERE run_id = $1", { id })
      refused(FINISHED, "it cannot change", db.owner_url, "DELETE FROM vkit.runs WHERE run_id = $1", { id })
      refused(NOT_HELD, "before it ends", db.worker_url, [[INSERT INTO vkit.artifacts (run_id, attempt, path, sha256, size)
        VALUES ($1, 1, 'late.json', repeat('b', 64), 1)]], { id })
      local run = holder:get(id)
      assert.equal("ok", run.state.outcome)
      assert.equal("done", holder:attempt_record(run, 1).status)
      holder:close()
    end)

    it("whose lease lapsed records nothing, and its worker's result is discarded", function()
      local id = open(db.submitter_url):submit("probe", { ms = 0 })
      local holder = open(db.worker_url, { lease_seconds = 2 })
      local claim = assert(holder:claim "paused")
      assert.is_true(t.wait_for(function() return holder:get(id).stale end, 60))
      refused(NOT_HELD, "only the login holding its live lease records it", db.worker_url,
        "UPDATE vkit.attempts SET status = 'done', outcome = 'ok', finished_at = 'x' WHERE run_id = $1", { id })
      refused(NOT_HELD, "records an outcome", db.worker_url,
        "UPDATE vkit.runs SET status = 'done', outcome = 'ok' WHERE run_id = $1", { id })
      refused(NOT_HELD, "renews it", db.worker_url,
        "UPDATE vkit.runs SET lease_expires_at = clock_timestamp() + interval '1 minute' WHERE run_id = $1", { id })
      assert.is_false((holder:heartbeat(claim)))
      assert.is_false(holder:complete(claim, { status = "done", outcome = "ok" }))
      assert.equal("running", run_row(id).status)
      -- another worker takes it over: the attempt it finds is abandoned, the run's next one is its own
      local other = open(db.other_worker_url)
      assert.equal(1, worker.scan(other))
      local after = run_row(id)
      assert.equal("done", after.status)
      assert.equal("2", after.attempts)
      assert.equal("ci_worker_b", after.lease_role)
      holder:close()
      other:close()
    end)
  end)

  describe("migration", function()
    -- A store made by vkit before the roles (schema 2, every login in
    -- vkit_client), with a run queued and one running under its lease.
    local function schema_2_store()
      server:admin(("CREATE DATABASE old_%s OWNER vkit_owner"):format(db.name))
      local name = "old_" .. db.name
      local owner = server:url("vkit_owner", name)
      local conn = assert(require("vkit.pg").connect(owner))
      assert(conn:exec "BEGIN")
      assert(conn:exec "CREATE SCHEMA vkit")
      assert(conn:exec(schema.VERSION_TABLE))
      for v = 1, 2 do
        for _, statement in ipairs(schema.migrations[v].statements) do assert(conn:exec(statement)) end
        assert(conn:exec("INSERT INTO vkit.schema_version (version) VALUES ($1)", { v }))
      end
      assert(conn:exec("INSERT INTO vkit.settings (name, value) VALUES ('evidence_root', $1)", { db.evidence_root }))
      assert(conn:exec "COMMIT")
      conn:close()
      return name, owner, server:url("vkit_worker", name)
    end

    local function raw_job(id)
      return json.encode { schema_version = 1, run_id = id, kind = "probe", created_at = "2026-01-01T00:00:00Z",
                           payload = { ms = 0 } }
    end

    it("upgrades a schema 2 store: vkit_client keeps both roles, under the guards", function()
      local _, owner, client = schema_2_store()
      local queued, running = "r-20260101T000000Z-0000000000a1", "r-20260101T000000Z-0000000000a2"
      for _, id in ipairs { queued, running } do
        assert(sql(client, [[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
          VALUES ($1, 'probe', $2, 'queued', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')]], { id, raw_job(id) }))
      end
      -- claimed under schema 2 by a worker of that vkit
      assert(sql(client, [[UPDATE vkit.runs SET status = 'running', attempts = 1, lease_token = 'old',
        lease_expires_at = clock_timestamp() + interval '3 seconds' WHERE run_id = $1]], { running }))
      assert(sql(client, [[INSERT INTO vkit.attempts (run_id, attempt, status, worker, lease_token, started_at)
        VALUES ($1, 1, 'running', 'old-worker', 'old', '2026-01-01T00:00:00Z')]], { running }))

      local r = t.vkit { "store", "migrate", "--store", owner, "--json" }
      assert.equal(0, r.code, r.stderr)
      local out = json.decode(r.stdout)
      assert.equal(2, out.from)
      assert.same({ 3 }, out.applied)
      r = t.vkit { "store", "migrate", "--store", owner, "--json" }
      assert.equal(0, r.code, r.stderr)
      assert.same({}, json.decode(r.stdout).applied)
      -- vkit_client holds nothing of its own now: what it may do comes from both roles
      assert.equal("0", row(owner, [[SELECT count(*) AS n FROM information_schema.role_table_grants
        WHERE grantee = 'vkit_client']]).n)
      assert.equal("0", row(owner, [[SELECT count(*) AS n FROM information_schema.role_column_grants
        WHERE grantee = 'vkit_client']]).n)
      local member = row(owner, [[SELECT pg_has_role('vkit_client', 'vkit_submitters', 'MEMBER') AS s,
        pg_has_role('vkit_client', 'vkit_workers', 'MEMBER') AS w]])
      assert.same({ s = "t", w = "t" }, member)

      -- the attempt begun under schema 2 has no login bound to its lease:
      -- its old worker's result is refused, and the run is taken over once the lease lapses
      refused(NOT_HELD, nil, client,
        "UPDATE vkit.attempts SET status = 'done', outcome = 'ok', finished_at = 'x' WHERE run_id = $1", { running })
      refused({ NOT_HELD, NOT_A_STEP }, nil, client, [[INSERT INTO vkit.runs (run_id, kind, job, status, created_at,
        updated_at) VALUES ('r-20260101T000000Z-0000000000a3', 'probe', '{}', 'done', 'x', 'x')]])
      local store = open(client)
      assert.is_true(t.wait_for(function() return store:get(running).stale end, 60))
      local extra = store:submit("probe", { ms = 0 })
      assert.equal(3, worker.scan(store))
      for _, id in ipairs { queued, running, extra } do
        local run = store:get(id)
        assert.equal("done", run.state.status, id)
        assert.equal("ok", run.state.outcome, id)
      end
      assert.equal("abandoned", store:attempt_record(store:get(running), 1).status)
      store:close()
    end)

    it("applies the roles and guards again to a store that has them, changing nothing", function()
      local conn = assert(require("vkit.pg").connect(db.owner_url))
      assert(conn:exec "BEGIN")
      for _, statement in ipairs(schema.migrations[3].statements) do
        local ok, message = conn:exec(statement)
        assert.truthy(ok, tostring(message) .. "\n" .. statement)
      end
      assert(conn:exec "COMMIT")
      conn:close()
      local store = open(db.url)
      local id = store:submit("probe", { ms = 0 })
      assert.equal(1, worker.scan(store))
      assert.equal("done", store:get(id).state.status)
      refused(FINISHED, nil, db.owner_url, "UPDATE vkit.runs SET outcome = 'PASS' WHERE run_id = $1", { id })
      store:close()
    end)
  end)
end)
