-- The durable job store (both backends: vkit.store.files, vkit.store.postgresql).
return {
  max_attempts = 3,          -- a run whose worker died is retried as a new attempt up to this many times
  max_wait_seconds = 60,     -- --wait / run_wait bound
  -- --timeout of `change certify` and `run wait`: how long one command may
  -- block.  Six hours is GitHub Actions' default limit for one job (and
  -- above GitLab's one-hour default): a CI job waits no longer than its
  -- runner would let it, and a run that outlasts it is still there for
  -- `vkit run wait latest`.
  max_timeout_seconds = 6 * 3600,
  -- The one command's wait without --timeout (`change certify --base
  -- --candidate`): long enough for every method on the seed's 4,096-input
  -- domain in all three languages, builds included, on a slow runner.
  certify_timeout_seconds = 30 * 60,
  poll_ms = 100,             -- how often waiting callers and workers re-read state (file store)
  max_record_bytes = 16 * 1024 * 1024, -- one JSON record of a run read back: the file store's records, a report's (vkit.report.records)
  handlers = {               -- job kind -> Lua module with run(job, ctx)
    ["external-check"] = "vkit.protocol.job",
    ["external-replay"] = "vkit.protocol.job",
    ["change-certify"] = "vkit.certify.job",
    ["probe"] = "vkit.store.probe",    -- a diagnostic job: waits, honours cancellation, runs nothing
  },
  -- Leases (PostgreSQL; the file store's lease is the run's flock).
  lease_seconds = 30,        -- a claim's lease; a worker that stops renewing it loses the run after this long
  min_lease_seconds = 2,     -- --lease-seconds bounds
  max_lease_seconds = 3600,
  heartbeat_ms = 1000,       -- how often a running handler's worker renews its lease and reads cancellation
  idle_wait_ms = 2000,       -- a serving worker with nothing to claim waits this long for a NOTIFY, then rescans
  reconnect_max_ms = 5000,   -- longest pause between attempts to reach an unreachable database
  statement_timeout_ms = 10000, -- client-side bound on one statement's round trip (a partition is an error, not a hang)
  idle_transaction_timeout_ms = 10000, -- the server ends a session this long idle inside a transaction: a worker lost mid-transaction (a partition, a stopped machine) never holds a run's row lock, which claims skip, for longer
  connect_timeout_seconds = 5,  -- libpq connect_timeout when the URL sets none
  max_concurrency = 64,      -- --concurrency bound
  -- Retained artifacts (the content-addressed evidence store).
  max_artifact_bytes = 1024 * 1024 * 1024, -- one retained file
  max_artifacts = 100000,    -- files retained by one attempt
  read_artifact_bytes = 64 * 1024 * 1024,  -- what run show/report read of one artifact at most
  progress_bytes = 16 * 1024 * 1024, -- a running attempt's progress lines shown live (PostgreSQL: published each heartbeat)
}
