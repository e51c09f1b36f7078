-- The Lua modules precompiled into the binary (csrc/main.c, mk/luabc.mk):
-- used only while a module's file holds, byte for byte, the source they
-- were compiled from, and then indistinguishable from compiling that file.
-- policies/ are never precompiled.
local vkit = require "vkit"
local t = require "tests.support.run"

describe("precompiled Lua modules", function()
  it("load an unchanged module under its file's name", function()
    local loader, file = package.searchers[2]("vkit.vac.number")
    assert.is_function(loader)
    assert.equal(vkit.root .. "/lua/vkit/vac/number.lua", file)
    local number = loader("vkit.vac.number", file)
    assert.equal(0.5, number.round(0.5, 1))
    assert.equal("@" .. file, debug.getinfo(number.round, "S").source)
    local ok, message = pcall(number.round, "x", 2)
    assert.is_false(ok)
    assert.matches("^" .. file:gsub("%p", "%%%0") .. ":%d+: ", message)
  end)

  it("keep line numbers and local names, as the chunk compiled from the file has them", function()
    local loader, file = package.searchers[2]("vkit.vac.number")
    local number = loader("vkit.vac.number", file)
    local info = debug.getinfo(number.round, "SL")
    local compiled = assert(loadfile(file))()
    local fresh = debug.getinfo(compiled.round, "SL")
    assert.is_true(info.linedefined > 0)
    assert.equal(fresh.linedefined, info.linedefined)
    assert.same(fresh.activelines, info.activelines)
    assert.is_string(debug.getlocal(number.round, 1))
    assert.equal(debug.getlocal(compiled.round, 1), debug.getlocal(number.round, 1))
  end)

  it("never hold a policy: policies/ are read as text, what a reviewer reads is what runs", function()
    local boot = require "vkit.boot"
    assert.is_nil(rawget(boot, "precompiled"))
    local generated = t.slurp(vkit.root .. "/build/luabc.c")
    assert.truthy(generated:find('"lua/vkit/cli.lua"', 1, true))
    assert.is_nil(generated:find("policies/", 1, true))
  end)

  it("find a package's init.lua, as package.searchpath does", function()
    local loader, file = package.searchers[2]("vkit.vac")
    assert.is_function(loader)
    assert.equal(vkit.root .. "/lua/vkit/vac/init.lua", file)
  end)

  -- vkit's modules load only from its library (tests/cli_loading_spec.lua):
  -- a file package.path finds first is never looked at.
  it("never give way to a file that package.path finds first", function()
    local dir, cleanup = t.tempdir()
    assert(vkit.fs.mkdirs(dir .. "/vkit/vac"))
    t.write(dir .. "/vkit/vac/number.lua", "return { shadow = true }\n")
    t.write(dir .. "/s.lua", ([[
      package.path = %q .. "/?.lua;" .. package.path
      package.loaded["vkit.vac.number"] = nil
      print(select(2, package.searchers[2]("vkit.vac.number")), require("vkit.vac.number").shadow)
    ]]):format(dir))
    local out = io.popen(("%s script %s"):format(t.quote(vkit.exe), t.quote(dir .. "/s.lua"))):read "a"
    cleanup()
    assert.equal(("%s/lua/vkit/vac/number.lua\tnil\n"):format(vkit.root), out)
  end)

  it("give way to the source once a module's file is edited", function()
    local dir, cleanup = t.tempdir()
    local lib = require("vkit.boot").lib:sub(#vkit.root + 2) -- the shared modules, e.g. build/lib
    assert.is_true(os.execute(("cp %s %s && cp -r %s %s %s && mkdir -p %s && cp %s/*.so %s"):format(t.quote(vkit.exe),
      t.quote(dir .. "/vkit"), t.quote(vkit.root .. "/lua"), t.quote(vkit.root .. "/policies"), t.quote(dir),
      t.quote(dir .. "/" .. lib), t.quote(vkit.root .. "/" .. lib), t.quote(dir .. "/" .. lib))))
    t.write(dir .. "/lua/vkit/tables.lua", "return { edited = true }\n")
    t.write(dir .. "/policies/vac.lua", "return { edited = true }\n")
    -- a policy is read as text: a precompiled chunk in its place is refused
    t.write(dir .. "/policies/binary.lua", string.dump(load "return { binary = true }"))
    t.write(dir .. "/s.lua", [[
      print(package.searchers[2]("vkit.tables") == nil, require("vkit.tables").edited,
        select(2, package.searchers[2]("vkit.vac.value")), require("vkit.policy").vac.edited,
        (select(2, pcall(function() return require("vkit.policy").binary end)):match "cannot load policy binary" ~= nil))
    ]])
    local out = io.popen(("%s script %s"):format(t.quote(dir .. "/vkit"), t.quote(dir .. "/s.lua"))):read "a"
    cleanup()
    assert.equal(("true\ttrue\t%s/lua/vkit/vac/value.lua\ttrue\ttrue\n"):format(dir), out)
  end)

  -- A module's source is read and compared in 16 KiB pieces: an edit that
  -- keeps its length, at either side of a piece's edge, at its first or last
  -- byte, and a byte more or fewer, must each be seen.
  it("give way to the source for any one changed byte of a module larger than a read", function()
    local dir, cleanup = t.tempdir()
    assert.is_true(os.execute(("cp %s %s && cp -r %s %s %s"):format(t.quote(vkit.exe), t.quote(dir .. "/vkit"),
      t.quote(vkit.root .. "/lua"), t.quote(vkit.root .. "/policies"), t.quote(dir))))
    local rel = "lua/vkit/vac/profiles/modeldrift-board-v1.lua"
    local size = #t.slurp(vkit.root .. "/" .. rel)
    assert.is_true(size > 16384 + 64, rel .. " is no longer larger than a read")
    t.write(dir .. "/s.lua", ([[
      local name, file = "vkit.vac.profiles.modeldrift-board-v1", %q
      local f = assert(io.open(file, "rb")); local original = f:read "a"; f:close()
      local function try(bytes)
        local g = assert(io.open(file, "wb")); g:write(bytes); g:close()
        return select(2, package.searchers[2](name)) ~= nil
      end
      local function flip(s, i) return s:sub(1, i - 1) .. string.char(s:byte(i) ~ 1) .. s:sub(i + 1) end
      local seen = { try(original) and "current" or "not current" }
      for _, i in ipairs { 1, 16383, 16384, 16385, 16416, #original - 1, #original } do
        seen[#seen + 1] = try(flip(original, i)) and ("byte " .. i .. " missed") or "seen"
      end
      seen[#seen + 1] = try(original .. "\n") and "a byte more missed" or "seen"
      seen[#seen + 1] = try(original:sub(1, -2)) and "a byte fewer missed" or "seen"
      seen[#seen + 1] = try(original) and "current" or "not current"
      print(table.concat(seen, " "))
    ]]):format(dir .. "/" .. rel))
    local out = io.popen(("%s script %s"):format(t.quote(dir .. "/vkit"), t.quote(dir .. "/s.lua"))):read "a"
    cleanup()
    assert.equal("current" .. (" seen"):rep(9) .. " current\n", out)
  end)

  -- A read may return fewer bytes than asked before the end of a file (a
  -- FIFO, FUSE, NFS): the module's exact source, then more bytes written
  -- once the first have been read, is a longer file, never current.
  it("never take a short read for the end of the file", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local lib = require("vkit.boot").lib:sub(#vkit.root + 2)
    assert.is_true(os.execute(("cp %s %s && cp -r %s %s %s && mkdir -p %s && cp %s/*.so %s"):format(t.quote(vkit.exe),
      t.quote(dir .. "/vkit"), t.quote(vkit.root .. "/lua"), t.quote(vkit.root .. "/policies"), t.quote(dir),
      t.quote(dir .. "/" .. lib), t.quote(vkit.root .. "/" .. lib), t.quote(dir .. "/" .. lib))))
    local rel = "lua/vkit/vac/failures.lua"
    local source = t.slurp(vkit.root .. "/" .. rel)
    assert.is_true(#source <= 4096, rel .. " no longer fits one atomic pipe write")
    local fifo = dir .. "/" .. rel
    assert(os.remove(fifo))
    assert.is_true(os.execute("mkfifo " .. t.quote(fifo)))
    -- the writer: the exact source in one write, then, once the reader has
    -- taken it all (nothing left in the pipe), one more line
    t.write(dir .. "/writer.py", ([[
import fcntl, os, struct, sys, termios, time
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, open(sys.argv[2], "rb").read())
while struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0] > 0:
    time.sleep(0.001)
try:
    os.write(fd, b"error('the file on disk')\n")
except BrokenPipeError:
    pass
os.close(fd)
]]))
    local writer = io.popen(("/usr/bin/python3.11 %s %s %s"):format(t.quote(dir .. "/writer.py"), t.quote(fifo),
      t.quote(vkit.root .. "/" .. rel)), "r")
    t.write(dir .. "/s.lua", 'print(package.searchers[2]("vkit.vac.failures") == nil and "compiled" or "precompiled")')
    local out = io.popen(("%s script %s"):format(t.quote(dir .. "/vkit"), t.quote(dir .. "/s.lua"))):read "a"
    writer:read "a"
    writer:close()
    assert.equal("compiled\n", out)
  end)
end)
