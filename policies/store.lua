-- The durable job store (.vkit/runs under a project).
return {
  max_attempts = 3,          -- a run whose worker died is retried as a new attempt up to this many times
  max_wait_seconds = 60,     -- --wait / run_wait bound
  poll_ms = 100,             -- how often waiting callers and workers re-read state
  handlers = {               -- job kind -> Lua module with run(job, ctx)
    ["external-check"] = "vkit.protocol.job",
    ["external-replay"] = "vkit.protocol.job",
    ["change-certify"] = "vkit.change.job",
    ["probe"] = "vkit.store.probe",    -- a diagnostic job: waits, honours cancellation, runs nothing
  },
}
