-- vkit.proc: the API, results, refusals, pins and isolation, against real
-- processes.  The hostile bullets of issue 3 are in proc_hostile_spec.lua.
local vkit = require "vkit"
local t = require "tests.support.run"
local hostile = require "tests.support.hostile.helpers"
local proc = require "vkit.proc" -- the module itself (vkit.proc is its public face)

describe("vkit.proc", function()
  local ws = hostile.workspace(setup, teardown)
  local dir, bin
  setup(function() dir, bin = ws.dir, ws.bin end)

  local function sh(script, extra) return proc.run(hostile.spec(hostile.sh, { "sh", "-c", script }, extra)) end

  describe("results", function()
    it("reports an exit with every field", function()
      local r = proc.run { exe = "/bin/echo", argv = { "echo", "hello", "world" } }
      assert.equal("exited", r.status)
      assert.equal(0, r.code)
      assert.is_nil(r.signal)
      assert.equal("hello world\n", r.stdout)
      assert.equal("", r.stderr)
      assert.is_false(r.truncated)
      assert.equal(vkit.hash.file "/bin/echo", r.exe_sha256)
      for _, k in ipairs { "wall_ms", "user_ms", "sys_ms", "max_rss_kb", "descendants_killed", "pid" } do
        assert.equal("integer", math.type(r[k]), k)
      end
      assert.is_true(r.max_rss_kb > 0)
      assert.equal("none", r.sandbox)
      assert.equal(0, r.descendants_killed)
    end)

    it("reports exit codes and killing signals", function()
      local r = sh "echo out; echo err >&2; exit 7"
      assert.equal("exited", r.status)
      assert.equal(7, r.code)
      assert.equal("out\n", r.stdout)
      assert.equal("err\n", r.stderr)
      r = sh "kill -SEGV $$"
      assert.equal("signaled", r.status)
      assert.equal(11, r.signal)
      assert.is_nil(r.code)
    end)

    -- What vkit reports is the kernel's account of the process: user and
    -- system time together are at least the CPU time the process measured
    -- itself burning.  How they split is the host's (here
    -- time.process_time() is a system call, so the loop is mostly system
    -- time); one thread cannot use more CPU than its lifetime.
    it("measures CPU time and memory of the process", function()
      local r = proc.run { exe = hostile.python, argv = { "python3", "-c",
        "import time\nb = bytearray(64 << 20)\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass" } }
      assert.equal("exited", r.status, r.stderr)
      local cpu = r.user_ms + r.sys_ms
      assert.is_true(cpu >= 298, ("user_ms %d + sys_ms %d"):format(r.user_ms, r.sys_ms))
      assert.is_true(r.max_rss_kb >= 64 * 1024, "max_rss_kb " .. r.max_rss_kb)
      assert.is_true(r.wall_ms >= cpu - 2, ("wall_ms %d, cpu %d"):format(r.wall_ms, cpu))
    end)

    it("uses a per-run cgroup when one is writable, and says so", function()
      local caps = proc.capabilities()
      local r = proc.run { exe = "/bin/true", argv = { "true" } }
      assert.equal(caps.cgroup and "cgroup" or "best-effort", r.containment)
      -- without a cgroup: the run's keeper, which cannot promise as much
      assert.equal("best-effort", proc.run { exe = "/bin/true", argv = { "true" }, cgroup = "off" }.containment)
      if caps.cgroup then
        local self_cg = hostile.read "/proc/self/cgroup":match "0::([^\n]*)"
        local r2 = proc.run { exe = "/bin/cat", argv = { "cat", "/proc/self/cgroup" }, cgroup = "required" }
        local child_cg = r2.stdout:match "0::([^\n]*)"
        assert.equal("cgroup", r2.containment)
        assert.matches("/vkit%-" .. vkit.sys.pid() .. "/run%-%d+$", child_cg)
        assert.are_not.equal(self_cg, child_cg)
      end
    end)

    -- Linux kills every child cloned into a cgroup that cgroup.kill was
    -- ever written to (6.14..6.18 at least): runs after a killed run, and
    -- after someone else killed a pooled cgroup, must still start.
    local maybe = proc.capabilities().cgroup and it or pending
    maybe("starts normally after runs whose cgroup was killed", function()
      for _ = 1, 3 do
        assert.equal("timeout", sh("sleep 300 & sleep 300", { deadline_ms = 50, grace_ms = 0 }).status)
        local r = proc.run { exe = "/bin/echo", argv = { "echo", "ok" } }
        assert.equal("exited", r.status)
        assert.equal("ok\n", r.stdout)
      end
      local where = proc.run { exe = "/bin/cat", argv = { "cat", "/proc/self/cgroup" } }.stdout:match "0::([^\n]*)"
      t.write(hostile.cgroup_mount() .. where .. "/cgroup.kill", "1") -- behind vkit's back
      for _ = 1, 3 do
        local r = proc.run { exe = "/bin/echo", argv = { "echo", "ok" } }
        assert.equal("exited", r.status)
        assert.equal("ok\n", r.stdout)
        assert.equal("cgroup", r.containment)
      end
    end)
  end)

  describe("malformed specs raise", function()
    local cases = {
      { "not a table", "spec must be a table" },
      { { exe = "/bin/true" }, "argv is required" },
      { { argv = { "true" } }, "exe is required" },
      { { exe = "/bin/true", argv = "true" }, "argv must be an array" },
      { { exe = "/bin/true", argv = { "true", 5 } }, "argv must be an array" },
      { { exe = "/bin/true", argv = { "true" }, deadline = 5 }, 'unknown spec field "deadline"' },
      { { exe = "/bin/true", argv = { "true" }, deadline_ms = "5" }, "deadline_ms must be an integer" },
      { { exe = "/bin/true", argv = { "true" }, deadline_ms = -1 }, "deadline_ms must be an integer >= 0" },
      { { exe = "/bin/true", argv = { "true" }, output_cap = 1.5 }, "output_cap must be an integer" },
      { { exe = "/bin/true", argv = { "true" }, env = { A = 1 } }, "env must be a table mapping" },
      { { exe = "/bin/true", argv = { "true" }, cgroup = "yes" }, "cgroup must be" },
      { { exe = "/bin/true", argv = { "true" }, pins = { exe_sha256 = "ABC" } }, "exe_sha256 must be 64 lowercase hex" },
      { { exe = "/bin/true", argv = { "true" }, pins = { exe = "x" } }, "unknown field 'exe'" },
      { { exe = "/bin/true", argv = { "true" }, pins = { files = { x = {} } } }, "spec.pins.files must be an array" },
      { { exe = "/bin/true", argv = { "true" }, pins = { files = { { path = "/x" } } } }, "sha256 must be 64 lowercase hex" },
      { { exe = "/bin/true", argv = { "true" }, sandbox = { write = "/tmp" } }, "spec.sandbox.write must be a table" },
      { { exe = "/bin/true", argv = { "true" }, rlimits = { cpu = 1 } }, "unknown field 'cpu'" },
      { { exe = "/bin/true", argv = { "true" }, sandbox = { writes = {} } }, "unknown field 'writes'" },
      { { exe = "/bin/true", argv = { "true" }, cancel = io.stdout }, "cancel must be a token" },
      { { exe = 42, argv = { "true" } }, "spec.exe must be" },
    }
    for _, case in ipairs(cases) do
      it(case[2], function()
        local ok, err = pcall(proc.run, case[1])
        assert.is_false(ok)
        assert.matches(case[2], err, 1, true)
      end)
    end
  end)

  describe("refused launches are results", function()
    local function refused(spec, error_name)
      local r = proc.run(spec)
      assert.equal("launch-failed", r.status, r.message)
      assert.equal(error_name, r.error)
      assert.equal("string", type(r.message))
      assert.is_nil(r.exe_sha256)
      return r
    end

    it("names a missing, relative, non-executable, non-regular or script exe", function()
      local r = refused({ exe = dir .. "/missing", argv = { "x" } }, "exe-unavailable")
      assert.equal("ENOENT", r.errno)
      assert.matches(dir .. "/missing", r.message, 1, true)
      refused({ exe = "bin/true", argv = { "true" } }, "exe-not-absolute")
      refused({ exe = dir, argv = { "x" } }, "exe-not-regular-file")
      assert(vkit.fs.copy_file("/bin/true", dir .. "/noexec", tonumber("644", 8)))
      r = refused({ exe = dir .. "/noexec", argv = { "noexec" } }, "exe-not-executable")
      assert.equal("EACCES", r.errno)
      t.write(dir .. "/script", "#!/bin/sh\necho hi\n")
      assert(vkit.fs.chmod(dir .. "/script", tonumber("755", 8)))
      refused({ exe = dir .. "/script", argv = { "script" } }, "exe-is-script")
      t.write(dir .. "/garbage", ("\0"):rep(64))
      assert(vkit.fs.chmod(dir .. "/garbage", tonumber("755", 8)))
      r = refused({ exe = dir .. "/garbage", argv = { "garbage" } }, "exe-not-executable")
      assert.equal("ENOEXEC", r.errno)
    end)

    it("refuses an empty argv and NUL bytes that exec cannot pass", function()
      refused({ exe = "/bin/true", argv = {} }, "argv-empty")
      refused({ exe = "/bin/echo", argv = { "echo", "a\0b" } }, "argv-nul-byte")
      refused({ exe = "/bin/true", argv = { "true" }, env = { ["A=B"] = "x" } }, "env-invalid")
      refused({ exe = "/bin/true", argv = { "true" }, env = { A = "x\0y" } }, "env-invalid")
      refused({ exe = "/bin/true", argv = { "true" }, env = { [""] = "x" } }, "env-invalid")
    end)

    it("refuses a relative or missing working directory", function()
      refused({ exe = "/bin/true", argv = { "true" }, cwd = "tmp" }, "cwd-not-absolute")
      local r = refused({ exe = "/bin/true", argv = { "true" }, cwd = dir .. "/nowhere" }, "cwd-unavailable")
      assert.equal("ENOENT", r.errno)
    end)

    it("returns a handle whose wait answers at once", function()
      local h = proc.spawn { exe = "bin/true", argv = { "true" } }
      assert.is_nil(h:pid())
      assert.equal("launch-failed", h:wait(0).status)
      assert.is_false(h:cancel())
    end)
  end)

  describe("pins", function()
    local true_sha = vkit.hash.file "/bin/true"
    local zero = ("0"):rep(64)

    it("runs when the exe and every dependency match", function()
      t.write(dir .. "/dep", "code")
      local r = proc.run { exe = "/bin/true", argv = { "true" },
        pins = { exe_sha256 = true_sha, files = { { path = dir .. "/dep", sha256 = vkit.hash.sha256 "code" } } } }
      assert.equal("exited", r.status, r.message)
      assert.equal(true_sha, r.exe_sha256)
    end)

    it("refuses a wrong exe hash, naming path, expected and actual", function()
      local r = proc.run { exe = "/bin/true", argv = { "true" }, pins = { exe_sha256 = zero } }
      assert.equal("pin-mismatch", r.status)
      assert.equal("exe-sha256-mismatch", r.error)
      assert.same({ path = "/bin/true", expected = zero, actual = true_sha }, r.pin)
      assert.matches("/bin/true", r.message, 1, true)
      assert.matches(zero, r.message, 1, true)
      assert.matches(true_sha, r.message, 1, true)
      assert.is_nil(r.exe_sha256) -- nothing ran
    end)

    it("re-hashes dependencies at launch: a changed or missing one refuses", function()
      t.write(dir .. "/dep2", "v1")
      local pins = { files = { { path = dir .. "/dep2", sha256 = vkit.hash.sha256 "v1" } } }
      assert.equal("exited", proc.run { exe = "/bin/true", argv = { "true" }, pins = pins }.status)
      t.write(dir .. "/dep2", "v2")
      local r = proc.run { exe = "/bin/true", argv = { "true" }, pins = pins }
      assert.equal("pin-mismatch", r.status)
      assert.equal("dependency-sha256-mismatch", r.error)
      assert.same({ path = dir .. "/dep2", expected = vkit.hash.sha256 "v1", actual = vkit.hash.sha256 "v2" }, r.pin)
      os.remove(dir .. "/dep2")
      r = proc.run { exe = "/bin/true", argv = { "true" }, pins = pins }
      assert.equal("pin-mismatch", r.status)
      assert.equal("dependency-unreadable", r.error)
      assert.matches("No such file", r.message)
      r = proc.run { exe = "/bin/true", argv = { "true" }, pins = { files = { { path = "dep", sha256 = zero } } } }
      assert.equal("launch-failed", r.status)
      assert.equal("pin-path-not-absolute", r.error)
    end)
  end)

  describe("open executables", function()
    it("hashes once and runs the same descriptor", function()
      local exe <close> = assert(proc.open_executable "/bin/echo")
      assert.equal(vkit.hash.file "/bin/echo", exe:sha256())
      assert.equal("/bin/echo", exe:path())
      for i = 1, 3 do
        local r = proc.run { exe = exe, argv = { "echo", tostring(i) }, pins = { exe_sha256 = exe:sha256() } }
        assert.equal(tostring(i) .. "\n", r.stdout)
      end
    end)

    it("returns nil, message, code for what it cannot open", function()
      local ok, msg, code = proc.open_executable(dir .. "/none")
      assert.is_nil(ok)
      assert.equal("exe-unavailable", code)
      assert.matches("none", msg)
      assert.equal("exe-not-absolute", select(3, proc.open_executable "bin/true"))
    end)

    it("refuses a closed executable", function()
      local exe = assert(proc.open_executable "/bin/true")
      exe:close()
      assert.has_error(function() proc.run { exe = exe, argv = { "true" } } end)
    end)
  end)

  describe("nothing leaks in", function()
    local function introspect(extra)
      local r = proc.run(hostile.spec(bin.introspect, { "introspect" }, extra))
      assert.equal("exited", r.status, r.stderr)
      local facts = { env = {} }
      for k, v in r.stdout:gmatch "([%w_]+)=([^\n]*)" do
        if k == "env" then facts.env[#facts.env + 1] = v else facts[k] = v end
      end
      return facts
    end

    it("passes only fds 0-2, even ones opened without close-on-exec", function()
      local f = assert(io.open(dir .. "/held", "w")) -- fopen: not O_CLOEXEC
      local lock <close> = assert(vkit.fs.lock(dir .. "/lockfile"))
      local facts = introspect()
      f:close()
      assert.equal("0,1,2", facts.fds)
    end)

    it("gives exactly the environment in env, sorted, nothing inherited", function()
      assert.same({}, introspect().env)
      assert.same({ "A=1", "B=two words", "PATH=/nowhere" },
        introspect { env = { PATH = "/nowhere", B = "two words", A = "1" } }.env)
    end)

    it("makes the child a session and process-group leader with a clean signal state", function()
      local facts = introspect()
      assert.equal("1", facts.session_leader)
      assert.equal("1", facts.group_leader)
      assert.equal("0000000000000000", facts.sigblk)
      assert.equal("0000000000000000", facts.sigign)
    end)

    it("resets ignored and blocked signals that vkit itself inherited", function()
      -- vkit runs under a parent that ignores and blocks signals; the child
      -- of vkit must start clean anyway.
      local script = dir .. "/inherit.lua"
      t.write(script, ([[
        local r = require("vkit").proc.run { exe = %q, argv = { "introspect" } }
        io.write(r.stdout)
      ]]):format(bin.introspect))
      local out = io.popen(("%s %s script %s"):format(bin.sigwrap, vkit.exe, script)):read "a"
      local own = io.popen(("%s /bin/grep -E 'Sig(Blk|Ign)' /proc/self/status"):format(bin.sigwrap)):read "a"
      assert.matches("SigIgn:%s+0*[1-9a-f]", own) -- the wrapper really does pollute
      assert.matches("sigblk=0000000000000000", out, 1, true)
      assert.matches("sigign=0000000000000000", out, 1, true)
    end)

    it("starts in cwd, '/' by default", function()
      assert.equal("/\n", proc.run { exe = "/bin/pwd", argv = { "pwd" } }.stdout)
      assert.equal(dir .. "\n", proc.run { exe = "/bin/pwd", argv = { "pwd" }, cwd = dir }.stdout)
    end)
  end)

  describe("stdin", function()
    it("feeds bytes larger than a pipe buffer", function()
      local data = ("0123456789abcdef"):rep(64 * 1024) -- 1 MiB
      local r = proc.run { exe = "/bin/cat", argv = { "cat" }, stdin = data, output_cap = 2 * #data }
      assert.equal("exited", r.status)
      assert.is_true(r.stdout == data)
    end)

    it("gives end-of-file when there is none", function()
      assert.equal("0\n", proc.run { exe = "/usr/bin/wc", argv = { "wc", "-c" } }.stdout)
    end)

    it("survives a child that exits without reading", function()
      local r = proc.run { exe = "/bin/true", argv = { "true" }, stdin = ("x"):rep(4 << 20) }
      assert.equal("exited", r.status)
      assert.equal(0, r.code)
    end)
  end)

  describe("rlimits", function()
    it("applies CPU, file size, open files and address space limits", function()
      -- 1 s of CPU takes longer on a loaded machine; the deadline only
      -- separates a limit that was not applied from a slow one
      local r = proc.run { exe = hostile.python, argv = { "python3", "-c", "while True: pass" },
        rlimits = { cpu_seconds = 1 }, deadline_ms = 120000 }
      assert.equal("signaled", r.status)
      assert.equal(24, r.signal) -- SIGXCPU
      r = sh("head -c 100000 /dev/zero > big", { cwd = dir, rlimits = { file_size_bytes = 4096 } })
      assert.are_not.equal(0, r.code)
      assert.equal(4096, vkit.fs.lstat(dir .. "/big").size)
      r = proc.run { exe = hostile.python, argv = { "python3", "-c",
        "import os\nfds = [os.open('/dev/null', os.O_RDONLY) for _ in range(64)]" }, rlimits = { open_files = 16 } }
      assert.equal(1, r.code)
      assert.matches("Too many open files", r.stderr)
      r = proc.run { exe = hostile.python, argv = { "python3", "-c", "b = bytearray(512 << 20)" },
        rlimits = { address_space_bytes = 256 << 20 } }
      assert.equal(1, r.code)
      assert.matches("MemoryError", r.stderr)
    end)
  end)

  describe("handles", function()
    it("wait(timeout) returns nil while running, then the result", function()
      -- it runs until told to stop: nil from wait(50) does not depend on
      -- how soon this test gets to call it
      local go = dir .. "/wait.go"
      local h <close> = proc.spawn { exe = hostile.sh, argv = { "sh", "-c", ("while [ ! -e %s ]; do sleep 0.01; done"):format(go) } }
      assert.equal("integer", math.type(h:pid()))
      local t0 = vkit.sys.monotonic_ms()
      assert.is_nil(h:wait(50))
      assert.is_true(vkit.sys.monotonic_ms() - t0 >= 50)
      t.write(go, "")
      local r = h:wait()
      assert.equal("exited", r.status)
      assert.equal(r, h:wait(0)) -- the same result, kept
    end)

    it("close kills and reaps a running process and its tree", function()
      local pidfile = dir .. "/close.pid"
      local pid
      do
        local h <close> = proc.spawn { exe = hostile.sh, argv = { "sh", "-c", "sleep 300 & echo $! > " .. pidfile .. "; wait" } }
        pid = hostile.wait_line(pidfile, 60)
        assert.is_not_nil(pid)
        assert.is_true(hostile.exists(pid))
      end
      assert.is_false(hostile.exists(pid))
      assert.same({}, hostile.leftovers())
    end)

    -- The grandchild leaves its session: only the cgroup, or the keeper,
    -- can still find it once its run's group is killed.
    for _, mode in ipairs { "auto", "off" } do
      it("os.exit kills live runs and their trees and removes vkit's cgroups (cgroup = " .. mode .. ")", function()
        local pidfile = ("%s/exit-%s.pid"):format(dir, mode)
        local script = ("%s/exit-%s.lua"):format(dir, mode)
        t.write(script, ([[
          local vkit = require "vkit"
          local h = vkit.proc.spawn { exe = "/bin/sh", argv = { "sh", "-c", "setsid sleep 300 & echo $! > %s; wait" },
            cgroup = %q }
          -- a whole line: the file exists before echo has written to it
          local function line() local f = io.open(%q); local l = f and f:read "l"; if f then f:close() end; return l end
          while not line() do vkit.sys.sleep(0.01) end
          print(vkit.sys.pid())
          os.exit(0) -- no garbage collection: only the exit handler can clean up
        ]]):format(pidfile, mode, pidfile))
        proc.run { exe = "/bin/true", argv = { "true" } } -- we are a subreaper: orphans come back to us
        local f = io.popen(vkit.exe .. " script " .. script)
        local inner = f:read "a":match "%d+"
        f:close() -- waits for the inner vkit: its orphans are handed to us by then
        assert.is_not_nil(inner)
        local grandchild = hostile.wait_line(pidfile, 60)
        local state = hostile.stat(grandchild)
        assert.is_true(state == nil or state == "Z", "the grandchild survived os.exit")
        -- reaps it, and a keeper that has finished
        assert.is_truthy(hostile.poll(function()
          proc.run { exe = "/bin/true", argv = { "true" } }
          return not hostile.exists(grandchild) and #hostile.leftovers() == 0
        end, 60))
        for _, mount in ipairs { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" } do
          assert.is_nil(vkit.fs.lstat(mount .. "/vkit-" .. inner))
        end
      end)
    end

    it("garbage collection kills a forgotten process", function()
      local h = proc.spawn { exe = "/bin/sleep", argv = { "sleep", "30" } }
      local pid = h:pid()
      h = nil -- luacheck: ignore
      collectgarbage()
      collectgarbage()
      assert.is_false(hostile.exists(pid))
    end)
  end)

  describe("cancellation", function()
    it("a token cancelled from another coroutine ends a run between waits", function()
      local token = proc.canceller()
      local h <close> = proc.spawn { exe = "/bin/sleep", argv = { "sleep", "300" }, cancel = token, grace_ms = 200 }
      local waiter = coroutine.create(function()
        while true do
          local r = h:wait(20)
          if r then return r end
          coroutine.yield()
        end
      end)
      local other = coroutine.create(function()
        for _ = 1, 3 do coroutine.yield() end
        token:cancel()
      end)
      local r
      while not r do
        r = select(2, assert(coroutine.resume(waiter)))
        if coroutine.status(other) ~= "dead" then assert(coroutine.resume(other)) end
      end
      assert.equal("cancelled", r.status)
      assert.equal(15, r.signal)
      assert.is_true(token:cancelled())
      assert.is_true(r.wall_ms < 60000) -- not sleep's 300 s
    end)

    it("handle:cancel sends TERM, then KILL after grace_ms", function()
      -- TERM is sent once it is ignored (sigwrap, then sleep, which inherits
      -- that): no race with a program that has yet to set it up
      local h <close> = proc.spawn { exe = bin.sigwrap, argv = { "sigwrap", "/bin/sleep", "300" }, grace_ms = 200 }
      assert.is_true(hostile.ignoring(h:pid(), 15, 60))
      assert.is_true(h:cancel())
      local r = h:wait()
      assert.equal("cancelled", r.status)
      assert.equal(9, r.signal)
      assert.same({}, hostile.leftovers())
    end)

    it("a token armed for SIGTERM is tripped by a signal to vkit", function()
      local token = proc.canceller { signals = { "TERM" } }
      local r
      do
        local h <close> = proc.spawn { exe = "/bin/sleep", argv = { "sleep", "300" }, cancel = token, grace_ms = 100 }
        assert.is_nil(h:wait(50))
        os.execute("kill -TERM " .. vkit.sys.pid())
        r = h:wait()
      end
      token:disarm()
      assert.equal("cancelled", r.status)
      assert.is_true(token:cancelled())
      assert.is_true(r.wall_ms < 60000)
    end)

    it("a token cancelled before the launch ends the run at once", function()
      local token = proc.canceller()
      token:cancel()
      local r = proc.run { exe = "/bin/sleep", argv = { "sleep", "30" }, cancel = token, grace_ms = 0 }
      assert.equal("cancelled", r.status)
      assert.equal(9, r.signal)
    end)

    it("refuses signals it cannot catch", function()
      assert.has_error(function() proc.canceller { signals = { "KILL" } } end)
      assert.has_error(function() proc.canceller { signal = { "INT" } } end)
    end)
  end)
end)
