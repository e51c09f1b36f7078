-- Every `vkit run` subcommand over a PostgreSQL store in each broken state
-- the spec can make (tests/support/postgres.lua): no evidence root, one
-- that is a file here or through VKIT_EVIDENCE_ROOT, its objects gone, a
-- schema behind or ahead of this vkit, a database never migrated, a login
-- in no vkit role, logins in the wrong role.  Whatever the state, no
-- command ends in a traceback: each exits as its help says, with a
-- reason that names what is wrong and, where one fixes it, the command.
-- A store no worker could retain files in is refused where that can be
-- known: `vkit store migrate` without an evidence root, the submission,
-- the claim (a queued run stays queued; it is never run and then failed).
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local postgres = require "tests.support.postgres"
local store_mod = require "vkit.store"
local worker = require "vkit.store.worker"

if postgres.missing("run subcommands over a broken store") then return end

describe("run subcommands over a broken PostgreSQL store", function()
  local server, db, dir, cleanup, project, p, saved_env
  local runs = {} -- label -> run id: P a done probe, E a PASSed external check, F an external
                  -- check failed with nothing retained (as item 5's workers failed them), C a
                  -- cancelled probe; Q a queued probe each state adds

  local function open(url)
    return store_mod.open { store = url, project = dir, cache = dir .. "/cache" }
  end

  local function owner_sql(text, params)
    local conn = assert(require("vkit.pg").connect(db.owner_url))
    local result, message = conn:exec(text, params)
    conn:close()
    return assert(result, message)
  end

  local function status_of(id)
    return owner_sql("SELECT status FROM vkit.runs WHERE run_id = $1", { id }).rows[1].status
  end

  -- A queued probe, inserted by the owner (a submission may be what the
  -- state refuses), waiting ms when it runs.
  local function queue_probe(ms)
    local id = require("vkit.store.common").new_id()
    local now = require("vkit.store.common").now()
    owner_sql([[INSERT INTO vkit.runs (run_id, kind, job, status, created_at, updated_at)
      VALUES ($1, 'probe', $2, 'queued', $3, $3)]], { id, json.encode { schema_version = 1, run_id = id, kind = "probe",
      created_at = now, payload = { ms = ms or 0 } }, now })
    return id
  end

  setup(function()
    server = postgres.start()
    db = server:database()
    dir, cleanup = t.tempdir()
    saved_env = t.env
    t.env = { VKIT_CACHE = dir .. "/cache" }
    project = dofile(vkit.root .. "/examples/external/project.lua")
    p = project.build(dir)
    -- E: run by the on-demand worker of a vkit_client login
    local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--store", db.url, "--wait", "60", "--json" }
    assert(r.code == 0, r.stderr .. r.stdout)
    runs.E = json.decode(r.stdout).runs[1].run_id
    t.kill_matching("--store " .. db.url)
    -- F: queued by a submitter (whose commands start no worker), claimed,
    -- and failed with nothing retained
    r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--store", db.submitter_url, "--json" }
    assert(r.code == 4, r.stderr .. r.stdout)
    runs.F = json.decode(r.stdout).runs[1].run_id
    local wk = open(db.worker_url)
    local claim = assert(wk:claim "spec")
    assert(claim.run.id == runs.F)
    vkit.fs.remove_tree(claim.attempt_dir)
    assert(vkit.fs.mkdirs(claim.attempt_dir))
    assert(wk:complete(claim, { status = "failed",
      error = "cannot retain the attempt's files: the store has no evidence root" }))
    local sub = open(db.submitter_url)
    runs.P = sub:submit("probe", { ms = 0 })
    assert(worker.scan(wk) == 1)
    runs.C = sub:submit("probe", { ms = 0 })
    assert(sub:cancel(runs.C))
    sub:close()
    wk:close()
    for label, status in pairs { P = "done", E = "done", F = "failed", C = "cancelled" } do
      assert(status_of(runs[label]) == status, label)
    end
  end)
  teardown(function()
    t.env = saved_env
    if db then t.kill_matching("--store " .. db.url) end
    if server then server:stop() end
    if cleanup then cleanup() end
  end)

  -- Runs one command; fails the spec on a traceback, an exit outside
  -- `codes`, or output without `text`.
  local function check(label, argv, codes, text)
    local r = t.vkit(argv)
    local said = r.stdout .. r.stderr
    assert.is_nil(said:find("traceback", 1, true), label .. ":\n" .. said)
    assert.is_nil(said:find("internal error", 1, true), label .. ":\n" .. said)
    local allowed = type(codes) == "table" and codes or { codes }
    local ok = false
    for _, c in ipairs(allowed) do ok = ok or c == r.code end
    assert.is_true(ok, ("%s: exit %d, expected %s\n%s"):format(label, r.code, table.concat(allowed, " or "), said))
    if text then assert.truthy(said:find(text, 1, true), ("%s: %q not said\n%s"):format(label, text, said)) end
    return r
  end

  local VIEWS = {
    { "show" }, { "show", "--json" }, { "wait", "--wait", "0" }, { "wait", "--wait", "0", "--json" },
    { "report", "--format", "md" }, { "report", "--format", "json" }, { "replay" },
  }

  -- Every subcommand on every run, as `url`'s login (the worker as
  -- worker_url's, then a cancel of the queued run).  expect(action, label)
  -- -> codes, text.
  -- (--project: a replay is queued at the project's HEAD, wherever the spec runs)
  local function drive(url, worker_url, expect)
    local codes, text = expect("list")
    check("list", { "run", "list", "--store", url }, codes, text)
    for _, label in ipairs { "P", "E", "F", "C", "Q" } do
      for _, view in ipairs(VIEWS) do
        local argv = { "run", view[1], "--run", runs[label], "--store", url, "--project", p.path }
        for i = 2, #view do argv[#argv + 1] = view[i] end
        codes, text = expect(view[1], label)
        check(table.concat(view, " ") .. " " .. label, argv, codes, text)
      end
    end
    codes, text = expect("worker")
    check("worker", { "run", "worker", "--until-idle", "--store", worker_url }, codes, text)
    for _, label in ipairs { "P", "E", "F", "C", "Q" } do
      codes, text = expect("cancel", label)
      check("cancel " .. label, { "run", "cancel", "--run", runs[label], "--store", url, "--json" }, codes, text)
    end
  end

  local PROBES = { P = true, C = true, Q = true }
  local MIGRATE = "vkit store migrate --store URL --evidence-root DIR"

  -- A store whose evidence cannot be read or written here: P and E (done:
  -- their outcome is read from retained files) cannot be shown; F, C, Q
  -- can; the worker refuses to claim, saying why; nothing queued is failed.
  local function unreadable(reason, replay_queues)
    return function(action, label)
      local done = label == "P" or label == "E"
      if action == "list" then return 3, reason end
      if action == "worker" then return 3, reason end
      if done then return 3, reason end
      if action == "show" or action == "report" then return 0 end
      if action == "wait" then return ({ F = 3, C = 1, Q = 4 })[label] end
      if action == "replay" then
        if PROBES[label] then return 2 end
        return replay_queues and 4 or 1, not replay_queues and reason or nil
      end
      if action == "cancel" then return 0 end
    end
  end

  local function assert_waiting(id)
    assert.equal("queued", status_of(id), "the queued run is never claimed and then failed")
  end

  it("has no evidence root: the worker and every submission refuse, naming `vkit store migrate`", function()
    runs.Q = queue_probe()
    local root = owner_sql("SELECT value FROM vkit.settings WHERE name = 'evidence_root'").rows[1].value
    owner_sql "DELETE FROM vkit.settings WHERE name = 'evidence_root'"
    finally(function()
      owner_sql("INSERT INTO vkit.settings (name, value) VALUES ('evidence_root', $1)", { root })
    end)
    local before = owner_sql("SELECT count(*) AS n FROM vkit.runs").rows[1].n
    -- submission: `vkit verify` refuses before anything is queued
    check("verify", { "verify", project.COMPONENT, "--project", p.path, "--store", db.submitter_url }, 1, MIGRATE)
    -- a vkit_client login's commands start no worker that would fail the run
    check("wait (vkit_client)", { "run", "wait", "--run", runs.Q, "--wait", "0", "--store", db.url }, 4)
    local client = open(db.url)
    local started, why = client:ensure_worker()
    assert.is_nil(started)
    assert.matches(MIGRATE, why, nil, true)
    local ok, e = pcall(client.submit, client, "probe", { ms = 0 })
    assert.is_false(ok)
    assert.equal("no-evidence-root", e.code)
    client:close()
    -- a run that cannot be read is listed as such, never skipped, and the others are listed
    local listed = check("list --json", { "run", "list", "--store", db.submitter_url, "--json" }, 3)
    local by_id = {}
    for _, entry in ipairs(json.decode(listed.stdout)) do by_id[entry.run_id] = entry end
    assert.equal("corrupt", by_id[runs.P].status)
    assert.matches(MIGRATE, by_id[runs.P].corrupt.message, nil, true)
    assert.equal("no-evidence-root", by_id[runs.P].corrupt.reason, "unverifiable here, not a report gone missing")
    assert.equal("failed", by_id[runs.F].status)
    assert.equal("queued", by_id[runs.Q].status)
    -- every run subcommand; F (failed with nothing retained) is shown whole
    local q = runs.Q
    drive(db.submitter_url, db.worker_url, function(action, label)
      if action == "cancel" and label == "Q" then return 0 end
      return unreadable(MIGRATE, false)(action, label)
    end)
    assert.equal(before, owner_sql("SELECT count(*) AS n FROM vkit.runs").rows[1].n, "nothing was queued")
    local shown = check("show F", { "run", "show", "--run", runs.F, "--store", db.submitter_url }, 0)
    assert.truthy(shown.stdout:find("cannot retain the attempt's files", 1, true), shown.stdout)
    -- the worker took nothing: Q stayed queued until the cancel
    assert.equal("cancelled", status_of(q))
    assert.equal("0", owner_sql("SELECT count(*) AS n FROM vkit.attempts WHERE run_id = $1", { q }).rows[1].n)
  end)

  it("is used by logins in the wrong role: each refusal names the role to grant", function()
    -- Q is held by a worker (a worker's login would start an on-demand
    -- worker for a queued run, which would take it)
    runs.Q = queue_probe()
    local holder = open(db.worker_url)
    holder.lease_seconds = 600
    local claim = assert(holder:claim "holder")
    assert.equal(runs.Q, claim.run.id)
    finally(function()
      holder:complete(claim, { status = "done", outcome = "ok" })
      holder:close()
    end)
    -- a worker's login reads everything, but cannot queue a replay or cancel;
    -- a submitter's login cannot serve as a worker
    drive(db.worker_url, db.submitter_url, function(action, label)
      if action == "list" then return 0 end
      if action == "worker" then return 3, "vkit_workers" end
      if action == "show" or action == "report" then return 0 end
      if action == "wait" then return ({ P = 0, E = 0, F = 3, C = 1, Q = 4 })[label] end
      if action == "replay" then
        if PROBES[label] then return 2 end
        return 1, "vkit_submitters"
      end
      if action == "cancel" then
        if label == "Q" then return 3, "vkit_submitters" end
        return 0 -- already finished: nothing to ask
      end
    end)
    assert.equal("running", status_of(runs.Q))
  end)

  it("records an evidence root that is a file here: the worker refuses to claim, reads say why", function()
    runs.Q = queue_probe()
    local root = owner_sql("SELECT value FROM vkit.settings WHERE name = 'evidence_root'").rows[1].value
    local file = dir .. "/not-a-directory"
    t.write(file, "x")
    owner_sql("UPDATE vkit.settings SET value = $1 WHERE name = 'evidence_root'", { file })
    finally(function() owner_sql("UPDATE vkit.settings SET value = $1 WHERE name = 'evidence_root'", { root }) end)
    local client = open(db.url)
    assert.is_nil((client:ensure_worker()))
    client:close()
    local q = runs.Q
    drive(db.submitter_url, db.worker_url, function(action, label)
      if action == "worker" then
        check("worker, before the cancel", { "run", "worker", "--until-idle", "--store", db.worker_url }, 3, file)
        assert_waiting(q)
      end
      return unreadable(file, true)(action, label)
    end)
  end)

  -- Every subcommand with VKIT_EVIDENCE_ROOT set to root, a directory
  -- this machine cannot use: the worker refuses before the cancel, and
  -- the queued run is never claimed.
  local function drive_with_evidence_root(root)
    local env = t.env
    t.env = { VKIT_CACHE = env.VKIT_CACHE, VKIT_EVIDENCE_ROOT = root }
    finally(function() t.env = env end)
    local q = runs.Q
    drive(db.submitter_url, db.worker_url, function(action, label)
      if action == "worker" then
        check("worker, before the cancel", { "run", "worker", "--until-idle", "--store", db.worker_url }, 3,
          "VKIT_EVIDENCE_ROOT")
        assert_waiting(q)
      end
      return unreadable("VKIT_EVIDENCE_ROOT", true)(action, label)
    end)
  end

  it("is given, through VKIT_EVIDENCE_ROOT, a path that cannot be a directory", function()
    runs.Q = queue_probe()
    local file = dir .. "/also-not-a-directory"
    t.write(file, "x")
    drive_with_evidence_root(file .. "/evidence")
  end)

  it("is given, through VKIT_EVIDENCE_ROOT, a mount that is missing here: nothing is made there", function()
    runs.Q = queue_probe()
    local unmounted = dir .. "/unmounted/evidence"
    local env = t.env
    t.env = { VKIT_CACHE = env.VKIT_CACHE, VKIT_EVIDENCE_ROOT = unmounted }
    local listed = check("list --json", { "run", "list", "--store", db.submitter_url, "--json" }, 3)
    t.env = env
    local p_entry
    for _, entry in ipairs(json.decode(listed.stdout)) do
      if entry.run_id == runs.P then p_entry = entry end
    end
    assert(p_entry, "the finished run P is listed")
    assert.equal("evidence-unusable", p_entry.corrupt.reason, "unverifiable here, not a report gone missing")
    assert.matches("is it mounted?", p_entry.corrupt.message, nil, true)
    drive_with_evidence_root(unmounted)
    assert.is_nil(vkit.fs.lstat(dir .. "/unmounted"), "a reader or a worker made the missing mount point")
  end)

  describe("a store this vkit cannot open", function()
    local function refused_everywhere(url, text)
      runs.Q = runs.P
      drive(url, url, function() return 3, text end)
    end

    it("has a schema behind this vkit's", function()
      owner_sql("DELETE FROM vkit.schema_version WHERE version = $1", { require("vkit.store.schema").LATEST })
      finally(function()
        owner_sql("INSERT INTO vkit.schema_version (version) VALUES ($1)", { require("vkit.store.schema").LATEST })
      end)
      refused_everywhere(db.submitter_url, "vkit store migrate")
    end)

    it("has a schema ahead of this vkit's", function()
      owner_sql "INSERT INTO vkit.schema_version (version) VALUES (99)"
      finally(function() owner_sql "DELETE FROM vkit.schema_version WHERE version = 99" end)
      refused_everywhere(db.submitter_url, "schema version 99")
    end)

    it("was never migrated", function()
      server:admin "CREATE DATABASE never_migrated OWNER vkit_owner"
      refused_everywhere(server:url("ci_submitter", "never_migrated"), "vkit store migrate")
    end)

    it("is reached by a login in no vkit role", function()
      refused_everywhere(db.nobody_url, "vkit_submitters")
    end)
  end)

  describe("`vkit store migrate`", function()
    it("refuses a store without an evidence root, changing nothing, and names the option", function()
      server:admin "CREATE DATABASE no_root OWNER vkit_owner"
      local owner = server:url("vkit_owner", "no_root")
      local r = check("migrate", { "store", "migrate", "--store", owner }, 2, "--evidence-root DIR")
      local conn = assert(require("vkit.pg").connect(owner))
      local present = assert(conn:exec "SELECT to_regclass('vkit.runs') IS NOT NULL AS present").rows[1].present
      conn:close()
      assert.equal("f", present, "no migration was kept: " .. r.stderr)
      local file = dir .. "/root-file"
      t.write(file, "x")
      check("migrate onto a file", { "store", "migrate", "--store", owner, "--evidence-root", file }, 2, file)
      check("migrate", { "store", "migrate", "--store", owner, "--evidence-root", dir .. "/root" }, 0)
      check("migrate again", { "store", "migrate", "--store", owner }, 0, "already current")
    end)
  end)

  -- Last: its worker runs what is queued, into an evidence root that is
  -- then put back without those objects.
  it("has lost its evidence objects: what they back cannot be shown, the rest can", function()
    -- (Q's probe.json differs from P's: a content-addressed copy of the same
    -- bytes would bring P's object back)
    runs.Q = queue_probe(1)
    local away = db.evidence_root .. ".away"
    assert(os.rename(db.evidence_root, away))
    assert(vkit.fs.mkdirs(db.evidence_root)) -- the mount is there, its objects are not
    finally(function()
      vkit.fs.remove_tree(db.evidence_root)
      assert(os.rename(away, db.evidence_root))
    end)
    drive(db.submitter_url, db.worker_url, function(action, label)
      if action == "worker" then return 0 end
      if action == "cancel" and label == "Q" then return 0 end
      if (action == "wait" or action == "replay") and label == "Q" then
        return ({ wait = { 0, 4 }, replay = 2 })[action] -- the worker may have run it by then
      end
      return unreadable("evidence", true)(action, label)
    end)
  end)
end)
