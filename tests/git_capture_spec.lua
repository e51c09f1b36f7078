local vkit = require "vkit"
local t = require "tests.support.run"
local g = require "tests.support.git"
local git, fs = vkit.git, vkit.fs

local function octal(s) return tonumber(s, 8) end

--- The inventory digest recomputed from its definition (docs/git.md).
local function digest_of(inventory)
  local sorted = {}
  for i, r in ipairs(inventory) do sorted[i] = r end
  table.sort(sorted, function(a, b) return a.path < b.path end)
  local parts = {}
  for _, r in ipairs(sorted) do parts[#parts + 1] = r.path .. "\0" .. r.mode .. "\0" .. r.sha256 .. "\n" end
  return vkit.hash.sha256(table.concat(parts))
end

describe("vkit.git capture", function()
  local repo, dir, cleanup, out
  before_each(function()
    repo, dir, cleanup = g.repo()
    out = dir .. "/out"
    assert(fs.mkdirs(out))
  end)
  after_each(function() cleanup() end)

  --- Asserts a refusal with `code` that left `out` empty and dest absent.
  local function refused(commit, code, paths, limits)
    local dest = out .. "/dest"
    local ok, msg, got = repo:capture(commit, dest, paths, limits)
    assert.is_nil(ok, msg)
    assert.equal(code, got, msg)
    assert.is_string(msg)
    assert.same({}, g.snapshot(out))
    assert.same({ "out dir", "repo dir" }, (function()
      local top = {}
      for _, name in ipairs(assert(fs.list(dir))) do top[#top + 1] = name .. " " .. fs.lstat(dir .. "/" .. name).kind end
      table.sort(top)
      return top
    end)())
    return msg
  end

  describe("materialising a commit", function()
    it("writes files 0644/0755 and directories 0755, and returns the identity", function()
      local c, tree = g.commit(repo, {
        { path = "README", bytes = "read me\n" }, { path = "bin/tool", bytes = "#!/bin/sh\n", mode = "100755" },
        { path = "src/lib/a.c", bytes = "int a;\n" }, { path = "src/b.c", bytes = "" },
      })
      local dest = out .. "/snap"
      local id = assert(repo:capture(c, dest))
      assert.equal(c, id.commit)
      assert.equal(tree, id.tree)
      assert.is_true(id.complete)
      local paths = {}
      for i, r in ipairs(id.inventory) do
        paths[i] = r.path
        assert.equal(assert(vkit.hash.file(dest .. "/" .. r.path)), r.sha256)
        assert.equal(fs.lstat(dest .. "/" .. r.path).size, r.size)
        assert.equal(g.git(repo, "rev-parse " .. c .. ":" .. r.path):sub(1, 40), r.blob)
      end
      assert.same({ "README", "bin/tool", "src/b.c", "src/lib/a.c" }, paths)
      assert.equal("100755", id.inventory[2].mode)
      assert.equal(digest_of(id.inventory), id.inventory_digest)
      local modes = {}
      for _, e in ipairs(assert(fs.walk(dest))) do modes[#modes + 1] = ("%s %s %o"):format(e.path, e.kind, e.mode) end
      assert.same({ "README file 644", "bin dir 755", "bin/tool file 755", "src dir 755", "src/b.c file 644",
        "src/lib dir 755", "src/lib/a.c file 644" }, modes)
      assert.equal(octal "755", fs.lstat(dest).mode)
      assert.is_true(git.verify_capture(dest, id))
    end)

    it("sets exact modes whatever the umask", function()
      local c = g.commit(repo, { { path = "d/x", bytes = "x", mode = "100755" }, { path = "y", bytes = "y" } })
      local script = dir .. "/umask.lua"
      t.write(script, ([[
        local vkit = require "vkit"
        local r = assert(vkit.git.open(%q))
        local id = assert(r:capture(%q, %q))
        assert(vkit.git.verify_capture(%q, id))
      ]]):format(dir .. "/repo", c, out .. "/u", out .. "/u"))
      g.sh("umask 077 && " .. g.quote(vkit.exe) .. " script " .. g.quote(script))
      assert.equal(octal "755", fs.lstat(out .. "/u/d").mode)
      assert.equal(octal "755", fs.lstat(out .. "/u/d/x").mode)
      assert.equal(octal "644", fs.lstat(out .. "/u/y").mode)
    end)

    it("agrees byte for byte and mode for mode with git archive | tar", function()
      local entries = {}
      for i = 1, 300 do
        entries[#entries + 1] = {
          path = ("d%d/s%d/f%03d%s"):format(i % 7, i % 3, i, i % 5 == 0 and ".sh" or ".txt"),
          bytes = ("line %d\n"):format(i):rep(i), mode = i % 5 == 0 and "100755" or "100644",
        }
      end
      local c = g.commit(repo, entries)
      local id = assert(repo:capture(c, out .. "/vkit"))
      assert(fs.mkdirs(out .. "/git"))
      g.sh(("git --git-dir=%s archive %s | tar -x -C %s"):format(g.quote(repo:path()), c, g.quote(out .. "/git")))
      local function listing(root)
        local l = {}
        for _, e in ipairs(assert(fs.walk(root))) do
          l[#l + 1] = ("%s %s %o %s"):format(e.path, e.kind, e.mode & octal "111",
            e.kind == "file" and vkit.hash.file(root .. "/" .. e.path) or "")
        end
        return l
      end
      assert.same(listing(out .. "/git"), listing(out .. "/vkit"))
      assert.equal(300, #id.inventory)
    end)

    it("captures exactly its inventory: empty directories are not created", function()
      local empty = assert(repo:write_tree {})
      local blob = assert(repo:write_blob "f")
      local sub = assert(repo:write_tree_raw { { name = "e", mode = "40000", oid = empty } })
      local c = g.raw_commit(repo, { { name = "a", mode = "100644", oid = blob }, { name = "hollow", mode = "40000", oid = sub } })
      local id = assert(repo:capture(c, out .. "/s"))
      assert.same({ "a file" }, g.snapshot(out .. "/s"))
      assert.is_true(git.verify_capture(out .. "/s", id))
      local none = assert(repo:capture(assert(repo:commit_tree { tree = empty }), out .. "/empty"))
      assert.same({}, g.snapshot(out .. "/empty"))
      assert.equal(vkit.hash.sha256 "", none.inventory_digest)
      assert.equal('{"commit":"' .. none.commit .. '","complete":true,"inventory":[],"inventory_digest":"'
        .. none.inventory_digest .. '","tree":"' .. empty .. '"}', vkit.json.encode(none))
    end)

    it("refuses a dest that exists or is a link, touching nothing", function()
      local c = g.commit(repo, { a = "a" })
      assert(fs.mkdirs(out .. "/exists"))
      assert.equal("dest-exists", select(3, repo:capture(c, out .. "/exists")))
      assert.same({ "exists dir" }, g.snapshot(out))
      local target = dir .. "/target"
      assert(fs.mkdirs(target))
      assert(fs.symlink(target, out .. "/link"))
      assert(fs.symlink(dir .. "/nowhere", out .. "/dangling"))
      assert.equal("dest-is-link", select(3, repo:capture(c, out .. "/link")))
      assert.equal("dest-is-link", select(3, repo:capture(c, out .. "/dangling")))
      assert.same({}, g.snapshot(target))
      assert.is_nil(fs.lstat(dir .. "/nowhere"))
      assert.equal("ENOENT", select(3, repo:capture(c, out .. "/no/parent")))
    end)

    it("refuses an inexact commit before touching dest", function()
      g.commit(repo, { a = "a" }, nil, "refs/heads/main")
      refused("main", "not-an-exact-commit")
      refused("HEAD", "not-an-exact-commit")
    end)
  end)

  describe("capturing listed paths", function()
    local c
    before_each(function()
      local sub = assert(repo:commit_tree { tree = assert(repo:write_tree {}) })
      c = g.commit(repo, {
        { path = "a.txt", bytes = "a" }, { path = "src/main.c", bytes = "int main;", mode = "100755" },
        { path = "src/util.c", bytes = "u" }, { path = "ln", bytes = "a.txt", mode = "120000" },
        { path = "mod", blob = sub, mode = "160000" },
      })
    end)

    it("materialises only those files and marks the identity incomplete", function()
      local id = assert(repo:capture(c, out .. "/p", { "src/main.c", "a.txt" }))
      assert.is_false(id.complete)
      assert.same({ "a.txt", "src/main.c" }, { id.inventory[1].path, id.inventory[2].path })
      assert.same({ "a.txt file", "src dir", "src/main.c file" }, g.snapshot(out .. "/p"))
      assert.equal(digest_of(id.inventory), id.inventory_digest)
      assert.is_true(git.verify_capture(out .. "/p", id))
    end)

    it("refuses a path that is not a regular file at the commit, or is malformed", function()
      refused(c, "not-a-file", { "src" })
      refused(c, "symlink", { "a.txt", "ln" })
      refused(c, "submodule", { "mod" })
      refused(c, "missing-path", { "src/none.c" })
      refused(c, "missing-path", { "a.txt/x" })
      refused(c, "duplicate-path", { "a.txt", "src/util.c", "a.txt" })
      for _, bad in ipairs { "../a.txt", "/a.txt", "src//main.c", "src/", "", ".git/config", "a.txt\0x", "src\\main.c" } do
        refused(c, "invalid-path", { bad })
      end
      refused(c, "too-many-entries", { "a.txt", "src/util.c" }, { max_entries = 1 })
      assert.has_error(function() repo:capture(c, out .. "/x", { 42 }) end)
    end)
  end)

  describe("hostile trees", function()
    local blob, evil
    before_each(function()
      blob = assert(repo:write_blob "payload\n")
      evil = assert(repo:write_tree_raw { { name = "pwned", mode = "100644", oid = blob } })
    end)

    local function entry(name, mode, oid) return { name = name, mode = mode or "100644", oid = oid or blob } end

    it("refuses each hostile entry by name and writes nothing anywhere", function()
      local nested = function(e) return assert(repo:write_tree_raw { entry("ok"), e }) end
      local cases = {
        { "symlink", { entry("ok"), entry("link", "120000", assert(repo:write_blob "../../../etc/passwd")) } },
        { "symlink", { entry("d", "40000", nested(entry("l", "120000"))) } },
        { "submodule", { entry("sub", "160000", ("5"):rep(40)) } },
        { "parent-component", { entry("..", "40000", evil) } },
        { "parent-component", { entry("d", "40000", nested(entry("..", "40000", evil))) } },
        { "dot-component", { entry(".", "40000", evil) } },
        { "absolute-path", { entry("/tmp", "40000", evil) } },
        { "slash-in-name", { entry("a/../../pwned") } },
        { "git-component", { entry(".git", "40000", evil) } },
        { "git-component", { entry(".GIT", "40000", evil) } },
        { "git-component", { entry(".Git") } },
        { "git-component", { entry("git~1", "40000", evil) } },
        { "git-component", { entry(".git. ", "40000", evil) } },
        { "git-component", { entry("d", "40000", nested(entry(".gIt", "40000", evil))) } },
        { "backslash", { entry("..\\pwned") } },
        { "empty-component", { entry("") } },
        { "path-collision", { entry("a"), entry("a", "40000", evil) } },
        { "path-collision", { entry("a"), entry("a") } },
        { "name-too-long", { entry(("n"):rep(256)) } },
        { "unsupported-mode", { entry("x", "100664") } },
        { "unsupported-mode", { entry("x", "040000", evil) } },
        { "missing-object", { entry("d", "40000", ("6"):rep(40)) } },
        { "corrupt-object", { entry("d", "40000", blob) } },
        -- a NUL cannot be stored in a tree entry name: it ends the name, so
        -- the bytes after it break the tree object
        { "corrupt-object", { entry("a\0b") } },
      }
      for _, case in ipairs(cases) do
        local c = g.raw_commit(repo, case[2])
        refused(c, case[1])
        assert.equal(case[1], select(3, repo:tree(c)) or (case[1] == "symlink" or case[1] == "submodule") and case[1])
      end
    end)

    -- What Git's own verify_path refuses under core.protectNTFS and
    -- core.protectHFS (git's path.c and utf8.c), from one table in
    -- git_tree.c: every name Windows or macOS would take for ".git", and a
    -- link named as ".gitmodules".
    local ZWNJ, ZWJ, LRM, BOM, LRO = "\u{200c}", "\u{200d}", "\u{200e}", "\u{feff}", "\u{202d}"
    local git_aliases = {
      "git~1.", "GIT~1 ", "Git~1", "git~1::$INDEX_ALLOCATION", ".git::$INDEX_ALLOCATION", ".git:x", ".GIT:",
      ".git.", ".git ", ".git . .", "." .. ZWNJ .. "git", ".g" .. ZWJ .. "it", ".gi" .. LRM .. "t" .. BOM,
      BOM .. ".GIT", ".Gi" .. LRO .. "T",
    }
    local gitmodules_links = { ".gitmodules", ".GITMODULES", ".gitmodules . ", ".gitmodules:stream", "gitmod~1",
                               "GITMOD~4 ", "gi7eba~1", "gi7eba~9", "gi7eb~12", ".gitm" .. ZWNJ .. "odules" }
    local allowed = { ".github", ".gitignore", ".git-blame-ignore-revs", "git~2", "git~10", "git~1a", ".gitx",
                      "x.git", ".g.it", ".gi\u{2010}t", "gitmod~5", "gi7eba~1x" }

    it("refuses every name Windows or macOS would take for .git, in a file or a directory", function()
      for _, name in ipairs(git_aliases) do
        for _, e in ipairs { entry(name), entry(name, "40000", evil) } do
          local c = g.raw_commit(repo, { entry("ok"), e })
          refused(c, "git-component")
          assert.equal("git-component", select(3, repo:tree(c)), name)
        end
      end
    end)

    it("refuses a link named as .gitmodules, but not such a file", function()
      local target = assert(repo:write_blob "elsewhere")
      for _, name in ipairs(gitmodules_links) do
        local c = g.raw_commit(repo, { entry("ok"), entry(name, "120000", target) })
        assert.equal("gitmodules-link", select(3, repo:tree(c)), name)
        local file = g.raw_commit(repo, { entry("ok"), entry(name) })
        assert.is_table(repo:tree(file), name)
      end
    end)

    it("captures the names Git allows", function()
      for i, name in ipairs(allowed) do
        local c = g.raw_commit(repo, { entry(name) })
        local dest = ("%s/allowed-%d"):format(out, i)
        assert.is_table(repo:capture(c, dest), name)
        assert.equal("file", fs.lstat(dest .. "/" .. name).kind, name)
      end
      local none, message, code = repo:capture(g.raw_commit(repo, { entry("x") }), out .. "/p", { "d/git~1./x" })
      assert.is_nil(none)
      assert.equal("invalid-path", code)
      assert.matches("a '.git' component", message, 1, true)
    end)

    it("refuses paths over 4,096 bytes", function()
      local tree = evil
      for i = 1, 17 do tree = assert(repo:write_tree_raw { entry(("%02d"):format(i) .. ("p"):rep(253), "40000", tree) }) end
      local msg = refused(assert(repo:commit_tree { tree = tree }), "path-too-long")
      assert.matches("4096", msg)
    end)

    it("removes everything it wrote when an object fails after writing began", function()
      local entries = {}
      for i = 1, 150 do entries[i] = entry(("f%03d"):format(i), "100644", assert(repo:write_blob("file " .. i))) end
      -- sorts last, so the other files are written before it fails
      entries[#entries + 1] = entry("zz", "100644", evil)
      local msg = refused(g.raw_commit(repo, entries), "corrupt-object")
      assert.matches("zz", msg)
    end)
  end)

  describe("corrupt and missing objects", function()
    local c, victim
    before_each(function()
      local files = {}
      for i = 1, 100 do files[#files + 1] = { path = ("d/f%03d"):format(i), bytes = ("content %d\n"):format(i):rep(20) } end
      c = g.commit(repo, files)
      victim = assert(repo:read(c, "d/f050", 10000)).blob
    end)

    --- Reopens the repository (libgit2 caches objects per handle).
    local function reopen()
      repo:close()
      repo = assert(git.open(dir .. "/repo"))
    end

    local damage = {
      garbage = function() g.overwrite_object(repo, victim, "this is not zlib at all") end,
      truncated = function()
        local whole = t.slurp(g.loose_path(repo, victim))
        g.overwrite_object(repo, victim, whole:sub(1, #whole - 20))
      end,
      -- libgit2 1.5 writes past its buffer for this one (issue #7177)
      ["header smaller than body"] = function()
        g.overwrite_object(repo, victim, g.zlib("blob 12\0this is a blob with a too-small length value\n"))
      end,
      ["header larger than body"] = function() g.overwrite_object(repo, victim, g.zlib "blob 100\0short") end,
      ["impossible size"] = function() g.overwrite_object(repo, victim, g.zlib "blob 99999999999\0x") end,
      ["trailing bytes"] = function()
        g.overwrite_object(repo, victim, g.zlib(("blob %d\0"):format(#("content 50\n"):rep(20)) .. ("content 50\n"):rep(20)) .. "junk")
      end,
      ["hash mismatch"] = function()
        g.overwrite_object(repo, victim, g.zlib "blob 5\0other")
      end,
      ["wrong type"] = function()
        local bytes = ("content 50\n"):rep(20)
        g.overwrite_object(repo, victim, g.zlib(("tree %d\0"):format(#bytes) .. bytes))
      end,
    }

    it("a stored-block zlib object the specs build is read like git's own", function()
      g.overwrite_object(repo, victim, g.zlib(("blob %d\0"):format(#("content 50\n"):rep(20)) .. ("content 50\n"):rep(20)))
      reopen()
      assert.equal(("content 50\n"):rep(20), assert(repo:read(c, "d/f050", 10000)).bytes)
      assert.is_true(repo:capture(c, out .. "/ok") ~= nil)
      g.git(repo, "cat-file -p " .. victim)
    end)

    for name, hurt in pairs(damage) do
      it("reports a blob that is corrupt (" .. name .. ") as corrupt-object, and cleans up", function()
        hurt()
        reopen()
        local ok, msg, code = repo:read(c, "d/f050", 1e9)
        assert.is_nil(ok)
        assert.equal("corrupt-object", code, msg)
        assert.matches(victim, msg)
        assert.is_true(repo:read(c, "d/f049", 1e9) ~= nil)
        refused(c, "corrupt-object")
      end)
    end

    it("reports a missing blob as missing-object", function()
      assert(os.remove(g.loose_path(repo, victim)))
      reopen()
      assert.equal("missing-object", select(3, repo:read(c, "d/f050", 1e9)))
      refused(c, "missing-object")
      assert.equal("missing-object", select(3, repo:tree(c)))
    end)

    it("reports a corrupt tree or commit before anything is written", function()
      local tree = repo:commit(c).tree
      local sub = g.git(repo, "rev-parse " .. c .. ":d"):sub(1, 40)
      g.overwrite_object(repo, sub, "garbage")
      reopen()
      refused(c, "corrupt-object")
      assert.equal("corrupt-object", select(3, repo:tree(c)))
      g.overwrite_object(repo, c, g.zlib "commit 3\0abc")
      reopen()
      assert.equal("corrupt-object", select(3, repo:commit(c)))
      assert.equal("corrupt-object", select(3, repo:capture(c, out .. "/x")))
      assert.is_string(tree)
    end)

    it("reports a commit whose tree is missing", function()
      local bad = assert(repo:write_object("commit", ("tree %s\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nm\n"):format(("7"):rep(40))))
      refused(bad, "missing-object")
    end)
  end)

  describe("limits", function()
    it("refuses a file over max_file_bytes from its header, and an over-budget total", function()
      local c = g.commit(repo, { a = ("a"):rep(1000), b = ("b"):rep(1000) })
      refused(c, "too-large", nil, { max_file_bytes = 999 })
      refused(c, "too-large", nil, { max_total_bytes = 1999 })
      refused(c, "too-many-entries", nil, { max_entries = 1 })
      assert(repo:capture(c, out .. "/fits", nil, { max_file_bytes = 1000, max_total_bytes = 2000, max_entries = 2 }))
    end)
  end)
end)

describe("vkit.git.verify_capture", function()
  local repo, dir, cleanup, dest, id
  before_each(function()
    repo, dir, cleanup = g.repo()
    local c = g.commit(repo, {
      { path = "a.txt", bytes = "alpha\n" }, { path = "b/c.txt", bytes = "gamma\n" },
      { path = "b/run", bytes = "#!/bin/sh\n", mode = "100755" }, { path = "z", bytes = "zed" },
    })
    dest = dir .. "/snap"
    id = assert(repo:capture(c, dest))
  end)
  after_each(function() cleanup() end)

  local function fails(code, path_pattern, identity)
    local ok, msg, got = git.verify_capture(dest, identity or id)
    assert.is_nil(ok)
    assert.equal(code, got, msg)
    if path_pattern then assert.matches(path_pattern, msg) end
  end

  it("accepts an untouched capture, also after a JSON round trip of the identity", function()
    assert.is_true(git.verify_capture(dest, id))
    assert.is_true(git.verify_capture(dest, vkit.json.decode(vkit.json.encode(id))))
  end)

  it("fails on changed bytes, even of the same length", function()
    t.write(dest .. "/b/c.txt", "GAMMA\n")
    fails("content-mismatch", "b/c.txt")
  end)

  it("fails on a changed mode of a file or a directory", function()
    assert(fs.chmod(dest .. "/a.txt", octal "755"))
    fails("mode-mismatch", "a.txt")
    assert(fs.chmod(dest .. "/a.txt", octal "644"))
    assert(fs.chmod(dest .. "/b", octal "700"))
    fails("mode-mismatch", "b")
    assert(fs.chmod(dest .. "/b", octal "755"))
    assert(fs.chmod(dest, octal "775"))
    fails("mode-mismatch")
  end)

  it("fails on extra files, links, fifos, directories and devices", function()
    local extras = {
      { "b/new.txt", function(p) t.write(p, "") end, "file" },
      { "b/link", function(p) assert(fs.symlink("c.txt", p)) end, "symbolic link" },
      { "fifo", function(p) assert(fs.mkfifo(p)) end, "fifo" },
      { "emptydir", function(p) assert(fs.mkdirs(p)) end, "directory" },
    }
    if os.execute("mknod " .. g.quote(dest .. "/dev") .. " c 1 3 2>/dev/null") then
      assert(os.remove(dest .. "/dev"))
      extras[#extras + 1] = { "dev", function(p) assert(os.execute("mknod " .. g.quote(p) .. " c 1 3")) end, "character device" }
    end
    for _, e in ipairs(extras) do
      local p = dest .. "/" .. e[1]
      e[2](p)
      fails("extra-path", e[1] .. ": an extra " .. e[3])
      if fs.lstat(p).kind == "dir" then assert(fs.remove_tree(p)) else assert(os.remove(p)) end
      assert.is_true(git.verify_capture(dest, id))
    end
  end)

  it("fails on a missing file, a link in place of a file, and a hard link", function()
    assert(os.rename(dest .. "/z", dir .. "/z"))
    fails("missing-path", "z")
    assert(fs.symlink(dir .. "/z", dest .. "/z"))
    fails("kind-mismatch", "z")
    assert(os.remove(dest .. "/z"))
    assert(os.rename(dir .. "/z", dest .. "/z"))
    assert(os.execute("ln " .. g.quote(dest .. "/z") .. " " .. g.quote(dir .. "/outside")))
    fails("hard-link", "z")
  end)

  it("names the first difference in path order", function()
    t.write(dest .. "/z", "ZED")
    t.write(dest .. "/b/c.txt", "GAMMA\n")
    fails("content-mismatch", "b/c.txt")
  end)

  it("fails when dest is a link to a good copy", function()
    assert(os.rename(dest, dir .. "/real"))
    assert(fs.symlink(dir .. "/real", dest))
    fails("dest-is-link")
  end)

  it("checks the identity itself: digest, records", function()
    local forged = vkit.json.decode(vkit.json.encode(id))
    forged.inventory[1].sha256 = vkit.hash.sha256 "forged"
    fails("inventory-digest-mismatch", nil, forged)
    forged = vkit.json.decode(vkit.json.encode(id))
    forged.inventory[1].mode = "120000"
    fails("invalid-identity", nil, forged)
    forged = vkit.json.decode(vkit.json.encode(id))
    forged.inventory[2].path = "../x"
    fails("invalid-identity", nil, forged)
    fails("invalid-identity", nil, { inventory_digest = id.inventory_digest })
    assert.has_error(function() git.verify_capture(dest, "id") end)
  end)

  it("inventory_digest recomputes the identity's digest from any record order", function()
    local reversed = {}
    for i = #id.inventory, 1, -1 do reversed[#reversed + 1] = id.inventory[i] end
    assert.equal(id.inventory_digest, git.inventory_digest(reversed))
    assert.equal(digest_of(id.inventory), git.inventory_digest(id.inventory))
    assert.equal(vkit.hash.sha256 "", git.inventory_digest {})
    assert.equal("invalid-inventory", select(3, git.inventory_digest { id.inventory[1], id.inventory[1] }))
  end)
end)
