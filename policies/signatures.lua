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
  -- parameter sets is capped: 2^20 inputs are 16 batches per side and pass
  -- below, a few seconds of native calls per side in each language.
  exhaustive_inputs = 1 << 20,
  -- Inputs per driver invocation.  The longest line a driver can print is
  -- 4 i64 inputs and 4 i64 results (168 bytes), so a batch's stdout is at
  -- most 10.5 MiB and its stdin at most 2 MiB (4 x 8 bytes per input);
  -- 2^20 inputs are then 16 invocations per side and pass, so two
  -- sides and two passes fit the seed's 128-invocation budget with room for
  -- builds and split batches.
  batch_inputs = 1 << 16,
}
