-- The PostgreSQL job store under faults and load, against a real
-- PostgreSQL started by the spec: four workers, several hundred jobs
-- (probes and real certifications), workers SIGKILLed at chosen moments
-- and replaced, PostgreSQL stopped at once and restarted mid-run, a
-- worker holding a run paused (SIGSTOP: it can neither work nor talk) past
-- its lease, and a worker holding a run cut off from the database by a
-- network partition (it reaches PostgreSQL through a TCP proxy,
-- tests/support/tcp_proxy.py, which is stopped: its connections hang, it
-- goes on working) past its lease.  Every job must end exactly once: no lost run, no
-- doubled completion, no result from a stale lease, and the counts, taken
-- from the database and from every worker's own log, prove it.
--
-- The faults are triggered by progress (random shares of the runs
-- finished), never by the clock, so a slow or loaded machine changes only how long
-- the spec takes; the one bound (900 s) separates a hang from that.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local postgres = require "tests.support.postgres"
local intents = require "tests.support.intents"
local store_mod = require "vkit.store"
local TERMINAL = require("vkit.store.common").TERMINAL

if postgres.missing("the PostgreSQL store under faults and load") then return end

local PROBES, CERTIFICATIONS, WORKERS, LEASE = 320, 8, 4, 5
local BOUND_MS = 900 * 1000

