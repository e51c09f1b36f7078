-- vkit.proc's isolation (spec.isolate, csrc/process_isolate.c) and
-- identity pins (spec.pins.identities): what a run in its own namespaces
-- and root can see, reach and write, and what refuses the launch.
local vkit = require "vkit"
local proc = require "vkit.proc"
local raw_fs = require "vkit.fs"
local t = require "tests.support.run"

local PY = "/usr/bin/python3.11"

-- A root for python: the system read-only, a fresh /tmp, a new /proc.
local function mounts(extra)
  local m = {
    { type = "bind", source = "/usr", target = "/usr", executable = true },
    { type = "symlink", target = "/lib", link = "usr/lib" },
    { type = "symlink", target = "/lib64", link = "usr/lib64" },
    { type = "bind", source = "/dev/null", target = "/dev/null", writable = true, devices = true },
    { type = "proc", target = "/proc" },
    { type = "tmpfs", target = "/tmp", size_bytes = 1 << 20, mode = tonumber("1777", 8) },
  }
  for _, e in ipairs(extra or {}) do m[#m + 1] = e end
  return m
end

local function python(code, isolate, more)
  local spec = { exe = PY, argv = { "python3.11", "-I", "-c", code }, env = {}, cwd = "/tmp", isolate = isolate,
                 sandbox = { write = { "/tmp", "/dev/null" } } }
  for k, v in pairs(more or {}) do spec[k] = v end
  return proc.run(spec)
end

describe("vkit.proc isolation", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("is available here (root, Linux with the mount API)", function()
    local caps = proc.capabilities()
    assert.is_true(caps.isolation, caps.isolation_reason)
  end)

  it("runs as PID 1 of its own namespaces, as the given uid, under its own host name, on a root of the listed mounts",
    function()
      local r = python([[
import os
print(os.getpid(), os.getppid(), os.getuid(), os.getgid(), os.getgroups(), os.uname().nodename)
print(sorted(os.listdir("/")))
print(sorted(p for p in os.listdir("/proc") if p.isdigit()))
print(os.readlink("/proc/self/exe"), os.getcwd())
]], { mounts = mounts(), uid = 65534, gid = 65534, hostname = "sandbox", exe = PY })
      assert.equal("exited", r.status, r.stderr)
      assert.equal(0, r.code, r.stderr)
      local lines = {}
      for l in r.stdout:gmatch "[^\n]+" do lines[#lines + 1] = l end
      assert.equal("1 0 65534 65534 [] sandbox", lines[1])
      assert.equal("['dev', 'lib', 'lib64', 'proc', 'tmp', 'usr']", lines[2])
      assert.equal("['1']", lines[3], "no process of the host is visible")
      assert.equal(PY .. " /tmp", lines[4])
      assert.equal("mount pid network ipc uts cgroup", r.isolation.namespaces)
      assert.equal(65534, r.isolation.uid)
      assert.equal("private", r.isolation.root)
    end)

  it("reaches no network: a listener on the host's loopback is not there", function()
    local server = assert(vkit.proc.spawn { exe = PY, argv = { "python3.11", "-I", "-c", ([[
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
open(%q, "w").write(str(s.getsockname()[1]))
c, _ = s.accept()
open(%q, "w").write("connected")
]]):format(dir .. "/port", dir .. "/connected") }, deadline_ms = 60000 })
    assert(t.wait_for(function() return vkit.fs.lstat(dir .. "/port") end, 30))
    local port = vkit.fs.read(dir .. "/port", 32)
    local r = python(([[
import socket, errno
for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "1.1.1.1")):
    s = socket.socket(family)
    print(errno.errorcode.get(s.connect_ex((host, %s)), "connected"))
]]):format(port), { mounts = mounts(), uid = 65534, gid = 65534 })
    server:close()
    assert.equal(0, r.code, r.stderr)
    assert.not_matches("connected", r.stdout)
    assert.is_nil(vkit.fs.lstat(dir .. "/connected"))
  end)

  it("writes only its tmpfs and the writable binds Landlock names; read-only binds and the root refuse", function()
    assert(vkit.fs.mkdirs(dir .. "/rw"))
    assert(vkit.fs.mkdirs(dir .. "/ro"))
    assert(vkit.fs.mkdirs(dir .. "/rw-unnamed"))
    assert(raw_fs.chown(dir .. "/rw", 65534, 65534))
    assert(raw_fs.chown(dir .. "/rw-unnamed", 65534, 65534))
    local r = python([[
import errno
for path in ("/tmp/a", "/out/a", "/in/a", "/other/a", "/a", "/usr/a"):
    try:
        open(path, "w").write("x")
        print(path, "written")
    except OSError as e:
        print(path, errno.errorcode[e.errno])
]], { mounts = mounts { { type = "bind", source = dir .. "/rw", target = "/out", writable = true },
                        { type = "bind", source = dir .. "/ro", target = "/in" },
                        { type = "bind", source = dir .. "/rw-unnamed", target = "/other", writable = true } },
      uid = 65534, gid = 65534 }, { sandbox = { write = { "/tmp", "/out", "/dev/null" } } })
    assert.equal(0, r.code, r.stderr)
    assert.matches("/tmp/a written", r.stdout, 1, true)
    assert.matches("/out/a written", r.stdout, 1, true)
    assert.matches("/in/a EROFS", r.stdout, 1, true)
    assert.matches("/other/a EACCES", r.stdout, 1, true)   -- Landlock: writable mount, no write rule
    assert.matches("/a EROFS", r.stdout, 1, true)
    assert.matches("/usr/a EROFS", r.stdout, 1, true)
    assert.equal("x", vkit.fs.read(dir .. "/rw/a", 10))
    assert.is_nil(vkit.fs.lstat(dir .. "/ro/a"))
    assert.is_nil(vkit.fs.lstat(dir .. "/rw-unnamed/a"))
  end)

  it("refuses a bind source that is a link, missing or relative, and a target that is not normalised", function()
    assert(vkit.fs.symlink("/usr", dir .. "/link"))
    for _, case in ipairs {
      { { type = "bind", source = dir .. "/link", target = "/x" }, "a symbolic link" },
      { { type = "bind", source = dir .. "/missing", target = "/x" }, "No such file" },
      { { type = "bind", source = "usr", target = "/x" }, "not an absolute path" },
      { { type = "tmpfs", target = "/x/../y", size_bytes = 4096 }, "normalised" },
      { { type = "tmpfs", target = "x", size_bytes = 4096 }, "normalised" },
    } do
      local r = python("print(1)", { mounts = mounts { case[1] } })
      assert.equal("launch-failed", r.status)
      assert.equal("isolation-path-unavailable", r.error)
      assert.matches(case[2], r.message, 1, true)
    end
  end)

  it("copies files into the root: readable, never naming their host directory, and an executable copy is hashed as it runs",
    function()
      assert(vkit.fs.mkdirs(dir .. "/secret-store/side"))
      t.write(dir .. "/secret-store/side/module.txt", "the module\n")
      local r = python([[
import os
print(open("/project/module.txt").read().strip(), oct(os.stat("/project/module.txt").st_mode & 0o777))
print("secret-store" in open("/proc/self/mountinfo").read())
]], { mounts = mounts { { type = "copy", source = dir .. "/secret-store/side/module.txt", target = "/project/module.txt" } },
      uid = 65534, gid = 65534 })
      assert.equal(0, r.code, r.stderr)
      assert.equal("the module 0o444\nFalse\n", r.stdout)
      -- the executable itself, copied: its running image is what the pin checks
      assert(raw_fs.copy_file("/usr/bin/true", dir .. "/secret-store/side/tool", tonumber("755", 8)))
      local sha = vkit.hash.file("/usr/bin/true")
      local function run(pin)
        return proc.run { exe = dir .. "/secret-store/side/tool", argv = { "/vkit/tool" }, env = {}, cwd = "/tmp",
                          pins = { exe_sha256 = pin },
                          isolate = { mounts = mounts { { type = "copy", source = dir .. "/secret-store/side/tool",
                                                          target = "/vkit/tool", executable = true } },
                                      uid = 65534, gid = 65534, exe = "/vkit/tool" } }
      end
      local ok = run(sha)
      assert.equal("exited", ok.status, ok.message)
      assert.equal(sha, ok.exe_sha256)
      local bad = run(("0"):rep(64))
      assert.equal("pin-mismatch", bad.status)
      assert.equal(sha, bad.pin.actual)
    end)

  it("denies the kernel keyrings, shared by every process of a uid, and the 32-bit system calls", function()
    local r = python([[
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for nr in (248, 249, 250):   # add_key, request_key, keyctl
    print(libc.syscall(nr, 0, 0, 0, 0, 0), os.strerror(ctypes.get_errno()))
]], { mounts = mounts(), uid = 65534, gid = 65534 })
    assert.equal(0, r.code, r.stderr)
    assert.equal(("-1 Operation not permitted\n"):rep(3), r.stdout)
    assert.equal("keyrings denied", r.isolation.syscalls)
  end)

  it("refuses an executable path in the root that is another file than the one hashed", function()
    local r = python("print(1)", { mounts = mounts(), exe = "/usr/bin/true" })
    assert.equal("launch-failed", r.status)
    assert.equal("isolation-failed", r.error)
    assert.matches("another file", r.message, 1, true)
  end)

  it("raises on misuse: a uid without a gid, an unknown mount type, a bind without a source", function()
    assert.has_error(function() python("1", { mounts = mounts(), uid = 1 }) end)
    assert.has_error(function() python("1", { mounts = { { type = "overlay", target = "/x" } } }) end)
    assert.has_error(function() python("1", { mounts = { { type = "bind", target = "/x" } } }) end)
    assert.has_error(function() python("1", { mounts = mounts(), nope = true }) end)
  end)

  it("isolates an ordinary user too, in a user namespace of its own", function()
    local script = dir .. "/as_nobody.lua"
    t.write(script, ([[
local r = require("vkit.proc").run { exe = %q, argv = { "python3.11", "-I", "-c", "import os; print(os.getpid(), sorted(os.listdir('/')))" },
  env = {}, cwd = "/tmp", isolate = { mounts = {
    { type = "bind", source = "/usr", target = "/usr", executable = true },
    { type = "symlink", target = "/lib", link = "usr/lib" },
    { type = "symlink", target = "/lib64", link = "usr/lib64" },
    { type = "tmpfs", target = "/tmp", size_bytes = 1 << 20 } } } }
io.write(r.status, " ", r.stdout, type(r.isolation) == "table" and r.isolation.namespaces or tostring(r.isolation))
]]):format(PY))
    -- a copy of this vkit that nobody can reach, wherever the checkout is:
    -- the executable beside the library (its root), no shared module needed
    local copy = dir .. "/vkit"
    assert(vkit.fs.mkdirs(copy))
    local name = vkit.exe:match "[^/]+$"
    assert(os.execute(("cp -r %s %s %s && cp %s %s && chmod -R a+rX %s"):format(t.quote(vkit.root .. "/lua"),
      t.quote(vkit.root .. "/policies"), t.quote(copy), t.quote(vkit.exe), t.quote(copy .. "/" .. name), t.quote(dir))))
    assert(vkit.fs.chmod(dir, tonumber("755", 8)))
    local f = assert(io.popen(("cd / && runuser -u nobody -- %s script %s 2>&1"):format(t.quote(copy .. "/" .. name),
      t.quote(script))))
    local out = f:read "a"
    f:close()
    assert.equal("exited 1 ['lib', 'lib64', 'tmp', 'usr']\nmount pid network ipc uts cgroup user", out)
  end)
end)

