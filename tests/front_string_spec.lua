-- The front's memcpy, memmove, memcmp and strcmp (csrc/front_string.c),
-- which replace musl's in ./vkit: built here with musl-gcc into a checking
-- program, as mk/front.mk builds them, and held to byte loops at every
-- length, alignment, overlap and position of a difference, and strcmp
-- beside an unreadable page.
local t = require "tests.support.run"

describe("the front's memcpy, memmove, memcmp and strcmp", function()
  it("answer as byte loops do, at every length, alignment, overlap and difference", function()
    assert.equal("ok\n", t.musl_check { "tests/c/front_string_check.c", "csrc/front_string.c" })
  end)
end)
