-- Every limit the seeds name, in one place.  Code reads these through
-- vkit.policies.limits; nothing else spells the numbers.
local KiB, MiB = 1024, 1024 * 1024

return {
  -- Change certification, paired execution (seed 001)
  paired = {
    max_invocations = 128,          -- process invocations, builds included
    output_cap = 64 * KiB,          -- combined stdout+stderr per invocation
    deadline_ms = 300 * 1000,       -- starts after Git preflight
    build_deadline_ms = 120 * 1000, -- one compiler run (within the 300 s)
  },
  -- Rust source admission (seed 001)
  admission = {
    max_source_bytes = 64 * KiB,    -- refused before parsing
    max_nodes = 3000,
    max_depth = 64,
    deadline_ms = 10 * 1000,        -- the separate parser process
    output_cap = 64 * KiB,
  },
  -- Relational harness generation (seed 001)
  relational = {
    max_domain = 4096,              -- accepted inputs and observations
    max_guards = 4096,              -- guard requirements
    max_harness_bytes = 256 * KiB,
  },
  -- Kani execution (seed 001)
  kani = {
    max_deadline_ms = 300 * 1000,
    output_cap = 1 * MiB,
    max_result_bytes = 2 * MiB,
  },
}
