-- The front's memcpy, memmove, memcmp and strcmp (csrc/front_string.c),
-- which replace musl's in ./vkit: built here with musl-gcc into a checking
-- program, as mk/front.mk builds them, and held to byte loops at every
-- length, alignment, overlap and position of a difference, and strcmp
-- beside an unreadable page.
local t = require "tests.support.run"

describe("the front's memcpy, memmove, memcmp and strcmp", function()
  it("answer as byte loops do, at every length, alignment, overlap and difference", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local exe = dir .. "/check"
    local cc = ("musl-gcc -O2 -static -DVKIT_FRONT -o %s tests/c/front_string_check.c csrc/front_string.c 2>&1")
      :format(t.quote(exe))
    local p = io.popen(cc)
    local out = p:read "a"
    assert.is_true(p:close(), out)
    local run = io.popen(t.quote(exe))
    assert.equal("ok\n", run:read "a")
    assert.is_true(run:close())
  end)
end)
