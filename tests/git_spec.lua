local vkit = require "vkit"
local t = require "tests.support.run"
local g = require "tests.support.git"
local git, fs = vkit.git, vkit.fs

describe("vkit.git", function()
  local repo, dir, cleanup
  before_each(function() repo, dir, cleanup = g.repo() end)
  after_each(function() cleanup() end)

  describe("open and init", function()
    it("initialises a repository git itself accepts, HEAD on main", function()
      local c = g.commit(repo, { ["a.txt"] = "a\n" }, nil, "refs/heads/main")
      assert.equal(c, repo:head())
      assert.equal(c .. "\n", g.git(repo, "rev-parse HEAD"))
      assert.equal("refs/heads/main\n", g.git(repo, "symbolic-ref HEAD"))
      g.git(repo, "fsck --strict --no-dangling")
    end)

    it("opens a working tree or its .git directory, and a bare repository", function()
      g.commit(repo, { a = "1" }, nil, "refs/heads/main")
      local head = repo:head()
      for _, path in ipairs { dir .. "/repo", dir .. "/repo/.git" } do
        local r <close> = assert(git.open(path))
        assert.equal(head, r:head())
      end
      local bare <close> = assert(git.init(dir .. "/bare.git", { bare = true }))
      assert.is_nil(bare:workdir())
      local again <close> = assert(git.open(dir .. "/bare.git"))
      assert.matches("bare.git/$", again:path())
    end)

    it("refuses a directory that is not a repository, searching only when asked", function()
      assert(vkit.fs.mkdirs(dir .. "/repo/sub/dir"))
      local r, msg, code = git.open(dir .. "/repo/sub/dir")
      assert.is_nil(r)
      assert.equal("not-a-repository", code)
      assert.matches("sub/dir", msg)
      local found <close> = assert(git.open(dir .. "/repo/sub/dir", { search = true }))
      assert.equal(repo:path(), found:path())
      assert.equal("not-a-repository", select(3, git.open(dir .. "/missing")))
    end)

    it("refuses a SHA-256 repository that libgit2 1.5 cannot read", function()
      g.sh("git init -q --object-format=sha256 " .. g.quote(dir .. "/s256"))
      local r, msg, code = git.open(dir .. "/s256")
      assert.is_nil(r)
      assert.equal("unsupported-repository", code)
      assert.matches("objectformat", msg)
    end)

    it("reads packed objects, alternates (clone --shared) and linked worktrees", function()
      local c = g.commit(repo, { ["a/b"] = "hello", c = { path = "c", bytes = "x", mode = "100755" } }, nil,
        "refs/heads/main")
      local want = assert(repo:capture(c, dir .. "/loose")).inventory_digest
      local src = g.quote(dir .. "/repo")
      g.sh(("cd %s && git reset -q --hard && git repack -adq && git clone -q --shared %s %s && git worktree add -q --detach %s main")
        :format(src, src, g.quote(dir .. "/clone"), g.quote(dir .. "/wt")))
      assert.same({}, assert(fs.list(dir .. "/repo/.git/objects/" .. c:sub(1, 2)) or {}))
      assert.truthy(t.slurp(dir .. "/clone/.git/objects/info/alternates"):find("repo/.git/objects", 1, true))
      for _, path in ipairs { dir .. "/repo", dir .. "/clone", dir .. "/wt" } do
        local r <close> = assert(git.open(path))
        assert.equal("hello", assert(r:read(c, "a/b", 10)).bytes)
        assert.equal(want, assert(r:capture(c, path .. "-capture")).inventory_digest)
      end
    end)

    it("closes handles; a closed handle raises", function()
      local r = assert(git.open(dir .. "/repo"))
      r:close()
      r:close()
      assert.has_error(function() r:head() end, "attempt to use a closed repository")
      assert.matches("closed", tostring(r))
    end)
  end)

  describe("commit", function()
    it("returns the exact commit: id, tree, parents, author, committer, message", function()
      local c1, t1 = g.commit(repo, { a = "1" })
      local tree = assert(repo:write_tree { { path = "a", bytes = "2" } })
      local c2 = assert(repo:commit_tree {
        tree = tree, parents = { c1 }, message = "second\n\nbody\n",
        author = { name = "Ada", email = "ada@example.org", time = 1234567890, offset = 60 },
        committer = { name = "Bob", email = "bob@example.org", time = 1234567999 },
      })
      local info = assert(repo:commit(c2))
      assert.same({
        id = c2, tree = tree, parents = { c1 }, message = "second\n\nbody\n",
        author = { name = "Ada", email = "ada@example.org", time = 1234567890, offset = 60 },
        committer = { name = "Bob", email = "bob@example.org", time = 1234567999, offset = 0 },
      }, info)
      assert.equal("[]", vkit.json.encode(assert(repo:commit(c1)).parents))
      assert.equal(t1, repo:commit(c1).tree)
      -- git reads the same commit
      assert.equal("Ada <ada@example.org> 1234567890 +0100\n", g.git(repo, "show -s --format='%an <%ae> %at %ad' --date=format:%z " .. c2))
    end)

    it("uses a fixed author and time by default, so ids are reproducible", function()
      local other, _, clean2 = g.repo()
      local a = g.commit(repo, { x = "same" })
      local b = g.commit(other, { x = "same" })
      clean2()
      assert.equal(a, b)
      local info = repo:commit(a)
      assert.same({ name = "vkit", email = "vkit@example.invalid", time = 1700000000, offset = 0 }, info.author)
    end)

    it("refuses everything that is not a full lowercase id of an existing commit", function()
      local c, tree = g.commit(repo, { f = "x" }, nil, "refs/heads/main")
      local blob = assert(repo:write_blob "x")
      assert(repo:set_ref("refs/tags/v1", c))
      local tag = assert(repo:write_object("tag", ("object %s\ntype commit\ntag v1\ntagger t <t@x> 1 +0000\n\nmsg\n"):format(c)))
      local cases = {
        { "main", "not an exact object id" }, { "refs/heads/main", "not an exact" }, { "HEAD", "not an exact" },
        { "v1", "not an exact" }, { c:sub(1, 7), "not an exact" }, { c:sub(1, 39), "not an exact" },
        { c .. "0", "not an exact" }, { c:upper(), "not an exact" }, { ("g"):rep(40), "not an exact" },
        { "", "not an exact" }, { c .. "\n", "not an exact" },
        { ("a"):rep(64), "SHA%-256" },
        { tree, "is a tree, not a commit" }, { blob, "is a blob, not a commit" }, { tag, "is a tag, not a commit" },
        { ("0"):rep(40), "does not exist" }, { ("1"):rep(40), "does not exist" },
      }
      for _, case in ipairs(cases) do
        local ok, msg, code = repo:commit(case[1])
        assert.is_nil(ok, case[1])
        assert.equal("not-an-exact-commit", code, case[1])
        assert.matches(case[2], msg, 1, false, case[1])
      end
      assert.has_error(function() repo:commit {} end)
    end)
  end)

  describe("is_ancestor", function()
    it("follows first and merge parents; a commit is its own ancestor", function()
      local a = g.commit(repo, { f = "a" })
      local b = g.commit(repo, { f = "b" }, { a })
      local side = g.commit(repo, { f = "side" }, { a })
      local m = g.commit(repo, { f = "m" }, { b, side })
      local unrelated = g.commit(repo, { f = "u" })
      assert.is_true(repo:is_ancestor(a, b))
      assert.is_true(repo:is_ancestor(a, m))
      assert.is_true(repo:is_ancestor(side, m))
      assert.is_true(repo:is_ancestor(m, m))
      assert.is_false(repo:is_ancestor(b, a))
      assert.is_false(repo:is_ancestor(b, side))
      assert.is_false(repo:is_ancestor(unrelated, m))
      -- agrees with git
      local ok = os.execute("git --git-dir=" .. g.quote(repo:path()) .. " merge-base --is-ancestor " .. side .. " " .. m)
      assert.is_true(ok)
    end)

    it("refuses inexact or missing commits on either side", function()
      local a = g.commit(repo, { f = "a" }, nil, "refs/heads/main")
      assert.equal("not-an-exact-commit", select(3, repo:is_ancestor("main", a)))
      assert.equal("not-an-exact-commit", select(3, repo:is_ancestor(a, ("2"):rep(40))))
      assert.equal("not-an-exact-commit", select(3, repo:is_ancestor(a, a:sub(1, 12))))
    end)

    it("reports a history with a missing parent as an error, not an answer", function()
      local a = g.commit(repo, { f = "a" })
      local b = g.commit(repo, { f = "b" }, { a })
      local other = g.commit(repo, { f = "o" })
      assert(os.remove(g.loose_path(repo, a)))
      local r <close> = assert(git.open(dir .. "/repo"))
      local ok, msg, code = r:is_ancestor(other, b)
      assert.is_nil(ok)
      assert.equal("corrupt-object", code)
      assert.is_string(msg)
    end)
  end)

  describe("read", function()
    local c
    before_each(function()
      local sub = assert(repo:commit_tree { tree = assert(repo:write_tree { { path = "x", bytes = "x" } }) })
      c = g.commit(repo, {
        { path = "a.txt", bytes = "alpha\n" },
        { path = "bin/run", bytes = "#!/bin/sh\n", mode = "100755" },
        { path = "dir/deep/file", bytes = ("z"):rep(5000) },
        { path = "link", bytes = "a.txt", mode = "120000" },
        { path = "mod", blob = sub, mode = "160000" },
      })
    end)

    it("returns bytes, mode, blob id and size of a regular file at the commit", function()
      local f = assert(repo:read(c, "a.txt", 100))
      assert.same({ bytes = "alpha\n", mode = "100644", blob = g.git(repo, "rev-parse " .. c .. ":a.txt"):sub(1, 40), size = 6 }, f)
      assert.equal("100755", repo:read(c, "bin/run", 100).mode)
      assert.equal(5000, #repo:read(c, "dir/deep/file", 5000).bytes)
    end)

    it("names each thing that is not a readable file", function()
      local cases = {
        { "dir", "not-a-file" }, { "dir/deep", "not-a-file" }, { "link", "symlink" }, { "mod", "submodule" },
        { "nope", "missing-path" }, { "dir/nope", "missing-path" }, { "a.txt/x", "missing-path" },
        { "dir/deep/file", "too-large", 4999 },
        { "../a.txt", "invalid-path" }, { "/a.txt", "invalid-path" }, { "dir//deep/file", "invalid-path" },
        { "dir/", "invalid-path" }, { "", "invalid-path" }, { ".git/config", "invalid-path" },
        { "a.txt\0", "invalid-path" }, { "dir\\deep", "invalid-path" }, { "./a.txt", "invalid-path" },
      }
      for _, case in ipairs(cases) do
        local ok, msg, code = repo:read(c, case[1], case[3] or 1000000)
        assert.is_nil(ok, case[1])
        assert.equal(case[2], code, case[1])
        assert.is_string(msg)
      end
      assert.equal("not-an-exact-commit", select(3, repo:read("HEAD", "a.txt", 10)))
      assert.has_error(function() repo:read(c, "a.txt", -1) end)
    end)

    it("refuses an oversize blob from its header, without inflating it", function()
      -- A 300 KB incompressible blob whose loose file is cut in half: the
      -- header still says 300,000 bytes, the body cannot be read.
      local bytes = {}
      local x = 7
      for i = 1, 300000 do
        x = (x * 1103515245 + 12345) % 2147483648
        bytes[i] = string.char(x >> 16 & 255)
      end
      local big = table.concat(bytes)
      local c2 = g.commit(repo, { big = big })
      local blob = repo:read(c2, "big", 300000).blob
      local path = g.loose_path(repo, blob)
      local whole = t.slurp(path)
      g.overwrite_object(repo, blob, whole:sub(1, #whole // 2))
      local r <close> = assert(git.open(dir .. "/repo"))
      local ok, msg, code = r:read(c2, "big", 1000)
      assert.is_nil(ok)
      assert.equal("too-large", code)
      assert.matches("300000 bytes", msg)
      assert.equal("corrupt-object", select(3, r:read(c2, "big", 300000)))
    end)
  end)

  describe("tree", function()
    it("lists every file, link and submodule recursively, sorted by path bytes", function()
      local sub = assert(repo:commit_tree { tree = assert(repo:write_tree { { path = "x", bytes = "x" } }) })
      local c = g.commit(repo, {
        { path = "a/b", bytes = "1" }, { path = "a-b", bytes = "22" }, { path = "a0", bytes = "333" },
        { path = "z/y/x.sh", bytes = "#!", mode = "100755" }, { path = "a/l", bytes = "b", mode = "120000" },
        { path = "m", blob = sub, mode = "160000" },
      })
      local listing = assert(repo:tree(c))
      local got = {}
      for _, e in ipairs(listing) do got[#got + 1] = ("%s %s %s"):format(e.path, e.mode, tostring(e.size)) end
      assert.same({ "a-b 100644 2", "a/b 100644 1", "a/l 120000 1", "a0 100644 3", "m 160000 nil",
        "z/y/x.sh 100755 2" }, got)
      -- the same inventory as git ls-tree, blob ids included
      local want = {}
      for mode, id, path in g.git(repo, "ls-tree -r --full-tree " .. c):gmatch "(%d+) %a+ (%x+)\t([^\n]+)" do
        want[path] = mode .. " " .. id
      end
      for _, e in ipairs(listing) do
        assert.equal(want[e.path], e.mode .. " " .. e.blob)
        want[e.path] = nil
      end
      assert.same({}, want)
    end)

    it("lists under a prefix with full paths, and names a bad prefix", function()
      local c = g.commit(repo, { ["src/a.c"] = "a", ["src/lib/b.c"] = "b", ["README"] = "r" })
      local got = {}
      for _, e in ipairs(assert(repo:tree(c, "src"))) do got[#got + 1] = e.path end
      assert.same({ "src/a.c", "src/lib/b.c" }, got)
      assert.equal("missing-path", select(3, repo:tree(c, "nope")))
      assert.equal("not-a-tree", select(3, repo:tree(c, "README")))
      assert.equal("invalid-path", select(3, repo:tree(c, "src/../src")))
    end)

    it("encodes an empty listing as a JSON array", function()
      local empty = assert(repo:write_tree {})
      local c = assert(repo:commit_tree { tree = empty })
      assert.equal("[]", vkit.json.encode(assert(repo:tree(c))))
    end)

    it("stops at max_entries even when a tiny repository expands to a huge tree", function()
      -- ten names per level, all pointing at the same subtree: 10^6 files
      local blob = assert(repo:write_blob "x")
      local level = assert(repo:write_tree_raw { { name = "f", mode = "100644", oid = blob } })
      for _ = 1, 6 do
        local entries = {}
        for i = 0, 9 do entries[#entries + 1] = { name = "d" .. i, mode = "40000", oid = level } end
        level = assert(repo:write_tree_raw(entries))
      end
      local c = assert(repo:commit_tree { tree = level })
      local ok, msg, code = repo:tree(c, nil, { max_entries = 1000 })
      assert.is_nil(ok)
      assert.equal("too-many-entries", code)
      assert.matches("1000", msg)
    end)

    it("applies the file size limits from object headers", function()
      local c = g.commit(repo, { a = ("a"):rep(100), b = ("b"):rep(100) })
      assert.equal("too-large", select(3, repo:tree(c, nil, { max_file_bytes = 99 })))
      assert.equal("too-large", select(3, repo:tree(c, nil, { max_total_bytes = 199 })))
      assert.equal(2, #assert(repo:tree(c, nil, { max_file_bytes = 100, max_total_bytes = 200 })))
    end)
  end)

  describe("writer", function()
    it("writes blobs and nested trees with the ids git computes", function()
      local blob = assert(repo:write_blob "hello\n")
      assert.equal("ce013625030ba8dba906f756967f9e9ca394464a", blob)
      local tree = assert(repo:write_tree {
        { path = "a/b/c.txt", blob = blob }, { path = "a/x", bytes = "x", mode = "100755" },
        { path = "top", bytes = "t" },
      })
      assert.equal("040000 tree", g.git(repo, "ls-tree " .. tree .. " a"):sub(1, 11))
      assert.equal("hello\n", g.git(repo, "cat-file blob " .. tree .. ":a/b/c.txt"))
      assert.matches("^100755", g.git(repo, "ls-tree " .. tree .. " a/x"))
    end)

    it("refuses hostile or colliding paths and unknown modes (raising)", function()
      for _, entries in ipairs {
        { { path = "../x", bytes = "" } }, { { path = ".git/config", bytes = "" } }, { { path = "/abs", bytes = "" } },
        { { path = "a", bytes = "" }, { path = "a/b", bytes = "" } }, { { path = "a", bytes = "" }, { path = "a", bytes = "" } },
        { { path = "a", bytes = "", mode = "100664" } }, { { path = "a" } }, { { path = "a", bytes = "", blob = ("0"):rep(40) } },
      } do
        assert.has_error(function() repo:write_tree(entries) end)
      end
    end)

    it("write_tree_raw writes entries as given, for hostile fixtures", function()
      local blob = assert(repo:write_blob "x")
      local tree = assert(repo:write_tree_raw { { name = "z", mode = "100644", oid = blob }, { name = "..", mode = "100644", oid = blob } })
      local raw = g.git(repo, "cat-file tree " .. tree)
      assert.equal("100644 z\0", raw:sub(1, 9))
      assert.truthy(raw:find("100644 ..\0", 1, true))
    end)

    it("commit_tree requires an existing tree and parent commits", function()
      local blob = assert(repo:write_blob "x")
      assert.equal("write-failed", select(3, repo:commit_tree { tree = blob }))
      assert.equal("write-failed", select(3, repo:commit_tree { tree = ("3"):rep(40) }))
      local empty = assert(repo:write_tree {})
      assert.equal("write-failed", select(3, repo:commit_tree { tree = empty, parents = { blob } }))
      assert.has_error(function() repo:commit_tree { tree = "main" } end)
    end)

    it("sets references, HEAD, remotes; lists refs sorted", function()
      local a = g.commit(repo, { f = "a" })
      local b = g.commit(repo, { f = "b" }, { a })
      assert.equal("unborn-head", select(3, repo:head()))
      assert(repo:set_ref("refs/heads/main", b))
      assert(repo:set_ref("refs/remotes/origin/main", a))
      assert.equal(b, repo:head())
      assert(repo:set_ref("HEAD", a))
      assert.equal(a, repo:head())
      assert.same({ { name = "refs/heads/main", target = b }, { name = "refs/remotes/origin/main", target = a } }, repo:refs())
      assert.same({ { name = "refs/remotes/origin/main", target = a } }, repo:refs "refs/remotes/")
      assert.equal("missing-remote", select(3, repo:remote_url "origin"))
      assert(repo:set_remote("origin", "https://example.org/a.git"))
      assert.equal("https://example.org/a.git", repo:remote_url "origin")
      assert(repo:set_remote("origin", "https://example.org/b.git"))
      assert.equal("https://example.org/b.git", repo:remote_url "origin")
      assert.equal("https://example.org/b.git\n", g.git(repo, "remote get-url origin"))
      assert.has_error(function() repo:set_ref("refs/heads/x", "main") end)
    end)

    it("lists dirty paths of a working tree: modified, staged and untracked", function()
      local c = g.commit(repo, { tracked = "t\n", keep = "k\n" }, nil, "refs/heads/main")
      g.sh("cd " .. g.quote(dir .. "/repo") .. " && git reset -q --hard " .. c)
      assert.same({}, repo:dirty())
      t.write(dir .. "/repo/tracked", "changed\n")
      t.write(dir .. "/repo/new", "n\n")
      assert.same({ "new", "tracked" }, repo:dirty())
      local bare <close> = assert(git.init(dir .. "/b.git", { bare = true }))
      assert.equal("bare-repository", select(3, bare:dirty()))
    end)
  end)
end)