describe("vkit.proc identity pins", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("launch while every file keeps its identity, and refuse once one is written, renamed over or touched", function()
    local f = dir .. "/lib.bin"
    t.write(f, "bytes")
    local id = assert(proc.file_identity(f))
    assert.matches("^%d+:%d+:5:%d+:%d+$", id)
    local function run()
      return proc.run { exe = "/usr/bin/true", argv = { "true" }, pins = { identities = { { path = f, identity = id } } } }
    end
    assert.equal("exited", run().status)
    for _, change in ipairs {
      function() t.write(f, "bytes") end,                                  -- same bytes, written again
      function() t.write(dir .. "/other", "bytes"); assert(os.rename(dir .. "/other", f)) end,
      function() assert(vkit.fs.chmod(f, tonumber("600", 8))) end,         -- ctime moves
    } do
      id = assert(proc.file_identity(f))
      assert.equal("exited", run().status)
      change()
      local r = run()
      assert.equal("pin-mismatch", r.status)
      assert.equal("dependency-identity-changed", r.error)
      assert.equal(f, r.pin.path)
      assert.equal(id, r.pin.expected)
      assert.equal(assert(proc.file_identity(f)), r.pin.actual)
    end
    assert(os.remove(f))
    local r = run()
    assert.equal("dependency-identity-changed", r.error)
    assert.matches("No such file", r.message, 1, true)
  end)
end)
