-- The front's memcpy and memmove (csrc/front_memcpy.c), which replace
-- musl's in ./vkit: built here with musl-gcc into a checking program, as
-- mk/front.mk builds them, and held to a byte loop at every length to
-- 4,200 (and larger), every alignment and every overlap.
local t = require "tests.support.run"

describe("the front's memcpy and memmove", function()
  it("copy as a byte loop does, at every length, alignment and overlap", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local exe = dir .. "/check"
    local cc = ("musl-gcc -O2 -static -DVKIT_FRONT -o %s tests/c/front_memcpy_check.c csrc/front_memcpy.c 2>&1")
      :format(t.quote(exe))
    local p = io.popen(cc)
    local out = p:read "a"
    assert.is_true(p:close(), out)
    local run = io.popen(t.quote(exe))
    assert.equal("ok\n", run:read "a")
    assert.is_true(run:close())
  end)
end)
