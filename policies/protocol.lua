-- The external verifier protocol (seed 000): where the accepted manifest
-- lives, the placeholders, the receipt's exact fields and the verdict table.
local KiB, MiB = 1024, 1024 * 1024

return {
  layout = {
    manifest = "verification/manifest.json",   -- read from the exact commit, never the working tree
  },
  claim_version = 2,                            -- the only claim version public verification accepts
  placeholders = { "python", "snapshot", "run_dir", "request", "evidence", "receipt" },
  receipt_fields = {                            -- exactly these, no more, no fewer
    "schema_version", "job_id", "run_id", "check_id", "check_digest", "specification_digest",
    "identity", "evidence_digest", "verdict", "obligations",
  },
  obligation_fields = { "name", "result", "evidence" },
  checker_verdicts = { "accepted", "rejected", "unknown" },
  -- checker verdict (with a valid receipt) -> vkit outcome
  outcomes = { accepted = "PASS", rejected = "BLOCKED", unknown = "BLOCKED" },
  caps = {
    document_bytes = 1 * MiB,                   -- manifest, component policy, package
    receipt_bytes = 1 * MiB,
    output_cap = 64 * KiB,                      -- each command's combined stdout+stderr
    max_deadline_ms = 3600 * 1000,
    grace_ms = 2000,
  },
  -- Landlock, where the kernel offers it (optional: elsewhere the commands
  -- run unconfined and logs/<role>.json says sandbox "none"): the producer
  -- may write only beneath evidence/ and producer/, the checker only
  -- beneath checker/, both also these host files.  Reads are not limited.
  sandbox = { optional = true, writable = { "/dev/null" } },
  env = {                                       -- the closed environment of both commands
                                                -- (HOME and TMPDIR: the role's own, made empty)
    PATH = "/usr/bin:/bin",
    LC_ALL = "C",
    HOME = "/nonexistent",
  },
}
