-- `vkit change intent init` for the multi-parameter profile (issue 34):
-- the signature is read from the source, --type / --returns settle the
-- widths the source leaves open, --domain NAME=SET once per parameter; the
-- written intent is accepted by a plain commit and `vkit change request`
-- and the one command (vkit change certify --base --candidate) take it
-- unchanged, in all three languages.  Refusals are named and write nothing.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local multi = require "tests.support.multi"
local git_support = require "tests.support.git"

local SOURCES = multi.CLAMP_SOURCES
local PATHS = { python = "src/clamp.py", rust = "src/clamp.rs", typescript = "src/clamp.ts" }
-- Rust fixes every width in the source; Python's int and TypeScript's number do not.
local TYPES = { "--type", "x=i32", "--type", "lo=i32", "--type", "hi=i32", "--returns", "i32" }
local DOMAIN = { "--domain", "x=-50..50", "--domain", "lo=-10..10", "--domain", "hi=-10..10",
                 "--observations", "-50..50" }
local COVERAGE = "checked 44541 of 44541 accepted inputs (exhaustive: x in -50..50, lo in -10..10, hi in -10..10)"
local GIT = "git -c user.name=spec -c user.email=spec@example.invalid"

-- A shell script run in dir, raising on failure: its output.
local function sh(dir, script)
  return git_support.sh(("cd %s && %s"):format(t.quote(dir), script))
end

local function head(project)
  return sh(project, "git rev-parse HEAD"):match "%x+"
end

-- A repository holding clamp's base, committed on main.
local function repository(language)
  local dir, cleanup = t.tempdir()
  local project = dir .. "/project"
  assert(vkit.fs.mkdirs(project .. "/src"))
  t.write(project .. "/" .. PATHS[language], SOURCES[language].base)
  sh(project, "git init -q -b main && git add -A && " .. GIT .. " commit -q -m base")
  return project, cleanup
end

