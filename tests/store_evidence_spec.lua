-- Every run's outcome is what its retained files support (issue 30, item
-- 2): hand-written records with no evidence, a genuine PASS whose receipt,
-- evidence, checker record or summary was changed afterwards, and a
-- genuine attempt moved under another run's records are CORRUPT with their
-- reason in `run list`, `run show`, `run wait` and `run report` (exit 3),
-- never PASS.  A store that arrived with a clone, or is a link, is said
-- to be one.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local project = dofile(vkit.root .. "/examples/external/project.lua")
local corrupt = require "tests.support.corrupt"

local function rewrite_json(path, change)
  local doc = assert(json.decode(assert(vkit.fs.read(path, 1 << 26))))
  change(doc)
  assert(vkit.fs.write_atomic(path, json.encode(doc, { indent = 2 }) .. "\n"))
end

local function new_run_id()
  return ("r-%s-%s"):format(os.date "!%Y%m%dT%H%M%SZ", vkit.sys.random_hex(6))
end

local function run_vkit(dir, ...)
  local argv = { ... }
  argv[#argv + 1] = "--project"
  argv[#argv + 1] = dir
  return t.vkit(argv)
end

-- The run is CORRUPT for `reason` everywhere, and nothing shows it PASS.
local function assert_corrupt(dir, id, reason)
  corrupt.assert_corrupt(function(...) return run_vkit(dir, ...) end, id, reason, "PASS")
end

-- Three hand-written records: a run, its state and its one attempt.
local function forge(dir, kind, outcome, payload, extra)
  local id = new_run_id()
  local run_dir = dir .. "/.vkit/runs/" .. id
  assert(vkit.fs.mkdirs(run_dir .. "/attempts/1"))
  local now = os.date "!%Y-%m-%dT%H:%M:%SZ"
  local function write(rel, doc) assert(vkit.fs.write_atomic(run_dir .. "/" .. rel, json.encode(doc) .. "\n")) end
  write("job.json", { schema_version = 1, run_id = id, kind = kind, created_at = now, payload = payload or json.object() })
  write("state.json", { schema_version = 1, status = "done", attempts = 1, outcome = outcome, summary = json.null,
                        error = json.null, created_at = now, updated_at = now })
  write("attempts/1/attempt.json", { attempt = 1, status = "done", outcome = outcome })
  for rel, doc in pairs(extra or {}) do write("attempts/1/" .. rel, doc) end
  return id, run_dir
end

describe("records no retained evidence backs", function()
  local dir, cleanup
  before_each(function()
    dir, cleanup = t.tempdir()
    assert(vkit.fs.mkdirs(dir .. "/.vkit/runs"))
  end)
  after_each(function() cleanup() end)

  it("an external check's PASS in three hand-written files is corrupt: report-missing", function()
    local id = forge(dir, "external-check", "PASS", { component = "bvadd", check_id = "c", commit = ("a"):rep(40) })
    assert_corrupt(dir, id, "report-missing")
  end)

  it("a replay's PASS in three hand-written files is corrupt", function()
    local id = forge(dir, "external-replay", "PASS", { of_run = "r-20260101T000000Z-abcdef" })
    assert_corrupt(dir, id, "report-missing")
  end)

  it("a result.json claiming PASS with no request, receipt or evidence beside it is corrupt", function()
    local id = forge(dir, "external-check", "PASS", nil, { ["result.json"] = { outcome = "PASS", tampering = json.array() } })
    assert_corrupt(dir, id, "report-missing")
  end)

  it("a certification's conformance in three hand-written files is corrupt", function()
    local id = forge(dir, "change-certify", "all_inputs_conform")
    assert_corrupt(dir, id, "report-missing")
  end)

  it("a probe's ok in three hand-written files is corrupt", function()
    local id = forge(dir, "probe", "ok", { ms = 0 })
    assert_corrupt(dir, id, "report-missing")
  end)
end)

describe("a genuine external PASS, changed afterwards", function()
  local dir, cleanup, genuine, id
  setup(function()
    dir, cleanup = t.tempdir()
    local p = project.build(dir .. "/made")
    local r = t.vkit { "verify", "bvadd", "--project", p.path, "--wait", "60", "--json" }
    local out = json.decode(r.stdout)
    assert.is_table(out, r.stderr .. r.stdout)
    assert.equal(0, r.code, r.stdout .. r.stderr)
    id = out.runs[1].run_id
    genuine = p.path
  end)
  teardown(function()
    t.kill_workers(dir)
    cleanup()
  end)

  -- A fresh copy of the project and its store, changed by `change`.
  local copies = 0
  local function copy(change)
    copies = copies + 1
    local into = ("%s/copy%d"):format(dir, copies)
    assert(os.execute(("cp -a %s %s"):format(t.quote(genuine), t.quote(into))))
    local attempt = into .. "/.vkit/runs/" .. id .. "/attempts/1"
    if change then change(attempt, into) end
    return into
  end

  it("untouched, it shows PASS and run wait exits 0", function()
    local into = copy()
    local waited = run_vkit(into, "run", "wait", "--run", id, "--wait", "0", "--json")
    assert.equal(0, waited.code, waited.stdout .. waited.stderr)
    assert.equal("PASS", json.decode(waited.stdout).outcome)
  end)

  it("a receipt rewritten to reject is BLOCKED by the judge: the PASS record is outcome-not-in-evidence", function()
    local into = copy(function(attempt)
      rewrite_json(attempt .. "/checker/receipt.json", function(r)
        r.verdict = "rejected"
        r.obligations[1].result = "rejected"
      end)
    end)
    assert_corrupt(into, id, "outcome-not-in-evidence")
  end)

  it("a receipt removed is corrupt", function()
    local into = copy(function(attempt) assert(os.remove(attempt .. "/checker/receipt.json")) end)
    assert_corrupt(into, id, "outcome-not-in-evidence")
  end)

  it("a checker record rewritten to a non-zero exit is corrupt", function()
    local into = copy(function(attempt)
      rewrite_json(attempt .. "/logs/checker.json", function(r) r.code = 1 end)
    end)
    assert_corrupt(into, id, "outcome-not-in-evidence")
  end)

  it("an evidence file changed is corrupt: evidence-changed", function()
    local into = copy(function(attempt)
      assert(vkit.fs.write_atomic(attempt .. "/evidence/results.json", "{}\n"))
    end)
    assert_corrupt(into, id, "evidence-changed")
  end)

  it("an evidence file removed is corrupt: report-missing", function()
    local into = copy(function(attempt) assert(os.remove(attempt .. "/evidence/z3.log")) end)
    assert_corrupt(into, id, "report-missing")
  end)

  it("a summary naming another commit over the genuine attempt is corrupt: summary-not-in-evidence", function()
    local into = copy(function(_, root)
      rewrite_json(root .. "/.vkit/runs/" .. id .. "/state.json", function(s) s.summary.commit = ("b"):rep(40) end)
    end)
    assert_corrupt(into, id, "summary-not-in-evidence")
  end)

  it("the genuine attempt moved under another run's records is corrupt: evidence-of-another-run", function()
    local other
    local into = copy(function(_, root)
      other = new_run_id()
      assert(os.execute(("cp -a %s %s"):format(t.quote(root .. "/.vkit/runs/" .. id),
        t.quote(root .. "/.vkit/runs/" .. other))))
      rewrite_json(root .. "/.vkit/runs/" .. other .. "/job.json", function(j) j.run_id = other end)
    end)
    assert_corrupt(into, other, "evidence-of-another-run")
  end)
end)

describe("a store that arrived with a clone", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("is said to be tracked by Git, and its hand-written PASS is still corrupt", function()
    local repo = assert(vkit.git.init(dir))
    repo:close()
    local id = forge(dir, "external-check", "PASS")
    assert(os.execute(("cd %s && git add -f .vkit && git -c user.email=a@b -c user.name=n commit -qm store")
      :format(t.quote(dir))))
    local shown = run_vkit(dir, "run", "show", "--run", id)
    assert.equal(3, shown.code)
    assert.matches("tracked by Git", shown.stderr, 1, true)
    assert.matches("store-tracked-by-git", shown.stderr, 1, true)
    assert_corrupt(dir, id, "report-missing")
  end)

  it("a store made here, in a repository with commits, is not said to be tracked", function()
    local repo = assert(vkit.git.init(dir))
    repo:close()
    t.write(dir .. "/a.txt", "a\n")
    assert(os.execute(("cd %s && git add a.txt && git -c user.email=a@b -c user.name=n commit -qm a")
      :format(t.quote(dir))))
    local id = forge(dir, "external-check", "PASS")
    local shown = run_vkit(dir, "run", "show", "--run", id)
    assert.is_nil(shown.stderr:find("tracked by Git", 1, true), shown.stderr)
  end)

  it("a .vkit that is a link is said to be one", function()
    local elsewhere = dir .. "/elsewhere"
    assert(vkit.fs.mkdirs(elsewhere .. "/runs"))
    assert(vkit.fs.mkdirs(dir .. "/p"))
    assert(vkit.fs.symlink(elsewhere, dir .. "/p/.vkit"))
    local listed = run_vkit(dir .. "/p", "run", "list")
    assert.equal(0, listed.code, listed.stderr)
    assert.matches("store-is-link", listed.stderr, 1, true)
  end)

  it("a store made here says nothing of the kind", function()
    local id = forge(dir, "probe", "ok", { ms = 0 }, { ["probe.json"] = { attempt = 1 } })
    local shown = run_vkit(dir, "run", "show", "--run", id, "--json")
    assert.equal(0, shown.code, shown.stderr)
    assert.equal("ok", json.decode(shown.stdout).outcome)
    assert.not_matches("note:", shown.stderr, 1, true)
  end)
end)
