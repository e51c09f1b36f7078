-- Which accepted intent the one command certifies when several bind the
-- changed file (vkit.commands.change.intent_for, vkit.change.touched): the
-- one whose function's definition changed, only when the change is confined
-- to that definition; the others are named "not certified", never dropped
-- silently.  A real Git repository holding two intents on two functions of
-- one Python file.
local vkit = require "vkit"
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local intent_for = require "vkit.commands.change.intent_for"
local touched = require "vkit.change.touched"

local BASE = intents.TWO.base

describe("intent_for.find with two intents on one file", function()
  local p
  before_each(function() p = intents.two_functions_project() end)
  after_each(function() intents.finish(p) end)

  local function find(source)
    local candidate = p.commit({ [intents.TWO.path] = source }, p.target)
    return intent_for.find(p.repo, p.target, candidate, p.dir)
  end

  it("takes the intent whose definition changed and names the other as not certified", function()
    local found = assert(find((BASE:gsub("return min%(2 %* x, 100%)", "return min(x + x, 100)"))))
    assert.equal(p.digest, found.digest)
    assert.equal("score", found["function"])
    assert.equal(1, #found.uncertified)
    assert.equal(p.bonus_digest, found.uncertified[1].digest)
    assert.equal("not certified: " .. p.bonus_digest .. " (bonus in src/score.py) binds src/score.py too; its "
      .. "definition is unchanged, but certify it with --intent D", intent_for.uncertified_line(found))
  end)

  it("refuses when a helper changed too: the unchanged bonus may change behaviour through it", function()
    local source = BASE:gsub("return min%(v, 100%)", "return min(v, 99)"):gsub("return min%(2 %* x, 100%)",
      "return min(x + x, 100)")
    local found, why = find(source)
    assert.is_nil(found)
    assert.matches("only score's definition changed, but the change reaches outside it in src/score.py", why, 1, true)
    assert.matches(p.digest, why, 1, true)
    assert.matches(p.bonus_digest, why, 1, true)
    assert.matches("name one with --intent, and certify each", why, 1, true)
  end)

  it("refuses when another source file of the language changed too (bonus may import it)", function()
    local candidate = p.commit({ [intents.TWO.path] = (BASE:gsub("return min%(2 %* x, 100%)", "return min(x + x, 100)")),
                                 ["src/helper.py"] = "def cap(v):\n    return 0\n" }, p.target)
    local found, why = intent_for.find(p.repo, p.target, candidate, p.dir)
    assert.is_nil(found)
    assert.matches("only score's definition changed, but src/helper.py changed too", why, 1, true)
    -- the candidate's file name is shown escaped in the sentence
    candidate = p.commit({ [intents.TWO.path] = (BASE:gsub("return min%(2 %* x, 100%)", "return min(x + x, 100)")),
                           ["src/h\n::error::x.py"] = "X = 1\n" }, p.target)
    found, why = intent_for.find(p.repo, p.target, candidate, p.dir)
    assert.is_nil(found)
    assert.matches("but src/h\\x0a::error::x.py changed too", why, 1, true)
    -- a file of no source language does not stop the narrowing
    candidate = p.commit({ [intents.TWO.path] = (BASE:gsub("return min%(2 %* x, 100%)", "return min(x + x, 100)")),
                           ["README"] = "words\n" }, p.target)
    assert.equal(p.digest, assert(intent_for.find(p.repo, p.target, candidate, p.dir)).digest)
  end)

  it("refuses when a file the language loads changed too: compiled modules, byte code, .pth", function()
    local changed = BASE:gsub("return min%(2 %* x, 100%)", "return min(x + x, 100)")
    for _, other in ipairs { "src/_native.cpython-312-x86_64-linux-gnu.so", "src/__pycache__/helper.cpython-312.pyc",
                             "src/helper.pyx", "src/site.pth" } do
      local candidate = p.commit({ [intents.TWO.path] = changed, [other] = "\0\1" }, p.target)
      local found, why = intent_for.find(p.repo, p.target, candidate, p.dir)
      assert.is_nil(found, other)
      assert.matches("only score's definition changed, but " .. other .. " changed too", why, 1, true)
    end
  end)

  it("refuses when only the shared helper changed (neither definition did)", function()
    local found, why = find((BASE:gsub("return min%(v, 100%)", "return min(v, 99)")))
    assert.is_nil(found)
    assert.matches("none of their definitions changed", why, 1, true)
  end)

  it("refuses when both definitions changed", function()
    local found, why = find((BASE:gsub("return cap%(2 %* x%)", "return cap(x + x)"):gsub("return min%(2 %* x, 100%)",
      "return min(x + x, 100)")))
    assert.is_nil(found)
    assert.matches("the definitions of 2 of them changed", why, 1, true)
  end)

  it("refuses when the rest of the file calls the changed function, even by a new line", function()
    -- bonus calls score: score's change reaches bonus without touching its text
    local calls = BASE:gsub("return cap%(2 %* x%)", "return score(x)")
    p.files[intents.TWO.path] = calls
    local base = p.commit({ [intents.TWO.path] = calls })
    local candidate = p.commit({ [intents.TWO.path] = (calls:gsub("return min%(2 %* x, 100%)",
      "return min(x + x, 100)")) }, base)
    local found, why = intent_for.find(p.repo, base, candidate, p.dir)
    assert.is_nil(found)
    assert.matches("or the file names score elsewhere", why, 1, true)
  end)

  it("one intent on the changed file is taken as before, with nobody left uncertified", function()
    local other = intents.language_project "python"
    local candidate = other.commit({ ["src/score.py"] = intents.SOURCES.python.good }, other.target)
    local found = assert(intent_for.find(other.repo, other.target, candidate, other.dir))
    assert.equal(other.digest, found.digest)
    assert.is_nil(intent_for.uncertified_line(found))
    intents.finish(other)
  end)
end)

describe("intent_for.find with intents on two files", function()
  local json = require("vkit").json
  local authoring = require "vkit.change.authoring"
  local p
  before_each(function()
    -- score in src/score.py (p.digest) and bonus in src/bonus.py
    local artifacts = intents.artifacts_for("python", "src/score.py")
    local bonus_artifacts = {}
    for k, v in pairs(artifacts) do bonus_artifacts[k] = v end
    bonus_artifacts.binding_map = { path = "verification/binding-bonus.json", bytes = json.encode {
      schema_version = 1, language = "python", source = "src/bonus.py", ["function"] = "bonus" } }
    local files, digest = authoring.revision { requirement = { source = "ISSUE-43", statement = "bonus" },
      contract = intents.contract, artifacts = bonus_artifacts }
    local _, first = authoring.revision { requirement = { source = "ISSUE-42",
      statement = "score doubles small inputs and caps at 100" }, contract = intents.contract, artifacts = artifacts }
    files["verification/change-intents/accepted.v1.json"] = authoring.accepted { first, digest }
    files["src/bonus.py"] = "def bonus(x):\n    return min(2 * x, 100)\n"
    files["src/helper.py"] = "def cap(v):\n    return min(v, 100)\n"
    p = intents.project { artifacts = artifacts, source_path = "src/score.py", source = intents.SOURCES.python.base,
                          extra = files }
    p.bonus_digest = digest
  end)
  after_each(function() intents.finish(p) end)

  it("names the intent on an unchanged file as not certified when a helper of its language changed", function()
    -- the author edits a helper bonus's module may import, and touches score
    local candidate = p.commit({ ["src/score.py"] = intents.SOURCES.python.good,
                                 ["src/helper.py"] = "def cap(v):\n    return 0\n" }, p.target)
    local found = assert(intent_for.find(p.repo, p.target, candidate, p.dir))
    assert.equal(p.digest, found.digest)
    assert.equal("not certified: " .. p.bonus_digest .. " (bonus in src/bonus.py); its file is unchanged, but "
      .. "src/helper.py changed too and its module may load it; certify it with --intent D",
      intent_for.uncertified_line(found))
    -- a helper's name is shown escaped: a line break cannot start a line
    candidate = p.commit({ ["src/score.py"] = intents.SOURCES.python.good,
                           ["src/x\n::error::forged.py"] = "X = 1\n" }, p.target)
    found = assert(intent_for.find(p.repo, p.target, candidate, p.dir))
    assert.matches("but src/x\\x0a::error::forged.py changed too", intent_for.uncertified_line(found), 1, true)
    assert.is_nil(intent_for.uncertified_line(found):find "\n")
    -- only the bound file changed: nothing else to name
    candidate = p.commit({ ["src/score.py"] = intents.SOURCES.python.good, README = "x\n" }, p.target)
    found = assert(intent_for.find(p.repo, p.target, candidate, p.dir))
    assert.is_nil(intent_for.uncertified_line(found))
  end)
end)

describe("vkit.change.touched.compare", function()
  it("tells a changed definition from a confined one, in each language", function()
    local cases = {
      { "python", "def f(x):\n    return x\n\n\ndef g(x):\n    return x\n",
                  "def f(x):\n    return x + 0\n\n\ndef g(x):\n    return x\n", "f", true, true },
      { "python", "def f(x):\n    return x\n", "def f(x):\n    return x\n# f\n", "f", false, false },
      { "rust", "pub fn f(x: u32) -> u32 { x }\npub fn g(x: u32) -> u32 { x }\n",
                "pub fn f(x: u32) -> u32 { x + 0 }\npub fn g(x: u32) -> u32 { x }\n", "g", false, false },
      { "rust", "pub fn f(x: u32) -> u32 { x }\npub fn g(x: u32) -> u32 { f(x) }\n",
                "pub fn f(x: u32) -> u32 { x + 0 }\npub fn g(x: u32) -> u32 { f(x) }\n", "f", true, false },
      { "typescript", "export function f(x: number): number { return x; }\nconst k = 1;\n",
                      "export function f(x: number): number { return x + 0; }\nconst k = 1;\n", "f", true, true },
      { "typescript", "export const f = (x: number): number => x;\nconst k = 1;\n",
                      "export const f = (x: number): number => x;\nconst k = 2;\n", "f", false, false },
      -- a later Python def of the same name (the one that runs), a renamed
      -- original beside a new one, a Rust original compiled out beside a
      -- new one: the rest changed and names it, so never confined
      { "python", "def f(x):\n    return x\n", "def f(x):\n    return x\n\n\ndef f(x):\n    return 0\n", "f", false, false },
      { "python", "def f(x):\n    return x\n", "def f_old(x):\n    return x\n\n\ndef f(x):\n    return 0\n", "f", true,
        false },
      { "rust", "pub fn f(x: u32) -> u32 { x }\n",
                "#[cfg(any())]\npub fn f(x: u32) -> u32 { x }\npub fn f(x: u32) -> u32 { 0 }\n", "f", false, false },
      -- another spelling of the name in the rest: Python's NFKC (fullwidth
      -- letters), TypeScript's \u escapes; counted as naming it
      { "python", "def f(x):\n    return x\n\n\ndef g(x):\n    return \xef\xbd\x86(x)\n",
                  "def f(x):\n    return x + 0\n\n\ndef g(x):\n    return \xef\xbd\x86(x)\n", "f", true, false },
      { "typescript", "export function f(x: number): number { return x; }\nexport const g = (x: number): number => \\u0066(x);\n",
                      "export function f(x: number): number { return x + 0; }\nexport const g = (x: number): number => \\u0066(x);\n",
                      "f", true, false },
      -- missing on one side, or not parsing: changed, never confined
      { "python", "def f(x):\n    return x\n", "def h(x):\n    return x\n", "f", true, false },
      { "python", "def f(x):\n    return x\n", "def f(x:\n", "f", true, false },
    }
    for i, c in ipairs(cases) do
      local got = touched.compare(c[1], c[2], c[3], c[4])
      assert.same({ definition_changed = c[5], confined = c[6] }, got, "case " .. i)
    end
  end)
end)

