--- What a PASS of an external check establishes, and what it does not:
-- the words every report, the command line, MCP and vkit.api give with it.
local M = {}

M.ESTABLISHES = "PASS means: the pinned checker accepted every approved obligation with a valid receipt bound to "
  .. "this job, identity and evidence, under the declared checker contract."
M.DOES_NOT = "It does not establish: isolation beyond each run's sandbox (Landlock write confinement where the "
  .. "kernel offers it; reads, network and other processes are not confined), the dependency closure beyond what was "
  .. "declared and pinned, or anything the checker itself does not check. BLOCKED is inconclusive, never a counterexample."

return M
