-- Issue 33 item 3: `vkit change intent init` checks, before it writes
-- anything, that the source defines the function with the profile's shape
-- (one u32 in, one u32 out, as far as the source states it): a missing
-- function, one not callable by the driver, or one of another shape is
-- refused by name, and the working tree is left as it was.
local vkit = require "vkit"
local t = require "tests.support.run"

local GIT = "git -c user.name=spec -c user.email=spec@example.invalid"
local EXT = { rust = "rs", python = "py", typescript = "ts" }

-- A committed repository holding src/score.<ext> = source; returns the
-- project directory, its cleanup, and `git status --porcelain` as a function.
local function repository(language, source)
  local dir, cleanup = t.tempdir()
  local project = dir .. "/project"
  assert(vkit.fs.mkdirs(project .. "/src"))
  t.write(project .. "/src/score." .. EXT[language], source)
  assert(os.execute(("cd %s && git init -q -b main && git add -A && %s commit -q -m base"):format(t.quote(project), GIT)))
  local function status()
    local p = io.popen(("cd %s && git status --porcelain --untracked-files=all"):format(t.quote(project)))
    local out = p:read "a"
    p:close()
    return out
  end
  return project, cleanup, status
end

local function init(project, language, fn)
  return t.vkit { "change", "intent", "init", "--project", project, "--language", language, "--source",
                  "src/score." .. EXT[language], "--function", fn or "score", "--domain", "0..99",
                  "--observations", "0..100" }
end

local CASES = {
  { "python", "def score(x):\n    return x\n", "nosuch", "no function `nosuch` in src/score.py (no-function)" },
  { "python", "def score(x, y):\n    return x\n", nil,
    "`score` in src/score.py takes 2 parameters; the u32 -> u32 profile calls it with one plain parameter (wrong-shape)" },
  { "python", "def score(x: str) -> int:\n    return 1\n", nil,
    "`score` in src/score.py declares its parameter `x` as str, not int (wrong-shape)" },
  { "python", "def score(x) -> str:\n    return 'a'\n", nil, "`score` in src/score.py returns str, not int (wrong-shape)" },
  { "python", "def score(x:\n", nil, "src/score.py does not parse (line 1) (syntax-error)" },
  { "rust", "pub fn score(x: u32) -> u32 { x }\n", "nosuch", "no function `nosuch` in src/score.rs (no-function)" },
  { "rust", "fn score(x: u32) -> u32 { x }\n", nil, "`score` in src/score.rs is not pub: the driver cannot call it (not-exported)" },
  { "rust", "pub fn score(x: u64) -> u32 { x as u32 }\n", nil,
    "`score` in src/score.rs declares its parameter `x` as u64, not u32 (wrong-shape)" },
  { "rust", "pub fn score(x: u32) -> i32 { 0 }\n", nil, "`score` in src/score.rs returns i32, not u32 (wrong-shape)" },
  { "typescript", "export function score(x: number): number { return x; }\n", "nosuch",
    "no function `nosuch` in src/score.ts (no-function)" },
  { "typescript", "function score(x: number): number { return x; }\n", nil,
    "`score` in src/score.ts is not exported: the driver cannot call it (not-exported)" },
  { "typescript", "export function score(x: number, y: number): number { return x; }\n", nil,
    "`score` in src/score.ts takes 2 parameters; the u32 -> u32 profile calls it with one plain parameter (wrong-shape)" },
  { "typescript", "export const score = (x: number): string => 'a';\n", nil,
    "`score` in src/score.ts returns string, not number (wrong-shape)" },
}

describe("vkit change intent init checks the function before writing", function()
  for _, c in ipairs(CASES) do
    local language, source, fn, message = c[1], c[2], c[3], c[4]
    it(("refuses %s: %s"):format(language, message), function()
      local project, cleanup, status = repository(language, source)
      local r = init(project, language, fn)
      assert.equal(1, r.code, r.stdout)
      assert.matches(message .. "; nothing was written", r.stderr, 1, true)
      assert.equal("", status())
      cleanup()
    end)
  end

  it("accepts the shapes the profile calls: annotated or not, an exported arrow function, a decorated def", function()
    for _, c in ipairs {
      { "python", "import functools\n@functools.cache\ndef score(x: int) -> int:\n    return x\n" },
      { "python", "def score(x):\n    return x\n" },
      { "typescript", "export const score = (x: number): number => x;\n" },
      { "typescript", "export function score(x) { return x; }\n" },
      { "rust", "pub fn score(x: u32) -> u32 { x }\n" },
    } do
      local project, cleanup, status = repository(c[1], c[2])
      local r = init(project, c[1])
      assert.equal(0, r.code, r.stderr)
      assert.matches("verification/", status(), 1, true)
      cleanup()
    end
  end)
end)
