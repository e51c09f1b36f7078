-- The external verifier protocol against a hostile producer or checker
-- (seed 000): the checker runs on inputs the producer could not have
-- changed, vkit never writes through a link planted in the run directory,
-- and every receipt deviation is BLOCKED by name, never a failed run.
--
-- Each attack runs twice where it matters: through `vkit verify` as a user
-- runs it (with the Landlock sandbox of policies/protocol.lua, which this
-- kernel offers), and in process with the sandbox taken out of the launch,
-- as on a kernel without Landlock, where only vkit's own checks stand.
local vkit = require "vkit"
local json = vkit.json
local fs = vkit.fs
local t = require "tests.support.run"
local support = require "tests.support.protocol"

describe("a hostile producer or checker", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  local function build(opts) return support.build(dir, opts) end
  local verify = support.verify
  local function unsandboxed(p, opts) return support.unsandboxed(dir, p, opts) end

  describe("a producer that plants code the checker would import", function()
    for _, mode in ipairs { "package", "pycache" } do
      it(("(%s) never reaches the checker: BLOCKED snapshot-changed without a sandbox"):format(mode), function()
        local result, attempt = unsandboxed(build { producer_mode = mode })
        assert.equal("BLOCKED", result.outcome)
        assert.equal("snapshot-changed", result.reason)
        assert.matches("the producer changed the snapshot: .*verification/backend/", result.message)
        assert.is_nil(fs.lstat(attempt .. "/PAYLOAD-RAN"), "the planted code never ran")
        assert.is_nil(fs.lstat(attempt .. "/checker"), "the checker was never launched")
      end)

      it(("(%s) cannot plant at all under the sandbox, and the run never PASSes"):format(mode), function()
        local run, attempt, code = verify(build { producer_mode = mode })
        assert.equal(1, code)
        assert.equal("BLOCKED", run.outcome)
        assert.is_nil(fs.lstat(attempt .. "/PAYLOAD-RAN"), "the planted code never ran")
        local stderr = assert(fs.read(attempt .. "/logs/producer.stderr", 1 << 20))
        assert.matches("plant refused: .*Permission denied", stderr)
        assert.equal("landlock-abi-" .. vkit.proc.capabilities().landlock_abi,
          json.decode(fs.read(attempt .. "/logs/producer.json", 1 << 20)).sandbox)
      end)
    end

    it("cannot signal its worker where Landlock scopes signals (ABI 6): the run goes on", function()
      if vkit.proc.capabilities().landlock_abi < 6 then return end -- no scoping: proc's specs cover a killed worker
      local run, attempt = verify(build { producer_mode = "kill-parent" })
      assert.equal("PASS", run.outcome, run.summary and run.summary.message)
      assert.equal(1, run.attempts, "the worker was never lost")
      assert.matches("plant refused: .*Operation not permitted", fs.read(attempt .. "/logs/producer.stderr", 1 << 20))
    end)

    it("gives the checker its own capture and its own copy of exactly the declared evidence", function()
      local run, attempt = verify(build { checker_mode = "private-env" })
      assert.equal("PASS", run.outcome, run.summary and run.summary.message)
      local request = json.decode(fs.read(attempt .. "/checker/request.json", 1 << 20))
      assert.equal(attempt .. "/checker/snapshot", request.paths.snapshot)
      assert.equal(attempt .. "/checker/evidence", request.paths.evidence)
      assert.same({ "results.json", "z3.log" }, fs.list(attempt .. "/checker/evidence"))
      assert.equal(fs.read(attempt .. "/evidence/z3.log", 1 << 20), fs.read(attempt .. "/checker/evidence/z3.log", 1 << 20))
    end)

    it("cannot leave anything in the checker's HOME or TMPDIR", function()
      local result, attempt = unsandboxed(build { producer_mode = "home", checker_mode = "private-env" })
      assert.equal("file", fs.lstat(attempt .. "/producer/home/producer-marker").kind)
      assert.equal("file", fs.lstat(attempt .. "/producer/tmp/producer-marker").kind)
      assert.equal("PASS", result.outcome, result.message)
    end)
  end)

  describe("a link planted where vkit writes", function()
    it("is never written through: the producer's logs/ link is kept aside and the run BLOCKED", function()
      local outside = assert(fs.mkdtemp "/tmp/vkit-outside-")
      local result, attempt = unsandboxed(build { producer_mode = "logs-link", arg = outside })
      local listed = fs.list(outside)
      fs.remove_tree(outside)
      assert.same({}, listed, "nothing was written outside the run")
      assert.equal("BLOCKED", result.outcome)
      assert.equal("run-dir-tampered", result.reason)
      assert.matches("logs was a link", result.message)
      assert.equal("link", result.tampering[1].kind)
      assert.equal("link", fs.lstat(attempt .. "/" .. result.tampering[1].moved_to).kind, "the link is kept")
      assert.equal("dir", fs.lstat(attempt .. "/logs").kind)
      assert.equal("file", fs.lstat(attempt .. "/logs/producer.json").kind)
    end)

    it("a run directory moved away by the producer is found: BLOCKED run-dir-tampered, the checker never runs", function()
      local result, attempt = unsandboxed(build { producer_mode = "move-run-dir" })
      assert.equal("BLOCKED", result.outcome)
      assert.equal("run-dir-tampered", result.reason)
      assert.matches("the attempt directory was moved away", result.message, 1, true)
      assert.equal("link", vkit.fs.lstat(attempt).kind, "the producer left a link in its place")
      assert.is_nil(vkit.fs.lstat(attempt .. ".moved/checker"), "the checker was never launched")
    end)

    it("from the checker, after the producer's logs were written, BLOCKs the same way", function()
      local outside = assert(fs.mkdtemp "/tmp/vkit-outside-")
      local result = unsandboxed(build { checker_mode = "logs-link", arg = outside })
      local listed = fs.list(outside)
      fs.remove_tree(outside)
      assert.same({}, listed)
      assert.equal("run-dir-tampered", result.reason)
    end)

    it("a result.json made a directory by the checker is BLOCKED, not a failed run", function()
      local result, attempt = unsandboxed(build { checker_mode = "result-dir" })
      assert.equal("BLOCKED", result.outcome)
      assert.equal("run-dir-tampered", result.reason)
      assert.matches("result.json was a dir", result.message)
      assert.equal("file", fs.lstat(attempt .. "/result.json").kind)
      assert.equal("run-dir-tampered", json.decode(fs.read(attempt .. "/result.json", 1 << 20)).reason)
    end)

    it("a retained file the checker edits is found: BLOCKED run-dir-tampered", function()
      local result = unsandboxed(build { checker_mode = "edit-retained" })
      assert.equal("run-dir-tampered", result.reason)
      assert.matches("identity.json was changed after vkit wrote it", result.message)
    end)

    it("under the sandbox the checker cannot touch the run directory outside checker/", function()
      local run, attempt = verify(build { checker_mode = "result-dir" })
      assert.equal("BLOCKED", run.outcome)
      assert.equal("checker-exit-nonzero", run.summary.reason)
      assert.matches("Permission denied", fs.read(attempt .. "/logs/checker.stderr", 1 << 20))
    end)
  end)

  describe("a receipt that cannot be judged", function()
    -- An integer beyond 2^53 where vkit compares: BLOCKED by name (the
    -- canonical encoder would raise and fail the run).
    for mode, reason in pairs { ["bigint-job"] = "receipt-job-mismatch", ["bigint-identity"] = "receipt-identity-mismatch",
                                ["bigint-evidence"] = "receipt-evidence-digest-mismatch" } do
      it(("with %s is BLOCKED %s"):format(mode, reason), function()
        local run, _, code = verify(build { checker_mode = mode })
        assert.equal(1, code)
        assert.equal("done", run.status)
        assert.equal("BLOCKED", run.outcome)
        assert.equal(reason, run.summary.reason)
      end)
    end

    for mode, want in pairs {
      ["receipt-link"] = { "receipt-is-link", "symbolic link" },
      ["receipt-fifo"] = { "receipt-not-regular", "fifo" },
      ["receipt-dir"] = { "receipt-not-regular", "directory" },
      ["receipt-huge"] = { "receipt-too-large", "limit is 1048576" },
    } do
      it(("that is a %s is named as such, not receipt-missing"):format(mode:sub(9)), function()
        local run = verify(build { checker_mode = mode })
        assert.equal("BLOCKED", run.outcome)
        assert.equal(want[1], run.summary.reason)
        assert.matches(want[2], run.summary.message, 1, true)
      end)
    end
  end)
end)
