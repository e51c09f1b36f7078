-- vkit vac registry on real Git repositories built here with vkit.git:
-- committed HEAD trees only, pending with exact reasons, commit-addressed
-- pins, byte-reproducible output, and --check-fetched.
local vkit = require "vkit"
local t = require "tests.support.run"
local fs, json = vkit.fs, vkit.json
local has_git = pcall(require, "vkit.git")
local describe_git = has_git and describe or function(name) pending(name .. " (vkit.git is not built in)") end

local FIXTURES = vkit.root .. "/fixtures/vac"

-- Every file of a fixture bundle, as tree entries under prefix.
local bundle_entries = require("tests.support.git").tree_entries

describe_git("vkit vac registry", function()
  local git = has_git and require "vkit.git"
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  -- An issuer whose committed tree holds certifications/good (valid),
  -- certifications/cooked (a tampered bundle) and certifications/empty (no
  -- manifest); HEAD is on the remote-tracking branch origin/main.
  local function issuer(opts)
    opts = opts or {}
    local root = dir .. "/toy-issuer"
    local repo = git.init(root)
    local entries = {}
    bundle_entries(FIXTURES .. "/valid/v01", "certifications/good", entries)
    bundle_entries(FIXTURES .. "/tampered/sha256-mismatch", "certifications/cooked", entries)
    entries[#entries + 1] = { path = "certifications/empty/notes.txt", bytes = "soon\n" }
    entries[#entries + 1] = { path = "README.md", bytes = "toy issuer\n" }
    local head = repo:commit_tree { tree = repo:write_tree(entries), parents = {}, message = "bundles", ref = "HEAD" }
    repo:set_remote("origin", "https://github.com/example/toy-issuer.git")
    if not opts.no_remote_refs then repo:set_ref("refs/remotes/origin/main", head) end
    repo:close()
    t.write(dir .. "/vac-registry.json", json.encode(json.object { issuers = json.array {
      json.object { repo = "https://github.com/example/toy-issuer", checkout = "toy-issuer", bundles = "certifications/*" },
      json.object { repo = "https://github.com/example/toy-issuer", checkout = "toy-issuer", bundles = "vac" },
    } }))
    return root, head
  end

  local function generate(out)
    return t.vkit { "vac", "registry", "--config", dir .. "/vac-registry.json", "--out", out }
  end

  it("accepts verified bundles from the committed tree and records the rest as pending", function()
    local _, head = issuer()
    local r = generate(dir .. "/registry.json")
    assert.equal(0, r.code, r.stderr)
    local doc = json.decode(assert(fs.read(dir .. "/registry.json", 1 << 24)))
    assert.equal(1, #doc.entries)
    local e = doc.entries[1]
    assert.equal("toy-issuer/good", e.name)
    assert.equal("example/toy-issuer", e.issuer)
    assert.equal(head, e.pinned_commit)
    assert.equal("f1e2d3c4b5a6978877665544332211aabbccddee", e.issuer_commit)
    assert.equal("accepted", e.status)
    for _, a in ipairs(e.artifacts) do
      local blob = assert(fs.read(FIXTURES .. "/valid/v01/" .. a.path, 1 << 24))
      assert.equal(vkit.hash.sha256(blob), a.sha256)
      assert.equal(("https://raw.githubusercontent.com/example/toy-issuer/%s/certifications/good/%s"):format(head, a.path),
        a.url)
    end
    local reasons = {}
    for _, p in ipairs(doc.pending) do reasons[p.name] = p.reason end
    assert.matches("^refused at generation: sha256%-mismatch: evidence/narrative.json", reasons["toy-issuer/cooked"])
    assert.matches("vac.json is not in the committed tree", reasons["toy-issuer/empty"])
    assert.matches("no committed files at vac", reasons["toy-issuer/vac"])
  end)

  it("reads committed bytes only, and is byte-reproducible", function()
    local root = issuer()
    assert.equal(0, generate(dir .. "/one.json").code)
    -- the working tree says something else entirely: it must not matter
    assert(fs.mkdirs(root .. "/certifications/good/evidence"))
    t.write(root .. "/certifications/good/vac.json", "{}")
    t.write(root .. "/certifications/good/evidence/bundle.json", "cooked")
    assert.equal(0, generate(dir .. "/two.json").code)
    assert.equal(t.slurp(dir .. "/one.json"), t.slurp(dir .. "/two.json"))
  end)

  it("refuses a HEAD that is on no remote branch", function()
    local root, head = issuer()
    local repo = git.open(root)
    local tree = repo:commit(head).tree
    repo:commit_tree { tree = tree, parents = { head }, message = "unpushed", ref = "HEAD" }
    repo:close()
    local r = generate(dir .. "/registry.json")
    assert.equal(1, r.code)
    assert.matches("is on no remote branch %(no remote%-tracking branch contains it%)", r.stderr)
    assert.is_nil(fs.lstat(dir .. "/registry.json"))
  end)

  -- Issue 16 item 6: with no remote-tracking refs at all, nothing shows
  -- the commit is on any server (the rule used to hold only when some
  -- remote-tracking ref existed).
  it("refuses a checkout with no remote-tracking refs at all", function()
    issuer { no_remote_refs = true }
    local r = generate(dir .. "/registry.json")
    assert.equal(1, r.code, r.stdout)
    assert.matches("is on no remote branch %(the checkout has no remote%-tracking branch at all", r.stderr)
    assert.is_nil(fs.lstat(dir .. "/registry.json"))
  end)

  describe("--check-fetched", function()
    local function fetched(doc)
      for _, e in ipairs(doc.entries) do
        for _, a in ipairs(e.artifacts) do
          local target = dir .. "/fetched/" .. e.name .. "/" .. a.path
          assert(fs.mkdirs(target:match "^(.*)/[^/]*$"))
          assert(fs.copy_file(FIXTURES .. "/valid/v01/" .. a.path, target))
        end
      end
    end
    local function check(registry)
      return t.vkit { "vac", "registry", "--registry", registry, "--check-fetched", dir .. "/fetched" }
    end

    it("passes when every fetched byte matches its pin and the entry rebuilds exactly", function()
      issuer()
      assert.equal(0, generate(dir .. "/registry.json").code)
      fetched(json.decode(assert(fs.read(dir .. "/registry.json", 1 << 24))))
      local r = check(dir .. "/registry.json")
      assert.equal(0, r.code, r.stdout .. r.stderr)
    end)

    it("refuses a fetched byte that does not hash to its pin, and an extra file", function()
      issuer()
      assert.equal(0, generate(dir .. "/registry.json").code)
      fetched(json.decode(assert(fs.read(dir .. "/registry.json", 1 << 24))))
      t.write(dir .. "/fetched/toy-issuer/good/evidence/CONTRACT.md", "**4/4 seeded defects fixed**\n")
      t.write(dir .. "/fetched/toy-issuer/good/evidence/extra.txt", "x")
      local r = check(dir .. "/registry.json")
      assert.equal(1, r.code)
      assert.matches("evidence/CONTRACT.md: fetched bytes hash to", r.stdout)
      assert.matches("evidence/extra.txt: fetched but not pinned", r.stdout)
    end)

    it("refuses any URL whose ref is not a full commit id", function()
      local _, head = issuer()
      assert.equal(0, generate(dir .. "/registry.json").code)
      local text = t.slurp(dir .. "/registry.json")
      local doc = json.decode(text)
      fetched(doc)
      t.write(dir .. "/mutable.json", (text:gsub("/" .. head .. "/certifications/good/vac.json",
        "/main/certifications/good/vac.json")))
      local r = check(dir .. "/mutable.json")
      assert.equal(1, r.code)
      assert.matches("vac.json: URL https://raw.githubusercontent.com/example/toy%-issuer/main/certifications/good/vac.json "
        .. "is not addressed at a full commit id", r.stdout)
    end)
  end)
end)
