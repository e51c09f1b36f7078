-- `vkit change intent init` and `vkit change request` (issue 18 item 3):
-- the scaffold writes a proposed intent for review and accepts nothing;
-- after an acceptance commit its revision binds in preflight, in all three
-- languages; whatever is in the way, or would not parse, stops it whole.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"

local SOURCES = {
  rust = { path = "src/score.rs", bytes = "pub fn score(x: u32) -> u32 {\n    if x >= 50 { 100 } else { 2 * x }\n}\n" },
  python = { path = "src/score.py", bytes = "def score(x):\n    return min(2 * x, 100)\n" },
  typescript = { path = "src/score.ts",
                 bytes = "export function score(x: number): number {\n  return Math.min(2 * x, 100);\n}\n" },
}

-- Runs a shell script in dir; returns its exit status and its output.
local function sh(dir, script)
  local out = dir .. "/.sh-out"
  local _, _, code = os.execute(("cd %s && (%s) > %s 2>&1"):format(t.quote(dir), script, t.quote(out)))
  local text = t.slurp(out)
  os.remove(out)
  return code, text
end

local GIT = "git -c user.name=spec -c user.email=spec@example.invalid"

-- A repository holding one source file, committed on main.
local function repository(language)
  local dir, cleanup = t.tempdir()
  local project = dir .. "/project"
  assert(vkit.fs.mkdirs(project .. "/src"))
  t.write(project .. "/" .. SOURCES[language].path, SOURCES[language].bytes)
  local code, out = sh(project, "git init -q -b main && git add -A && " .. GIT .. " commit -q -m base")
  assert(code == 0, out)
  return project, cleanup
end

local function init(project, language, extra)
  local argv = { "change", "intent", "init", "--project", project, "--language", language, "--source",
                 SOURCES[language].path, "--function", "score", "--domain", "0..99", "--observations", "0..100" }
  for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
  return t.vkit(argv)
end

local function head(project)
  local _, out = sh(project, "git rev-parse HEAD")
  return out:match "%x+"
end

