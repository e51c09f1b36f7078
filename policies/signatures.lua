-- The multi-parameter profile (issue 34, in progress): functions of a few
-- bool / fixed-width integer parameters returning one such value or a
-- tuple.  The seed's u32 -> u32 profile keeps its own limits
-- (policies/limits.lua, policies/change.lua); nothing here applies to it.
-- Read by vkit.change.signature, vkit.change.domain and
-- vkit.change.signature_drivers.
return {
  -- Every type a parameter or a result component may have.  min and max
  -- are decimal text, not Lua numbers: u64's max does not fit a Lua
  -- integer, and text is what a reviewer checks against the languages'
  -- own constants.  bytes is the width of one value in a driver's stdin
  -- record (little-endian; a bool is one byte, 0 or 1).
  types = {
    bool = { bytes = 1 },
    u8 = { bytes = 1, min = "0", max = "255" },
    u16 = { bytes = 2, min = "0", max = "65535" },
    u32 = { bytes = 4, min = "0", max = "4294967295" },
    u64 = { bytes = 8, min = "0", max = "18446744073709551615" },
    i8 = { bytes = 1, min = "-128", max = "127" },
    i16 = { bytes = 2, min = "-32768", max = "32767" },
    i32 = { bytes = 4, min = "-2147483648", max = "2147483647" },
    i64 = { bytes = 8, min = "-9223372036854775808", max = "9223372036854775807" },
  },
  -- At most four parameters: enough for the functions the issue names
  -- (clamp, checked arithmetic, a few flags), and a product of four sets
  -- is still readable as a box in a report.
  max_params = 4,
  -- A tuple result has 2 to 4 components: one value is written as a plain
  -- type (Rust's 1-tuple, Python's and TypeScript's one-element arrays
  -- would only be a second spelling of it); four matches the parameters.
  min_components = 2,
  max_components = 4,
  -- Every accepted input is run (exhaustive method), so the product of the
  -- parameter sets is capped: 2^20 inputs are 4 batches per side and pass
  -- below, a few seconds of native calls per side in each language.
  exhaustive_inputs = 1 << 20,
  -- Inputs per driver invocation.  A driver's stdout is one fixed-width
  -- binary record per input (vkit.change.signature_records): at most a
  -- status byte and 4 i64 results, 33 bytes, so a batch's stdout is at
  -- most 8.25 MiB and its stdin at most 8 MiB (4 x 8 bytes per input).
  -- 2^20 inputs are then 4 invocations per side and pass: each launch of
  -- a runtime costs a start and a sandbox (a tenth of a second or more for
  -- node), so fewer, larger batches are most of what makes 2^20 inputs
  -- take seconds, and two sides and two passes (16 invocations) leave the
  -- seed's 128-invocation budget for builds and split batches.
  batch_inputs = 1 << 18,
  -- Combined stdout+stderr kept per driver invocation of this profile (the
  -- seed's 64 KiB, policies/limits.lua paired.output_cap, cannot hold a
  -- batch).  A full batch of the widest records is 2^18 x 33 bytes plus a
  -- 68-byte trailer, 8.25 MiB; 12 MiB holds it and the stderr reserve
  -- below, so a batch only splits when the candidate itself writes.  The
  -- method keeps the seed's invocation budget and deadline
  -- (policies/limits.lua paired).
  output_cap = 12 * 1024 * 1024,
  -- Each batch launch of the exhaustive method gets a share of the time
  -- left of the method's deadline, not all of it, so that a candidate
  -- hanging on one input does not take every other input with it: a batch
  -- that runs past its share is split in two and each half re-run, and a
  -- single input past its share is reported as timed out (never a value,
  -- never a pass).  The share is `slack` times the launch's proportion of
  -- the work left (inputs x launches), at most `max_fraction` of the time
  -- left, so every split leaves time for the halves, and at least
  -- `floor_ms`, a runtime's start on a loaded host.  With 300 s and 2^20
  -- inputs a full batch's launch gets 75 s; an admitted batch takes well
  -- under a second.  A half, not less: a domain of one batch whose
  -- candidate runs in fresh mode (44,541 inputs take 26 s in TypeScript
  -- here, unloaded) must keep the room it had when a launch could take
  -- all the time left, several times its cost.
  batch_deadline = { slack = 4, max_fraction = 1 / 2, floor_ms = 2000 },
  -- Of each invocation's output cap, left for stderr (the candidate's own
  -- writes and the driver's cause lines): the seed's reserve
  -- (policies/change.lua exhaustive.stderr_reserve_bytes) for the same reason.
  stderr_reserve_bytes = 4 * 1024,
  -- Standing requirements of one intent and guards of one difference
  -- policy.  Every input is judged against every box that may contain it:
  -- 2^20 inputs x (16 + 16) box tests stay within seconds in Lua.
  max_requirements = 16,
  max_guards = 16,
  -- Bytes of one set's text (`0..9|20|30..39`) in a contract or a
  -- difference policy: 4 KiB is a few hundred ranges, more than a
  -- reviewer reads, and bounds the work of parsing one document.
  max_set_text = 4096,
  -- Violating inputs of one rule grouped into boxes for a report
  -- (vkit.change.domain.group sorts them): beyond this the boxes cover the
  -- first ones, and the report says how many it grouped of how many.
  group_inputs = 1 << 16,
  -- A contract's accepted inputs may exceed exhaustive_inputs (a claim
  -- about more inputs than can be run is still a claim); the exhaustive
  -- method then refuses it by name (`exhaustive-cap`) and no method
  -- certifies it.  Above this the contract itself is refused.
  contract_inputs = 1 << 40,
}
