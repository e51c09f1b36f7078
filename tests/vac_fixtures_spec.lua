-- Invalidation liveness: every valid fixture bundle passes and every
-- tampered one is refused with exactly the reasons it was built to earn
-- (fixtures/vac/catalog.json).  A gate must prove it can block.
local vkit = require "vkit"
local t = require "tests.support.run"
local fs, json = vkit.fs, vkit.json

local FIXTURES = vkit.root .. "/fixtures/vac"

local function catalog()
  return json.decode(assert(fs.read(FIXTURES .. "/catalog.json", 1 << 24)))
end

local function reasons(path)
  local result = assert(vkit.vac.verify(path))
  return result.failures:names(), result
end

local copy_tree = require("tests.vac_support").copy_tree

local function tree_digest(root)
  local records = {}
  for _, e in ipairs(assert(fs.walk(root))) do
    if e.kind == "file" then records[#records + 1] = { path = e.path, sha256 = (assert(vkit.hash.file(root .. "/" .. e.path))) } end
  end
  return vkit.hash.evidence_digest(records)
end

describe("VAC fixtures", function()
  local cat = catalog()

  it("hold at least one valid bundle per version, as directories and archives", function()
    local valid = {}
    for _, b in ipairs(cat.bundles) do
      if #b.reasons == 0 then valid[b.name] = true end
    end
    assert.is_true(valid["valid-v01"])
    assert.is_true(valid["valid-v02"])
    assert.is_true(valid["valid-v01.tar.gz"])
    assert.is_true(valid["valid-v01.tgz"])
    assert.is_true(valid["valid-v01.tar"])
  end)

  for _, b in ipairs(cat.bundles) do
    local want = table.concat(b.reasons, ", ")
    it(("%s: %s"):format(b.name, want == "" and "passes" or ("refused with exactly {" .. want .. "}")), function()
      local got = reasons(FIXTURES .. "/" .. b.path)
      assert.same(b.reasons, got)
    end)
  end

  it("run every profile in the valid bundles, at both versions", function()
    for _, v in ipairs { "v01", "v02" } do
      local m = json.decode(assert(fs.read(FIXTURES .. "/valid/" .. v .. "/vac.json", 1 << 20)))
      local seen = {}
      for _, c in ipairs(m.results.checks) do seen[c.profile] = true end
      for _, name in ipairs(require("vkit.vac.profiles").NAMES) do
        assert.is_true(seen[name], v .. " lacks " .. name)
      end
    end
  end)

  describe("refused at run time (links and special files cannot live in git)", function()
    local dir, cleanup
    before_each(function() dir, cleanup = t.tempdir() end)
    after_each(function() cleanup() end)

    it("a symlinked artifact is unsafe-bundle, and its target is never hashed", function()
      copy_tree(FIXTURES .. "/valid/v01", dir .. "/b")
      assert(os.remove(dir .. "/b/evidence/CONTRACT.md"))
      t.write(dir .. "/outside.md", "**3/4 seeded defects fixed**\n")
      assert(fs.symlink(dir .. "/outside.md", dir .. "/b/evidence/CONTRACT.md"))
      local got, result = reasons(dir .. "/b")
      assert.same({ "unsafe-bundle" }, got)
      for _, f in ipairs(result.failures) do
        assert.is_nil(f.detail:find(vkit.hash.sha256 "**3/4 seeded defects fixed**\n", 1, true))
      end
    end)

    it("a symlinked directory riding along unlisted is unsafe-bundle", function()
      copy_tree(FIXTURES .. "/valid/v01", dir .. "/b")
      assert(fs.mkdirs(dir .. "/elsewhere"))
      t.write(dir .. "/elsewhere/secret.txt", "x")
      assert(fs.symlink(dir .. "/elsewhere", dir .. "/b/extra"))
      assert.same({ "unsafe-bundle" }, (reasons(dir .. "/b")))
    end)

    it("an artifact reached through a symlinked directory is unsafe-bundle", function()
      copy_tree(FIXTURES .. "/valid/v01", dir .. "/b")
      assert(os.rename(dir .. "/b/evidence", dir .. "/real-evidence"))
      assert(fs.symlink(dir .. "/real-evidence", dir .. "/b/evidence"))
      local got = reasons(dir .. "/b")
      assert.same({ "unsafe-bundle" }, got)
    end)

    -- Presence is read off the closure walk (bundle.lua); when the walk
    -- fails, off an lstat of each component.  Both must answer alike.
    it("answers presence from the closure walk as an lstat of each component does", function()
      copy_tree(FIXTURES .. "/valid/v01", dir .. "/b")
      local m = json.decode(assert(fs.read(dir .. "/b/vac.json", 1 << 20)))
      local pin = m.evidence[1].sha256
      assert.equal("evidence/CONTRACT.md", m.evidence[1].path)
      for _, path in ipairs { "evidence/./CONTRACT.md", "./evidence/CONTRACT.md", "evidence", "evidence/none.md",
        "evidence/CONTRACT.md/x", "evidence/./." } do
        m.evidence[#m.evidence + 1] = json.object { path = path, sha256 = pin }
      end
      t.write(dir .. "/b/vac.json", json.encode(m, { indent = 2 }))
      local function presence()
        local out = {}
        for _, f in ipairs(vkit.vac.verify(dir .. "/b").failures) do
          if f.name == "missing-artifact" or f.name == "unsafe-bundle" then out[#out + 1] = f.name .. " " .. f.detail end
        end
        return out
      end
      local want = { "missing-artifact evidence", "missing-artifact evidence/none.md",
        "missing-artifact evidence/CONTRACT.md/x", "missing-artifact evidence/./." }
      assert.same(want, presence())
      -- nesting past the walk's depth limit: the walk fails, lstat answers
      local deep = dir .. "/b/deep" .. ("/d"):rep(300)
      assert(fs.mkdirs(deep))
      local got = presence()
      assert.matches("^unsafe%-bundle cannot walk the bundle: ", got[#got])
      got[#got] = nil
      assert.same(want, got)
    end)

    it("a fifo in the bundle is unsafe-bundle and is never opened", function()
      copy_tree(FIXTURES .. "/valid/v01", dir .. "/b")
      assert(fs.mkfifo(dir .. "/b/evidence/pipe"))
      assert.same({ "unsafe-bundle" }, (reasons(dir .. "/b")))
    end)

    it("a symlinked vac.json is unsafe-bundle", function()
      copy_tree(FIXTURES .. "/valid/v01", dir .. "/b")
      assert(os.rename(dir .. "/b/vac.json", dir .. "/vac.json"))
      assert(fs.symlink(dir .. "/vac.json", dir .. "/b/vac.json"))
      assert.same({ "unsafe-bundle" }, (reasons(dir .. "/b")))
    end)

    it("an archive whose unpacked size passes the cap is unsafe-archive", function()
      local policy = vkit.policies.vac.archive.max_unpacked_bytes
      assert.is_true(policy > 0)
      local r = assert(require("vkit.archive").open(FIXTURES .. "/archives/valid-v01.tar.gz", { max_bytes = 4096 }))
      local failed
      while true do
        local e, msg, code = r:next()
        if not e then failed = code break end
        while true do
          local chunk, _, c2 = r:read()
          if not chunk then failed = c2 break end
          if chunk == "" then break end
        end
        if failed then break end
      end
      r:close()
      assert.equal("too-large", failed)
    end)
  end)

  it("cover every reason name the verifier can emit", function()
    local covered = { ["unsafe-bundle"] = true } -- proved at run time above
    for _, b in ipairs(cat.bundles) do
      for _, r in ipairs(b.reasons) do covered[r] = true end
    end
    for _, name in ipairs(vkit.vac.REASONS) do assert.is_true(covered[name], name .. " has no fixture") end
  end)

  it("regenerate byte-identically", function()
    local dir, cleanup = t.tempdir()
    local r = t.vkit { "script", FIXTURES .. "/generate.lua", dir .. "/out" }
    assert.equal(0, r.code, r.stderr)
    local fresh, committed = tree_digest(dir .. "/out"), nil
    -- the committed tree minus the generator itself
    local records = {}
    for _, e in ipairs(assert(fs.walk(FIXTURES))) do
      if e.kind == "file" and e.path ~= "generate.lua" then
        records[#records + 1] = { path = e.path, sha256 = (assert(vkit.hash.file(FIXTURES .. "/" .. e.path))) }
      end
    end
    committed = vkit.hash.evidence_digest(records)
    cleanup()
    assert.equal(committed, fresh)
  end)
end)