local function init(project, language, ...)
  local argv = { "change", "intent", "init", "--project", project, "--language", language, "--source",
                 PATHS[language], "--function", "clamp" }
  for _, list in ipairs { ... } do
    for _, a in ipairs(list) do argv[#argv + 1] = a end
  end
  return t.vkit(argv)
end

describe("vkit change intent init for a function of several parameters", function()
  for _, language in ipairs { "python", "typescript", "rust" } do
    it(("writes a %s intent that accept, request and the one command take unchanged"):format(language), function()
      local project, cleanup = repository(language)
      finally(cleanup)
      local r = init(project, language, language == "rust" and {} or TYPES, DOMAIN,
        { "--require", "x=0..9,lo=0,hi=10 -> 0..9", "--json" })
      assert.equal(0, r.code, r.stderr)
      local out = assert(json.decode(r.stdout))
      assert.is_false(out.accepted)
      local revision = json.decode(vkit.fs.read(("%s/verification/change-intents/%s.v1.json"):format(project,
        out.digest)))
      local c = revision.contract
      assert.same({ params = { { name = "x", type = "i32" }, { name = "lo", type = "i32" }, { name = "hi", type = "i32" } },
                    returns = "i32" }, c.signature)
      assert.same({ x = "-50..50", lo = "-10..10", hi = "-10..10" }, c.domain.inputs)
      assert.same({ "-50..50" }, c.observations)
      assert.same({ { inputs = { x = "0..9", lo = "0", hi = "10" }, outputs = { "0..9" } } }, c.requirements)
      local codec = json.decode(vkit.fs.read(project .. "/verification/clamp/codec.json"))
      assert.same({ schema_version = 2, signature = c.signature, input = "fixed-le", output = "fixed-le-records" }, codec)

      sh(project, "git add verification && " .. GIT .. " commit -q -m propose")
      t.write(project .. "/" .. out.accepted_list.path, out.accepted_list.bytes)
      sh(project, "git add -A && " .. GIT .. " commit -q -m accept")
      local target = head(project)
      local request = t.vkit { "change", "request", "--project", project, "--intent", out.digest, "--base", target,
                               "--candidate", target }
      assert.equal(0, request.code, request.stderr)
      assert.same(c, json.decode(request.stdout).claim)

      t.write(project .. "/" .. PATHS[language], SOURCES[language].one)
      sh(project, GIT .. " commit -q -am bug")
      local certify = t.vkit { "change", "certify", "--project", project, "--base", target, "--candidate",
                               head(project), "--timeout", "5m" }
      assert.equal(1, certify.code, certify.stderr)
      assert.truthy(certify.stdout:find("clamp(x=7, lo=3, hi=-2): base 3, candidate -2", 1, true), certify.stdout)
      assert.truthy(certify.stdout:find(COVERAGE, 1, true))
    end)
  end

  it("refuses by name and writes nothing", function()
    local project, cleanup = repository "python"
    finally(cleanup)
    local cases = {
      { {}, DOMAIN, "width-required", "pass --type x=TYPE" },
      { { "--type", "x=i32", "--type", "lo=i32", "--type", "hi=i32" }, DOMAIN, "width-required", "--returns TYPE" },
      { TYPES, { "--domain", "x=-50..50", "--domain", "lo=-10..10", "--observations", "*" }, "missing-domain",
        "pass --domain hi=SET" },
      { TYPES, { "--domain", "x=0", "--domain", "lo=0", "--domain", "hi=0", "--domain", "y=1", "--observations", "*" },
        "unknown-parameter", "no parameter y" },
      { { "--type", "y=i32" }, DOMAIN, "unknown-parameter", "no parameter y" },
      { { "--type", "x=i32", "--type", "lo=i32", "--type", "hi=bool", "--returns", "i32" }, DOMAIN, "set-invalid",
        "parameter hi is bool" },
      { TYPES, { "--domain", "x=*", "--domain", "lo=0..1", "--domain", "hi=0", "--observations", "*" },
        "exhaustive-cap", "the accepted inputs are 4294967296 x 2 x 1 = 8589934592, more than the exhaustive "
          .. "method's cap of 1048576" },
      { TYPES, { "--domain", "x=0", "--domain", "lo=0", "--domain", "hi=0", "--observations", "*; *" },
        "observations-invalid", "2 output sets for 1 result components" },
      { TYPES, { "--domain", "x=0", "--domain", "lo=0", "--domain", "hi=0", "--observations", "*", "--require",
        "x=0 = 1" }, "require-invalid", "expected BOX -> OUTPUTS" },
    }
    for _, case in ipairs(cases) do
      local r = init(project, "python", case[1], case[2])
      assert.equal(1, r.code, r.stderr)
      assert.truthy(r.stderr:find("(" .. case[3] .. "); nothing was written", 1, true), r.stderr)
      assert.truthy(r.stderr:find(case[4], 1, true), r.stderr)
    end
    assert.is_nil(vkit.fs.lstat(project .. "/verification"))
  end)

  it("writes a tuple result from --returns T1,T2 and one output set per component", function()
    local project, cleanup = repository "python"
    finally(cleanup)
    t.write(project .. "/src/div.py", "def div(a, b):\n    if b == 0:\n        return (0, False)\n    return (a // b, True)\n")
    local r = t.vkit { "change", "intent", "init", "--project", project, "--language", "python", "--source", "src/div.py",
                       "--function", "div", "--type", "a=u8", "--type", "b=u8", "--returns", "u8,bool",
                       "--domain", "a=*", "--domain", "b=0..15", "--observations", "*; *",
                       "--require", "b=0 -> 0; false", "--json" }
    assert.equal(0, r.code, r.stderr)
    local digest = json.decode(r.stdout).digest
    local c = json.decode(vkit.fs.read(("%s/verification/change-intents/%s.v1.json"):format(project, digest))).contract
    assert.same({ "u8", "bool" }, c.signature.returns)
    assert.same({ a = "*", b = "0..15" }, c.domain.inputs)
    assert.same({ "*", "*" }, c.observations)
    assert.same({ { inputs = { b = "0" }, outputs = { "0", "false" } } }, c.requirements)
  end)

  it("refuses requirements that contradict the observations (unsatisfiable-intent)", function()
    local project, cleanup = repository "python"
    finally(cleanup)
    local r = init(project, "python", TYPES, { "--domain", "x=0..9", "--domain", "lo=0", "--domain", "hi=9",
                                               "--observations", "0..4", "--require", "x=0 -> 5..9" })
    assert.equal(1, r.code)
    assert.truthy(r.stderr:find("allows no value of result component 1 for input x=0, lo=0, hi=9", 1, true), r.stderr)
    assert.truthy(r.stderr:find("(unsatisfiable-intent)", 1, true), r.stderr)
    assert.is_nil(vkit.fs.lstat(project .. "/verification"))
  end)

  it("refuses a width the source contradicts (a Rust i32 declared bool)", function()
    local project, cleanup = repository "rust"
    finally(cleanup)
    local r = init(project, "rust", { "--type", "x=bool" }, DOMAIN)
    assert.equal(1, r.code)
    assert.truthy(r.stderr:find("parameter `x` is declared bool but the source says `i32` (type-contradiction)", 1,
      true), r.stderr)
  end)

  it("keeps a bare --domain the seed's u32 -> u32, and says NAME=SET is needed beside --type", function()
    local project, cleanup = repository "python"
    finally(cleanup)
    local r = init(project, "python", TYPES, { "--domain", "0..9", "--observations", "0..9" })
    assert.equal(2, r.code)
    assert.truthy(r.stderr:find("takes --domain NAME=SET once per parameter", 1, true), r.stderr)
  end)
end)
