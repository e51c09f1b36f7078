--- vkit.proc: run a pinned executable as an argv vector with a closed
--  environment, a deadline, an output cap, cancellation and whole-tree kill.
--
--  This is the public face of the C primitive vkit.process: it checks the
--  spec strictly (a misspelt field or a wrong type raises, since a limit
--  silently ignored is worse than an error) and fills what the caller left
--  out from policies/proc.lua.  docs/proc.md describes the guarantees.
--
--    run(spec)             -> result
--    spawn(spec)           -> handle: wait([timeout_ms]), cancel(), pid(), close()
--    open_executable(path) -> exe (exe:sha256(), exe:path()) | nil, message, code
--    canceller([{signals = {"INT", "TERM"}}]) -> token
--    capabilities()        -> {landlock_abi =, cgroup =, cgroup_reason =,
--                              isolation =, isolation_reason =}
--    file_identity(path)   -> "dev:ino:size:mtime:ctime" | nil, message, code
--    reap_stale_cgroups()  -> {{path, owner_pid, killed, surviving, removed, error}, ...}
local process = require "vkit.process"
local policies = require "vkit.policy"

local M = {}

-- What each spec field may hold.  A checker returns true, or false and the
-- expectation to name in the error.
local function is_count(v) return math.type(v) == "integer" and v >= 0, "an integer >= 0" end
local function is_string(v) return type(v) == "string", "a string" end
local function is_table(v) return type(v) == "table", "a table" end
local function is_handle(v) return type(v) == "userdata", "a handle" end

local FIELDS = {
  argv = function(v)
    if type(v) ~= "table" then return false, "an array of strings" end
    for k, a in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > #v or type(a) ~= "string" then
        return false, "an array of strings"
      end
    end
    return true
  end,
  exe = function(v) return type(v) == "string" or type(v) == "userdata", "an absolute path or an open executable" end,
  env = function(v)
    if type(v) ~= "table" then return false, "a table of strings" end
    for k, s in pairs(v) do
      if type(k) ~= "string" or type(s) ~= "string" then return false, "a table mapping names to strings" end
    end
    return true
  end,
  cwd = is_string,
  stdin = is_string,
  deadline_ms = is_count,
  grace_ms = is_count,
  output_cap = is_count,
  pins = is_table,
  rlimits = is_table,
  sandbox = is_table,
  isolate = is_table,
  cancel = is_handle,
  cgroup = function(v) return v == "auto" or v == "off" or v == "required", '"auto", "off" or "required"' end,
}

-- Fields the caller may leave out, and where their value then comes from.
local DEFAULTED = { "deadline_ms", "grace_ms", "output_cap", "cwd", "cgroup" }

local function validate(spec)
  if type(spec) ~= "table" then error("vkit.proc: spec must be a table", 3) end
  for k, v in pairs(spec) do
    local check = FIELDS[k]
    if not check then error(("vkit.proc: unknown spec field %q"):format(tostring(k)), 3) end
    local ok, want = check(v)
    if not ok then error(("vkit.proc: spec.%s must be %s"):format(k, want), 3) end
  end
  if spec.argv == nil then error("vkit.proc: spec.argv is required", 3) end
  if spec.exe == nil then error("vkit.proc: spec.exe is required", 3) end
end

-- The primitive's spec: the caller's fields, every default made explicit.
local function complete(spec)
  local policy = policies.proc
  local full = {}
  for k, v in pairs(spec) do full[k] = v end
  for _, k in ipairs(DEFAULTED) do
    if full[k] == nil then full[k] = policy[k] end
  end
  full.env = full.env or {}
  full.kill_wait_ms = policy.kill_wait_ms
  full.reap_interval_ms = policy.reap_interval_ms
  return full
end

--- Starts the process; always returns a handle.  A launch that was refused
--  (launch-failed, pin-mismatch) is a handle whose wait() returns at once.
function M.spawn(spec)
  validate(spec)
  return process.spawn(complete(spec))
end

--- spawn + wait: the result table (docs/proc.md lists every field).
function M.run(spec)
  validate(spec)
  local handle <close> = process.spawn(complete(spec))
  return handle:wait()
end

--- Opens an executable once, to hash it (exe:sha256()) and later run
--  exactly those bytes (spec.exe = exe).
M.open_executable = process.open_executable

--- A cancel token: token:cancel() from any coroutine; with
--  {signals = {"INT", "TERM"}} a signal trips it too, until token:disarm().
function M.canceller(opts)
  local token = process.canceller()
  if opts ~= nil then
    if type(opts) ~= "table" then error("vkit.proc.canceller: options must be a table", 2) end
    for k in pairs(opts) do
      if k ~= "signals" then error(("vkit.proc.canceller: unknown option %q"):format(tostring(k)), 2) end
    end
    if opts.signals then token:arm(table.unpack(opts.signals)) end
  end
  return token
end

--- What this machine offers: the Landlock ABI (0: none), whether runs
--  get a cgroup and whether they can be isolated (namespaces and a root of
--  their own), and if not, why.
function M.capabilities()
  local cgroup, reason = process.cgroup_available()
  local isolation, isolation_reason = process.isolation_available()
  return { landlock_abi = process.landlock_abi(), cgroup = cgroup, cgroup_reason = reason, isolation = isolation,
           isolation_reason = isolation_reason }
end

--- A file's identity (device, inode, size, modification and change times
--  of the path itself): a pin (spec.pins.identities) that costs one lstat
--  where a hash reads every byte.
M.file_identity = process.file_identity

--- Kills what is left in the cgroups of vkit processes that are gone (a
--  vkit killed by SIGKILL leaves its vkit-<pid> cgroup and whatever its runs
--  left in it) and removes them: one record per cgroup found.  A cgroup whose
--  maker's pid now names another process counts as gone; a live maker's is
--  never touched.  Nothing is found where runs get no cgroup.
function M.reap_stale_cgroups()
  return process.reap_stale_cgroups(policies.proc.kill_wait_ms)
end

--- Runs a process to its end, stopping it (and its whole tree) when
--  cancelled() says so: spawn, then wait in steps of
--  policies/proc.lua's cancel_poll_ms, asking between steps.  A job's
--  handlers and the library's in-process certification both run their
--  processes through this.
function M.run_cancellable(spec, cancelled)
  local handle <close> = M.spawn(spec)
  while true do
    local result = handle:wait(policies.proc.cancel_poll_ms)
    if result then return result end
    if cancelled() then handle:cancel() end
  end
end

return M
