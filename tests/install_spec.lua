-- `make install PREFIX=...` yields a vkit that finds its library there.
local vkit = require "vkit"
local t = require "tests.support.run"

describe("make install", function()
  it("installs a binary that runs scripts from any directory, with its shared modules", function()
    local prefix, cleanup = t.tempdir()
    local ok = os.execute(("make -s -C %s install PREFIX=%s >/dev/null 2>&1"):format(t.quote(vkit.root), t.quote(prefix)))
    assert.is_true(ok)
    local installed = prefix .. "/bin/vkit"
    assert.equal("file", vkit.fs.lstat(installed).kind)
    assert.equal("dir", vkit.fs.lstat(prefix .. "/share/vkit/lua/vkit").kind)
    assert.equal("file", vkit.fs.lstat(prefix .. "/share/vkit/policies/limits.lua").kind)
    for _, name in ipairs(require("vkit.boot").shared) do
      assert.equal("file", vkit.fs.lstat(("%s/lib/vkit/vkit_%s.so"):format(prefix, name)).kind)
    end
    -- vkit.git from the installed object: a repository made and read back
    t.write(prefix .. "/s.lua", ([[
      print(vkit.root, vkit.policies.limits.paired.max_invocations)
      local repo = assert(vkit.git.init(%q))
      local blob = assert(repo:write_blob "installed\n")
      local tree = assert(repo:write_tree { { path = "f", mode = "100644", blob = blob } })
      local commit = assert(repo:commit_tree { tree = tree, message = "m\n", parents = {},
        author = { name = "a", email = "a@b", time = 0, offset = 0 } })
      print(repo:read(commit, "f", 100).bytes == "installed\n", vkit.versions.libgit2:match "^1%%.%%d+%%.%%d+$" ~= nil)
    ]]):format(prefix .. "/repo"))
    local out = io.popen(("cd / && %s script %s 2>&1"):format(t.quote(installed), t.quote(prefix .. "/s.lua"))):read "a"
    cleanup()
    assert.equal(prefix .. "/share/vkit\t128\ntrue\ttrue\n", out)
  end)
end)
