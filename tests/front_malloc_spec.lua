-- The front's malloc (csrc/front_malloc.c), which replaces musl's in
-- ./vkit: built here with musl-gcc into a checking program, as
-- mk/front.mk builds it, and held to the contract of every entry point
-- (tests/c/front_malloc_check.c): random allocations of every class and
-- mapped sizes checked byte for byte, two threads at once and frees across
-- them, fork beside an allocating thread, the edge cases, and an abort
-- with a message for a double free or a pointer it never returned.
local t = require "tests.support.run"

describe("the front's malloc", function()
  it("keeps every block's bytes and honours each entry point's contract, across threads and fork", function()
    -- -fno-builtin: the compiler would otherwise drop a malloc/free pair it
    -- can see, and with it the double free the checker commits on purpose
    assert.equal("ok\n", t.musl_check({ "tests/c/front_malloc_check.c", "csrc/front_malloc.c" }, "-fno-builtin -pthread"))
  end)

  it("is the allocator the front is linked with", function()
    local p = io.popen "nm build/front/front_malloc.o 2>&1"
    local symbols = p:read "a"
    p:close()
    for _, name in ipairs { "malloc", "free", "calloc", "realloc", "aligned_alloc", "posix_memalign", "malloc_usable_size" } do
      assert.matches("T " .. name .. "\n", symbols, 1, true)
    end
    local front = io.popen "nm vkit 2>&1"
    local linked = front:read "a"
    front:close()
    -- musl's malloc is a weak symbol: the front's is a strong one, front_malloc.o's
    local addr = linked:match "(%x+) T malloc\n"
    assert.is_not_nil(addr, "the front defines malloc")
    assert.is_nil(linked:match "%x+ W malloc\n", "musl's weak malloc is not the front's")
  end)
end)
