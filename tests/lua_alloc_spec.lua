-- The Lua state's allocator (csrc/lua_alloc.c): small blocks from size
-- classes, larger ones from malloc, everything released when the state
-- closes.  Nothing a script can observe may differ from luaL_newstate's
-- state; under `make sanitize` AddressSanitizer checks the blocks.
local t = require "tests.support.run"

local function script(source)
  local dir, cleanup = t.tempdir()
  t.write(dir .. "/s.lua", source)
  local r = t.vkit { "script", dir .. "/s.lua" }
  cleanup()
  return r
end

describe("the Lua state's allocator", function()
  it("runs the collector at pause 400: a cycle when the heap has quadrupled (main.c)", function()
    local r = script [[print(collectgarbage("setpause", 200), collectgarbage("setpause", 400))]]
    assert.equal(0, r.code, r.stderr)
    assert.equal("400\t200\n", r.stdout)
  end)

  it("keeps every block's bytes through growth and shrinking across the size classes", function()
    local r = script [[
      local strings, tables = {}, {}
      for round = 1, 3 do
        for n = 1, 700 do
          strings[n] = string.rep(string.char(65 + (n + round) % 26), n) -- one block of every size
          local tb = {}
          for i = 1, n % 90 do tb[i] = n * i end                         -- an array part that grows...
          for i = n % 90, 1, -1 do tb[i] = nil end                      -- ...and empties
          tb.x = n
          collectgarbage "step"                                          -- and may shrink
          tables[n] = tb
        end
        for n = 1, 700 do
          assert(#strings[n] == n and strings[n]:byte(n) == 65 + (n + round) % 26, n)
          assert(tables[n].x == n and next(tables[n], "x") == nil, n)
        end
        collectgarbage "collect"
      end
      local co = coroutine.wrap(function(...) local s = 0 for _, v in ipairs { ... } do s = s + v end return s end)
      assert(co(table.unpack(tables[600] and { 1, 2, 3 })) == 6)
      print "ok"
    ]]
    assert.equal(0, r.code, r.stderr)
    assert.equal("ok\n", r.stdout)
  end)

  it("releases everything when os.exit closes the state", function()
    local r = script 'local t = {} for i = 1, 5000 do t[i] = { i, tostring(i) } end os.exit(3, true)'
    assert.equal(3, r.code, r.stderr)
    assert.equal("", r.stderr) -- LeakSanitizer reports here under make sanitize
  end)

  it("warns as the standalone interpreter does: off until @on", function()
    local r = script 'warn("hidden") warn("@on") warn("a", "b") warn("c") warn("@off") warn("hidden")'
    assert.equal(0, r.code, r.stderr)
    assert.equal("Lua warning: ab\nLua warning: c\n", r.stderr)
  end)
end)
