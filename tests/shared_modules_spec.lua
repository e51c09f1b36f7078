-- vkit.git and vkit.term are shared objects that csrc/main.c loads when
-- they are first required (the Makefile's SHARED_MODULES): the executable
-- itself must not load libgit2 or readline, a command that does not use
-- them must run without their objects, and a missing, broken or foreign
-- object must be named in a clear error, never a crash.
local vkit = require "vkit"
local t = require "tests.support.run"
local boot = require "vkit.boot"

local CASE = vkit.root .. "/fixtures/conformance/vac/cases/upstream-valid"

-- A copy of this build's executable beside links to its Lua library and
-- policies, with the shared modules' directory (as this build names it,
-- e.g. build/lib) empty; returns the directory, that directory, a cleanup.
local function tree_without_objects()
  local dir, cleanup = t.tempdir()
  local lib = dir .. "/" .. boot.lib:sub(#vkit.root + 2)
  assert.is_true(os.execute(("cp %s %s && ln -s %s %s %s && mkdir -p %s"):format(t.quote(vkit.exe),
    t.quote(dir .. "/vkit"), t.quote(vkit.root .. "/lua"), t.quote(vkit.root .. "/policies"), t.quote(dir),
    t.quote(lib))))
  return dir, lib, cleanup
end

local function run(dir, argv)
  local r = vkit.proc.run { exe = dir .. "/vkit", argv = argv, cwd = dir, deadline_ms = 30000 }
  assert.equal("exited", r.status, "vkit ended " .. r.status .. " " .. tostring(r.signal))
  return r
end

-- A script that uses vkit.git; whether `require "vkit"` or the script's own
-- require meets the object first, the run must fail naming it.
local USES_GIT = [[
local ok, err = pcall(require, "vkit.git")
io.stderr:write(tostring(err), "\n")
os.exit(ok and 0 or 5)
]]

describe("shared modules", function()
  it("are this build's git, pg and term, each in its own object", function()
    assert.same({ "git", "pg", "term" }, boot.shared)
    for _, name in ipairs(boot.shared) do
      assert.equal("file", vkit.fs.lstat(("%s/vkit_%s.so"):format(boot.lib, name)).kind)
    end
  end)

  it("keep libgit2 and readline out of the executable's start", function()
    local out = io.popen("readelf -d " .. t.quote(vkit.exe)):read "a"
    assert.is_nil(out:match "libgit2", "the executable needs libgit2")
    assert.is_nil(out:match "libreadline", "the executable needs readline")
    assert.is_nil(out:match "libpq", "the executable needs libpq")
  end)

  -- Lua is linked into the executable whole: the shared modules and Lua C
  -- modules (Busted's lfs, system, term) resolve every API function from it.
  it("carry Lua in the executable, its whole API exported", function()
    local out = io.popen("readelf -d " .. t.quote(vkit.exe)):read "a"
    assert.is_nil(out:match "liblua5%.4%.so", "the executable loads liblua5.4.so")
    local exported = io.popen("nm -D --defined-only " .. t.quote(vkit.exe)):read "a"
    for _, name in ipairs { "lua_newstate", "luaL_checkversion_", "lua_setcstacklimit", "luaL_testudata", "luaopen_utf8" } do
      assert.matches("%f[%w_]" .. name .. "%f[^%w_]", exported, name)
    end
  end)

  it("carry zlib in the executable, privately (libgit2 brings its own libz.so)", function()
    local out = io.popen("readelf -d " .. t.quote(vkit.exe)):read "a"
    assert.is_nil(out:match "libz%.so", "the executable needs the shared zlib")
    local exported = io.popen("nm -D --defined-only " .. t.quote(vkit.exe)):read "a"
    assert.is_nil(exported:match "%f[%w_]inflate", "the executable exports zlib's symbols")
  end)

  it("reach SHA-256 through the executable, whose static libcrypto stays private", function()
    local out = io.popen("readelf -d " .. t.quote(vkit.exe)):read "a"
    assert.is_nil(out:match "libcrypto", "the executable needs the shared libcrypto")
    local exported = io.popen("nm -D --defined-only " .. t.quote(vkit.exe)):read "a"
    assert.is_nil(exported:match "EVP_", "the executable exports OpenSSL's symbols")
    assert.matches("vkit_sha256_new", exported)
    local wanted = io.popen("nm -D --undefined-only " .. t.quote(boot.lib .. "/vkit_git.so")):read "a"
    assert.is_nil(wanted:match "EVP_", "vkit_git.so calls OpenSSL directly")
  end)

  it("load when required and work (libgit2 initialised, its version known)", function()
    local dir, cleanup = t.tempdir()
    local repo = assert(vkit.git.init(dir .. "/repo"))
    local blob = assert(repo:write_blob "shared\n")
    assert.matches("^%x+$", blob)
    repo:close()
    cleanup()
    assert.matches("^1%.%d+%.%d+$", vkit.versions.libgit2)
    assert.is_function(require("vkit.term").isatty)
  end)

  describe("when an object is missing", function()
    local dir, lib, cleanup
    setup(function() dir, lib, cleanup = tree_without_objects() end)
    teardown(function() cleanup() end)

    it("still verifies a VAC bundle (it never needs libgit2)", function()
      local r = run(dir, { "vkit", "vac", "verify", CASE })
      assert.equal(0, r.code, r.stderr)
      assert.equal("", r.stderr)
    end)

    it("still runs a script that never touches vkit.git or vkit.term", function()
      t.write(dir .. "/plain.lua", [[
        local vkit = require "vkit"
        io.write(vkit.hash.sha256 "x", " ", vkit.versions.lua, "\n")
      ]])
      local r = run(dir, { "vkit", "script", dir .. "/plain.lua" })
      assert.equal(0, r.code, r.stderr)
      assert.matches("^%x+ Lua 5%.4", r.stdout)
    end)

    it("refuses vkit.git by naming the object", function()
      t.write(dir .. "/s.lua", USES_GIT)
      local r = run(dir, { "vkit", "script", dir .. "/s.lua" })
      assert.is_true(r.code ~= 0)
      assert.matches("vkit.git is unavailable: " .. (lib .. "/vkit_git.so"):gsub("%p", "%%%0")
        .. ": cannot open shared object file", r.stderr)
    end)
  end)

  describe("when an object cannot be used", function()
    local dir, lib, cleanup
    before_each(function() dir, lib, cleanup = tree_without_objects() end)
    after_each(function() cleanup() end)

    it("names a file that is not a shared object", function()
      t.write(lib .. "/vkit_git.so", "not an ELF file\n")
      t.write(dir .. "/s.lua", USES_GIT)
      local r = run(dir, { "vkit", "script", dir .. "/s.lua" })
      assert.is_true(r.code ~= 0)
      assert.matches("vkit.git is unavailable: [^\n]*vkit_git.so: ", r.stderr)
    end)

    it("names an object that is not the module's", function()
      assert.is_true(os.execute(("cp %s/vkit_term.so %s/vkit_git.so"):format(t.quote(boot.lib), t.quote(lib))))
      t.write(dir .. "/s.lua", USES_GIT)
      local r = run(dir, { "vkit", "script", dir .. "/s.lua" })
      assert.is_true(r.code ~= 0)
      assert.matches("vkit.git is unavailable: [^\n]*vkit_git.so does not define ", r.stderr)
    end)

    it("refuses vkit.term (the REPL's) the same way", function()
      assert.is_true(os.execute(("cp %s/vkit_git.so %s/"):format(t.quote(boot.lib), t.quote(lib))))
      t.write(dir .. "/s.lua", [[
        local ok, err = pcall(require, "vkit.term")
        io.stderr:write(tostring(err), "\n")
        os.exit(ok and 0 or 5)
      ]])
      local r = run(dir, { "vkit", "script", dir .. "/s.lua" })
      assert.is_true(r.code ~= 0)
      assert.matches("vkit.term is unavailable: [^\n]*vkit_term.so: cannot open shared object file", r.stderr)
    end)
  end)
end)
