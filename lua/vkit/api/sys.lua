--- Clocks, sleeping, the process and the host.
-- @module vkit.sys
local sys = require "vkit.sys"

local M = {}

--- Milliseconds of the monotonic clock (never goes back; for durations).
-- @function monotonic_ms
-- @treturn integer
M.monotonic_ms = sys.monotonic_ms

--- Seconds since the epoch, with a fraction.
-- @function time
-- @treturn number
M.time = sys.time

--- Sleeps.
-- @function sleep
-- @number seconds
-- @treturn nil
M.sleep = sys.sleep

--- This process's id.
-- @function pid
-- @treturn integer
M.pid = sys.pid

--- The kernel's `uname`.
-- @function uname
-- @treturn table `{sysname, release, machine}`
M.uname = sys.uname

--- Whether a process id names a live process.
-- @function alive
-- @int pid
-- @treturn boolean
M.alive = sys.alive

--- Random bytes from the kernel, as hex.
-- @function random_hex
-- @int n bytes
-- @treturn string 2n lowercase hex digits
M.random_hex = sys.random_hex

return M
