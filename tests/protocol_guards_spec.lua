-- Each guard of a run (seed 000), driven to refuse: the job digest and the
-- copied snapshot before anything runs, the evidence rules, the producer's
-- own receipt never counting, and the post-run checks of snapshot, evidence
-- and identity.  Each spec fails when its guard is removed.
local vkit = require "vkit"
local fs = vkit.fs
local t = require "tests.support.run"
local support = require "tests.support.protocol"

describe("the guards of an external run", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  local function build(opts) return support.build(dir, opts or {}) end
  local function unsandboxed(p, opts) return support.unsandboxed(dir, p, opts) end

  local function nothing_launched(attempt)
    assert.is_nil(fs.lstat(attempt .. "/logs"), "nothing was launched")
  end

  describe("before anything runs", function()
    it("refuses a job whose digest is not the queued one", function()
      local result, attempt = unsandboxed(build(), { job_key = ("0"):rep(64) })
      assert.equal("BLOCKED", result.outcome)
      assert.equal("job-digest-mismatch", result.reason)
      nothing_launched(attempt)
    end)

    it("refuses a copied snapshot that does not match its input digest", function()
      -- A writer that changes the snapshot the moment capture returns.
      local git = require "vkit.git"
      local open = git.open
      git.open = function(...)
        local repo = assert(open(...))
        return setmetatable({
          capture = function(_, commit, dest, paths)
            local identity, message, code = repo:capture(commit, dest, paths)
            if identity then t.write(dest .. "/spec/bvadd.smt2", "; changed behind vkit's back\n") end
            return identity, message, code
          end,
        }, { __index = function(_, k) return function(_, ...) return repo[k](repo, ...) end end })
      end
      local ok, result, attempt = pcall(unsandboxed, build())
      git.open = open
      assert(ok, result)
      assert.equal("BLOCKED", result.outcome)
      assert.equal("snapshot-changed", result.reason)
      assert.matches("spec/bvadd.smt2", result.message)
      nothing_launched(attempt)
    end)
  end)

  describe("the evidence", function()
    for mode, want in pairs {
      ["extra-evidence"] = { "evidence-unlisted", "evidence/notes.txt was not declared" },
      ["missing-evidence"] = { "evidence-missing", "the declared artifact evidence/z3.log is missing" },
      ["link-evidence"] = { "evidence-not-regular", "evidence/z3.log is a link, not a regular file" },
    } do
      local reason = want[1]
      it(("is exactly the declared regular files: %s is %s"):format(mode, reason), function()
        local run, attempt = support.verify(build { producer_mode = mode })
        assert.equal("BLOCKED", run.outcome)
        assert.equal(reason, run.summary.reason)
        assert.matches(want[2], run.summary.message, 1, true)
        assert.is_nil(fs.lstat(attempt .. "/logs/checker.json"), "the checker was never launched")
      end)
    end

    it("never takes the producer's own receipt for the checker's", function()
      local run, attempt = support.verify(build { producer_mode = "own-receipt", checker_mode = "no-receipt",
                                                  arg = "{{receipt}}" })
      assert.equal("file", fs.lstat(attempt .. "/producer/receipt.json").kind, "the producer wrote a receipt")
      assert.equal("BLOCKED", run.outcome)
      assert.equal("receipt-missing", run.summary.reason)
    end)
  end)

  describe("after the checker accepted", function()
    it("BLOCKs when its snapshot changed during the run", function()
      local run = support.verify(build { checker_mode = "edit-snapshot-after" })
      assert.equal("BLOCKED", run.outcome)
      assert.equal("snapshot-changed", run.summary.reason)
      assert.matches("during the run", run.summary.message)
    end)

    it("BLOCKs when its evidence changed during the run", function()
      local run = support.verify(build { checker_mode = "edit-evidence-after" })
      assert.equal("BLOCKED", run.outcome)
      assert.equal("evidence-changed", run.summary.reason)
    end)

    it("BLOCKs when a pinned tool changed during the run", function()
      local tool = dir .. "/tool.bin"
      t.write(tool, "a trusted tool\n")
      local p = build { checker_mode = "edit-tool-after", arg = tool,
                        checker_tools = { { path = tool, sha256 = vkit.hash.file(tool) } } }
      local result = unsandboxed(p)
      assert.equal("BLOCKED", result.outcome)
      assert.equal("pin-mismatch", result.reason)
      assert.matches("after the run: checker trusted tool dependency " .. tool, result.message, 1, true)
    end)

    it("PASSes when nothing changed (the same projects, honest)", function()
      local tool = dir .. "/tool.bin"
      t.write(tool, "a trusted tool\n")
      local p = build { checker_mode = "private-env", checker_tools = { { path = tool, sha256 = vkit.hash.file(tool) } } }
      assert.equal("PASS", unsandboxed(p).outcome)
    end)
  end)
end)
