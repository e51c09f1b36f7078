-- `make install PREFIX=...` yields a vkit that finds its library there.
local vkit = require "vkit"
local t = require "tests.support.run"

describe("make install", function()
  it("installs a binary that runs scripts from any directory", function()
    local prefix, cleanup = t.tempdir()
    local ok = os.execute(("make -s -C %s install PREFIX=%s >/dev/null 2>&1"):format(t.quote(vkit.root), t.quote(prefix)))
    assert.is_true(ok)
    local installed = prefix .. "/bin/vkit"
    assert.equal("file", vkit.fs.lstat(installed).kind)
    assert.equal("dir", vkit.fs.lstat(prefix .. "/share/vkit/lua/vkit").kind)
    assert.equal("file", vkit.fs.lstat(prefix .. "/share/vkit/policies/limits.lua").kind)
    t.write(prefix .. "/s.lua", "print(vkit.root, vkit.policies.limits.paired.max_invocations)")
    local out = io.popen(("cd / && %s script %s"):format(t.quote(installed), t.quote(prefix .. "/s.lua"))):read "a"
    cleanup()
    assert.equal(prefix .. "/share/vkit\t128\n", out)
  end)
end)
