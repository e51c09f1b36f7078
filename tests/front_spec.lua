-- ./vkit is two executables (csrc/main.c): the front, linked statically,
-- runs the commands that need no shared module (vkit.cli.FRONT_COMMANDS:
-- `vac verify`, `vac conformance`) and hands every other to the full
-- executable, build/lib/vkit, with the same arguments, standard streams
-- and exit status.  Whatever the front runs itself must answer exactly as
-- the full executable does.
local vkit = require "vkit"
local t = require "tests.support.run"

local FRONT = vkit.root .. "/vkit"
local FULL = vkit.root .. "/build/lib/vkit"
local CORPUS = vkit.root .. "/fixtures/conformance/vac"
local VAC = vkit.root .. "/fixtures/vac"

-- The ELF program header types of an executable (PT_INTERP is 3).
local function program_headers(path)
  local bytes = assert(vkit.fs.read(path, 64 << 20))
  assert.equal("\127ELF\2\1", bytes:sub(1, 6), path .. " is not a little-endian ELF64 file")
  local phoff, phentsize, phnum = string.unpack("<I8", bytes, 33), string.unpack("<I2", bytes, 55),
    string.unpack("<I2", bytes, 57)
  local types = {}
  for i = 0, phnum - 1 do types[#types + 1] = string.unpack("<I4", bytes, phoff + i * phentsize + 1) end
  return types
end

local function has(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end

local function run(exe, argv, opts)
  opts = opts or {}
  local r = vkit.proc.run { exe = exe, argv = table.move(argv, 1, #argv, 2, { "vkit" }), cwd = opts.cwd or vkit.root, stdin = opts.stdin,
    env = opts.env, deadline_ms = 120000 }
  assert.equal("exited", r.status, exe .. " ended " .. r.status .. " " .. tostring(r.signal))
  return r
end

-- The front alone, beside links to the library and policies, with no full
-- executable to hand anything to: whatever succeeds there ran in the front.
local function front_alone()
  local dir, cleanup = t.tempdir()
  assert.is_true(os.execute(("cp %s %s && ln -s %s %s %s"):format(t.quote(FRONT), t.quote(dir .. "/vkit"),
    t.quote(vkit.root .. "/lua"), t.quote(vkit.root .. "/policies"), t.quote(dir))))
  return dir .. "/vkit", dir, cleanup
end

describe("the static front", function()
  it("has no program interpreter; the full executable has one", function()
    assert.is_false(has(program_headers(FRONT), 3), "./vkit asks for a dynamic loader")
    assert.is_true(has(program_headers(FULL), 3), "the ELF reading finds no PT_INTERP in the full executable")
  end)

  it("runs vac verify and vac conformance itself, answering exactly as the full executable does", function()
    local front, dir, cleanup = front_alone()
    local cases = {
      { "vac", "verify", CORPUS .. "/cases/upstream-valid" },
      { "vac", "verify", CORPUS .. "/cases/upstream-valid", "--json" },
      { "vac", "verify", CORPUS .. "/cases/upstream-tamper-wrong-sha256" },
      { "vac", "verify", CORPUS .. "/cases/issuer-model-drift", "--json" },
      { "vac", "verify", VAC .. "/valid/v01", VAC .. "/tampered/draft-incomplete", CORPUS .. "/cases/issuer-evalmut" },
      { "vac", "verify", VAC .. "/valid/v01", dir .. "/no-such-bundle", "--json" },
      { "vac", "verify", VAC .. "/archives/valid-v01.tar.gz" },
      { "vac", "verify", VAC .. "/archives/unsafe-dotdot.tar.gz", "--json" },
      { "vac", "verify", dir .. "/no-such-bundle" },
      { "vac", "verify" },
      { "vac", "verify", "--help" },
      { "vac", "conformance", CORPUS },
      { "vac", "conformance", CORPUS, "--json" },
    }
    for _, format in ipairs { "md", "html", "json", "junit", "text" } do
      cases[#cases + 1] = { "vac", "verify", VAC .. "/valid/v01", "--report", format }
    end
    for _, argv in ipairs(cases) do
      local what = table.concat(argv, " ")
      local got, want = run(front, argv), run(FULL, argv)
      assert.equal(want.code, got.code, what .. "\n" .. got.stderr)
      assert.equal(want.stdout, got.stdout, what)
      assert.equal(want.stderr, got.stderr, what)
    end
    -- the codes the cases above must have seen, so none of them passed by both failing alike
    assert.equal(0, run(front, cases[1]).code)
    assert.equal(1, run(front, cases[3]).code)
    assert.equal(2, run(front, cases[9]).code)
    cleanup()
  end)

  -- Large bundles take the chunked read, whose hashing runs on a second
  -- thread: the same in the static front as in the full executable.
  it("verifies large generated bundles as the full executable does, honest and tampered", function()
    local bundles = require "bench.vac_bundles"
    local dir, cleanup = t.tempdir()
    bundles.fleet(dir .. "/fleet", 60000)
    bundles.crashkit(dir .. "/crashkit", 20000)
    require("tests.vac_support").copy_tree(dir .. "/fleet", dir .. "/fleet-tampered")
    local raw = t.slurp(dir .. "/fleet-tampered/raw_results.jsonl")
    local at = #raw // 2
    local line_end = raw:find("\n", at, true)
    t.write(dir .. "/fleet-tampered/raw_results.jsonl", raw:sub(1, line_end) .. "{\"bad\": }\n" .. raw:sub(line_end + 1))
    bundles.rehash(dir .. "/fleet-tampered")
    for _, argv in ipairs {
      { "vac", "verify", dir .. "/fleet" }, { "vac", "verify", dir .. "/crashkit", "--json" },
      { "vac", "verify", dir .. "/fleet-tampered", "--json" },
      { "vac", "verify", dir .. "/fleet", dir .. "/crashkit", dir .. "/fleet-tampered" },
    } do
      local got, want = run(FRONT, argv), run(FULL, argv)
      assert.equal(want.code, got.code, table.concat(argv, " "))
      assert.equal(want.stdout, got.stdout, table.concat(argv, " "))
    end
    assert.equal(0, run(FRONT, { "vac", "verify", dir .. "/fleet" }).code)
    assert.equal(1, run(FRONT, { "vac", "verify", dir .. "/fleet-tampered" }).code)
    cleanup()
  end)

  -- The front does not close its Lua state at exit (csrc/main.c): what
  -- its commands hold must need no finalizer.  An archive is unpacked into
  -- a temporary directory; it must be gone, whatever the verdict.
  it("leaves no temporary directory behind, though it never closes its Lua state", function()
    local front, dir, cleanup = front_alone()
    local tmp = dir .. "/tmp"
    assert(vkit.fs.mkdirs(tmp))
    local env = { TMPDIR = tmp, PATH = os.getenv "PATH" or "/usr/bin:/bin" }
    for _, archive in ipairs { "valid-v01.tar.gz", "valid-v01.tgz", "valid-v01.tar", "unsafe-dotdot.tar.gz",
      "unsafe-not-a-tar.tar.gz" } do
      local r = run(front, { "vac", "verify", VAC .. "/archives/" .. archive }, { env = env })
      assert.is_true(r.code == 0 or r.code == 1 or r.code == 2, archive .. ": " .. r.stderr)
      assert.same({}, assert(vkit.fs.list(tmp)), archive .. " left something in TMPDIR")
    end
    local r = run(front, { "vac", "verify", VAC .. "/archives/valid-v01.tar.gz" }, { env = env })
    assert.equal(0, r.code, r.stderr)
    cleanup()
  end)

  it("hands every other command to the full executable: arguments, stdin, stdout and exit status", function()
    local script = [[
local boot = require "vkit.boot"
io.write(tostring(boot.static), "|", require("vkit").exe, "|", #arg)
for i = 1, #arg do io.write("|<", arg[i], ">") end
io.stderr:write(io.read "a")
os.exit(5)
]]
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/s.lua", script)
    local r = run(FRONT, { "script", dir .. "/s.lua", "a", "", "b c", "--json" }, { stdin = "from stdin" })
    assert.equal(5, r.code, r.stderr)
    assert.equal(("nil|%s|4|<a>|<>|<b c>|<--json>"):format(FULL), r.stdout)
    assert.equal("from stdin", r.stderr)
    -- a vac action the front does not run, and no command at all
    r = run(FRONT, { "vac", "draft", "--help" })
    assert.equal(0, r.code, r.stderr)
    assert.matches("usage: vkit vac draft DIR", r.stdout, 1, true)
    r = run(FRONT, {})
    assert.equal(2, r.code)
    assert.matches("usage: vkit SUBCOMMAND", r.stderr, 1, true)
    cleanup()
  end)

  -- A front put where the full executable belongs would hand every
  -- command to itself, again and again: it must refuse at once.
  it("refuses to hand a command to itself when it sits where the full executable belongs", function()
    local dir, cleanup = t.tempdir()
    local front = dir .. "/build/lib/vkit"
    assert(vkit.fs.mkdirs(dir .. "/build/lib"))
    assert.is_true(os.execute(("cp %s %s && ln -s %s %s %s"):format(t.quote(FRONT), t.quote(front),
      t.quote(vkit.root .. "/lua"), t.quote(vkit.root .. "/policies"), t.quote(dir))))
    local r = run(front, { "version" })
    assert.equal(3, r.code, r.stderr)
    assert.equal(("vkit: cannot run the full vkit executable: %s: is this static front, not the full executable\n")
      :format(front), r.stderr)
    assert.equal(0, run(front, { "vac", "verify", VAC .. "/valid/v01" }).code)
    cleanup()
  end)

  it("names the full executable when it cannot be run, exit 3", function()
    local front, dir, cleanup = front_alone()
    for _, argv in ipairs { { "version" }, { "vac", "draft", dir }, {} } do
      local r = run(front, argv)
      assert.equal(3, r.code, table.concat(argv, " "))
      assert.equal(("vkit: cannot run the full vkit executable: %s/build/lib/vkit: No such file or directory\n")
        :format(dir), r.stderr)
      assert.equal("", r.stdout)
    end
    cleanup()
  end)
end)
