-- Issue 34: reading a bound function's declared signature from its syntax
-- tree (vkit.admission.signature), resolving it with the binding's declared
-- types, and the admission profiles' signature option (opts.signature: 1
-- to 4 parameters of bool and fixed-width integers, tuple results).  Every
-- type is read in each language, every refusal is named, and each new
-- admission rule has a case it admits and a case it refuses; the seed's
-- profile (no option) refuses every source the option alone admits.
local vkit = require "vkit"
local ts = require "vkit.ts"
local signature = require "vkit.admission.signature"
local syntax = require "vkit.admission.syntax"
local limits = vkit.policies.limits.admission
local policy = vkit.policies.signatures
local json = vkit.json
local t = require "tests.support.run"

local INTEGERS = { "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64" }

local function read(language, source)
  return signature.read(ts, language, source, "f", limits, policy, "src/f")
end

local function refused_read(language, source, code)
  local r, got, message = read(language, source)
  assert.is_nil(r, "read: " .. tostring(r and vkit.json.encode(r.params)))
  assert.equal(code, got, message)
  assert.is_string(message)
  return message
end

local function resolve(language, source, declared)
  return signature.resolve(assert(read(language, source)), declared, policy)
end

local function refused_resolve(language, source, declared, code)
  local r, got, message = resolve(language, source, declared)
  assert.is_nil(r, "resolved")
  assert.equal(code, got, message)
  return message
end