describe("the PostgreSQL store under faults and load", function()
  local server, db, dir, cleanup, p, proxy_pid
  setup(function()
    server = postgres.start()
    db = server:database()
    dir, cleanup = t.tempdir()
    p = intents.project { artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 3 }) }
  end)
  teardown(function()
    t.kill_matching("--store " .. db.url)
    -- This spec's own proxy only (another run of the suite may have one).
    if proxy_pid then os.execute("kill -KILL " .. proxy_pid .. " 2>/dev/null") end
    if p then p.cleanup() end
    server:stop()
    cleanup()
  end)

  it("ends every job exactly once through SIGKILLs, a database restart and a partition", function()
    local proxy
    local store = store_mod.open { store = db.url, project = p.dir .. "/project", cache = dir .. "/cache" }
    local expected = {}
    for i = 1, PROBES do
      -- Mostly short probes; every tenth long enough to be caught running.
      local id = store:submit("probe", { ms = i % 10 == 0 and 1500 or (i * 37) % 120 })
      expected[id] = "ok"
    end
    local good = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x, 100)\n" }, p.target)
    local bad = p.commit({ ["src/score.py"] = "def score(x):\n    return 100 if x >= 30 else 2 * x\n" }, p.target)
    for i = 1, CERTIFICATIONS do
      local candidate = i % 2 == 0 and good or bad
      local id = store:submit("change-certify", { project = store.project, request = json.decode(p.request(candidate)),
                                                  trusted_target = p.target, method = "finite_paired" })
      expected[id] = i % 2 == 0 and "samples_conform" or "observed_violation"
    end
    local total = PROBES + CERTIFICATIONS

    -- The proxy one worker reaches the database through.
    local port_file = dir .. "/proxy.port"
    proxy = assert(require("vkit.sys").spawn_detached { exe = "/usr/bin/python3.11", cwd = dir, log = dir .. "/proxy.log",
      argv = { "python3", vkit.root .. "/tests/support/tcp_proxy.py", ("%s/.s.PGSQL.%d"):format(server.socket, server.port),
               port_file }, env = { "PATH=/usr/bin:/bin" } })
    proxy_pid = proxy
    assert.is_true(t.wait_for(function() return vkit.fs.lstat(port_file) ~= nil end, 60), "the proxy started")
    local proxied_url = ("postgresql://127.0.0.1:%s/%s?user=vkit_worker&passfile=%s"):format(t.slurp(port_file),
      db.name, server.passfile)

    local workers, logs, next_log, log_of = {}, {}, 0, {}
    local function start_worker(url)
      next_log = next_log + 1
      local log = ("%s/worker-%d.log"):format(dir, next_log)
      logs[#logs + 1] = log
      local pid = assert(require("vkit.sys").spawn_detached { exe = vkit.exe, log = log, cwd = dir,
        argv = { vkit.exe, "run", "worker", "--store", url or db.url, "--lease-seconds", tostring(LEASE),
                 "--concurrency", "1" },
        env = { "PATH=/usr/bin:/bin", "LC_ALL=C", "HOME=" .. dir, "VKIT_CACHE=" .. dir .. "/cache" } })
      if not url then workers[#workers + 1] = pid end
      log_of[pid] = log
      return pid
    end
    for _ = 1, WORKERS - 1 do start_worker() end
    local proxied = start_worker(proxied_url)

    local admin
    local function query(sql, params)
      for _ = 1, 600 do
        if not admin then admin = require("vkit.pg").connect(db.url) end
        if admin then
          local result = admin:exec(sql, params)
          if result then return result end
          admin:close()
          admin = nil
        end
        vkit.sys.sleep(0.1)
      end
      error("the database stayed unreachable")
    end
    local function finished()
      return tonumber(query("SELECT count(*) AS n FROM vkit.runs WHERE status IN ('done', 'failed', 'cancelled')")
        .rows[1].n)
    end

    local killed, restarted, partition = 0, false, nil
    local killed_pids = {}
    -- Six kills at random moments (random shares of the runs finished,
    -- between 5% and 90%), each of a random worker.
    local kills_at = {}
    for i = 1, 6 do kills_at[i] = 0.05 + (tonumber(vkit.sys.random_hex(2), 16) % 850) / 1000 end
    table.sort(kills_at)
    local function kill_one()
      -- never the paused worker: it must live to find its lease gone and
      -- discard its result (killing it too made the spec fail at random)
      local candidates = {}
      for i, pid in ipairs(workers) do
        if not (partition and partition.pid == pid) then candidates[#candidates + 1] = i end
      end
      local k = candidates[1 + (tonumber(vkit.sys.random_hex(1), 16) % #candidates)]
      local pid = table.remove(workers, k)
      os.execute("kill -KILL " .. pid)
      killed_pids[pid] = true
      killed = killed + 1
      start_worker()
    end
    -- Stops `stopped` (a worker, or the proxy) while one of `holders`
    -- holds a running attempt: {pid, run, attempt} once it is so, else nil.
    local function partition_one(holders, stopped)
      local live = {}
      for _, pid in ipairs(holders) do live[pid] = true end
      for _, row in ipairs(query([[SELECT run_id, attempt, worker_pid FROM vkit.attempts WHERE status = 'running'
                                   ORDER BY started_at]]).rows) do
        local pid = tonumber(row.worker_pid)
        if live[pid] then
          local target = stopped or pid
          os.execute("kill -STOP " .. target)
          local still = query("SELECT status FROM vkit.attempts WHERE run_id = $1 AND attempt = $2",
            { row.run_id, row.attempt }).rows[1]
          if still.status == "running" then return { pid = target, run = row.run_id, attempt = tonumber(row.attempt) } end
          os.execute("kill -CONT " .. target)
        end
      end
    end
    -- Whether the cut-off attempt ended its run itself: its COMMIT was on
    -- its way to the server when the proxy stopped (the attempt still read
    -- "running" just after the stop).  Its worker then logs a completion,
    -- not a discard.
    local function won(partition)
      local row = query("SELECT status, attempts FROM vkit.runs WHERE run_id = $1", { partition.run }).rows[1]
      return tonumber(row.attempts) == partition.attempt and row.status == "done"
    end
    -- Resumes a partition once its run has moved on: another worker took
    -- it over, or it ended without one (the cut-off attempt won, or the
    -- lease expired on the last attempt allowed and a claim settled the
    -- run failed, out of attempts, without a newer attempt).
    local function heal(partition)
      if partition and not partition.resumed then
        local row = query("SELECT status, attempts FROM vkit.runs WHERE run_id = $1", { partition.run }).rows[1]
        if tonumber(row.attempts) > partition.attempt or TERMINAL[row.status] then
          os.execute("kill -CONT " .. partition.pid)
          partition.resumed = true
        end
      end
    end
    local network

    local start = vkit.sys.monotonic_ms()
    local done = 0
    while done < total do
      assert(vkit.sys.monotonic_ms() - start < BOUND_MS, ("only %d of %d runs ended"):format(done, total))
      local share = done / total
      if kills_at[killed + 1] and share >= kills_at[killed + 1] then kill_one() end
      if not restarted and share >= 0.40 then
        server:restart()
        restarted = true
      end
      if restarted and not partition and share >= 0.45 then partition = partition_one(workers) end
      if restarted and not network and share >= 0.45 then network = partition_one({ proxied }, proxy) end
      heal(partition)
      heal(network)
      vkit.sys.sleep(0.1)
      done = finished()
    end
    assert.truthy(partition, "a worker was paused while holding a run")
    assert.truthy(network, "a worker was cut off from the database while holding a run")
    heal(partition)
    heal(network)
    -- The partitioned worker learns that its lease is gone and discards its
    -- result; wait for it to say so (it heartbeats within heartbeat_ms).
    local function discarded_lines()
      local out = {}
      for _, log in ipairs(logs) do
        for run, attempt in t.slurp(log):gmatch "run (r%-[%w%-]+) attempt (%d+) %a+: discarded" do
          out[#out + 1] = { run = run, attempt = tonumber(attempt) }
        end
      end
      return out
    end
    local function discarded(p)
      for _, d in ipairs(discarded_lines()) do if d.run == p.run and d.attempt == p.attempt then return true end end
      return won(p)
    end
    -- Where each stands, for a failure to say why.
    local function state(p, worker)
      local row = query("SELECT status, attempts, error FROM vkit.runs WHERE run_id = $1", { p.run }).rows[1]
      local log = log_of[worker] and t.slurp(log_of[worker]) or ""
      return ("%s attempt %d (pid %d, %s): run %s after %s attempt(s)%s, discarded %s; its worker's log ends:\n%s\n")
        :format(p.run, p.attempt, p.pid, p.resumed and "resumed" or "still stopped", row.status, row.attempts,
          row.error and row.error ~= "" and (" (" .. row.error .. ")") or "", tostring(discarded(p)), log:sub(-2000))
    end
    local both = t.wait_for(function() return discarded(partition) and discarded(network) end, 180)
    assert.is_true(both, both and "" or ("both partitioned workers discarded their results (or had ended their runs "
      .. "before the cut): paused %s; cut off %s"):format(state(partition, partition.pid), state(network, proxied)))
    -- A worker logs a completion just after its commit: wait until every
    -- live worker has said what it committed before stopping them.
    local function all_logged()
      local lines = {}
      for _, log in ipairs(logs) do
        for run in t.slurp(log):gmatch "run (r%-[%w%-]+) attempt %d+ %a+: completed" do lines[run] = true end
      end
      for _, row in ipairs(query("SELECT run_id, worker_pid FROM vkit.attempts WHERE status = 'done'").rows) do
        if not lines[row.run_id] and not killed_pids[tonumber(row.worker_pid)] then return false end
      end
      return true
    end
    assert.is_true(t.wait_for(all_logged, 120),
      "every live worker logged its completions")
    t.kill_matching("--store " .. db.url)
    t.kill_matching("--store " .. proxied_url)

    -- The counts.
    local runs = {}
    for _, row in ipairs(query("SELECT run_id, status, attempts, outcome, error FROM vkit.runs").rows) do
      runs[row.run_id] = row
    end
    local attempts, by_status = {}, {}
    for _, row in ipairs(query([[SELECT run_id, attempt, status, outcome, note, worker_pid FROM vkit.attempts
                                 ORDER BY attempt]]).rows) do
      attempts[row.run_id] = attempts[row.run_id] or {}
      attempts[row.run_id][#attempts[row.run_id] + 1] = row
      by_status[row.status] = (by_status[row.status] or 0) + 1
    end
    local completions = {}
    for _, log in ipairs(logs) do
      for run, attempt in t.slurp(log):gmatch "run (r%-[%w%-]+) attempt (%d+) %a+: completed" do
        completions[run] = (completions[run] or 0) + 1
        assert.equal(tonumber(runs[run].attempts), tonumber(attempt), "a completion is the run's last attempt")
      end
    end
    local counts = { runs = 0, done = 0, failed = 0, cancelled = 0, completed = 0, unlogged = 0 }
    for id, want in pairs(expected) do
      local run = assert(runs[id], "no run lost: " .. id)
      counts.runs = counts.runs + 1
      counts[run.status] = counts[run.status] + 1
      local list = attempts[id] or {}
      assert.equal(tonumber(run.attempts), #list, id)
      local done_attempts = 0
      for n, a in ipairs(list) do
        assert.equal(n, tonumber(a.attempt))
        assert.are_not.equal("running", a.status, "no attempt left running: " .. id)
        if a.status == "done" then done_attempts = done_attempts + 1 end
        if n < #list then assert.equal("abandoned", a.status, "only the last attempt ends the run") end
      end
      if run.status == "done" then
        assert.equal(1, done_attempts, "exactly one completed attempt: " .. id)
        assert.equal(want, run.outcome, id)
        assert.equal(run.outcome, list[#list].outcome)
        -- Its worker said so, unless it was SIGKILLed between the commit
        -- and writing the line; never twice.
        if completions[id] == nil and killed_pids[tonumber(list[#list].worker_pid)] then
          counts.unlogged = counts.unlogged + 1
        else
          assert.equal(1, completions[id], "exactly one accepted completion: " .. id)
          counts.completed = counts.completed + 1
        end
      else
        -- A run may end failed only by running out of attempts, each abandoned.
        assert.equal("failed", run.status, id)
        assert.equal(0, done_attempts)
        assert.matches("no attempts remain", run.error)
        assert.is_nil(completions[id], id)
      end
    end
    local discarded = discarded_lines()
    for _, d in ipairs(discarded) do
      local a = attempts[d.run][d.attempt]
      assert.equal("abandoned", a.status)
      -- A newer attempt took the run over, or none was left to.
      if tonumber(runs[d.run].attempts) == d.attempt then
        assert.equal("failed", runs[d.run].status)
        assert.matches("no attempts remain", runs[d.run].error)
      else
        assert.is_true(tonumber(runs[d.run].attempts) > d.attempt, "a newer attempt ended the run")
      end
    end
    assert.is_true(restarted)
    assert.equal(#kills_at, killed)
    assert.equal(total, counts.runs)
    assert.equal(total, counts.done + counts.failed)
    assert.equal(0, counts.cancelled)
    assert.equal(counts.done, counts.completed + counts.unlogged)
    io.stderr:write(("\nfaults and load: %d runs (%d probes, %d certifications), %d workers, lease %d s: %d done, "
      .. "%d failed (attempts exhausted), %d accepted completions logged (+%d by a worker killed before it could log "
      .. "it), 0 doubled; attempts: %s; %d SIGKILLs, 1 PostgreSQL "
      .. "restart, 1 paused worker (%s attempt %d), 1 network partition (%s attempt %d): %d discarded result(s); "
      .. "%.1f s\n"):format(total, PROBES, CERTIFICATIONS, WORKERS, LEASE, counts.done, counts.failed, counts.completed,
      counts.unlogged, json.encode(by_status), killed, partition.run, partition.attempt, network.run, network.attempt, #discarded,
      (vkit.sys.monotonic_ms() - start) / 1000))
    if admin then admin:close() end
    store:close()
  end)

  -- What vkit.pg reports (and the store raises) when no answer came in time.
  local function timeout(why)
    return setmetatable({ message = "no answer within the timeout (" .. why .. ")", code = "timeout" },
      { __tostring = function(e) return e.message end })
  end

  -- The cause of the partitions' missing discards (issue 30): a claim is
  -- one transaction, and when its COMMIT reached the server but the answer
  -- did not come back (the restart, the partition, a pause past the
  -- statement timeout), or the claimed attempt could not be prepared, the
  -- worker saw an error and went on without the attempt, recorded running
  -- under its lease.  Nothing renewed, ended or discarded it, and the
  -- worker the spec above cut off (or paused) holding it never said its
  -- result was discarded.  A claim in doubt is now resolved once the
  -- database answers.  Here the answer is lost on purpose, in this process.
  describe("a claim whose answer was lost", function()
    local worker = require "vkit.store.worker"
    local pgstore = require "vkit.store.postgresql"
    local cut_db
    -- A store whose COMMIT, once armed, reaches the server (or, with
    -- before = true, never leaves) and whose answer never comes: the
    -- connection is dropped and a timeout raised, as vkit.pg does.
    local function open(lease_seconds)
      cut_db = cut_db or server:database()
      local s = store_mod.open { store = cut_db.url, project = dir, cache = dir .. "/cache", lease_seconds = lease_seconds }
      local exec = s.exec
      s.exec = function(self, sql, params)
        local arm = self.lose_commit
        if arm and sql == "COMMIT" then
          self.lose_commit = nil
          if not arm.before then exec(self, sql, params) end
          self.conn:close()
          error(timeout "lost on purpose", 0)
        end
        return exec(self, sql, params)
      end
      return s
    end
    local function attempt_status(s, id, n)
      local row = s:query("SELECT status FROM vkit.attempts WHERE run_id = $1 AND attempt = $2", { id, n }).rows[1]
      return row and row.status
    end
    local function scan(s)
      local seen = {}
      worker.scan(s, { on_attempt = function(claim, fields, accepted)
        seen[#seen + 1] = { id = claim.run.id, attempt = claim.attempt, recovered = claim.recovered,
                            status = fields.status, error = fields.error, accepted = accepted }
      end })
      return seen
    end

    it("is recovered while its lease holds: the worker runs it and its result counts", function()
      local a = open(600)
      local id = a:submit("probe", { ms = 0 })
      a.lose_commit = {}
      local ok, e = pcall(a.claim, a, "answer-lost")
      assert.is_false(ok)
      assert.truthy(pgstore.is_connection_error(e), tostring(e))
      assert.equal("running", attempt_status(a, id, 1), "the claim committed")
      local seen = scan(a)
      assert.equal(1, #seen, "the worker took up the attempt it had claimed")
      assert.same({ id = id, attempt = 1, recovered = true, status = "done", accepted = true }, seen[1])
      local run = a:get(id)
      assert.equal("done", run.state.status)
      assert.equal(1, run.state.attempts)
      a:close()
    end)

    it("is recovered after its lease lapsed and another worker ran it: the worker learns so and its result is discarded",
      function()
      local a, b = open(2), open(2)
      local id = a:submit("probe", { ms = 0 })
      a.lose_commit = {}
      assert.is_false((pcall(a.claim, a, "answer-lost")))
      assert.equal("running", attempt_status(a, id, 1))
      assert.is_true(t.wait_for(function() return b:get(id).stale end, 120), "the lease lapsed")
      assert.equal(1, worker.scan(b))
      assert.equal("abandoned", attempt_status(b, id, 1))
      local seen = scan(a)
      assert.equal(1, #seen, "the worker learned what became of the attempt it had claimed")
      assert.equal(id, seen[1].id)
      assert.equal(1, seen[1].attempt)
      assert.is_true(seen[1].recovered)
      assert.is_false(seen[1].accepted, "discarded")
      assert.equal("cancelled", seen[1].status)
      assert.matches("the lease was lost before the attempt could run", seen[1].error)
      local run = a:get(id)
      assert.equal("done", run.state.status)
      assert.equal(2, run.state.attempts)
      assert.equal("abandoned", attempt_status(a, id, 1))
      a:close()
      b:close()
    end)

    it("is dropped when the COMMIT never reached the server, and the run is claimed afresh", function()
      local a = open(600)
      local id = a:submit("probe", { ms = 0 })
      a.lose_commit = { before = true }
      assert.is_false((pcall(a.claim, a, "answer-lost")))
      local seen = scan(a)
      assert.equal(1, #seen)
      assert.same({ id = id, attempt = 1, status = "done", accepted = true }, seen[1])
      a:close()
    end)
  end)

  -- A worker cut off from the database cannot renew its lease; once the
  -- lease's length has passed without a renewal it has lapsed there too,
  -- and the worker stops its handler instead of running on for nothing.
  it("stops a handler whose lease could not be renewed for its whole length, and the result is discarded", function()
    local worker = require "vkit.store.worker"
    local cut = server:database()
    local a = store_mod.open { store = cut.url, project = dir, cache = dir .. "/cache", lease_seconds = 2 }
    local id = a:submit("probe", { ms = 600000 })
    local claim = assert(a:claim "cut-off")
    -- every heartbeat meets the partition
    a.heartbeat = function() error(timeout "cut off on purpose", 0) end
    local fields, accepted = worker.execute(a, claim)
    assert.equal("cancelled", fields.status)
    assert.matches("the lease was lost while running", fields.error)
    assert.is_false(accepted, "the lease had lapsed in the database too")
    a.heartbeat = nil
    assert.equal("running", a:get(id).state.status)
    a:close()
  end)
end)
