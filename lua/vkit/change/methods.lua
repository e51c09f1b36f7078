--- The certification methods: peers, each with its own runner, report,
-- budget and statement of what its result does not establish.
--
--   finite_paired   seed 001's paired execution + change analysis: sampled
--                   native observations, one process per input
--   exhaustive      every accepted input of any binding the paired profile
--                   accepts, batch drivers, two orders per side
--   rust_exhaustive vkit's own (not in seed 001): the relational harness
--                   compiled natively over every accepted input (Rust)
--   rust_kani       seed 001's Kani relational proof (Rust, native x86-64
--                   Linux, a host-supplied closed-format toolchain pin)
-- The module that runs each is vkit.certify's (RUNNERS): the methods sit
-- above this list, which reports and the command line also read.
local M = {}

M.NAMES = { "auto", "finite_paired", "exhaustive", "rust_exhaustive", "rust_kani" }

M.LIST = {
  finite_paired = {
    scope = "sampled", seed = true,
    not_established = "finite_paired results are sampled native observations of accepted inputs: they do not cover "
      .. "omitted inputs, prove deterministic behaviour, establish native compiler correspondence, or grant approval.",
  },
  exhaustive = {
    scope = "all_inputs", seed = false,
    not_established = "exhaustive ran every accepted input natively in batch processes, each side at least twice in "
      .. "two orders, under the pinned tools: it does not establish behaviour outside the accepted inputs, under other "
      .. "tools, builds or environments, determinism beyond the runs made, a source proof, or approval.",
  },
  rust_exhaustive = {
    scope = "all_inputs", seed = false,
    not_established = "rust_exhaustive (vkit's own method, not part of seed 001) checked the four relational "
      .. "assertions for every accepted input in one native run of the admitted Rust sources as this rustc compiled "
      .. "them at -C opt-level=1: it is not a proof about the source, other compilers or flags, or inputs outside the "
      .. "accepted domain, and grants no approval.",
  },
  rust_kani = {
    scope = "model", seed = true,
    not_established = "a rust_kani result is limited to the captured Rust source, the accepted finite u32 inputs, the "
      .. "generated relational harness and Kani's retained model: it does not establish native compiler "
      .. "correspondence or approval.",
  },
}

M.NEVER_PASSING = "An unsupported, incomplete or blocked method never becomes a passing result."

function M.known(name)
  for _, m in ipairs(M.NAMES) do if m == name then return true end end
  return false
end

return M
