-- VAC (seed 003, egnaro9/vac-protocol SPEC.md): the limits of the
-- structural verifier, its archive reader and its registry.
local KiB, MiB, GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024

return {
  max_json_depth = 256,                -- SPEC §4: deeper is invalid-json, decided on the text
  max_artifact_bytes = 2 * GiB,        -- one JSON document read whole (JSON Lines stream)
  max_line_bytes = 256 * MiB,          -- one JSON Lines row
  archive = {
    max_unpacked_bytes = 4 * GiB,      -- decompressed tar stream, headers included
    max_entries = 100000,              -- members of one bundle archive
    max_name_bytes = 4 * KiB,          -- one member path (GNU long names, pax paths)
  },
  registry = {
    max_blob_bytes = 2 * GiB,          -- one committed artifact read from a Git tree
  },
  -- SPEC §3.5 at vac_version 0.2: the admissible declared reliability floor
  rel_floor_min = 0.0,
  rel_floor_max = 0.9,
  -- SPEC §3.4 / §3.6: the frozen crashkit severity weights
  severity_weights = { none = 0, low = 1, med = 2, high = 4, critical = 8 },
  severity_order = { "none", "low", "med", "high", "critical" },
}
