-- The relational harness generator: its shape (parsed back with vkit.ts),
-- its limits and input validation, and its semantics (the native variant
-- compiled with rustc against real admitted modules).
local vkit = require "vkit"
local t = require "tests.support.run"
local H = require "vkit.relational.harness"

local LIMITS = vkit.policies.limits.relational

local function range(a, b, step)
  local out = {}
  for v = a, b, step or 1 do out[#out + 1] = v end
  return out
end

local function spec(over)
  local s = {
    function_name = "scale",
    modules = { base = "base/src/lib.rs", candidate = "candidate/src/lib.rs" },
    inputs = range(0, 15),
    observations = range(7, 39, 2),
    standing = { { inputs = { 0, 1, 2, 3 }, outputs = { 7, 9, 11, 13 } } },
    guards = { { inputs = { 14, 15 }, outputs = { 35, 37, 39 } } },
  }
  for k, v in pairs(over or {}) do s[k] = v end
  return s
end

local function refused(s)
  local h, problem = H.generate(s)
  assert.is_nil(h)
  return problem.reason, problem.message
end

local function lines(text)
  local out = {}
  for line in text:gmatch "([^\n]*)\n" do out[#out + 1] = line end
  return out
end

describe("the relational harness generator", function()
  it("generates Rust that parses cleanly, with the four assertions where it says they are", function()
    local h = assert(H.generate(spec()))
    local tree = assert(require("vkit.ts").parse(h.bytes, { max_bytes = LIMITS.max_harness_bytes }))
    assert.is_false(tree:stats().has_error)
    local text = lines(h.bytes)
    assert.equal(4, #h.assertions)
    for i, a in ipairs(h.assertions) do
      assert.equal(H.assertions[i].id, a.id)
      local line = text[a.line]
      assert.equal("kani::assert(", line:sub(a.column, a.column + 12))
      assert.truthy(line:find('"' .. a.message .. '"', 1, true))
    end
    assert.equal(h.sha256, vkit.hash.sha256(h.bytes))
    assert.equal(#h.bytes, h.size)
    assert.same({ inputs = 16, observations = 17, standing = 1, guards = 1 }, h.counts)
    assert.equal("vkit_relational", h.harness_function)
  end)

  it("includes each captured file as its own module and never copies a body", function()
    local h = assert(H.generate(spec()))
    assert.truthy(h.bytes:find('#[path = "base/src/lib.rs"]\nmod vkit_base;', 1, true))
    assert.truthy(h.bytes:find('#[path = "candidate/src/lib.rs"]\nmod vkit_candidate;', 1, true))
    assert.truthy(h.bytes:find("vkit_base::scale(x)", 1, true))
    assert.truthy(h.bytes:find("vkit_candidate::scale(x)", 1, true))
    assert.is_nil(h.bytes:find("pub fn", 1, true))
  end)

  it("ranges over exactly the accepted inputs, as compressed patterns", function()
    local h = assert(H.generate(spec { inputs = { 5, 1, 2, 3, 9, 4294967295 }, standing = {}, guards = {} }))
    assert.truthy(h.bytes:find("matches!(v, 1..=3 | 5 | 9 | 4294967295)", 1, true))
    assert.truthy(h.bytes:find("kani::assume(vkit_accepted(x));", 1, true))
  end)

  it("takes intent-document sets and canonical ranges alike, merging overlaps", function()
    local a = assert(H.generate(spec()))
    local b = assert(H.generate(spec {
      inputs = { { from = 0, to = 9 }, 9, 10, { from = 11, to = 15 }, 3 },
      observations = { { 7, 7 }, { 9, 9 }, { 11, 11 }, { 13, 13 }, { 15, 15 }, { 17, 17 }, { 19, 19 }, { 21, 21 },
        { 23, 23 }, { 25, 25 }, { 27, 27 }, { 29, 29 }, { 31, 31 }, { 33, 33 }, { 35, 35 }, { 37, 37 }, { 39, 39 } },
      guards = { { name = "g", inputs = { { 14, 15 } }, outputs = { 35, 37, 39 } } },
    }))
    assert.equal(a.bytes, b.bytes)
    assert.equal(a.spec_digest, b.spec_digest)
  end)

  it("is deterministic, and its spec digest ignores input order", function()
    local a = assert(H.generate(spec()))
    local b = assert(H.generate(spec { inputs = { 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 } }))
    assert.equal(a.bytes, b.bytes)
    assert.equal(a.spec_digest, b.spec_digest)
    local c = assert(H.generate(spec { guards = {} }))
    assert.are_not.equal(a.spec_digest, c.spec_digest)
  end)

  describe("limits", function()
    it("allows 4,096 inputs and observations and refuses 4,097", function()
      assert.truthy(H.generate(spec { inputs = range(0, 8190, 2), observations = range(0, 8190, 2), standing = {}, guards = {} }))
      assert.equal("domain_too_large", (refused(spec { inputs = range(0, LIMITS.max_domain) })))
      assert.equal("domain_too_large", (refused(spec { observations = range(0, LIMITS.max_domain) })))
      assert.equal("domain_too_large", (refused(spec { inputs = { { from = 0, to = LIMITS.max_domain } } })))
      -- Requirement outputs are not a domain: a wide range is one pattern.
      local wide = assert(H.generate(spec { standing = { { inputs = { 0 }, outputs = { { from = 0, to = 4294967295 } } } } }))
      assert.truthy(wide.bytes:find("!matches!(y, 0..=4294967295)", 1, true))
    end)

    it("refuses more than 4,096 guard requirements (and standing requirements)", function()
      local guards = {}
      for i = 1, LIMITS.max_guards + 1 do guards[i] = { inputs = { i % 16 }, outputs = { 7 } } end
      assert.equal("too_many_guards", (refused(spec { guards = guards })))
      assert.equal("too_many_requirements", (refused(spec { standing = guards })))
    end)

    it("refuses a harness over 256 KiB, even within the count limits", function()
      local guards = {}
      for i = 1, LIMITS.max_guards do guards[i] = { inputs = { i % 16 }, outputs = { 7, 11, 15, 19 } } end
      local reason, message = refused(spec { guards = guards })
      assert.equal("harness_too_large", reason)
      assert.matches("limit 262144", message)
      local few = {}
      for i = 1, 200 do few[i] = { inputs = { i % 16 }, outputs = { 7, 11, 15, 19 } } end
      assert.truthy(H.generate(spec { guards = few }))
    end)
  end)

  describe("validation", function()
    local cases = {
      { "empty_domain", { inputs = {} } },
      { "empty_universe", { observations = {} } },
      { "invalid_value", { inputs = { 1, 4294967296 } } },
      { "invalid_value", { inputs = { -1 } } },
      { "invalid_value", { inputs = { 1.5 } } },
      { "invalid_value", { inputs = { { from = 5, to = 2 } } } },
      { "invalid_value", { inputs = { { from = 0, to = 4294967296 } } } },
      { "invalid_value", { observations = { "7" } } },
      { "invalid_spec", { inputs = { [1] = 1, [3] = 3 } } },
      { "invalid_spec", { inputs = "0..15" } },
      { "requirement_outside_domain", { guards = { { inputs = { 99 }, outputs = { 7 } } } } },
      { "requirement_outside_domain", { standing = { { inputs = { 99 }, outputs = { 7 } } } } },
      { "empty_requirement", { guards = { { inputs = { 1 }, outputs = {} } } } },
      { "empty_requirement", { standing = { { inputs = {}, outputs = { 7 } } } } },
      { "invalid_spec", { guards = { { inputs = { 1 }, outputs = { 7 }, note = "x" } } } },
      { "invalid_function_name", { function_name = "match" } },
      { "invalid_function_name", { function_name = "1st" } },
      { "invalid_function_name", { function_name = "a-b" } },
      { "invalid_function_name", { function_name = "_" } },
      { "invalid_function_name", { function_name = "f()" } },
      { "invalid_module_path", { modules = { base = "../base.rs", candidate = "c.rs" } } },
      { "invalid_module_path", { modules = { base = "/abs/base.rs", candidate = "c.rs" } } },
      { "invalid_module_path", { modules = { base = "a//base.rs", candidate = "c.rs" } } },
      { "invalid_module_path", { modules = { base = "base.txt", candidate = "c.rs" } } },
      { "invalid_module_path", { modules = { base = 'b"ad.rs', candidate = "c.rs" } } },
      { "invalid_module_path", { modules = { base = "same.rs", candidate = "same.rs" } } },
      { "invalid_spec", { target = "cbmc" } },
    }
    for _, c in ipairs(cases) do
      it(("refuses %s: %s"):format(c[1], require("vkit.pretty").format(c[2], { width = 1000 }):sub(1, 70)), function()
        assert.equal(c[1], (refused(spec(c[2]))))
      end)
    end
  end)
end)

-- The native variant runs the same predicates over every accepted input.
describe("the generated obligation, compiled natively", function()
  local rustc = io.popen("command -v rustc 2>/dev/null"):read "l"
  local it = rustc and it or function(name) pending(name .. " (needs rustc)") end
  local dir, cleanup

  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  local BASE = "pub fn scale(x: u32) -> u32 {\n    let doubled: u32 = x * 2;\n    doubled + 7\n}\n"

  -- Writes both modules and the native harness, compiles, runs.
  local function check(candidate, over)
    assert(vkit.fs.mkdirs(dir .. "/base/src"))
    assert(vkit.fs.mkdirs(dir .. "/candidate/src"))
    t.write(dir .. "/base/src/lib.rs", BASE)
    t.write(dir .. "/candidate/src/lib.rs", candidate)
    local s = spec(over)
    s.target = "native"
    local h = assert(H.generate(s))
    t.write(dir .. "/harness.rs", h.bytes)
    local build = os.execute(("cd %s && %s --edition 2021 -O harness.rs -o harness 2> build.err"):format(t.quote(dir), t.quote(rustc)))
    assert.is_true(build, t.slurp(dir .. "/build.err"))
    local out = io.popen(("cd %s && ./harness; echo \"exit=$?\""):format(t.quote(dir))):read "a"
    return out
  end

  it("passes a conforming change (same outputs, different code)", function()
    local out = check "pub fn scale(x: u32) -> u32 {\n    let tripled: u32 = x + x;\n    tripled + 7\n}\n"
    assert.equal("checked 16\nexit=0\n", out)
  end)

  it("finds a planted divergence outside the guards", function()
    local out = check "pub fn scale(x: u32) -> u32 {\n    if x == 6 {\n        return 21;\n    }\n    x * 2 + 7\n}\n"
    assert.equal("violation preserved_or_allowed_change 6 19 21\nexit=1\n", out)
  end)

  it("allows a change inside a guard, and only to what every covering guard allows", function()
    local inside = "pub fn scale(x: u32) -> u32 {\n    if x == 15 {\n        return 39;\n    }\n    x * 2 + 7\n}\n"
    assert.equal("checked 16\nexit=0\n", check(inside))
    local overlap = { guards = { { inputs = { 14, 15 }, outputs = { 35, 37, 39 } }, { inputs = { 15 }, outputs = { 37 } } } }
    assert.equal("violation preserved_or_allowed_change 15 37 39\nexit=1\n", check(inside, overlap))
    local within = "pub fn scale(x: u32) -> u32 {\n    if x == 15 {\n        return 35;\n    }\n    x * 2 + 7\n}\n"
    assert.equal("checked 16\nexit=0\n", check(within, { guards = { { inputs = { 14, 15 }, outputs = { 35, 37, 39 } }, { inputs = { 15 }, outputs = { 35 } } } }))
  end)

  it("requires the candidate's standing intent everywhere", function()
    local standing = { standing = { { inputs = { 14, 15 }, outputs = { 35 } } } }
    local out = check("pub fn scale(x: u32) -> u32 {\n    if x == 15 {\n        return 39;\n    }\n    x * 2 + 7\n}\n", standing)
    assert.equal("violation candidate_meets_standing_intent 15 37 39\nexit=1\n", out)
  end)

  it("allows an unguarded repair of a standing-intent violation", function()
    -- The base returns 13 for 3; the standing intent wants 11 there.
    local over = { standing = { { inputs = { 3 }, outputs = { 11 } } } }
    local repaired = "pub fn scale(x: u32) -> u32 {\n    if x == 3 {\n        return 11;\n    }\n    x * 2 + 7\n}\n"
    assert.equal("checked 16\nexit=0\n", check(repaired, over))
    local broken = "pub fn scale(x: u32) -> u32 {\n    if x == 3 {\n        return 9;\n    }\n    x * 2 + 7\n}\n"
    assert.equal("violation candidate_meets_standing_intent 3 13 9\nexit=1\n", check(broken, over))
  end)

  it("checks both outputs against the observation universe", function()
    local out = check("pub fn scale(x: u32) -> u32 {\n    x * 2 + 7\n}\n", { observations = range(7, 35, 2) })
    assert.equal("violation base_output_observable 15 37 37\nexit=1\n", out)
  end)
end)
