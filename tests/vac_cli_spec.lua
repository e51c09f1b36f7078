-- Issue 17 item 7 (and item 8 for VAC): the VAC command line.  Several
-- bundles in one call with a table and a total; distinct messages for a
-- missing path, a file that is not an archive and an unsupported
-- compression; --json on every subcommand with errors as JSON on stdout;
-- --help for every subcommand; colour only on a terminal.
local vkit = require "vkit"
local t = require "tests.support.run"
local json = vkit.json

local FIXTURES = vkit.root .. "/fixtures/vac"
local CORPUS = vkit.root .. "/fixtures/conformance/vac"
local VALID, COOKED = FIXTURES .. "/valid/v01", FIXTURES .. "/tampered/raw-aggregate-fleet-line"

describe("vkit vac (command line)", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("verifies several bundles in one call: a table, a total, exit 0 only when every one passes", function()
    local r = t.vkit { "vac", "verify", VALID, FIXTURES .. "/valid/v02", FIXTURES .. "/archives/valid-v01.tar.gz" }
    assert.equal(0, r.code, r.stdout .. r.stderr)
    assert.matches("\nPASS    v01 *\n", r.stdout)
    assert.matches("\nPASS    valid%-v01%.tar%.gz\n", r.stdout)
    assert.matches("\ntotal: 3 bundles, 3 passed, 0 failed, 0 not verified\n", r.stdout)
    assert.matches("not semantic replay", r.stdout)
    r = t.vkit { "vac", "verify", VALID, COOKED }
    assert.equal(1, r.code)
    assert.matches("\nFAIL    raw%-aggregate%-fleet%-line  raw%-aggregate%-mismatch %(1 failure%)\n", r.stdout)
    assert.matches("total: 2 bundles, 1 passed, 1 failed, 0 not verified", r.stdout)
    -- a row the table cannot verify makes it a usage error (exit 2), the others still verified
    r = t.vkit { "vac", "verify", VALID, COOKED, dir .. "/missing" }
    assert.equal(2, r.code)
    assert.matches("\nERROR   .*missing +no%-such%-path: .*missing: no such file or directory\n", r.stdout)
    assert.matches("total: 3 bundles, 1 passed, 1 failed, 1 not verified", r.stdout)
  end)

  it("aligns the table for every outcome word", function()
    local r = t.vkit { "vac", "verify", VALID, COOKED, dir .. "/missing" }
    local columns = {}
    for line in r.stdout:gmatch "[^\n]+" do
      local word, name = line:match "^(%u+)( +)%S"
      if word and word ~= "RESULT" or line:find "^RESULT" then columns[#columns + 1] = #line:match "^%S+%s+" end
    end
    assert.equal(4, #columns)
    for _, c in ipairs(columns) do assert.equal(8, c) end
  end)

  it("names a missing path, a file that is not an archive and an unsupported compression apart", function()
    t.write(dir .. "/notes.txt", "not a bundle\n")
    t.write(dir .. "/b.tar.bz2", "BZh91AY&SY" .. ("x"):rep(600))
    t.write(dir .. "/xz.tar", "\253" .. "7zXZ\0" .. ("x"):rep(600))
    t.write(dir .. "/zstd.tgz", "\40\181\47\253" .. ("x"):rep(600))
    local cases = {
      { dir .. "/missing", "no-such-path", "no such file or directory" },
      { dir .. "/notes.txt", "not-a-bundle", "a file that is not a bundle archive" },
      { "/dev/null", "not-a-bundle", "a special file" },
      { dir .. "/b.tar.bz2", "unsupported-compression", "bzip2%-compressed tar: unsupported compression" },
      { dir .. "/xz.tar", "unsupported-compression", "xz%-compressed: unsupported compression" },
      { dir .. "/zstd.tgz", "unsupported-compression", "zstd%-compressed: unsupported compression" },
    }
    for _, c in ipairs(cases) do
      local r = t.vkit { "vac", "verify", c[1] }
      assert.equal(2, r.code, c[1])
      assert.matches(c[3], r.stderr)
      assert.equal("", r.stdout)
      local j = t.vkit { "vac", "verify", "--json", c[1] }
      assert.equal(2, j.code)
      local doc = assert(json.decode(j.stdout), j.stdout)
      assert.equal(c[2], doc.error.code, c[1])
      assert.matches(c[3], doc.error.message)
      assert.equal("", j.stderr)
    end
  end)

  it("speaks JSON on every subcommand under --json, errors included", function()
    local many = assert(json.decode(t.vkit({ "vac", "verify", "--json", VALID, COOKED, dir .. "/missing" }).stdout))
    assert.same({ bundles = 3, passed = 1, failed = 1, errors = 1 }, many.total)
    assert.equal("pass", many.bundles[1].verdict)
    assert.same({ "raw-aggregate-mismatch" }, many.bundles[2].reasons)
    assert.equal("no-such-path", many.bundles[3].error.code)

    local conf = t.vkit { "vac", "conformance", "--json", CORPUS }
    assert.equal(0, conf.code)
    local c = assert(json.decode(conf.stdout))
    assert.equal(39, c.passed)
    assert.equal(39, #c.cases)

    local usage = t.vkit { "vac", "verify", "--json", "--bogus", VALID }
    assert.equal(2, usage.code)
    assert.equal("usage", assert(json.decode(usage.stdout)).error.code)
    assert.equal("", usage.stderr)
    local unknown = t.vkit { "vac", "frobnicate", "--json" }
    assert.equal(2, unknown.code)
    assert.equal("usage", assert(json.decode(unknown.stdout)).error.code)

    local d = t.vkit { "vac", "draft", "--json", dir .. "/missing" }
    assert.equal(1, d.code)
    assert.equal("not-drafted", assert(json.decode(d.stdout)).error.code)
    local reg = t.vkit { "vac", "registry", "--json", "--config", dir .. "/missing.json" }
    assert.equal(2, reg.code)
    assert.equal("unreadable-config", assert(json.decode(reg.stdout)).error.code)
    local fetched = t.vkit { "vac", "registry", "--json", "--check-fetched", dir, "--registry", dir .. "/none.json" }
    assert.equal(2, fetched.code)
    assert.equal("unreadable-registry", assert(json.decode(fetched.stdout)).error.code)
    t.write(dir .. "/registry.json", '{"entries": []}')
    fetched = t.vkit { "vac", "registry", "--json", "--check-fetched", dir, "--registry", dir .. "/registry.json" }
    assert.equal(0, fetched.code, fetched.stdout)
    assert.same({ verdict = "pass", entries = 0, problems = {} }, assert(json.decode(fetched.stdout)))
  end)

  it("drafts with --json", function()
    local b = dir .. "/claim"
    assert(vkit.fs.mkdirs(b))
    t.write(b .. "/rows.json", "[]")
    local r = t.vkit { "vac", "draft", "--json", b }
    assert.equal(0, r.code, r.stdout .. r.stderr)
    local doc = assert(json.decode(r.stdout))
    assert.equal(b .. "/vac.json", doc.manifest)
    assert.equal(1, doc.artifacts)
    assert.is_true(doc.markers > 0)
  end)

  it("describes every subcommand with --help: synopsis, options, exit codes", function()
    for _, sub in ipairs { "verify", "draft", "registry", "conformance" } do
      for _, argv in ipairs { { "vac", sub, "--help" }, { "vac", sub, "-h" }, { "vac", sub, VALID, "--help" } } do
        local r = t.vkit(argv)
        assert.equal(0, r.code, table.concat(argv, " "))
        assert.matches("^usage: vkit vac " .. sub, r.stdout)
        assert.matches("\noptions:\n", r.stdout)
        assert.matches("\nexit codes:\n  0 ", r.stdout)
        assert.equal("", r.stderr)
      end
    end
    local r = t.vkit { "vac", "--help" }
    assert.equal(0, r.code)
    assert.matches("vkit vac verify BUNDLE%.%.%.", r.stdout)
    assert.matches("'vkit vac COMMAND %-%-help'", r.stdout)
  end)

  -- colour only when stdout is a terminal (a real pty from script(1)), never
  -- with NO_COLOR or --json
  it("colours verdicts on a terminal only, and never with NO_COLOR or --json", function()
    local on_pty = t.on_pty
    local coloured = on_pty("", { "vac", "verify", VALID, COOKED })
    assert.matches("\27%[32mPASS", coloured)
    assert.matches("\27%[31mFAIL", coloured)
    assert.matches("\27%[31mFAIL\27%[0m — 1 named reason", on_pty("", { "vac", "verify", COOKED }))
    assert.is_nil(on_pty("NO_COLOR=1 ", { "vac", "verify", VALID, COOKED }):find("\27", 1, true))
    assert.is_nil(on_pty("", { "vac", "verify", "--json", VALID, COOKED }):find("\27", 1, true))
    assert.is_nil(t.vkit({ "vac", "verify", VALID, COOKED }).stdout:find("\27", 1, true))
  end)
end)
