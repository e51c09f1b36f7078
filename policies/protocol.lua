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
  -- A normalised repository-relative path (vkit.paths): Linux's PATH_MAX,
  -- so a path vkit accepts can always be opened.
  max_path_bytes = 4096,
  caps = {
    document_bytes = 1 * MiB,                   -- manifest, component policy, package
    receipt_bytes = 1 * MiB,
    output_cap = 64 * KiB,                      -- each command's combined stdout+stderr
    max_deadline_ms = 3600 * 1000,
    default_deadline_ms = 60 * 1000,            -- a drafted manifest's command deadline when the author names none
    grace_ms = 2000,
  },
  -- What one manifest or component policy may hold (lua/vkit/protocol/manifest.lua)
  schema = {
    max_name_bytes = 128,                       -- a component or check id
    max_components = 10000,
    max_argv = 256,                             -- a command's argv entries
    max_arg_bytes = 4096,                       -- one argv entry
    max_dependencies = 1024,                    -- pinned files of a command, and trusted tools
    max_checks = 1024,
    max_obligations = 4096,
    max_obligation_bytes = 256,
    max_assumptions = 1024,
    max_text_bytes = 4096,                      -- one assumption, the model scope
    max_assurance_bytes = 128,
    max_evidence = 4096,                        -- evidence paths of one check
    max_inputs = 100000,                        -- files of a component's package
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
