-- Defaults for vkit.proc: what a spec gets for a field it does not set.
-- Callers bound by a seed limit pass that limit (vkit.policies.limits.*)
-- explicitly; these only keep an unset field from meaning "no limit".
local KiB = 1024

return {
  deadline_ms = 60 * 1000,        -- wall-clock deadline, monotonic clock
  grace_ms = 2 * 1000,            -- SIGTERM, then SIGKILL this much later
  output_cap = 64 * KiB,          -- stdout + stderr together, bytes kept
  cwd = "/",                      -- nothing of vkit's own state leaks in
  cgroup = "auto",                -- a per-run cgroup v2 when writable
  -- Supervision internals: how long to wait for killed descendants to
  -- disappear (a process in uninterruptible sleep can take a while), and
  -- how often a long wait reaps orphans that died on their own.
  kill_wait_ms = 5 * 1000,
  reap_interval_ms = 100,
  -- A job's process (vkit.proc.run_cancellable) asks this often whether
  -- its run was cancelled: the longest a cancelled run's process runs on.
  cancel_poll_ms = 100,
}
