-- vkit vac draft on real Git repositories built here with vkit.git: the
-- mechanical fields are derived, every judgment field is a TODO marker that
-- verify refuses, and an existing manifest is never overwritten.
local vkit = require "vkit"
local t = require "tests.support.run"
local fs, json = require "vkit.fs", vkit.json -- the module the drafter calls (vkit.fs is its public face)
local has_git = pcall(require, "vkit.git")
local describe_git = has_git and describe or function(name) pending(name .. " (vkit.git is not built in)") end

local ROWS = '{"cases": [{"passed": true, "score": 0.5}, {"passed": false, "score": 0.25}]}\n'

describe_git("vkit vac draft", function()
  local git = has_git and require "vkit.git"
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  -- a repository whose HEAD commits vac/results.json, with an origin remote
  local function issuer_repo(remote)
    local root = dir .. "/issuer"
    local repo = git.init(root)
    assert(fs.mkdirs(root .. "/vac"))
    t.write(root .. "/vac/results.json", ROWS)
    local tree = repo:write_tree { { path = "vac/results.json", bytes = ROWS } }
    local head = repo:commit_tree { tree = tree, parents = {}, message = "results", ref = "HEAD" }
    if remote then repo:set_remote("origin", remote) end
    repo:close()
    return root, head
  end

  it("derives the mechanical fields and marks every judgment field", function()
    local root, head = issuer_repo "git@github.com:someone-else/mytool.git"
    local r = t.vkit { "vac", "draft", root .. "/vac" }
    assert.equal(0, r.code, r.stderr)
    assert.matches("1 artifact%(s%) hashed", r.stdout)
    local m = json.decode(assert(fs.read(root .. "/vac/vac.json", 1 << 20)))
    assert.equal("someone-else/mytool", m.protocol.issuer)
    assert.equal(head, m.protocol.issuer_commit)
    assert.equal(head, m.replay.issuer_commit)
    assert.equal("git clone git@github.com:someone-else/mytool.git issuer", m.replay.commands[1])
    assert.equal("git -C issuer checkout " .. head, m.replay.commands[2])
    assert.same({ { path = "results.json", sha256 = vkit.hash.sha256(ROWS) } },
      { { path = m.evidence[1].path, sha256 = m.evidence[1].sha256 } })
    -- scope and limitations are never inferred
    assert.matches("^TODO%(claim%.scope%)", m.claim.scope)
    assert.matches("^TODO%(claim%.limitations%[0%]%)", m.claim.limitations[1])
    assert.matches("^TODO%(results%.checks%[0%]%.profile%).*rows%-aggregate%-v1", m.results.checks[1].profile)
    -- a draft is always refused, and only as a draft
    local v = vkit.vac.verify(root .. "/vac")
    assert.same({ "draft-incomplete" }, v.failures:names())
    assert.is_true(#v.failures >= 10)
  end)

  it("never overwrites an existing manifest", function()
    local root = issuer_repo "https://github.com/someone-else/mytool"
    t.write(root .. "/vac/vac.json", "{}")
    local r = t.vkit { "vac", "draft", root .. "/vac" }
    assert.equal(1, r.code)
    assert.matches("never overwrites", r.stderr)
    assert.equal("{}", t.slurp(root .. "/vac/vac.json"))
  end)

  -- the check and the write are one step: a manifest that appears between
  -- them (another drafter, an editor saving) is not replaced
  it("never overwrites a manifest that appears after the existence check", function()
    local root = issuer_repo "https://github.com/example/toy.git"
    local manifest = root .. "/vac/vac.json"
    local walk = fs.walk
    fs.walk = function(p, ...)
      local entries, err = walk(p, ...)
      if p == root .. "/vac" then t.write(manifest, "{\"authored\": true}\n") end -- written in the gap
      return entries, err
    end
    local ok, err = pcall(require("vkit.vac.draft").run, root .. "/vac")
    fs.walk = walk
    assert(ok, err)
    assert.equal("{\"authored\": true}\n", t.slurp(manifest))
    local drafted, why = require("vkit.vac.draft").run(root .. "/vac")
    assert.is_nil(drafted)
    assert.matches("never overwrites", why)
  end)

  it("warns about a dirty working tree without refusing, and needs no remote", function()
    local root = issuer_repo(nil)
    t.write(root .. "/vac/extra.json", "[1]\n")
    local r = t.vkit { "vac", "draft", root .. "/vac" }
    assert.equal(0, r.code, r.stderr)
    assert.matches("warning: the working tree is dirty", r.stderr)
    assert.matches("warning: no 'origin' remote", r.stderr)
    local m = json.decode(assert(fs.read(root .. "/vac/vac.json", 1 << 20)))
    assert.matches("^TODO%(protocol%.issuer%)", m.protocol.issuer)
    assert.equal(2, #m.evidence)
  end)

  it("outside any repository leaves issuer and commit as markers", function()
    assert(fs.mkdirs(dir .. "/loose"))
    t.write(dir .. "/loose/results.json", ROWS)
    local ok, warnings, m = require("vkit.vac.draft").run(dir .. "/loose")
    assert.is_true(ok)
    assert.matches("no enclosing Git repository", warnings[1])
    assert.matches("^TODO%(protocol%.issuer_commit%)", m.protocol.issuer_commit)
  end)

  it("refuses links in the directory it drafts over", function()
    local root = issuer_repo(nil)
    assert(fs.symlink("/etc/hostname", root .. "/vac/link"))
    local r = t.vkit { "vac", "draft", root .. "/vac" }
    assert.equal(1, r.code)
    assert.is_nil(fs.lstat(root .. "/vac/vac.json"))
  end)

  it("yields a bundle that verifies once every marker is authored", function()
    local root, head = issuer_repo "https://github.com/someone-else/mytool.git"
    assert.equal(0, t.vkit({ "vac", "draft", root .. "/vac" }).code)
    local m = json.decode(assert(fs.read(root .. "/vac/vac.json", 1 << 20)))
    m.claim = json.object { capability = "scores rows", scope = "two rows",
      limitations = json.array { "two rows prove little" } }
    m.subject = json.object { kind = "agent", id = "mytool", version = json.object { model = "m-1" } }
    m.protocol.task, m.protocol.grading, m.protocol.control_policy = "rows", "deterministic", "none"
    m.protocol.hashes = json.object { rows = "r-1" }
    m.results = json.object {
      summary = json.object { accuracy = 0.5 },
      checks = json.array { json.object { profile = "rows-aggregate-v1", artifact = "results.json", rows_key = "cases",
        recompute = json.object { accuracy = json.object { op = "rate_true", field = "passed", round = 4 } },
        expect = json.object { accuracy = 0.5 } } },
    }
    m.replay.commands[3], m.replay.commands[4] = "python -m mytool.regrade .", "cmp results.json issuer/results.json"
    m.replay.expected = "exit 0"
    assert(fs.write_atomic(root .. "/vac/vac.json", json.encode(m)))
    local v = vkit.vac.verify(root .. "/vac")
    assert.same({}, v.failures:names())
    assert.equal(head, m.protocol.issuer_commit)
  end)

  it("reads owner/name from every common remote form", function()
    local owner_name = require("vkit.vac.draft").owner_name
    assert.equal("o/n", owner_name "https://github.com/o/n.git")
    assert.equal("o/n", owner_name "https://github.com/o/n/")
    assert.equal("o/n", owner_name "git@github.com:o/n.git")
    assert.equal("o/n", owner_name "ssh://git@example.org:2222/o/n.git")
    assert.equal("o/n", owner_name "/srv/git/o/n.git")
    assert.is_nil(owner_name "n")
  end)
end)
