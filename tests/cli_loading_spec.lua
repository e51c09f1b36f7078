-- Where vkit's own code comes from (issue 30 item 3).  vkit's modules,
-- commands and policies load only from vkit's own library (the build tree
-- or PREFIX/share/vkit, found from the executable's own location: csrc/
-- main.c), never through package.path, package.cpath or the working
-- directory, whatever LUA_PATH, LUA_CPATH, LUA_INIT or any VKIT_* variable
-- say: a mistyped `vkit verfiy` run in a cloned repository that holds
-- vkit/commands/verfiy.lua must not run it.  A script's own modules keep
-- the lua interpreter's require (`vkit script`).
local vkit = require "vkit"
local t = require "tests.support.run"

local ROOT = vkit.root
local BUNDLE = ROOT .. "/fixtures/vac/valid/v01"

-- What planted code prints before it exits: seen anywhere, it ran.
local MARK = "PLANTED"

local function planted_lua(what) return ("io.stdout:write(%q, '\\n') os.exit(0)\n"):format(MARK .. " " .. what) end

-- A Lua C module with every entry point a vkit name could ask for.
local PLANTED_C = [[
#include <stdio.h>
#include <unistd.h>
struct lua_State;
static int planted(const char *what) { printf("PLANTED %s\n", what); fflush(stdout); _exit(0); }
int luaopen_vkit_commands_verfiy(struct lua_State *L) { (void)L; return planted("C vkit.commands.verfiy"); }
int luaopen_vkit_planted_only(struct lua_State *L) { (void)L; return planted("C vkit.planted_only"); }
int luaopen_vkit(struct lua_State *L) { (void)L; return planted("C vkit"); }
]]

local function write(path, bytes, mode)
  assert(vkit.fs.mkdirs(path:match "^(.*)/[^/]*$"))
  t.write(path, bytes)
  if mode then assert(vkit.fs.chmod(path, mode)) end
end

local function sh(cmd)
  local ok = os.execute(cmd .. " >&2")
  assert(ok, cmd)
end

-- The planted trees, under dir: lua (modules as ./?.lua finds them, and
-- policies), so (Lua C modules as ./?.so and the C-root searcher find
-- them), tree (a whole fake vkit library and executables, as a
-- directory beside a binary would hold them).
local function plant(dir)
  local lua, so, tree = dir .. "/lua", dir .. "/so", dir .. "/tree"
  for _, rel in ipairs { "vkit.lua", "vkit/init.lua", "vkit/cli.lua", "vkit/policy.lua", "vkit/boot.lua",
                         "vkit/commands/verfiy.lua", "vkit/commands/verfiy/init.lua", "vkit/planted_only.lua",
                         "vkit/commands/vac.lua", "lua/vkit/init.lua", "lua/vkit/cli.lua", "init_chunk.lua" } do
    write(lua .. "/" .. rel, planted_lua(rel))
  end
  -- a policy runs in an empty environment: one that returns no table breaks
  -- whatever command loads it
  for _, name in ipairs { "api", "limits", "vac", "change", "store" } do
    write(lua .. "/policies/" .. name .. ".lua", "return nil\n")
  end
  write(dir .. "/planted.c", PLANTED_C)
  assert(vkit.fs.mkdirs(so .. "/vkit/commands"))
  sh(("cc -shared -fPIC -o %s %s"):format(t.quote(so .. "/vkit.so"), t.quote(dir .. "/planted.c")))
  for _, rel in ipairs { "vkit/commands/verfiy.so", "vkit/planted_only.so", "vkit/cli.so" } do
    sh(("cp %s %s"):format(t.quote(so .. "/vkit.so"), t.quote(so .. "/" .. rel)))
  end
  write(tree .. "/vkit", "#!/bin/sh\necho PLANTED tree/vkit\n", tonumber("755", 8))
  write(tree .. "/lua/vkit/init.lua", planted_lua "tree/lua/vkit/init.lua")
  write(tree .. "/lua/vkit/cli.lua", planted_lua "tree/lua/vkit/cli.lua")
  write(tree .. "/lua/vkit/commands/verfiy.lua", planted_lua "tree/lua/vkit/commands/verfiy.lua")
  write(tree .. "/policies/vac.lua", "return nil\n")
  for _, rel in ipairs { "build/lib/vkit", "lib/vkit/vkit", "bin/vkit", "share/vkit/vkit" } do
    write(tree .. "/" .. rel, "#!/bin/sh\necho PLANTED tree/" .. rel .. "\n", tonumber("755", 8))
  end
  write(tree .. "/share/vkit/lua/vkit/init.lua", planted_lua "tree/share/vkit/lua/vkit/init.lua")
  write(tree .. "/share/vkit/lua/vkit/cli.lua", planted_lua "tree/share/vkit/lua/vkit/cli.lua")
  return lua, so, tree