describe("vkit change intent init", function()
  for _, language in ipairs { "rust", "python", "typescript" } do
    it(("writes a %s intent for review, accepts nothing, and binds after an acceptance commit"):format(language),
      function()
        local project, cleanup = repository(language)
        local r = init(project, language, { "--require", "50..99=100", "--json" })
        assert.equal(0, r.code, r.stderr)
        local out = assert(json.decode(r.stdout))
        assert.is_false(out.accepted)
        local roles = {}
        for _, f in ipairs(out.files) do
          roles[f.role] = f.path
          assert.equal(f.sha256, vkit.hash.file(project .. "/" .. f.path), f.path)
        end
        assert.equal("verification/score/binding.json", roles["binding map"])
        assert.equal("verification/score/environment.json", roles["environment model"])
        assert.equal(("verification/change-intents/%s.v1.json"):format(out.digest), roles["intent revision"])
        -- nothing accepted: no acceptance list was written
        assert.is_nil(vkit.fs.lstat(project .. "/verification/change-intents/accepted.v1.json"))
        local revision = assert(json.decode(assert(vkit.fs.read(project .. "/" .. roles["intent revision"]))))
        assert.same({ { inputs = { { from = 50, to = 99 } }, outputs = { 100 } } }, revision.contract.requirements)
        assert.equal(language, json.decode(vkit.fs.read(project .. "/" .. roles["binding map"])).language)

        local code, log = sh(project, "git add verification && " .. GIT .. " commit -q -m propose")
        assert(code == 0, log)
        local proposed = head(project)
        local request = t.vkit { "change", "request", "--project", project, "--intent", out.digest, "--base", proposed,
                                 "--candidate", proposed }
        assert.equal(0, request.code, request.stderr)
        -- proposed is not accepted: preflight refuses it
        local bound, _, why = vkit.change.preflight(project, request.stdout, proposed)
        assert.is_nil(bound)
        assert.equal("accepted-list-missing", why)

        -- the acceptance commit: exactly the list it printed
        t.write(project .. "/" .. out.accepted_list.path, out.accepted_list.bytes)
        code, log = sh(project, "git add -A && " .. GIT .. " commit -q -m accept")
        assert(code == 0, log)
        local target = head(project)
        request = t.vkit { "change", "request", "--project", project, "--intent", out.digest, "--base", target,
                           "--candidate", target }
        assert.equal(0, request.code, request.stderr)
        bound, why = vkit.change.preflight(project, request.stdout, target)
        assert.is_table(bound, why)
        assert.equal(out.digest, bound.intent.digest)
        assert.equal("request_preflight", vkit.change.bound_json(bound).scope)
        cleanup()
      end)
  end

  it("prints what to commit and the acceptance list the acceptance commit must contain", function()
    local project, cleanup = repository "python"
    local r = init(project, "python", { "--requirement", "ISSUE-7", "--statement", "score doubles and caps at 100" })
    assert.equal(0, r.code, r.stderr)
    local digest = r.stdout:match "\ndigest (%x+)\n"
    assert.equal(64, #digest)
    assert.matches("wrote, for review (nothing is accepted):", r.stdout, 1, true)
    assert.matches("git add verification/score verification/change-intents/" .. digest .. ".v1.json", r.stdout, 1, true)
    assert.matches("must set verification/change-intents/accepted.v1.json to:", r.stdout, 1, true)
    assert.matches('"' .. digest .. '"', r.stdout, 1, true)
    assert.matches("vkit change certify --base T --candidate C --intent " .. digest, r.stdout, 1, true)
    local revision = json.decode(vkit.fs.read(("%s/verification/change-intents/%s.v1.json"):format(project, digest)))
    assert.same({ source = "ISSUE-7", statement = "score doubles and caps at 100" }, revision.requirement)
    -- again with the same arguments: the same bytes, nothing refused
    assert.equal(0, init(project, "python", { "--requirement", "ISSUE-7", "--statement",
                                              "score doubles and caps at 100" }).code)
    cleanup()
  end)

  it("adds the digest to an acceptance list the working tree already has", function()
    local project, cleanup = repository "python"
    local other = ("a"):rep(64)
    assert(vkit.fs.mkdirs(project .. "/verification/change-intents"))
    t.write(project .. "/verification/change-intents/accepted.v1.json", select(2, vkit.change.accept { other }))
    local r = init(project, "python", { "--json" })
    assert.equal(0, r.code, r.stderr)
    local out = json.decode(r.stdout)
    assert.same({ other, out.digest }, json.decode(out.accepted_list.bytes).accepted)
    -- and the file itself is untouched: init never accepts
    assert.same({ other }, json.decode(vkit.fs.read(project .. "/verification/change-intents/accepted.v1.json")).accepted)
    cleanup()
  end)

  it("writes nothing when a file with other contents is in the way", function()
    local project, cleanup = repository "python"
    assert(vkit.fs.mkdirs(project .. "/verification/score"))
    t.write(project .. "/verification/score/codec.json", "mine\n")
    local r = init(project, "python")
    assert.equal(1, r.code)
    assert.matches("verification/score/codec.json exists with other contents; nothing was written", r.stderr, 1, true)
    assert.same({ "codec.json" }, vkit.fs.list(project .. "/verification/score"))
    assert.is_nil(vkit.fs.lstat(project .. "/verification/change-intents"))
    cleanup()
  end)

  it("never writes through a link where a directory should be", function()
    local project, cleanup = repository "python"
    local elsewhere, done = t.tempdir()
    assert(vkit.fs.symlink(elsewhere, project .. "/verification"))
    local r = init(project, "python")
    assert.equal(1, r.code)
    assert.matches("verification is a link, not a directory; nothing was written", r.stderr, 1, true)
    assert.same({}, vkit.fs.list(elsewhere))
    done()
    cleanup()
  end)

  it("refuses what would not make an intent, naming why, and writes nothing", function()
    local project, cleanup = repository "python"
    local function argv(changes, drop)
      local given = { language = "python", source = "src/score.py", ["function"] = "score", domain = "0..99",
                      observations = "0..100" }
      for k, v in pairs(changes) do given[k] = v end
      local out = { "change", "intent", "init", "--project", project }
      for _, k in ipairs { "language", "source", "function", "domain", "observations", "require", "statement" } do
        if given[k] and k ~= drop then
          out[#out + 1] = "--" .. k
          out[#out + 1] = given[k]
        end
      end
      return out
    end
    local cases = {
      { argv({}, "observations"), 2, "--observations is required" },
      { argv { require = "50..99" }, 2, "is not INPUTS=OUTPUTS" },
      { argv { statement = "alone" }, 2, "--requirement and --statement go together" },
      { argv { domain = "5..3" }, 2, "is an empty range" },
      { argv { domain = "0..4096" }, 1, "at most 4096 are allowed (domain-too-large)" },
      { argv { require = "0..9=200" }, 1, "allows no output at all for input 0 (unsatisfiable-intent)" },
      { argv { language = "cobol" }, 2, "--language must be one of rust, python, typescript, not \"cobol\"" },
      { argv { source = "src/none.py" }, 1, "src/none.py is not a regular file" },
      { argv { source = "../score.py" }, 1, "not a normalised repository path" },
      { argv { ["function"] = "not-a-name" }, 1, "is not an identifier" },
    }
    for _, c in ipairs(cases) do
      local r = t.vkit(c[1])
      local label = table.concat(c[1], " ", 6)
      assert.equal(c[2], r.code, label .. ": " .. r.stderr)
      assert.matches(c[3], r.stderr, 1, true)
      assert.is_nil(vkit.fs.lstat(project .. "/verification"), label)
    end
    -- a source whose ending is another language's
    t.write(project .. "/src/score.rs", SOURCES.rust.bytes)
    local r = t.vkit { "change", "intent", "init", "--project", project, "--language", "python", "--source", "src/score.rs",
                       "--function", "score", "--domain", "0..99", "--observations", "0..100" }
    assert.equal(1, r.code)
    assert.matches("does not end in .py", r.stderr, 1, true)
    -- not a repository
    local dir, done = t.tempdir()
    r = t.vkit { "change", "intent", "init", "--project", dir, "--language", "python", "--source", "src/score.py",
                 "--function", "score", "--domain", "0..99", "--observations", "0..100" }
    assert.equal(7, r.code)
    done()
    cleanup()
  end)
end)

describe("vkit change request", function()
  it("refuses a base without the revision and malformed ids", function()
    local project, cleanup = repository "python"
    local base = head(project)
    local r = t.vkit { "change", "request", "--project", project, "--intent", ("b"):rep(64), "--base", base,
                       "--candidate", base }
    assert.equal(1, r.code)
    assert.matches("the base commit has no intent revision", r.stderr, 1, true)
    r = t.vkit { "change", "request", "--project", project, "--intent", ("b"):rep(64), "--base", "nosuch", "--candidate", base }
    assert.equal(2, r.code)
    assert.matches("--base nosuch: no such revision in", r.stderr, 1, true)
    r = t.vkit { "change", "request", "--project", project, "--intent", "B" .. ("b"):rep(63), "--base", base,
                 "--candidate", base }
    assert.equal(2, r.code)
    cleanup()
  end)
end)
