--- Helpers for the vkit.proc specs: hostile programs compiled from the C
--  sources beside this file, and facts about processes read from /proc.
local vkit = require "vkit"
local t = require "tests.support.run"

local M = {}

M.python = "/usr/bin/python3" -- never a pyenv shim: the real interpreter
M.sh = "/bin/sh"

local here = vkit.root .. "/tests/support/hostile/"

--- Compiles every helper into dir; returns {name = path}.
function M.build(dir)
  local built = {}
  local function cc(name, source, flags)
    local out = dir .. "/" .. name
    local cmd = ("gcc -O1 -o '%s' %s '%s' 2>&1"):format(out, flags or "", here .. source)
    local log = io.popen(cmd):read "a"
    assert(vkit.fs.lstat(out), "cannot compile " .. source .. ": " .. log)
    built[name] = out
  end
  cc("introspect", "introspect.c")
  cc("sigwrap", "sigwrap.c")
  cc("flood", "flood.c")
  cc("says_a", "says.c", [[-DWORD='"A"']])
  cc("says_b", "says.c", [[-DWORD='"B"']])
  cc("chain", "chain.c")
  return built
end

--- For a describe block: a temporary directory with the helpers built in
--  it, made before its tests and removed after them (Busted's setup and
--  teardown are passed in: they exist only in a spec's environment).  The
--  returned table holds `dir` and `bin` once the block runs.
function M.workspace(setup, teardown)
  local ws = {}
  setup(function()
    local cleanup
    ws.dir, cleanup = t.tempdir()
    ws.bin = M.build(ws.dir)
    ws.cleanup = cleanup
  end)
  teardown(function() ws.cleanup() end)
  return ws
end

--- A spec running exe with argv, plus the fields in extra.
function M.spec(exe, argv, extra)
  local spec = { exe = exe, argv = argv }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return spec
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read "a"
  f:close()
  return s
end
M.read = read

--- Whether a process with this pid exists at all (a zombie counts).
function M.exists(pid) return read("/proc/" .. pid .. "/stat") ~= nil end

--- State letter and session of pid, or nil when it does not exist.
function M.stat(pid)
  local s = read("/proc/" .. pid .. "/stat")
  if not s then return nil end
  local state, _, _, sid = s:match "%) (%a) (%d+) (%d+) (%d+)"
  return state, tonumber(sid)
end

--- Whether pid lives: it exists and is neither a zombie nor dead.  A
--  process just started may be running (R) or waiting on disk (D), not
--  yet asleep, so "alive" is never "state S".
function M.alive(pid)
  local state = M.stat(pid)
  return state ~= nil and state ~= "Z" and state ~= "X"
end

--- Children of this vkit process that a run left behind: every child not
--  in our own session (io.popen's children are), zombie or alive.
function M.leftovers()
  local own_sid = select(2, M.stat(vkit.sys.pid()))
  local found = {}
  for _, e in ipairs(assert(vkit.fs.list "/proc/self/task")) do
    local kids = read("/proc/self/task/" .. e .. "/children") or ""
    for pid in kids:gmatch "%d+" do
      local state, sid = M.stat(pid)
      if state and sid ~= own_sid then found[#found + 1] = pid .. ":" .. state end
    end
  end
  return found
end

--- Polls until check() returns a value, up to seconds; returns it or nil.
--  The bound separates "never" from "slowly": callers give generous ones.
local function poll(check, seconds)
  local deadline = vkit.sys.monotonic_ms() + seconds * 1000
  repeat
    local v = check()
    if v then return v end
    vkit.sys.sleep(0.01)
  until vkit.sys.monotonic_ms() > deadline
  return nil
end

M.poll = poll

--- Waits (up to seconds) until process pid ignores signal number sig: the
--  event a test waits for before sending it, since a program sets that up
--  itself after its first instructions.
function M.ignoring(pid, sig, seconds)
  return poll(function()
    local ign = (read("/proc/" .. pid .. "/status") or ""):match "SigIgn:%s*(%x+)"
    return ign and (tonumber(ign, 16) >> (sig - 1)) & 1 == 1
  end, seconds) or false
end

--- Pids of the processes named `name` (their comm, as a chain's links set
--  it), anywhere on the machine.
function M.named(name)
  local found = {}
  for _, e in ipairs(assert(vkit.fs.list "/proc")) do
    if e:match "^%d+$" then
      local s = read("/proc/" .. e .. "/stat")
      local comm, state = s and s:match "^%d+ %((.-)%) (%a)"
      if comm == name and state ~= "Z" then found[#found + 1] = e end
    end
  end
  return found
end

--- Zombies of a run's tree that nobody has reaped: those whose parent is
--  this vkit process or one of its children (a keeper), outside vkit's own
--  session (an io.popen child never closed is a zombie of vkit too, but
--  pclose's business).
function M.unreaped()
  local me, own_sid, parents, found = tostring(vkit.sys.pid()), select(2, M.stat(vkit.sys.pid())), {}, {}
  parents[me] = true
  local function stat_of(e)
    local s = e:match "^%d+$" and read("/proc/" .. e .. "/stat")
    local state, ppid, sid = (s or ""):match "%) (%a) (%d+) %d+ (%d+)"
    return state, ppid, tonumber(sid)
  end
  for _, e in ipairs(assert(vkit.fs.list "/proc")) do
    if select(2, stat_of(e)) == me then parents[e] = true end
  end
  for _, e in ipairs(assert(vkit.fs.list "/proc")) do
    local state, ppid, sid = stat_of(e)
    if state == "Z" and parents[ppid] and sid ~= own_sid then found[#found + 1] = e end
  end
  return found
end

--- The cgroup v2 mount vkit uses, or nil.
function M.cgroup_mount()
  for _, m in ipairs { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" } do
    if read(m .. "/cgroup.procs") and read(m .. "/cgroup.controllers") then return m end
  end
end

--- Polls until path holds a line, up to seconds; returns its first line.
function M.wait_line(path, seconds)
  return poll(function()
    local s = read(path)
    return s and s:find "\n" and s:match "^[^\n]*"
  end, seconds)
end

--- Polls until path exists, up to seconds; true when it does.
function M.wait_file(path, seconds)
  return poll(function() return read(path) ~= nil end, seconds) or false
end

return M
