local vkit = require "vkit"
local t = require "tests.support.run"
local store_mod = require "vkit.store"
local worker = require "vkit.store.worker"

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

  local function wait_for(pred, seconds)
    local deadline = vkit.sys.monotonic_ms() + seconds * 1000
    while vkit.sys.monotonic_ms() < deadline do
      if pred() then return true end
      vkit.sys.sleep(0.05)
    end
    return false
  end

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
    local lock = assert(store:claim(id))
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

  it("refuses unknown runs and malformed ids", function()
    assert.equal("unknown-run", select(3, store:get "r-20260101T000000Z-abcdef"))
    assert.equal("unknown-run", select(3, store:get "../../etc"))
  end)

  describe("with a real detached worker", function()
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
      local id = store:submit("probe", { ms = 3000 })
      store:ensure_worker()
      assert.is_true(wait_for(function() return store:get(id).state.status == "running" end, 10))
      local t0 = vkit.sys.monotonic_ms()
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "0", "--project", dir }
      assert.is_true(vkit.sys.monotonic_ms() - t0 < 2000)
      assert.equal(1, r.code)
      assert.matches("running", r.stdout)
    end)

    it("loses no run when the worker is killed with SIGKILL mid-run: the next worker retries it", function()
      local id = store:submit("probe", { ms = 4000 })
      local pid = assert(store:ensure_worker())
      assert.is_true(wait_for(function() return store:get(id).state.status == "running" end, 10))
      os.execute("kill -KILL " .. pid)
      assert.is_true(wait_for(function() return store:get(id).stale end, 5))
      local r = t.vkit { "run", "wait", "--run", id, "--wait", "30", "--project", dir, "--json" }
      assert.equal(0, r.code, r.stderr .. r.stdout)
      local run = store:get(id)
      assert.equal("done", run.state.status)
      assert.equal(2, run.state.attempts)
      assert.same({ 1, 2 }, run.attempts)
      assert.equal("lost", store_mod.read_json(run.dir .. "/attempts/1/attempt.json").status)
    end)

    it("stops a running job on cancellation", function()
      local id = store:submit("probe", { ms = 20000 })
      store:ensure_worker()
      assert.is_true(wait_for(function() return store:get(id).state.status == "running" end, 10))
      local r = t.vkit { "run", "cancel", "--run", id, "--project", dir }
      assert.equal(0, r.code)
      assert.is_true(wait_for(function() return store:get(id).state.status == "cancelled" end, 10))
    end)
  end)

  it("answers bad run arguments with usage errors", function()
    assert.equal(2, t.vkit({ "run" }).code)
    assert.equal(2, t.vkit({ "run", "frob" }).code)
    assert.equal(2, t.vkit({ "run", "wait", "--run", "x", "--wait", "61", "--project", dir }).code)
    assert.equal(2, t.vkit({ "run", "show", "--project", dir }).code)
    assert.equal(1, t.vkit({ "run", "show", "--run", "r-20260101T000000Z-00", "--project", dir }).code)
  end)
end)
