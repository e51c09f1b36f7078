-- vkit.proc against hostile processes (issue 3): each bullet is a real
-- process that tries to outlive, flood, hang or fool the supervisor.  Tests
-- of containment run twice: with a per-run cgroup (when this machine has a
-- writable one) and with the process tree alone (cgroup = "off").
local vkit = require "vkit"
local t = require "tests.support.run"
local hostile = require "tests.support.hostile.helpers"
local proc = vkit.proc

local caps = proc.capabilities()
local modes = { "off" }
if caps.cgroup then table.insert(modes, 1, "required") end

-- The pattern flood.c writes: byte i is 'a' + i % 26.
local function pattern(n)
  local alphabet = "abcdefghijklmnopqrstuvwxyz"
  local s = alphabet:rep(n // 26 + 1)
  return s:sub(1, n)
end

-- Double-forks a daemon that leaves the session, holds no pipe of ours and
-- sleeps forever; it writes its pid to argv[1] and the parent returns once
-- the pid is there.
local DAEMON = [[
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2): os.close(fd)
        with open(sys.argv[1] + ".tmp", "w") as f: f.write("%d\n" % os.getpid())
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        while True: time.sleep(1)
    os._exit(0)
while not os.path.exists(sys.argv[1]): time.sleep(0.01)
]]

