--- The multi-parameter demo (issue 34) for examples/certify.lua: the same
-- repository layout as examples/demo/build.lua (whose build_suite builds
-- it), for clamp(x, lo, hi) over i32 with x in -50..50 and lo, hi in
-- -10..10: 101 x 21 x 21 = 44,541 inputs, every one run by the exhaustive
-- method (auto samples a few with finite_paired first).  Per language a conforming
-- refactor, a planted violation (min and max swapped: wrong wherever
-- lo > hi, grouped into boxes) and a bug at one input (7, 3, -2) that a
-- sample of a few dozen inputs would almost surely miss.  Sources:
-- examples/demo/multi/<language>/<variant>.<ext>.
--
--   local demo = dofile(vkit.root .. "/examples/demo/multi.lua").build(dir)
local vkit = require "vkit"

local M = {}

local base = dofile(vkit.root .. "/examples/demo/build.lua")
M.LANGUAGES, M.VARIANTS = base.LANGUAGES, base.VARIANTS

-- The contract document's parts (vkit.change.contract, the multi-parameter
-- form: the signature, every set as text; docs/change.md).
M.SIGNATURE = { params = { { name = "x", type = "i32" }, { name = "lo", type = "i32" }, { name = "hi", type = "i32" } },
                returns = "i32" }

function M.build(dir)
  return base.build_suite(dir, {
    dir = vkit.root .. "/examples/demo/multi", ["function"] = "clamp", codec = vkit.change.codec(M.SIGNATURE),
    statement = "clamp(x, lo, hi) keeps x within lo..hi and returns lo when the range is empty (lo > hi)",
    contract = { signature = M.SIGNATURE, inputs = { x = "-50..50", lo = "-10..10", hi = "-10..10" },
                 observations = { "-50..50" }, requirements = {} },
  })
end

return M
