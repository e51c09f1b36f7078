-- The Kani method's qualification (seed 001): the one engine version,
-- platform and export format vkit accepts results from, and the fixed
-- command line it runs.  Limits (deadline, output cap, import limit) are in
-- limits.lua `kani`.
return {
  kani = {
    qualified_version = "0.68.0",
    -- uname sysname/machine of the host, and the target triple the pin and
    -- Kani's export must both name.
    host_sysname = "Linux",
    host_machine = "x86_64",
    qualified_target = "x86_64-unknown-linux-gnu",
    -- `metadata.version` of the --export-json document (kani-driver's v1 shape).
    export_metadata_version = "1.0",
    -- The file names the runner writes in its work directory.
    harness_file = "vkit_harness.rs",
    export_file = "kani-export.json",
    -- Fixed arguments after the launcher and harness file: one harness,
    -- matched exactly, default checks (no --no-*-checks flag is ever passed),
    -- regular text output, and the JSON export (unstable in 0.68.0).
    fixed_args = {
      "--harness", "vkit_relational", "--exact",
      "--output-format", "regular",
      "-Z", "unstable-options",
    },
  },
}