describe("reading a declared signature", function()
  it("reads every type of the profile from Rust, as a parameter and as the result", function()
    for _, t in ipairs { "bool", table.unpack(INTEGERS) } do
      local r = assert(read("rust", ("pub fn f(x: %s, y: u8) -> %s { x }"):format(t, t)))
      assert.same({ { name = "x", type = t, hint = t }, { name = "y", type = "u8", hint = "u8" } }, r.params)
      assert.same({ type = t, hint = t }, r.returns)
    end
  end)

  it("reads Rust tuples of 2 to 4 as results", function()
    local r = assert(read("rust", "pub fn f(x: u32) -> (bool, u32) { (true, x) }"))
    assert.same({ { type = "bool", hint = "bool" }, { type = "u32", hint = "u32" } }, r.returns)
    r = assert(read("rust", "pub fn f(x: u32) -> (i8, i16, i64, u64) { x }"))
    assert.equal(4, #r.returns)
  end)

  it("refuses the Rust types outside the profile, naming each", function()
    for _, t in ipairs { "usize", "isize", "u128", "i128", "f32", "f64", "char", "&str", "String", "(u8, u8)" } do
      local message = refused_read("rust", ("pub fn f(x: %s) -> u32 { 1 }"):format(t), "unsupported-type")
      assert.matches("`" .. t .. "`", message, 1, true)
    end
    assert.matches("()", refused_read("rust", "pub fn f(x: u32) { }", "unsupported-type"), 1, true)
    assert.matches("`()`", refused_read("rust", "pub fn f(x: u32) -> () { }", "unsupported-type"), 1, true)
    refused_read("rust", "pub fn f(x: u32) -> (u32, (u8, u8)) { x }", "unsupported-type")
  end)

  it("reads Python's int without a width, bool as bool, no annotation as nothing", function()
    local r = assert(read("python", "def f(a: int, b: bool, c):\n    return a\n"))
    assert.same({ { name = "a", hint = "int" }, { name = "b", type = "bool", hint = "bool" }, { name = "c" } },
      r.params)
    assert.is_nil(r.returns)
    assert.same({ hint = "int" }, read("python", "def f(a) -> int:\n    return a\n").returns)
    assert.same({ type = "bool", hint = "bool" }, read("python", "def f(a) -> bool:\n    return a\n").returns)
  end)

  it("reads Python tuple[...] and Tuple[...] results", function()
    for _, head in ipairs { "tuple", "Tuple" } do
      local r = assert(read("python", ("def f(a) -> %s[int, bool]:\n    return a, True\n"):format(head)))
      assert.same({ { hint = "int" }, { type = "bool", hint = "bool" } }, r.returns)
    end
  end)

  it("refuses Python types outside the profile", function()
    for _, t in ipairs { "str", "float", "list", "None", "'int'", "list[int]" } do
      refused_read("python", ("def f(a: %s):\n    return a\n"):format(t), "unsupported-type")
    end
    refused_read("python", "def f(a) -> tuple[int, str]:\n    return a\n", "unsupported-type")
  end)

  it("reads TypeScript's number and bigint without a width, boolean as bool, and tuple types", function()
    local r = assert(read("typescript",
      "export function f(a: number, b: bigint, c: boolean): [boolean, bigint, number] { return [c, b, a]; }\n"))
    assert.same({ { name = "a", hint = "number" }, { name = "b", hint = "bigint" },
                  { name = "c", type = "bool", hint = "boolean" } }, r.params)
    assert.same({ { type = "bool", hint = "boolean" }, { hint = "bigint" }, { hint = "number" } }, r.returns)
    assert.same({ hint = "number" }, read("typescript", "export function f(a: number): number { return a; }").returns)
  end)

  it("refuses TypeScript types outside the profile", function()
    local outside = { "string", "any", "unknown", "object", "number[]", "Number", "BigInt", "1", "number | bigint" }
    for _, t in ipairs(outside) do
      refused_read("typescript", ("export function f(a: %s): number { return 1; }"):format(t), "unsupported-type")
    end
  end)

  it("names every other refusal: arity, tuple length, parameter form, no function, syntax", function()
    refused_read("rust", "pub fn f() -> u8 { 1 }", "no-params")
    refused_read("python", "def f():\n    return 1\n", "no-params")
    refused_read("rust", "pub fn f(a: u8, b: u8, c: u8, d: u8, e: u8) -> u8 { a }", "too-many-params")
    refused_read("typescript", "export function f(a: number, b: number, c: number, d: number, e: number): number "
      .. "{ return a; }", "too-many-params")
    assert.is_truthy(read("python", "def f(a, b, c, d):\n    return a\n"))   -- 4: the bound
    refused_read("rust", "pub fn f(a: u8) -> (u8, u8, u8, u8, u8) { a }", "tuple-length")
    refused_read("rust", "pub fn f(a: u8) -> (u8,) { a }", "tuple-length")
    refused_read("python", "def f(a) -> tuple[int, int, int, int, int]:\n    return a\n", "tuple-length")
    refused_read("typescript", "export function f(a: number): [number] { return [a]; }", "tuple-length")
    refused_read("python", "def f(a, b=1):\n    return a\n", "parameter-form")
    refused_read("python", "def f(*a):\n    return a\n", "parameter-form")
    refused_read("typescript", "export function f(a: number = 1): number { return a; }", "parameter-form")
    refused_read("typescript", "export function f(a?: number): number { return 1; }", "parameter-form")
    refused_read("rust", "pub fn f((a, b): (u8, u8)) -> u8 { a }", "parameter-form")
    refused_read("rust", "pub fn g(a: u8) -> u8 { a }", "no-function")
    refused_read("python", "def f(a:\n", "syntax-error")
  end)
end)

describe("resolving a read with the declared types", function()
  it("takes every width from Rust as it stands, and recognises the seed's u32 -> u32", function()
    local r = assert(resolve("rust", "pub fn f(x: i32, lo: i32, hi: i32) -> i32 { x }", nil))
    assert.same({ params = { { name = "x", type = "i32" }, { name = "lo", type = "i32" },
                             { name = "hi", type = "i32" } },
                  returns = "i32" }, r.signature)
    assert.is_false(r.seed)
    assert.same({}, r.u32_only)
    r = assert(resolve("rust", "pub fn f(x: u32) -> u32 { x }", {}))
    assert.is_true(r.seed)
    assert.same({ "x" }, r.u32_only)
    r = assert(resolve("rust", "pub fn f(x: u32, b: bool) -> (bool, u32) { (b, x) }", {}))
    assert.same({ "bool", "u32" }, r.signature.returns)
    assert.same({ "x" }, r.u32_only)
    assert.is_false(r.seed)
  end)

  it("reads an undeclared one-parameter Python or TypeScript function as the seed's, as today", function()
    for _, case in ipairs {
      { "python", "def f(x):\n    return x\n" },
      { "python", "def f(x: int) -> int:\n    return x\n" },
      { "typescript", "export function f(x: number): number { return x; }" },
    } do
      local r = assert(resolve(case[1], case[2], {}))
      assert.is_true(r.seed, case[2])
      assert.same({ params = { { name = "x", type = "u32" } }, returns = "u32" }, r.signature)
    end
    -- a bool is no u32: the source fixes it
    local r = assert(resolve("python", "def f(x: bool) -> bool:\n    return x\n", {}))
    assert.same({ params = { { name = "x", type = "bool" } }, returns = "bool" }, r.signature)
    assert.is_false(r.seed)
  end)

  it("takes the widths the source leaves open from the declarations", function()
    local r = assert(resolve("python", "def f(x: int, lo: int, hi) -> tuple[bool, int]:\n    return x\n",
      { types = { x = "i16", lo = "i16", hi = "u8" }, returns = { "bool", "i64" } }))
    assert.same({ params = { { name = "x", type = "i16" }, { name = "lo", type = "i16" },
                             { name = "hi", type = "u8" } },
                  returns = { "bool", "i64" } }, r.signature)
    r = assert(resolve("typescript", "export function f(a: number, b: bigint): [boolean, bigint] { return [true, b]; }",
      { types = { a = "u32", b = "u64" }, returns = { "bool", "i64" } }))
    assert.same({ "u32", "u64" }, { r.signature.params[1].type, r.signature.params[2].type })
    assert.same({ "a" }, r.u32_only)
    -- a declaration the source already fixes is accepted when it agrees
    assert.is_truthy(resolve("rust", "pub fn f(x: i8) -> bool { true }", { types = { x = "i8" }, returns = "bool" }))
    -- every width up to 32 bits is exact in a number, both 64-bit ones in a bigint
    for _, t in ipairs(INTEGERS) do
      local wide = t == "u64" or t == "i64"
      local declared = { types = { a = t }, returns = t }
      local n = resolve("typescript", "export function f(a: number): number { return a; }", declared)
      local b = resolve("typescript", "export function f(a: bigint): bigint { return a; }", declared)
      assert.equal(not wide, n ~= nil, t)
      assert.equal(wide, b ~= nil, t)
    end
  end)

  it("refuses a declaration the source contradicts", function()
    refused_resolve("rust", "pub fn f(x: i32) -> i32 { x }", { types = { x = "bool" } }, "type-contradiction")
    refused_resolve("rust", "pub fn f(x: i32) -> i32 { x }", { types = { x = "i64" } }, "type-contradiction")
    refused_resolve("rust", "pub fn f(x: i32) -> i32 { x }", { returns = "u32" }, "type-contradiction")
    local m = refused_resolve("typescript", "export function f(a: number): number { return a; }",
      { types = { a = "u64" }, returns = "u32" }, "type-contradiction")
    assert.matches("`a`.*u64.*`number`", m)
    refused_resolve("typescript", "export function f(a: bigint): bigint { return a; }", { types = { a = "u32" },
      returns = "u64" }, "type-contradiction")
    refused_resolve("typescript", "export function f(a: boolean): number { return 1; }", { types = { a = "u8" },
      returns = "u8" }, "type-contradiction")
    refused_resolve("python", "def f(a: bool) -> int:\n    return 1\n", { types = { a = "i32" }, returns = "i32" },
      "type-contradiction")
    refused_resolve("python", "def f(a: int) -> int:\n    return 1\n", { types = { a = "bool" }, returns = "u8" },
      "type-contradiction")
    -- tuples: a scalar declared for a tuple, a tuple for a scalar, another count
    refused_resolve("rust", "pub fn f(x: u8) -> (bool, u8) { (true, x) }", { returns = "u8" }, "type-contradiction")
    refused_resolve("python", "def f(a) -> int:\n    return a\n", { types = { a = "u8" }, returns = { "u8", "u8" } },
      "type-contradiction")
    refused_resolve("python", "def f(a) -> tuple[int, int]:\n    return a, a\n",
      { types = { a = "u8" }, returns = { "u8", "u8", "u8" } }, "type-contradiction")
    refused_resolve("python", "def f(a) -> tuple[int, bool]:\n    return a, a\n",
      { types = { a = "u8" }, returns = { "u8", "u8" } }, "type-contradiction")
  end)

  it("requires a width wherever the source fixes none, naming the parameter and the flag", function()
    local m = refused_resolve("python", "def f(x: int, y: int) -> int:\n    return x\n", { types = { x = "u8" },
      returns = "u8" }, "width-required")
    assert.matches("`y`.*--type y=TYPE", m)
    m = refused_resolve("typescript", "export function f(a: number, b: bigint): number { return a; }",
      { types = { a = "u8", b = "u64" } }, "width-required")
    assert.matches("result.*--returns", m)
    refused_resolve("python", "def f(x, y):\n    return x\n", { types = { x = "u8", y = "u8" } }, "width-required")
    refused_resolve("python", "def f(x) -> tuple[int, bool]:\n    return x, True\n", { types = { x = "u8" } },
      "width-required")
    -- one parameter, but something is declared: no seed default
    refused_resolve("python", "def f(x):\n    return x\n", { returns = "u8" }, "width-required")
  end)

  it("gives signatures vkit.change.signature takes as they are, the seed where it says so", function()
    local change_signature = require "vkit.change.signature"
    for _, case in ipairs {
      { "rust", "pub fn f(x: u32) -> u32 { x }", {} },
      { "rust", "pub fn f(x: u32, b: bool) -> (bool, u32) { (b, x) }", {} },
      { "python", "def f(x):\n    return x\n", {} },
      { "python", "def f(x: int, y) -> tuple[int, bool]:\n    return x, True\n",
        { types = { x = "i64", y = "u8" }, returns = { "u16", "bool" } } },
      { "typescript", "export function f(a: bigint): bigint { return a; }", { types = { a = "u64" }, returns = "i64" } },
    } do
      local r = assert(resolve(case[1], case[2], case[3]))
      local parsed, message = change_signature.parse(r.signature)
      assert.is_truthy(parsed, message)
      assert.equal(change_signature.is_seed_profile(parsed), r.seed, case[2])
    end
  end)

  it("refuses declarations of unknown parameters and types, and tuples outside 2 to 4", function()
    refused_resolve("rust", "pub fn f(x: u8) -> u8 { x }", { types = { y = "u8" } }, "unknown-parameter")
    refused_resolve("python", "def f(x):\n    return x\n", { types = { x = "usize" }, returns = "u8" }, "unknown-type")
    refused_resolve("python", "def f(x):\n    return x\n", { types = { x = "u8" }, returns = "f32" }, "unknown-type")
    refused_resolve("python", "def f(x):\n    return x\n", { types = { x = "u8" }, returns = { "u8", "u8", "u8", "u8",
      "u8" } }, "tuple-length")
    refused_resolve("python", "def f(x):\n    return x\n", { types = { x = "u8" }, returns = { "u8" } }, "tuple-length")
    -- a read built by hand past the bounds (the reader itself refuses them first)
    local none = { ["function"] = "f", params = {} }
    assert.equal("no-params", select(2, signature.resolve(none, {}, policy)))
    local five = { ["function"] = "f", params = {} }
    for i = 1, 5 do five.params[i] = { name = "p" .. i, type = "u8", hint = "u8" } end
    assert.equal("too-many-params", select(2, signature.resolve(five, {}, policy)))
  end)
end)

-- ---------------------------------------------------------------------
-- The admission profiles under opts.signature.

local CASES = {
  rust = {
    admitted = {
      "pub fn f(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n",
      "pub fn f(x: u32, b: bool) -> (bool, u32) {\n    if b { return (b, 1); }\n    (x > 0, 2)\n}\n",
      "pub fn f(x: u32) -> (u32, u32) {\n    if x > 1 { (x, 1) } else { (1, x) }\n}\n",
      "pub fn f(a: u8, b: u16, c: u64, d: i8) -> (i16, i32, i64, bool) {\n    (1, 2, 3, a > 0)\n}\n",
      "pub fn f(a: bool) -> bool {\n    !a\n}\n",
    },
    refused = {
      { "signature", "pub fn f(a: u8, b: u8, c: u8, d: u8, e: u8) -> u8 {\n    a\n}\n" },
      { "signature", "pub fn f() -> u8 {\n    1\n}\n" },
      { "signature", "pub fn f(a: usize) -> u8 {\n    1\n}\n" },
      { "signature", "pub fn f(a: u128) -> u8 {\n    1\n}\n" },
      { "signature", "pub fn f(a: u8) -> (u8, u8, u8, u8, u8) {\n    (a, a, a, a, a)\n}\n" },
      { "signature", "pub fn f(a: u8) -> (u8, u8) {\n    (a, a, a, a, a)\n}\n" },
      { "signature", "pub fn f(a: u8) -> (u8,) {\n    (a,)\n}\n" },
      { "signature", "pub fn f(a: u8) -> (u8, f32) {\n    (a, 1)\n}\n" },
      { "signature", "pub fn f(a: u8) {\n}\n" },
      -- a tuple anywhere but where the function's value is returned
      { "unsupported_syntax", "pub fn f(a: u8) -> (u8, u8) {\n    (a, a);\n    (a, a)\n}\n" },
      { "unsupported_syntax", "pub fn f(a: u8) -> bool {\n    (a, 1) == (1, a)\n}\n" },
      -- the body's rules hold as in the seed
      { "global", "static N: u32 = 0;\npub fn f(a: u8, b: u8) -> u8 {\n    a\n}\n" },
      { "call", "pub fn f(a: u8, b: u8) -> (u8, u8) {\n    (g(a), b)\n}\n" },
    },
  },
  python = {
    admitted = {
      "def f(x: int, lo: int, hi: int) -> int:\n    return min(max(x, lo), hi)\n",
      "def f(x: int, b: bool) -> tuple[bool, int]:\n    return b, x\n",
      "def f(x, b) -> tuple[bool, int, int, int]:\n    return (b, x, x, x)\n",
      "def f(a, b, c, d):\n    return a + b + c + d\n",
    },
    refused = {
      { "signature", "def f(a, b, c, d, e):\n    return a\n" },
      { "signature", "def f():\n    return 1\n" },
      { "signature", "def f(a, b=1):\n    return a\n" },
      { "global", "N = 0\ndef f(a, b):\n    global N\n    N += 1\n    return a\n" },
      { "expression", "def f(a, b):\n    return a, b, a, b, a\n" },
      { "expression", "def f(a, b):\n    return ((a,))\n" },
      { "annotation", "def f(a, b) -> tuple[int, int, int, int, int]:\n    return a\n" },
      { "annotation", "def f(a, b) -> tuple[int, str]:\n    return a, b\n" },
      { "annotation", "def f(a, b) -> Tuple[int, int]:\n    return a, b\n" },
      { "annotation", "def f(a, b) -> list[int]:\n    return a, b\n" },
      { "annotation", "def f(a: tuple[int, int]):\n    return a\n" },
      -- `tuple` is evaluated with the annotation: it must be the builtin
      { "annotation", "tuple = 3\ndef f(a, b) -> tuple[int, int]:\n    return a, b\n" },
    },
  },
  typescript = {
    admitted = {
      "export function f(x: number, lo: number, hi: number): number {\n  return Math.min(Math.max(x, lo), hi);\n}\n",
      "export function f(a: number, b: bigint, c: boolean): [boolean, bigint] {\n"
        .. "  const k: bigint = BigInt(a) + 1n;\n  return [c, (b * k) % (1n << 64n)];\n}\n",
      "export function f(a: bigint, b: bigint): bigint {\n  let t = a;\n  t ^= b >> 3n;\n  return -t;\n}\n",
      "export function f(a: number): [number, number, number, number] {\n  return [a, a + 1, a + 2, a + 3];\n}\n",
    },
    refused = {
      { "expression", "export function f(a: number, b: number): [number, number] {\n  return [a, b, a, b, a];\n}\n" },
      { "expression", "export function f(a: number, b: number): [number, number] {\n  return [a, , b];\n}\n" },
      { "expression", "export function f(a: number): number {\n  return [a][0];\n}\n" },
      { "expression", "export function f(a: number, b: number): number {\n  const t = [a, b];\n  return a;\n}\n" },
      { "call", "export function f(a: number, b: number): [number, number] {\n  return [...[a], b];\n}\n" },
      { "signature", "export function f(a: number, b: number, c: number, d: number, e: number): number {\n"
        .. "  return a;\n}\n" },
      { "signature", "export function f(a: number, b: number = 1): number {\n  return a;\n}\n" },
      { "signature", "export function f(a: number): [number, number, number, number, number] {\n  return a;\n}\n" },
      { "signature", "export function f(a: number): [number, string] {\n  return [a, a];\n}\n" },
      { "signature", "export function f(a: string): number {\n  return 1;\n}\n" },
      { "call", "export function f(a: number): bigint {\n  return BigInt(a, 2);\n}\n" },
      { "call", "const BigInt = 3;\nexport function f(a: number): bigint {\n  return BigInt(a);\n}\n" },
      { "member", "export function f(a: number): bigint {\n  return BigInt.asUintN(64, 1n);\n}\n" },
      { "name", "export function f(a: number): number {\n  const g = BigInt;\n  return a;\n}\n" },
      { "constant", "let n = 0n;\nexport function f(a: bigint): bigint {\n  return a;\n}\n" },
    },
  },
}

for language, cases in pairs(CASES) do
  local profile = require("vkit.admission." .. language)
  local opts = { expected_function = "f", signature = policy }
  describe("the " .. language .. " profile under opts.signature", function()
    for i, source in ipairs(cases.admitted) do
      it(("admits signature candidate %d, which the seed's profile refuses"):format(i), function()
        local r = profile.admit(ts, source, limits, opts)
        assert.is_true(r.admitted, r.message)
        assert.equal("f", r["function"])
        assert.is_true(#r.parameters >= 1 and #r.parameters <= policy.max_params)
        assert.equal(r.parameters[1], r.parameter)
        local seed = profile.admit(ts, source, limits, { expected_function = "f" })
        assert.is_false(seed.admitted, "the seed's profile admitted it")
      end)
    end
    for _, case in ipairs(cases.refused) do
      it(("refuses %s: %s"):format(case[1], case[2]:gsub("\n", " "):sub(1, 60)), function()
        local r = profile.admit(ts, case[2], limits, opts)
        assert.is_false(r.admitted, "admitted")
        assert.equal(case[1], r.reason, r.message)
        assert.equal(1, r.message:find(profile.signature_reasons[r.reason], 1, true))
      end)
    end
    it("words its refusals for the option without renaming them", function()
      for reason in pairs(profile.signature_reasons) do assert.is_string(profile.reasons[reason]) end
      for reason in pairs(profile.reasons) do assert.is_string(profile.signature_reasons[reason]) end
    end)
  end)
end

describe("the seed's profile without the option", function()
  it("still admits one u32 -> u32 and lists no parameters", function()
    local r = require("vkit.admission.rust").admit(ts, "pub fn f(x: u32) -> u32 {\n    x\n}\n", limits,
      { expected_function = "f" })
    assert.is_true(r.admitted)
    assert.is_nil(r.parameters)
  end)
  it("refuses each construct the option adds, by the rule that refused it before", function()
    for _, case in ipairs {
      { "rust", "signature", "pub fn f(x: u32, y: u32) -> u32 {\n    x\n}\n" },
      { "rust", "signature", "pub fn f(x: i32) -> u32 {\n    1\n}\n" },
      { "rust", "unsupported_syntax", "pub fn f(x: u32) -> u32 {\n    (x, x)\n}\n" },
      { "python", "signature", "def f(x, y):\n    return x\n" },
      { "python", "annotation", "def f(x) -> tuple[int, int]:\n    return x, x\n" },
      { "typescript", "signature", "export function f(x: bigint): number {\n  return 1;\n}\n" },
      { "typescript", "expression", "export function f(x: number): number {\n  return [x, x];\n}\n" },
      { "typescript", "call", "export function f(x: number): number {\n  return BigInt(x);\n}\n" },
    } do
      local profile = require("vkit.admission." .. case[1])
      local r = profile.admit(ts, case[3], limits, { expected_function = "f" })
      assert.is_false(r.admitted, case[3])
      assert.equal(case[2], r.reason, r.message)
      assert.equal(1, r.message:find(profile.reasons[r.reason], 1, true))
    end
  end)
  it("keeps the Rust relational profile at one u32: the separate process is run without the option", function()
    local admission = require "vkit.relational.admission"
    local r = admission.admit(CASES.rust.admitted[1], { expected_function = "f" })
    assert.is_false(r.admitted)
    assert.equal("signature", r.rejection.reason)
  end)
  it("refuses a tuple the policy bounds by one detail for every language", function()
    assert.is_nil(syntax.tuple_problem(policy, policy.min_components))
    assert.is_nil(syntax.tuple_problem(policy, policy.max_components))
    assert.matches("a tuple of 5", syntax.tuple_problem(policy, policy.max_components + 1))
    assert.matches("a tuple of 1", syntax.tuple_problem(policy, policy.min_components - 1))
  end)
end)

describe("the signature option in the separate admission process", function()
  local admission = require "vkit.change.admission"
  local source = "def f(x: int, b: bool) -> tuple[bool, int]:\n    return b, x\n"
  it("admits through `vkit ts_admit --signature` what the seed's profile refuses there", function()
    local r = admission.admit("python", "src/f.py", source, "f", { signature = true })
    assert.is_true(r.admitted, r.refusal ~= vkit.json.null and r.refusal.message or nil)
    assert.equal("pure-python-signature", r.profile)
    local seed = admission.admit("python", "src/f.py", source, "f")
    assert.is_false(seed.admitted)
    assert.equal("admission-annotation", seed.refusal.rule)
    assert.equal("pure-python", seed.profile)
  end)
  it("refuses there by the same rules, worded for the option", function()
    local r = admission.admit("typescript", "src/f.ts",
      "export function f(a: number, b: number): [number, number] {\n  return [a, b, a, b, a];\n}\n", "f",
      { signature = true })
    assert.is_false(r.admitted)
    assert.equal("admission-expression", r.refusal.rule)
    assert.matches("a tuple of 5", r.refusal.message, 1, true)
  end)
end)

-- Attack (issue 34 review): a source whose declared types exclude the
-- contract's is called by the drivers with the contract's values (a
-- TypeScript `bigint` given a number, a Python `bool` given an int): what
-- is observed is a call its typed callers cannot make, so it is not
-- admitted (vkit.admission.signature.matches, decided in `vkit ts_admit --contract`).
describe("the declared signature against the contract's", function()
  local csig = require "vkit.change.signature"
  local admission = require "vkit.change.admission"
  local U8U8 = assert(csig.parse { params = { { name = "a", type = "u8" }, { name = "b", type = "u8" } }, returns = "u8" })
  local PAIR = assert(csig.parse { params = { { name = "a", type = "u64" } }, returns = { "bool", "u64" } })
  local function matches(language, source, sig)
    return signature.matches(assert(read(language, source)), sig, policy)
  end
  it("admits what the source lets be the contract's types, whatever the parameter names", function()
    assert.is_true(matches("python", "def f(x, y):\n    return x\n", U8U8))
    assert.is_true(matches("python", "def f(x: int, y: int) -> int:\n    return x\n", U8U8))
    assert.is_true(matches("typescript", "export function f(p: number, q: number): number {\n  return p;\n}\n", U8U8))
    assert.is_true(matches("rust", "pub fn f(p: u8, q: u8) -> u8 {\n    p\n}\n", U8U8))
    assert.is_true(matches("typescript", "export function f(a: bigint): [boolean, bigint] {\n  return [true, a];\n}\n", PAIR))
  end)
  it("refuses a declared type that excludes the contract's, by position", function()
    local ok, code, message = matches("typescript", "export function f(a: number, b: bigint): bigint {\n  return b;\n}\n", U8U8)
    assert.is_nil(ok)
    assert.equal("signature-mismatch", code)
    assert.matches("parameter 2 of `f` (`b`) is declared `bigint`, which excludes the contract's u8", message, 1, true)
    assert.equal("signature-mismatch", select(2, matches("python", "def f(a: bool, b):\n    return b\n", U8U8)))
    assert.equal("signature-mismatch", select(2, matches("python", "def f(a, b) -> bool:\n    return a == b\n", U8U8)))
    assert.equal("signature-mismatch", select(2, matches("python", "def f(a, b, c):\n    return a\n", U8U8)))
    assert.equal("signature-mismatch",
      select(2, matches("typescript", "export function f(a: bigint): [boolean, number] {\n  return [true, 0];\n}\n", PAIR)))
    assert.equal("signature-mismatch",
      select(2, matches("python", "def f(a) -> tuple[bool, int, int]:\n    return True, a, a\n", PAIR)))
    assert.equal("signature-mismatch", select(2, matches("python", "def f(a) -> int:\n    return a\n", PAIR)))
  end)
  it("is refused by the admission process (admission-signature-mismatch); a matching one stays admitted", function()
    local source = "def f(a: bool, b: int) -> int:\n    return b\n"
    local contract = { params = { { name = "a", type = "u8" }, { name = "b", type = "u8" } }, returns = "u8" }
    local r = admission.admit("python", "src/f.py", source, "f", { signature = true })
    assert.is_true(r.admitted)  -- without the contract: inside the profile
    local checked = admission.admit("python", "src/f.py", source, "f", { signature = true, contract = contract })
    assert.is_false(checked.admitted)
    assert.equal("refused", checked.outcome)
    assert.equal("admission-signature-mismatch", checked.refusal.rule)
    assert.equal("src/f.py:1", checked.refusal.at)
    assert.matches("excludes the contract's u8", checked.refusal.message, 1, true)
    assert.is_true(checked.process ~= nil and checked.process ~= json.null)  -- decided in the separate process
    local fine = "def f(a: int, b: int) -> int:\n    return b\n"
    assert.is_true(admission.admit("python", "src/f.py", fine, "f", { signature = true, contract = contract }).admitted)
    -- the process itself: one JSON answer, reason signature_mismatch at the definition
    local r2 = t.vkit({ "ts_admit", "--language", "typescript", "--function", "f", "--signature",
      "--contract", json.encode(contract), "--path", "src/f.ts" },
      "// two\nexport function f(a: number, b: bigint): bigint {\n  return b;\n}\n")
    assert.equal(0, r2.code, r2.stderr)
    local answer = json.decode(r2.stdout)
    assert.same({ false, "signature_mismatch", 2, 8, "signature-mismatch" },  -- at `function`
      { answer.admitted, answer.reason, answer.line, answer.column, answer.kind })
    assert.matches("parameter 2 of `f` (`b`) is declared `bigint`", answer.message, 1, true)
    -- a contract that is no signature is a usage error, never an admission
    local bad = t.vkit({ "ts_admit", "--language", "python", "--function", "f", "--signature",
      "--contract", "{\"params\": 3}" }, fine)
    assert.equal(2, bad.code)
    assert.equal("", bad.stdout)
  end)
end)