describe("vkit.proc against hostile processes", function()
  local ws = hostile.workspace(setup, teardown)
  local dir, bin
  setup(function() dir, bin = ws.dir, ws.bin end)
  after_each(function()
    -- whatever a test did, no child of ours survives it, zombie or alive
    assert.same({}, hostile.leftovers())
  end)

  local function py(code, extra) return hostile.spec(hostile.python, { "python3", "-c", code }, extra) end

  it("kills a process that ignores SIGTERM once grace_ms has passed", function()
    -- sigwrap ignores SIGTERM from its first instructions, and sleep
    -- inherits that across exec: the deadline's TERM does nothing.
    local r = proc.run { exe = bin.sigwrap, argv = { "sigwrap", "/bin/sleep", "30" }, deadline_ms = 300, grace_ms = 300 }
    assert.equal("timeout", r.status)
    assert.equal(9, r.signal)
    assert.is_true(r.wall_ms >= 600, "wall " .. r.wall_ms)
    assert.is_true(r.wall_ms < 10000, "wall " .. r.wall_ms) -- not sleep's 30 s
  end)

  it("lets a process that handles SIGTERM exit within grace_ms", function()
    local ready = dir .. "/term.ready"
    local h <close> = proc.spawn(py(([[
import signal, sys, time
def bye(*_):
    print("bye", flush=True)
    sys.exit(3)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
open(%q, "w").close()
while True: time.sleep(1)
]]):format(ready), { grace_ms = 10000 }))
    assert.is_true(hostile.wait_file(ready, 20)) -- the handler is in place
    h:cancel()
    local r = h:wait()
    assert.equal("cancelled", r.status)
    assert.equal(3, r.code)
    assert.equal("ready\nbye\n", r.stdout)
  end)

  for _, mode in ipairs(modes) do
    describe("with cgroup = " .. mode, function()
      it("leaves no double-forked setsid daemon behind", function()
        local pidfile = ("%s/daemon-%s.pid"):format(dir, mode)
        local spec = py(DAEMON, { cgroup = mode })
        table.insert(spec.argv, pidfile)
        local r = proc.run(spec)
        assert.equal("exited", r.status, r.stderr)
        local pid = assert(hostile.read(pidfile)):match "%d+"
        assert.is_false(hostile.exists(pid), "daemon " .. pid .. " survived")
        assert.is_true(r.descendants_killed >= 1)
        assert.equal(0, r.descendants_surviving)
        assert.equal(mode == "off" and "process-tree" or "cgroup", r.containment)
      end)

      it("reaps a fork storm of a few hundred short-lived children", function()
        -- 300 children the parent never waits for, then 300 orphans.
        local r = proc.run(py([[
import os
for _ in range(300):
    if os.fork() == 0: os._exit(0)
for i in range(300):
    if os.fork() == 0:
        if os.fork() == 0:
            import time; time.sleep(0.001 * (i % 20)); os._exit(0)
        os._exit(0)
print("forked", flush=True)
]], { cgroup = mode, deadline_ms = 60000 }))
        assert.equal("exited", r.status, r.stderr)
        assert.equal("forked\n", r.stdout)
        assert.same({}, hostile.leftovers())
      end)

      it("does not hang on a grandchild that keeps the output pipe open", function()
        local t0 = vkit.sys.monotonic_ms()
        local r = proc.run { exe = hostile.sh, argv = { "sh", "-c", "sleep 30 & echo started" }, cgroup = mode,
          deadline_ms = 60000 }
        assert.equal("exited", r.status)
        assert.equal(0, r.code)
        assert.equal("started\n", r.stdout)
        assert.is_true(r.descendants_killed >= 1)
        assert.is_true(vkit.sys.monotonic_ms() - t0 < 10000) -- no wait for sleep's 30 s
      end)
    end)
  end

  -- With a cgroup per run, a daemon is attributed to its own run exactly.
  -- Without one, a daemon that left its session after its parent died can
  -- be told apart from another live run's only by elimination: it is
  -- killed at the latest when the last overlapping run ends.
  for _, mode in ipairs(modes) do
    it("with cgroup = " .. mode .. ", kills an overlapping run's daemon no later than that run's end", function()
      local two_pid, one_pid = ("%s/two-%s.pid"):format(dir, mode), ("%s/one-%s.pid"):format(dir, mode)
      local spec2 = py(DAEMON .. "time.sleep(30)\n", { cgroup = mode })
      table.insert(spec2.argv, two_pid)
      local h2 <close> = proc.spawn(spec2)
      local two = hostile.wait_line(two_pid, 10)
      local spec1 = py(DAEMON, { cgroup = mode })
      table.insert(spec1.argv, one_pid)
      local r1 = proc.run(spec1)
      local one = hostile.read(one_pid):match "%d+"
      assert.equal("exited", r1.status)
      assert.is_true(hostile.exists(two), "the other run's daemon was killed")
      if mode ~= "off" then assert.is_false(hostile.exists(one)) end
      h2:close()
      assert.is_false(hostile.exists(two))
      assert.is_false(hostile.exists(one))
    end)
  end

  describe("output floods", function()
    it("stops a 1 GiB stdout flood at the cap, keeping exactly the first cap bytes", function()
      local progress = dir .. "/progress"
      local cap = 64 * 1024
      local r = proc.run { exe = bin.flood, argv = { "flood", "out", tostring(1 << 30), progress },
        output_cap = cap, deadline_ms = 30000 }
      assert.equal("output-capped", r.status)
      assert.is_true(r.truncated)
      assert.equal(cap, #r.stdout)
      assert.is_true(r.stdout == pattern(cap))
      assert.equal("", r.stderr)
      assert.is_true(r.wall_ms < 10000, "wall " .. r.wall_ms) -- well before the deadline
      assert.equal(9, r.signal)
      -- the flood got at most the cap, one pipe buffer and one write further
      local written = tonumber(hostile.read(progress))
      assert.is_true(written <= cap + 65536 + 4096, "flood wrote " .. written)
    end)

    -- The race this guards: closing the pipes before the kill let the
    -- writer's next write fail with EPIPE and kill it with SIGPIPE (13)
    -- first, in about half the runs.  The supervisor sends SIGKILL first:
    -- the writer is then already dying of it when the pipe closes, and a
    -- dying process takes no other signal.  Twenty floods make a regression
    -- all but certain to show.
    it("kills every capped writer with SIGKILL, before its pipe closes (20 floods)", function()
      for i = 1, 20 do
        local r = proc.run { exe = bin.flood, argv = { "flood", "out", tostring(1 << 30) }, output_cap = 4096 }
        assert.equal("output-capped", r.status)
        assert.equal(9, r.signal, ("flood %d died of signal %s"):format(i, tostring(r.signal)))
      end
    end)

    it("caps stderr the same way", function()
      local r = proc.run { exe = bin.flood, argv = { "flood", "err", tostring(1 << 30) }, output_cap = 10000 }
      assert.equal("output-capped", r.status)
      assert.equal("", r.stdout)
      assert.is_true(r.stderr == pattern(10000))
    end)

    it("counts stdout and stderr together", function()
      local r = proc.run { exe = bin.flood, argv = { "flood", "both", tostring(1 << 30) }, output_cap = 100000 }
      assert.equal("output-capped", r.status)
      assert.equal(100000, #r.stdout + #r.stderr)
      assert.is_true(#r.stdout > 0 and #r.stderr > 0)
    end)

    it("allows exactly the cap and refuses one byte more", function()
      local r = proc.run { exe = bin.flood, argv = { "flood", "out", "5000" }, output_cap = 5000 }
      assert.equal("exited", r.status)
      assert.is_false(r.truncated)
      assert.equal(5000, #r.stdout)
      r = proc.run { exe = bin.flood, argv = { "flood", "out", "5001" }, output_cap = 5000 }
      assert.equal("output-capped", r.status)
      assert.is_true(r.stdout == pattern(5000))
      r = proc.run { exe = "/bin/echo", argv = { "echo", "x" }, output_cap = 0 }
      assert.equal("output-capped", r.status)
      assert.equal("", r.stdout)
    end)
  end)

  it("times out a process that closes stdout and stays alive", function()
    local r = proc.run { exe = hostile.sh, argv = { "sh", "-c", "exec >&- 2>&-; sleep 30" }, deadline_ms = 400,
      grace_ms = 200 }
    assert.equal("timeout", r.status)
    assert.is_true(r.wall_ms >= 400 and r.wall_ms < 10000, "wall " .. r.wall_ms)
  end)

  describe("the bytes hashed are the bytes run", function()
    local sha_a, sha_b
    setup(function()
      sha_a = vkit.hash.file(bin.says_a)
      sha_b = vkit.hash.file(bin.says_b)
      assert.are_not.equal(sha_a, sha_b)
    end)

    local function install(name, from)
      local path = dir .. "/" .. name
      assert(vkit.fs.copy_file(from, path .. ".new", tonumber("755", 8)))
      assert(os.rename(path .. ".new", path))
      return path
    end

    -- Rewrites the file in place (same inode), as `cp` over it would.
    local function overwrite(path, from)
      local f = assert(io.open(path, "r+b"))
      f:write(hostile.read(from))
      f:close()
    end

    it("runs the opened bytes after the path is renamed over", function()
      local path = install("swap", bin.says_a)
      local exe <close> = assert(proc.open_executable(path))
      local pinned = exe:sha256()
      install("swap", bin.says_b)
      local r = proc.run { exe = exe, argv = { "says" }, pins = { exe_sha256 = pinned } }
      assert.equal("A\n", r.stdout)
      assert.equal(sha_a, r.exe_sha256)
      -- through the path, the new bytes are what a new launch finds: refused
      r = proc.run { exe = path, argv = { "says" }, pins = { exe_sha256 = pinned } }
      assert.equal("pin-mismatch", r.status)
      assert.same({ path = path, expected = sha_a, actual = sha_b }, r.pin)
      assert.equal("", r.stdout)
    end)

    it("refuses when the opened file is rewritten in place before the launch", function()
      local path = install("inplace", bin.says_a)
      local exe <close> = assert(proc.open_executable(path))
      local pinned = exe:sha256()
      overwrite(path, bin.says_b)
      local r = proc.run { exe = exe, argv = { "says" }, pins = { exe_sha256 = pinned } }
      assert.equal("pin-mismatch", r.status)
      assert.equal("exe-sha256-mismatch", r.error)
      assert.equal(sha_b, r.pin.actual)
      assert.equal("", r.stdout)
    end)

    it("cannot be rewritten while it runs", function()
      local path = install("busy", bin.says_a)
      local h <close> = proc.spawn { exe = path, argv = { "says", "linger" } }
      assert.is_nil(h:wait(100))
      local f, err = io.open(path, "r+b")
      assert.is_nil(f)
      assert.matches("Text file busy", err)
      assert.equal("A\n", h:wait().stdout)
    end)

    it("never runs other bytes while a writer keeps rewriting the file", function()
      local path = install("race", bin.says_a)
      local stop = dir .. "/race.stop"
      local writer = dir .. "/writer.py"
      t.write(writer, ([[
import os, sys, time
a, b = open(%q, "rb").read(), open(%q, "rb").read()
stop, end = %q, time.monotonic() + 60   # a bound even if the test dies
while not os.path.exists(stop) and os.path.exists(os.path.dirname(stop)) and time.monotonic() < end:
    for data in (b, a):
        try:
            with open(%q, "r+b") as f:
                f.write(data)
                f.truncate()
        except OSError:
            pass
]]):format(bin.says_a, bin.says_b, stop, path))
      os.execute(("%s %s >/dev/null 2>&1 &"):format(hostile.python, writer))
      finally(function() t.write(stop, "") end)
      local seen, pinned_log = {}, dir .. "/pinned.log"
      for _ = 1, 150 do
        -- pinned: A's bytes run, or nothing does (not even for a moment:
        -- every run that starts appends its word to the log)
        local r = proc.run { exe = path, argv = { "says", pinned_log }, pins = { exe_sha256 = sha_a } }
        seen[r.status .. ":" .. (r.error or r.stdout)] = true
        assert.is_true(r.stdout == "" or r.stdout == "A\n", "other bytes ran: " .. r.stdout)
        if r.status == "exited" then assert.equal(sha_a, r.exe_sha256) end
        -- unpinned: whatever ran is what the result names
        r = proc.run { exe = path, argv = { "says" } }
        if r.stdout == "A\n" then assert.equal(sha_a, r.exe_sha256) end
        if r.stdout == "B\n" then assert.equal(sha_b, r.exe_sha256) end
        seen["unpinned:" .. r.stdout] = true
      end
      assert.is_nil((hostile.read(pinned_log) or ""):find "B", "B's bytes started under an A pin")
      if os.getenv "VKIT_SHOW_RACE" then for k in pairs(seen) do io.stderr:write(k, "\n") end end
      assert.is_true(seen["exited:A\n"] ~= nil)
    end)
  end)

  describe("the Landlock sandbox", function()
    local abi = caps.landlock_abi
    local maybe = abi > 0 and it or pending

    maybe("confines writes to the declared directories", function()
      local inside = dir .. "/evidence"
      assert(vkit.fs.mkdirs(inside))
      local outside = dir .. "/outside"
      local r = proc.run { exe = hostile.sh, argv = { "sh", "-c",
        ("echo in > %s/ok && echo done; echo out > %s"):format(inside, outside) },
        sandbox = { write = { inside } } }
      assert.equal(("landlock-abi-%d"):format(abi), r.sandbox)
      assert.equal("done\n", r.stdout)
      assert.matches("Permission denied", r.stderr)
      assert.are_not.equal(0, r.code)
      assert.equal("in\n", hostile.read(inside .. "/ok"))
      assert.is_nil(hostile.read(outside))
      -- renames inside the directory still work (REFER is granted there)
      r = proc.run { exe = "/bin/mv", argv = { "mv", inside .. "/ok", inside .. "/moved" },
        sandbox = { write = { inside } } }
      assert.equal(0, r.code, r.stderr)
    end)

    maybe("confines reads when a read list is given", function()
      t.write(dir .. "/secret", "s")
      local r = proc.run { exe = "/bin/cat", argv = { "cat", "/etc/hostname", dir .. "/secret" },
        sandbox = { read = { "/usr", "/lib", "/etc/hostname" }, write = {} } }
      assert.are_not.equal(0, r.code)
      assert.equal(hostile.read "/etc/hostname", r.stdout)
      assert.matches("Permission denied", r.stderr)
    end)

    local scoped = abi >= 6 and it or pending
    scoped("keeps a sandboxed child from signalling vkit (ABI 6 signal scope)", function()
      local probe = ("kill -0 %d && echo reachable"):format(vkit.sys.pid())
      assert.equal("reachable\n", proc.run { exe = hostile.sh, argv = { "sh", "-c", probe } }.stdout)
      local r = proc.run { exe = hostile.sh, argv = { "sh", "-c", probe }, sandbox = { write = {} } }
      assert.equal("", r.stdout)
      assert.matches("not permitted", r.stderr)
    end)

    maybe("refuses a sandbox path that does not exist", function()
      local r = proc.run { exe = "/bin/true", argv = { "true" }, sandbox = { write = { dir .. "/absent" } } }
      assert.equal("launch-failed", r.status)
      assert.equal("sandbox-path-unavailable", r.error)
    end)

    it("claims no sandbox it did not apply", function()
      local r = proc.run { exe = "/bin/true", argv = { "true" } }
      assert.equal("none", r.sandbox)
    end)
  end)
end)