end

local function run(exe, argv, cwd, env)
  local full_env = { PATH = "/usr/bin:/bin", HOME = os.getenv "HOME" or "/root" }
  for k, v in pairs(env or {}) do full_env[k] = v end
  local r = vkit.proc.run { exe = exe, argv = table.move(argv, 1, #argv, 2, { "vkit" }), cwd = cwd, env = full_env,
                            deadline_ms = 120000 }
  assert.equal("exited", r.status, exe .. " ended " .. r.status .. " " .. tostring(r.signal))
  return r
end

local function refute_planted(r, what)
  assert.is_nil((r.stdout .. r.stderr):find(MARK, 1, true), what .. " ran planted code:\n" .. r.stdout .. r.stderr)
end

describe("vkit's own code", function()
  local dir, cleanup, lua, so, tree, neutral, script, baseline
  setup(function()
    dir, cleanup = t.tempdir()
    lua, so, tree = plant(dir)
    neutral = dir .. "/neutral"
    assert(vkit.fs.mkdirs(neutral))
    script = dir .. "/probe/s.lua"
    write(script, [[
local got = {}
for _, name in ipairs { "vkit.commands.verfiy", "vkit.planted_only", "vkit.commands.verfiy.x" } do
  got[#got + 1] = tostring((pcall(require, name)))
end
local cli = require "vkit.cli"
got[#got + 1] = tostring(cli.load_command "verfiy")
got[#got + 1] = debug.getinfo(cli.main, "S").source
print(table.concat(got, " "))
]])
    baseline = run(vkit.exe, { "vac", "verify", BUNDLE }, neutral)
    assert.equal(0, baseline.code, baseline.stderr)
  end)
  teardown(function() cleanup() end)

  -- Every way the working directory or the environment could name code:
  -- {what, the working directory, the variables}, the last two functions
  -- (the planted trees are made when the specs run).
  local function scenarios()
    local function lua_path() return ("%s/?.lua;%s/?/init.lua"):format(lua, lua) end
    local init = ("io.stdout:write(%q) os.exit(0)"):format(MARK .. " LUA_INIT\n")
    local function at(d) return function() return d end end
    local function none() return {} end
    local function cwd_of(which) return function() return ({ lua = lua, so = so, tree = tree })[which] end end
    local function neutral_dir() return neutral end
    local list = {
      { "Lua modules and policies in the working directory", cwd_of "lua", none },
      { "Lua C modules in the working directory", cwd_of "so", none },
      { "a library and executables in the working directory", cwd_of "tree", none },
      { "LUA_PATH", neutral_dir, function() return { LUA_PATH = lua_path() } end },
      { "LUA_PATH_5_4", neutral_dir, function() return { LUA_PATH_5_4 = lua_path() } end },
      { "LUA_CPATH", neutral_dir, function() return { LUA_CPATH = so .. "/?.so" } end },
      { "LUA_CPATH_5_4", neutral_dir, function() return { LUA_CPATH_5_4 = so .. "/?.so" } end },
      { "LUA_INIT", neutral_dir, at { LUA_INIT = init } },
      { "LUA_INIT_5_4", neutral_dir, at { LUA_INIT_5_4 = init } },
      { "LUA_INIT=@file", neutral_dir, function() return { LUA_INIT = "@" .. lua .. "/init_chunk.lua" } end },
      -- variables a program like vkit might have read for its root, its
      -- library or its executable: vkit reads none of them
      { "VKIT_* variables naming a planted library", neutral_dir, function()
        local vars = {}
        for _, name in ipairs { "VKIT_ROOT", "VKIT_HOME", "VKIT_PREFIX", "VKIT_LIB", "VKIT_LIBDIR", "VKIT_LIBRARY",
                                "VKIT_PATH", "VKIT_LUA_PATH", "VKIT_CPATH", "VKIT_POLICIES", "VKIT_EXE", "VKIT_FULL",
                                "VKIT_FULL_EXE", "VKIT_SHARE" } do
          vars[name] = tree
        end
        return vars
      end },
    }
    return list
  end

  for _, s in ipairs(scenarios()) do
    local what = s[1]
    it("never runs a mistyped subcommand, a module or a policy planted by " .. what, function()
      local cwd, env = s[2](), s[3]()
      local r = run(vkit.exe, { "verfiy" }, cwd, env)
      refute_planted(r, what .. ": vkit verfiy")
      assert.equal(2, r.code, what .. ": " .. r.stderr)
      assert.matches('^vkit: unknown subcommand "verfiy"; did you mean .verify.%?\n', r.stderr, nil, what)

      r = run(vkit.exe, { "script", script }, cwd, env)
      refute_planted(r, what .. ": a script's require of vkit names")
      assert.equal(("false false false nil @%s/lua/vkit/cli.lua\n"):format(ROOT), r.stdout, what .. ": " .. r.stderr)

      r = run(vkit.exe, { "vac", "verify", BUNDLE }, cwd, env)
      refute_planted(r, what .. ": vkit vac verify")
      assert.equal(0, r.code, what .. ": " .. r.stderr)
      assert.equal(baseline.stdout, r.stdout, what)
    end)
  end

  -- The dispatcher and require itself, in this process: package.path and
  -- package.cpath pointed at the planted modules change nothing for vkit's names.
  it("is looked up in the library alone, whatever package.path and package.cpath say", function()
    local cli = require "vkit.cli"
    -- modules that only return a table: run in this process, they must not end it
    local here = dir .. "/in-process"
    for _, rel in ipairs { "vkit/commands/verfiy.lua", "vkit/planted_only.lua" } do
      write(here .. "/" .. rel, ("return { planted = %q }\n"):format(rel))
    end
    local path, cpath = package.path, package.cpath
    finally(function()
      package.path, package.cpath = path, cpath
      package.loaded["vkit.commands.verfiy"], package.loaded["vkit.planted_only"] = nil, nil
    end)
    package.path = ("%s/?.lua;%s/?/init.lua;%s"):format(here, here, path)
    package.cpath = so .. "/?.so;" .. cpath
    assert.is_nil(cli.load_command "verfiy")
    assert.is_nil(cli.load_command "planted_only")
    local ok, message = pcall(require, "vkit.commands.verfiy")
    assert.is_false(ok)
    assert.matches("no file '" .. (ROOT .. "/lua/vkit/commands/verfiy.lua"):gsub("%p", "%%%0") .. "'", message)
    assert.matches("vkit's own modules load only from its library", message, 1, true)
    assert.is_nil(message:find(here, 1, true), message) -- the planted files were not even looked at
    assert.is_false((pcall(require, "vkit.planted_only")))
    assert.equal(require "vkit.commands.vac", cli.load_command "vac")
  end)

  -- /proc/self/exe of a binary removed while it runs ends in " (deleted)";
  -- vkit used to resolve argv[0] then, which a bare "vkit" resolved in the
  -- working directory: a planted vkit file with a library beside it
  -- became vkit's root.  A copy of this build in a fresh directory is run
  -- through a descriptor after its file is removed, from the planted
  -- tree's directory.
  it("is found from the executable's own location even once its file is removed, never from argv[0]", function()
    local copy, cleanup_copy = t.tempdir()
    finally(cleanup_copy)
    sh(("cp %s %s/vkit && ln -s %s %s %s"):format(t.quote(vkit.exe), t.quote(copy), t.quote(ROOT .. "/lua"),
      t.quote(ROOT .. "/policies"), t.quote(copy)))
    local r = run("/bin/bash", { "-c", 'exec 3<"$1" && rm -f "$1" && exec -a vkit /proc/self/fd/3 verfiy', "bash",
      copy .. "/vkit" }, tree)
    refute_planted(r, "a removed executable")
    assert.equal(2, r.code, r.stdout .. r.stderr)
    assert.matches('^vkit: unknown subcommand "verfiy"; did you mean .verify.%?\n', r.stderr)
  end)

  -- The C core chooses no code by the environment: the library root, the
  -- shared modules follow from /proc/self/exe.
  it("is chosen by no environment variable read in C, and the Lua reads no VKIT_* variable that names code", function()
    local p = io.popen(("grep -ln 'getenv' %s/csrc/*.c"):format(t.quote(ROOT)))
    local readers = p:read "a"
    p:close()
    assert.equal("", readers, "C that reads the environment: review what it selects")
    -- every VKIT_* variable the library reads names data (a store, its
    -- evidence, a cache directory), never a module, a policy or an executable
    p = io.popen(("grep -rhoE 'getenv[ (]*\"VKIT_[A-Z_]+' %s/lua | grep -oE 'VKIT_[A-Z_]+' | sort -u"):format(
      t.quote(ROOT)))
    local read = p:read "a"
    p:close()
    for name in read:gmatch "%S+" do
      assert.is_true(({ VKIT_STORE = true, VKIT_CACHE = true, VKIT_EVIDENCE_ROOT = true })[name],
        name .. " is read by the library: if it selects code, it must not")
    end
  end)
end)

describe("vkit script", function()
  -- The script's own modules keep the lua interpreter's require: beside
  -- it when run from its directory (./?.lua), through LUA_PATH and
  -- LUA_CPATH, Lua C modules included.
  it("lets a script require its own modules: beside it, through LUA_PATH, and its own Lua C modules", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local app, other = dir .. "/app", dir .. "/elsewhere"
    assert(vkit.fs.mkdirs(other))
    write(app .. "/main.lua", [[
local helper = require "helper"
local sub = require "pkg.sub"
local native = require "native"
print(helper.name, sub.name, native, vkit == require "vkit")
]])
    write(app .. "/helper.lua", 'return { name = "helper" }\n')
    write(app .. "/pkg/sub.lua", 'return { name = "pkg.sub" }\n')
    write(app .. "/native.c", [[
#include <lua.h>
int luaopen_native(lua_State *L) { lua_pushliteral(L, "native"); return 1; }
]])
    local p = io.popen(("cc -shared -fPIC %s -o %s %s 2>&1"):format(
      (io.popen "pkg-config --cflags lua5.4":read "a"):gsub("\n", ""), t.quote(app .. "/native.so"),
      t.quote(app .. "/native.c")))
    local out = p:read "a"
    assert(p:close(), out)
    local want = "helper\tpkg.sub\tnative\ttrue\n"

    local r = run(vkit.exe, { "script", "main.lua" }, app)
    assert.equal(0, r.code, r.stderr)
    assert.equal(want, r.stdout)

    r = run(vkit.exe, { "script", app .. "/main.lua" }, other,
      { LUA_PATH = app .. "/?.lua;;", LUA_CPATH = app .. "/?.so;;" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(want, r.stdout)

    -- from elsewhere, with neither: Lua's own "module not found"
    r = run(vkit.exe, { "script", app .. "/main.lua" }, other)
    assert.equal(1, r.code)
    assert.matches("module 'helper' not found", r.stderr, 1, true)
  end)
end)
