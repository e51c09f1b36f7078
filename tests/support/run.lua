--- Test helpers: run the vkit binary under test as a real process.
local vkit = require "vkit"

local M = {}

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
M.quote = quote

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read "a"
  f:close()
  return s
end
M.slurp = slurp

function M.write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

--- Runs `vkit ARGS...` with optional stdin bytes; returns
--  {code, stdout, stderr}.  (Tests may use the shell; vkit itself never does.)
--- Variables every vkit process a spec starts gets (M.env = {NAME = value}
--  or nil): how the end-to-end specs run against another store backend
--  (tests/support/stores.lua sets VKIT_STORE and VKIT_CACHE).
M.env = nil

--- "env NAME=value ... " for a shell command line, or "".
function M.env_prefix()
  if not M.env then return "" end
  local parts = { "env" }
  for k, v in pairs(M.env) do parts[#parts + 1] = quote(k .. "=" .. v) end
  table.sort(parts, function(a, b) return a == "env" or (b ~= "env" and a < b) end)
  return table.concat(parts, " ") .. " "
end

function M.vkit(argv, stdin, opts)
  opts = opts or {}
  local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-test-")
  local parts = { M.env_prefix() .. quote(vkit.exe) }
  for _, a in ipairs(argv) do parts[#parts + 1] = quote(a) end
  M.write(dir .. "/in", stdin or "")
  local cmd = ("%s%s < %s > %s 2> %s"):format(opts.cd and ("cd " .. quote(opts.cd) .. " && ") or "",
    table.concat(parts, " "), quote(dir .. "/in"), quote(dir .. "/out"), quote(dir .. "/err"))
  local _, _, code = os.execute(cmd)
  local result = { code = code, stdout = slurp(dir .. "/out"), stderr = slurp(dir .. "/err") }
  vkit.fs.remove_tree(dir)
  return result
end

--- Runs `vkit ARGS...` with stdout on a real terminal (a pty from
--  script(1)); env is a prefix such as "NO_COLOR=1 ".  Returns what the
--  terminal showed.
function M.on_pty(env, argv)
  local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-test-")
  local parts = {}
  for _, a in ipairs(argv) do parts[#parts + 1] = quote(a) end
  local cmd = ("%s%s %s"):format(env or "", quote(vkit.exe), table.concat(parts, " "))
  os.execute(("script -q -e -c %s /dev/null > %s 2>&1 < /dev/null"):format(quote(cmd), quote(dir .. "/pty.out")))
  local out = slurp(dir .. "/pty.out")
  vkit.fs.remove_tree(dir)
  return out
end

--- A fresh temporary directory, removed by the returned function.
function M.tempdir()
  local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-test-")
  return dir, function() vkit.fs.remove_tree(dir) end
end

--- Waits (polling every 50 ms) until pred() is true or `seconds` have
--  passed; returns whether it became true.
function M.wait_for(pred, seconds)
  local deadline = vkit.sys.monotonic_ms() + seconds * 1000
  while vkit.sys.monotonic_ms() < deadline do
    if pred() then return true end
    vkit.sys.sleep(0.05)
  end
  return false
end

--- SIGKILLs every process whose command line contains `fragment` (taken
--  literally, unlike pkill's pattern).
function M.kill_matching(fragment)
  for _, pid in ipairs(vkit.fs.list "/proc" or {}) do
    if pid:match "^%d+$" and tonumber(pid) ~= vkit.sys.pid() then
      local f = io.open("/proc/" .. pid .. "/cmdline", "rb")
      local cmdline = f and f:read "a" or ""
      if f then f:close() end
      if cmdline:gsub("%z", " "):find(fragment, 1, true) then os.execute("kill -KILL " .. pid .. " 2>/dev/null") end
    end
  end
end

--- Kills the job-store workers serving the project in dir (a spec's runs
--  may leave one waiting), so the next spec starts from nothing.
function M.kill_workers(dir)
  os.execute("pkill -KILL -f " .. quote("run worker --project " .. dir) .. " 2>/dev/null")
end

return M