describe("vkit change certify --base --candidate with two intents on one file", function()
  local p
  before_each(function() p = intents.two_functions_project() end)
  after_each(function() intents.finish(p) end)

  it("certifies the changed function and prints which intent it did not certify, before the verdict", function()
    local candidate = p.commit({ [intents.TWO.path] = (BASE:gsub("return min%(2 %* x, 100%)",
      "return min(x + x, 100)")) }, p.target)
    local r = t.vkit({ "change", "certify", "--base", p.target, "--candidate", candidate, "--timeout", "10m" }, nil,
      { cd = p.dir .. "/project" })
    assert.equal(0, r.code, r.stdout .. r.stderr)
    local line = "not certified: " .. p.bonus_digest .. " (bonus in src/score.py) binds src/score.py too"
    assert.matches("vkit: intent " .. p.digest:sub(1, 12) .. " (ISSUE-42, score in src/score.py)", r.stderr, 1, true)
    assert.matches("vkit: " .. line, r.stderr, 1, true)
    local at = assert(r.stdout:find("\n" .. line, 1, true), r.stdout)
    assert.truthy(r.stdout:find("^[^\n]*\nverdict: all_inputs_conform", at + 1), "the line just before the verdict")
    assert.truthy(vkit.fs.lstat(p.dir .. "/project/.vkit"))
  end)
end)
