local vkit = require "vkit"
local t = require "tests.support.run"
local store_mod = require "vkit.store"
local worker = require "vkit.store.worker"
local stores = require "tests.support.stores"

describe("the job store", function()
  local dir, cleanup, store
  before_each(function()
    dir, cleanup = t.tempdir()
    store = store_mod.open(dir)
  end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  local wait_for = t.wait_for

  it("keeps an immutable job, an atomically replaced state and one directory per attempt", function()
    local id = store:submit("probe", { ms = 0 })
    assert.matches("^r%-%d+T%d+Z%-%x+$", id)
    assert.equal("queued", store:get(id).state.status)
    assert.equal(1, worker.scan(store))
    local run = store:get(id)
    assert.equal("done", run.state.status)
    assert.equal("ok", run.state.outcome)
    assert.same({ 1 }, run.attempts)
    assert.equal("file", vkit.fs.lstat(run.dir .. "/attempts/1/probe.json").kind)
    assert.equal("*\n", vkit.fs.read(dir .. "/.vkit/.gitignore", 10))
    assert.same({ "attempts", "job.json", "lock", "state.json" }, vkit.fs.list(run.dir))
  end)

  -- progress_bytes (policies/store.lua): a waiter is shown at most that
  -- much of an attempt's progress; past it the read is refused by name
  -- and the waiter says where the rest is, never showing a cut as whole.
  it("shows progress up to progress_bytes, and names a progress.log past it", function()
    local cap = require("vkit.policy").store.progress_bytes
    local id = store:submit("probe", { ms = 0 })
    assert.equal(1, worker.scan(store))
    local run = store:get(id)
    assert.equal("probe: waiting 0 ms\n", store:progress(run, 1))
    local log = run.dir .. "/attempts/1/progress.log"
    t.write(log, ("x"):rep(cap))
    assert.equal(cap, #store:progress(run, 1))
    t.write(log, ("x"):rep(cap + 1))
    local text, _, code = store:progress(run, 1)
    assert.is_nil(text)
    assert.equal("too-large", code)
    local echoed = {}
    require("vkit.runs.change").wait(store, id, 0, function(s) echoed[#echoed + 1] = s end)
    assert.same({ ("(the progress of attempt 1 passed %d bytes: the whole of it is the retained progress.log)\n")
      :format(cap) }, echoed)
  end)

  it("records a handler failure as failed, without retrying it", function()
    local id = store:submit("probe", { ms = 0, fail = "boom" })
    worker.scan(store)
    local run = store:get(id)
    assert.equal("failed", run.state.status)
    assert.matches("boom", run.state.error)
    assert.equal(0, worker.scan(store))
  end)

  it("never lets two workers run the same job: a held run lock is skipped", function()
    local id = store:submit("probe", { ms = 0 })
    local lock = assert(store:lock_run(id))
    assert.equal(0, worker.scan(store))
    assert.equal("queued", store:get(id).state.status)
    lock:unlock()
    assert.equal(1, worker.scan(store))
  end)

  it("cancels a queued run at once", function()
    local id = store:submit("probe", { ms = 0 })
    assert.equal("cancelled", store:cancel(id).state.status)
    assert.equal(0, worker.scan(store))
  end)

  it("never merges what a process of the attempt planted in attempt.json, and never writes through a link", function()
    local id = store:submit("probe", { ms = 0 })
    local claim = assert(store:claim "spec")
    -- A process of the attempt rewrites its record and plants a link where
    -- the store will write.
    store_mod.write_json(claim.attempt_dir .. "/attempt.json", { status = "done", outcome = "PASS", planted = true })
    local outside = dir .. "/outside.json"
    t.write(outside, "untouched\n")
    assert(os.rename(claim.attempt_dir, claim.attempt_dir .. "-moved"))
    assert(vkit.fs.symlink(claim.attempt_dir .. "-moved", claim.attempt_dir))
    assert.has_error(function() store:complete(claim, { status = "done", outcome = "ok" }) end)
    assert.equal("untouched\n", vkit.fs.read(outside, 100))
    -- Put back, the record written is the worker's own, without the planted field.
    os.remove(claim.attempt_dir)
    assert(os.rename(claim.attempt_dir .. "-moved", claim.attempt_dir))
    -- (the probe's own record, which its "ok" is derived from)
    store_mod.write_json(claim.attempt_dir .. "/probe.json", { attempt = claim.attempt, waited_ms = 0 })
    assert.is_true(store:complete(claim, { status = "done", outcome = "ok" }))
    local record = store_mod.read_json(claim.attempt_dir .. "/attempt.json")
    assert.is_nil(record.planted)
    assert.equal("ok", record.outcome)
    assert.equal("done", store:get(id).state.status)
  end)

  it("refuses a state.json reached through a linked run directory", function()
    local id = store:submit("probe", { ms = 0 })
    local run_dir = store:run_dir(id)
    assert(os.rename(run_dir, dir .. "/elsewhere"))
    assert(vkit.fs.symlink(dir .. "/elsewhere", run_dir))
    local _, _, code, corruption = store:get(id)
    assert.equal("corrupt-run", code)
    assert.equal("link-in-path", corruption.reason)
  end)

  it("refuses unknown runs and malformed ids", function()
    assert.equal("unknown-run", select(3, store:get "r-20260101T000000Z-abcdef"))
    assert.equal("unknown-run", select(3, store:get "../../etc"))
  end)

  describe("a run whose records cannot be believed", function()
    -- Each is listed as corrupt with the file and the reason (exit 3),
    -- never skipped, and never shown with the outcome its state claims.
    local function done_run()
      local id = store:submit("probe", { ms = 0 })
      assert.equal(1, worker.scan(store))
      return id, store:get(id).dir
    end

    local duplicate = '{"schema_version":1,"status":"done","status":"queued","attempts":0,"outcome":null,'
      .. '"summary":null,"error":null,"created_at":"x","updated_at":"x"}'
    local cases = {
      { "an empty state.json", "state.json", "invalid-json", function(d) t.write(d .. "/state.json", "") end },
      { "a garbage job.json", "job.json", "invalid-json", function(d) t.write(d .. "/job.json", "{not json") end },
      { "a state.json that is a link", "state.json", "not-a-regular-file", function(d)
        assert(os.rename(d .. "/state.json", d .. "/real-state.json"))
        assert(vkit.fs.symlink("real-state.json", d .. "/state.json"))
      end },
      { "a state.json with a duplicate key", "state.json", "duplicate-key", function(d) t.write(d .. "/state.json", duplicate) end },
      { "a state.json outside its schema", "state.json", "invalid-value", function(d)
        local state = store_mod.read_json(d .. "/state.json")
        state.status = "passed"
        store_mod.write_json(d .. "/state.json", state)
      end },
      { "a forged PASS with no attempt directory", "state.json", "attempts-mismatch", function(d)
        vkit.fs.remove_tree(d .. "/attempts/1")
        local state = store_mod.read_json(d .. "/state.json")
        state.outcome = "PASS"
        store_mod.write_json(d .. "/state.json", state)
      end },
      { "a forged outcome its attempt does not record", "state.json", "unrecorded-outcome", function(d)
        local state = store_mod.read_json(d .. "/state.json")
        state.outcome = "PASS"
        store_mod.write_json(d .. "/state.json", state)
      end },
      { "a job.json naming another run", "job.json", "wrong-run", function(d)
        local job = store_mod.read_json(d .. "/job.json")
        job.run_id = "r-20260101T000000Z-000000000000"
        store_mod.write_json(d .. "/job.json", job)
      end },
    }
    for _, case in ipairs(cases) do
      it(("is listed as corrupt: %s"):format(case[1]), function()
        local healthy = done_run()
        local id, run_dir = done_run()
        case[4](run_dir)
        local _, message, code, corruption = store:get(id)
        assert.equal("corrupt-run", code)
        assert.equal(case[2], corruption.file)
        assert.equal(case[3], corruption.reason, message)
        local listed = t.vkit { "run", "list", "--project", dir }
        assert.equal(3, listed.code)
        local line = listed.stdout:match("[^\n]*" .. id:gsub("%-", "%%-") .. "[^\n]*")
        assert.truthy(line, listed.stdout)
        assert.truthy(line:find("CORRUPT   " .. case[2] .. ": ", 1, true), line)
        assert.truthy(line:find("(" .. case[3] .. ")", 1, true), line)
        assert.truthy(listed.stdout:find(healthy:gsub("%-", "%%-") .. "  probe%s+done"), listed.stdout)
        assert.is_nil(listed.stdout:find("PASS  attempts", 1, true), "a forged outcome is never shown as one")
        local as_json = vkit.json.decode(t.vkit({ "run", "list", "--project", dir, "--json" }).stdout)
        local row
        for _, r in ipairs(as_json) do if r.run_id == id then row = r end end
        assert.equal("corrupt", row.status)
        assert.equal(case[3], row.corrupt.reason)
        local shown = t.vkit { "run", "show", "--run", id, "--project", dir }
        assert.equal(3, shown.code)
        assert.truthy(shown.stderr:find("run " .. id .. " is corrupt: " .. case[2], 1, true), shown.stderr)
        assert.equal("", shown.stdout)
      end)
    end

    it("never lists a run that is still being created", function()
      assert(vkit.fs.mkdirs(store.runs .. "/.new-r-20260101T000000Z-abcdefabcdef/attempts"))
      assert.same({}, store:list())
      assert.equal(0, t.vkit({ "run", "list", "--project", dir }).code)
    end)
  end)

  it("answers bad run arguments with usage errors", function()
    assert.equal(2, t.vkit({ "run" }).code)
    assert.equal(2, t.vkit({ "run", "frob" }).code)
    assert.equal(2, t.vkit({ "run", "wait", "--run", "x", "--wait", "61", "--project", dir }).code)
    assert.equal(2, t.vkit({ "run", "show", "--project", dir }).code)
    local missing = t.vkit { "run", "show", "--run", "r-20260101T000000Z-00", "--project", dir }
    assert.equal(6, missing.code, "no such run has its own exit code")
    assert.matches("^vkit: no run r%-20260101T000000Z%-00 in ", missing.stderr)
  end)
end)

for _, backend in ipairs(stores.backends()) do
describe("the job store", function()
  local wait_for = t.wait_for

  describe("with a real detached worker (" .. backend.name .. " store)", function()
    local dir, cleanup, store
    setup(backend.setup)
    teardown(backend.teardown)
    before_each(function()
      backend.fresh()
      dir, cleanup = t.tempdir()
      store = backend.open(dir)
    end)
    after_each(function()
      backend.kill_workers(dir)
      cleanup()
    end)

    it("runs queued jobs and `vkit run wait` returns the durable summary", function()
      local id = store:submit("probe", { ms = 100 })
      assert.is_number(store:ensure_worker())
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "20", "--project", dir, "--json" }
      assert.equal(0, r.code, r.stderr)
      local summary = assert(vkit.json.decode(r.stdout))
      assert.equal("done", summary.status)
      assert.equal("ok", summary.outcome)
    end)

    it("--wait 0 returns at once while the job continues", function()
      local id = store:submit("probe", { ms = 60000 })
      store:ensure_worker()
      assert.is_true(wait_for(function() return store:get(id).state.status == "running" end, 60))
      -- It returned while the 60 s probe was still running: the status, not
      -- a wall-clock ceiling, proves it did not wait.
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "0", "--project", dir }
      assert.equal(4, r.code, "still pending")
      assert.matches("RUNNING", r.stdout)
    end)

    it("loses no run when the worker is killed with SIGKILL mid-run: the next worker retries it", function()
      local id = store:submit("probe", { ms = 4000 })
      local pid = assert(store:ensure_worker())
      assert.is_true(wait_for(function() return store:get(id).state.status == "running" end, 60))
      os.execute("kill -KILL " .. pid)
      assert.is_true(wait_for(function() return store:get(id).stale end, 60))
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "30", "--project", dir, "--json" }
      assert.equal(0, r.code, r.stderr .. r.stdout)
      local run = store:get(id)
      assert.equal("done", run.state.status)
      assert.equal(2, run.state.attempts)
      assert.same({ 1, 2 }, run.attempts)
      assert.equal("abandoned", store:attempt_record(run, 1).status)
    end)

    -- A waiter sees the lines while the run runs (PostgreSQL: published by
    -- the worker's heartbeat, for waiters on other machines), and the same
    -- lines stay retained with the attempt.
    it("shows a running attempt's progress lines while it runs, and retains them", function()
      local id = store:submit("probe", { ms = 60000 })
      store:ensure_worker()
      local line = "probe: waiting 60000 ms\n"
      local function live()
        local run = store:get(id)
        return run.state.status == "running" and #run.attempts > 0 and store:progress(run, run.attempts[#run.attempts])
      end
      assert.is_true(wait_for(function() return live() == line end, 60), "no progress shown while it ran")
      assert.equal("running", store:get(id).state.status)
      assert.equal(0, t.vkit({ "run", "cancel", "--run", id, "--project", dir }).code)
      assert.is_true(wait_for(function() return store:get(id).state.status == "cancelled" end, 60))
      assert.equal(line, store:progress(store:get(id), 1))
      assert.equal(line, backend.attempt_file(dir, id, "progress.log", 1))
    end)

    it("stops a running job on cancellation", function()
      local id = store:submit("probe", { ms = 20000 })
      store:ensure_worker()
      assert.is_true(wait_for(function() return store:get(id).state.status == "running" end, 60))
      local r = t.vkit { "run", "cancel", "--run", id, "--project", dir }
      assert.equal(0, r.code)
      assert.is_true(wait_for(function() return store:get(id).state.status == "cancelled" end, 60))
    end)
  end)

end)
end
