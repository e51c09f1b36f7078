--- Running pinned processes: an argv vector (never a shell) from a pinned
-- executable, with a closed environment, a deadline, an output cap,
-- cancellation and a whole-tree kill.
--
-- A spec field that is not listed, or has the wrong type, raises (a limit
-- silently ignored would be worse than an error); data that cannot be
-- launched is a `launch-failed` result, never an error.  The guarantees and
-- every field and status are in `docs/proc.md`.
-- @module vkit.proc
local proc = require "vkit.proc"

local M = {}

--- Runs a process to its end (`spawn` then `wait`).
--
-- spec fields: `exe` (absolute path or an `Executable`, required), `argv`
-- (array of strings, `argv[1]` the child's `argv[0]`, required), `pins =
-- {exe_sha256, files = {{path, sha256}, ...}}` (re-hashed immediately before
-- launch; the executable at its held first instruction), `env` (the whole
-- environment, default empty), `cwd` (default `/`), `stdin` (bytes),
-- `deadline_ms` (default 60000), `grace_ms` (2000), `output_cap` (65536
-- bytes of stdout and stderr together), `rlimits = {cpu_seconds,
-- address_space_bytes, file_size_bytes, open_files}`, `sandbox = {read,
-- write, optional}` (Landlock), `cancel` (a `Canceller`), `cgroup`
-- (`"auto"`, `"required"`, `"off"`).  Defaults: `policies/proc.lua`.
-- @function run
-- @tparam table spec
-- @treturn table the result: `status` (`exited`, `signaled`, `timeout`,
-- `cancelled`, `output-capped`, `launch-failed`, `pin-mismatch`), `code`,
-- `signal`, `stdout`, `stderr`, `truncated`, `wall_ms`, `user_ms`, `sys_ms`,
-- `max_rss_kb`, `descendants_killed`, `descendants_surviving`, `exe_sha256`,
-- `sandbox`, `containment`, `pid`, and for refusals `error`, `message`,
-- `errno`, `pin = {path, expected, actual}`
M.run = proc.run

--- Starts a process; always returns a handle (a refused launch is a handle
-- whose `wait` returns at once).
-- @function spawn
-- @tparam table spec as for `run`
-- @treturn Process
M.spawn = proc.spawn

--- Opens an executable once, to hash it and later run exactly that
-- descriptor (`spec.exe = exe`); every launch still re-hashes it.
-- @function open_executable
-- @string path absolute
-- @treturn Executable
-- @return nil, message, code: `exe-not-absolute`, `exe-unavailable`,
-- `exe-not-regular-file`, `exe-is-script`, ...
M.open_executable = proc.open_executable

--- A cancellation token, shareable by many runs.
-- @function canceller
-- @tparam[opt] table opts `{signals = {"INT", "TERM"}}`: these signals trip
-- it too (`INT TERM HUP QUIT USR1 USR2`), until `disarm`
-- @treturn Canceller
M.canceller = proc.canceller

--- What this machine offers.
-- @function capabilities
-- @treturn table `{landlock_abi = n (0: none), cgroup = boolean, cgroup_reason = string|nil}`
M.capabilities = proc.capabilities

--- A running (or refused) process (`vkit.proc.spawn`).  `close`, `__close`
-- and `__gc` kill a run still going, with its whole tree, at once.
-- @type Process

--- Waits for the end.
-- @function Process:wait
-- @int[opt] timeout_ms return nil when still running after this long
-- @treturn table|nil the result (as `run`'s), the same table on every call

--- Cancels: SIGTERM now, SIGKILL to the tree after `grace_ms`.
-- @function Process:cancel
-- @treturn boolean true if it was running

--- The child's pid.
-- @function Process:pid
-- @treturn integer|nil nil for a refused launch

--- Kills a run still going (no grace) and reaps it.
-- @function Process:close
-- @treturn nil

--- An open executable (`vkit.proc.open_executable`).
-- @type Executable

--- SHA-256 of the open descriptor's bytes, now.
-- @function Executable:sha256
-- @treturn string
-- @return nil, message, code

--- The path it was opened at.
-- @function Executable:path
-- @treturn string

--- Closes the descriptor.
-- @function Executable:close
-- @treturn nil

--- A cancellation token (`vkit.proc.canceller`).
-- @type Canceller

--- Trips the token: every run holding it is cancelled at its owner's next `wait`.
-- @function Canceller:cancel
-- @treturn nil

--- Whether the token was tripped.
-- @function Canceller:cancelled
-- @treturn boolean

--- Makes signals trip the token.
-- @function Canceller:arm
-- @string ... signal names: `INT TERM HUP QUIT USR1 USR2`
-- @treturn nil

--- Restores the signals' previous dispositions (also `__close`, `__gc`).
-- @function Canceller:disarm
-- @treturn nil

return M
