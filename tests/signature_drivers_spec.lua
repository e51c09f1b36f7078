-- Issue 34 (foundation): the multi-parameter profile's batch drivers, run
-- for real — compiled with rustc, run with python3.11 and node (the
-- TypeScript driver is CommonJS; the candidates here are the JavaScript a
-- TypeScript build emits) — on sample functions at every type's extremes,
-- on candidates returning values outside the declared types (each a
-- !range with its cause line), and over a whole 3-parameter product of
-- 2^16 inputs where base and candidate differ at exactly one.
local vkit = require "vkit"
local t = require "tests.support.run"
local signature = require "vkit.change.signature"
local domain = require "vkit.change.domain"
local sd = require "vkit.change.signature_drivers"
local records = require "vkit.change.signature_records"

local function tool(name)
  return io.popen("command -v " .. name .. " 2>/dev/null"):read "l"
end
local TOOLS = { rust = tool "rustc", python = tool "python3.11", typescript = tool "node" }
local EXT = { rust = "rs", python = "py", typescript = "js" }

local function sig_of(params, returns)
  local p = {}
  for i, spec in ipairs(params) do
    local name, ty = spec:match "^(%w+):(%w+)$"
    p[i] = { name = name, type = ty }
  end
  return assert(signature.parse { params = p, returns = returns })
end

-- A built driver for one side: run(inputs or raw stdin bytes) -> code, stdout, stderr.
local function build(dir, language, sig, source, fn, tag, mode)
  local module = ("%s/%s_%s.%s"):format(dir, tag or "cand", fn, EXT[language])
  t.write(module, source)
  local name, text = sd.driver(language, sig, module, fn, mode)
  local driver = ("%s/%s_%s_%s"):format(dir, tag or "cand", fn, name)
  t.write(driver, text)
  local argv
  if language == "rust" then
    local exe = driver .. ".bin"
    local ok = os.execute(("%s --edition=2021 -C opt-level=1 -C debuginfo=0 -C overflow-checks=on -o %s %s 2> %s.err")
      :format(t.quote(TOOLS.rust), t.quote(exe), t.quote(driver), t.quote(driver)))
    assert(ok, "rustc failed: " .. t.slurp(driver .. ".err"))
    argv = t.quote(exe)
  else
    argv = t.quote(TOOLS[language]) .. " " .. t.quote(driver)
  end
  local n = 0
  return function(inputs)
    n = n + 1
    local stdin = ("%s.in%d"):format(driver, n)
    t.write(stdin, type(inputs) == "string" and inputs or sd.encode_inputs(sig, inputs))
    local _, _, code = os.execute(("%s < %s > %s.out 2> %s.err"):format(argv, t.quote(stdin), t.quote(stdin), t.quote(stdin)))
    return code, t.slurp(stdin .. ".out"), t.slurp(stdin .. ".err")
  end
end

-- Runs and parses; fails the spec on a protocol failure.
local function observe(run, sig, inputs)
  local code, out, err = run(inputs)
  assert.equal(0, code, err)
  return assert(sd.parse(sig, out, inputs)), err
end

local function each_language(body)
  for _, language in ipairs { "rust", "python", "typescript" } do
    if TOOLS[language] then body(language) else pending(language .. " (needs its tool)") end
  end
end

describe("the multi-parameter driver protocol", function()
  local sig = sig_of({ "x:i32", "flag:bool", "n:u64" }, { "bool", "u32" })

  it("encodes one little-endian record per input, a bool as one byte", function()
    assert.equal(13, sd.record_bytes(sig))
    local bytes = sd.encode_inputs(sig, { { -1, true, -1 }, { 0x01020304, false, 1 } })
    assert.equal("\255\255\255\255\1\255\255\255\255\255\255\255\255" .. "\4\3\2\1\0\1\0\0\0\0\0\0\0", bytes)
    assert.is_true(sd.inputs_match(sig, bytes, { { -1, true, -1 }, { 0x01020304, false, 1 } }))
    assert.is_false(sd.inputs_match(sig, bytes, { { -1, true, -1 } }))
    assert.has_error(function() sd.encode_inputs(sig, { { 1, 1, 1 } }) end)
  end)

  it("bounds a record: a status byte and each result component in its width", function()
    assert.equal(1 + 1 + 4, sd.line_bound(sig))
    local widest = sig_of({ "a:i64", "b:i64", "c:i64", "d:i64" }, { "i64", "i64", "i64", "i64" })
    assert.equal(33, sd.line_bound(widest))  -- policies/signatures.lua batch_inputs' reason
    assert.equal(1 << 18, sd.batch_inputs)
    -- a full batch of the widest records and its trailer fit the output cap less the stderr reserve
    local p = require("vkit.policy").signatures
    assert.is_true(records.output_bytes(widest, sd.batch_inputs) <= p.output_cap - p.stderr_reserve_bytes)
    assert.equal(33 * (1 << 18) + 4 + 2 * 32, records.output_bytes(widest, sd.batch_inputs))
    local tiny = sig_of({ "a:u8" }, "bool")
    assert.equal(2, sd.line_bound(tiny))
  end)

  -- A driver's stdout written by hand: records then the trailer (count,
  -- first and last input as given).
  local function output(recs, inputs, count)
    local first, last = sd.encode_inputs(sig, { inputs[1] }), sd.encode_inputs(sig, { inputs[#inputs] })
    return table.concat(recs) .. string.pack("<I4", count or #inputs) .. first .. last
  end
  local function value(ok, n) return string.pack("<BBI4", 0, ok and 1 or 0, n) end
  local RAISE, RANGE = "\1" .. ("\0"):rep(5), "\2" .. ("\0"):rep(5)

  it("reads one record per input in order: a result or a marker", function()
    local inputs = { { -1, true, -1 }, { 5, false, 0 }, { 0, false, 9 } }
    local got = assert(sd.parse(sig, output({ value(true, 4294967295), RAISE, RANGE }, inputs), inputs))
    assert.same({ { value = { true, 4294967295 } }, { marker = "raise" }, { marker = "range" } }, got)
    local one = sig_of({ "year:u16" }, "bool")
    assert.same({ { value = false } },
      assert(sd.parse(one, "\0\0" .. string.pack("<I4", 1) .. "\255\255\255\255", { { 65535 } })))
  end)

  it("refuses truncated, extra, miscounted, other-input and malformed output, by name", function()
    local inputs = { { 1, true, 2 }, { 3, false, 4 } }
    local good = { value(true, 1), value(false, 7) }
    local function refused(out, code)
      local ok, why, got = sd.parse(sig, out, inputs)
      assert.is_nil(ok, out)
      assert.is_string(why)
      assert.equal(code, got, why)
    end
    assert.is_table(sd.parse(sig, output(good, inputs), inputs))
    refused("", "truncated")
    refused(output({ good[1] }, inputs, 1), "truncated")                    -- a record short
    refused(output(good, inputs):sub(1, -2), "truncated")                   -- a byte short
    refused(output({ good[1], good[2], good[2] }, inputs, 3), "extra-bytes") -- a record more
    refused(output(good, inputs) .. "\n", "extra-bytes")
    refused("debug\n" .. output(good, inputs), "extra-bytes")               -- a candidate's own print
    refused(output(good, inputs, 3), "wrong-count")
    refused(output(good, { { 1, true, 2 }, { 3, false, 5 } }), "wrong-input")  -- decoded another last input
    refused(output(good, { { 9, true, 2 }, { 3, false, 4 } }), "wrong-input")
    refused(output({ good[1], "\4" .. ("\0"):rep(5) }, inputs), "malformed")  -- no such status
    refused(output({ good[1], "\3\0\0\0\0\1" }, inputs), "malformed")    -- a crash with result bytes
    -- status 3: a fresh driver's input whose own process ended without an answer
    assert.same({ marker = "crash" }, sd.parse(sig, output({ good[1], "\3" .. ("\0"):rep(5) }, inputs), inputs)[2])
    refused(output({ good[1], string.pack("<BBI4", 0, 2, 1) }, inputs), "malformed")  -- a bool of 2
    refused(output({ good[1], "\1\0\0\0\0\1" }, inputs), "malformed")    -- a marker with result bytes
  end)

  it("refuses a path or a function name that is not plain", function()
    assert.has_error(function() sd.driver("python", sig, "relative/x.py", "f") end)
    assert.has_error(function() sd.driver("python", sig, "/tmp/x.py", "f(); import os") end)
    assert.has_error(function() sd.driver("cobol", sig, "/tmp/x.py", "f") end)
  end)
end)

describe("multi-parameter drivers, run for real", function()
  local dir, done
  before_each(function() dir, done = t.tempdir() end)
  after_each(function() done() end)

  local MIN32, MAX32 = -2147483648, 2147483647
  local SOURCES = {
    clamp = {
      rust = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 { if x < lo { lo } else if x > hi { hi } else { x } }\n",
      python = "def clamp(x, lo, hi):\n    return lo if x < lo else hi if x > hi else x\n",
      typescript = "exports.clamp = function (x, lo, hi) { return x < lo ? lo : x > hi ? hi : x; };\n",
    },
    is_leap = {
      rust = "pub fn is_leap(year: u16) -> bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }\n",
      python = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
      typescript = "exports.is_leap = (year) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);\n",
    },
    checked_mul = {
      rust = "pub fn checked_mul(a: u32, b: u32) -> (bool, u32) {\n"
        .. "    match a.checked_mul(b) { Some(p) => (true, p), None => (false, 0) }\n}\n",
      python = "def checked_mul(a, b):\n    p = a * b\n    return (True, p) if p <= 0xFFFFFFFF else (False, 0)\n",
      typescript = "exports.checked_mul = (a, b) => { const p = BigInt(a) * BigInt(b);\n"
        .. "  return p <= 0xFFFFFFFFn ? [true, Number(p)] : [false, 0]; };\n",
    },
    -- every 64-bit extreme through both directions
    swap64 = {
      rust = "pub fn swap64(a: u64, b: i64) -> (i64, u64) { (b, a) }\n",
      python = "def swap64(a, b):\n    return (b, a)\n",
      typescript = "exports.swap64 = (a, b) => [b, a];\n",
    },
    -- every narrow type, in and out
    mix = {
      rust = "pub fn mix(a: u8, b: i8, c: i16, d: bool) -> (i16, u8, i8, bool) { (c, a, b, !d) }\n",
      python = "def mix(a, b, c, d):\n    return (c, a, b, not d)\n",
      typescript = "exports.mix = (a, b, c, d) => [c, a, b, !d];\n",
    },
  }
  local CASES = {
    clamp = { sig = sig_of({ "x:i32", "lo:i32", "hi:i32" }, "i32"),
              inputs = { { 5, 0, 3 }, { -5, 0, 3 }, { 2, 0, 3 }, { MIN32, MIN32, MAX32 }, { MAX32, MIN32, MAX32 },
                         { MIN32, -1, 0 }, { -1, MIN32, -2 }, { 0, 0, 0 } },
              expect = function(x, lo, hi) return x < lo and lo or x > hi and hi or x end },
    is_leap = { sig = sig_of({ "year:u16" }, "bool"),
                inputs = { { 0 }, { 1 }, { 1900 }, { 2000 }, { 2024 }, { 2100 }, { 65535 }, { 65532 } },
                expect = function(y) return y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) end },
    checked_mul = { sig = sig_of({ "a:u32", "b:u32" }, { "bool", "u32" }),
                    inputs = { { 0, 0 }, { 0xFFFFFFFF, 1 }, { 0xFFFFFFFF, 2 }, { 65536, 65536 }, { 65535, 65537 },
                               { 0, 0xFFFFFFFF } },
                    expect = function(a, b)
                      local p = a * b
                      if b ~= 0 and (p // b ~= a or p > 0xFFFFFFFF) then return { false, 0 } end
                      return { true, p }
                    end },
    swap64 = { sig = sig_of({ "a:u64", "b:i64" }, { "i64", "u64" }),
               inputs = { { 0, 0 }, { -1, math.mininteger }, { math.maxinteger, math.maxinteger },
                          { math.mininteger, -1 }, { 1, 1 } },
               expect = function(a, b) return { b, a } end },
    mix = { sig = sig_of({ "a:u8", "b:i8", "c:i16", "d:bool" }, { "i16", "u8", "i8", "bool" }),
            inputs = { { 0, -128, -32768, false }, { 255, 127, 32767, true }, { 1, -1, -1, true }, { 0, 0, 0, false } },
            expect = function(a, b, c, d) return { c, a, b, not d } end },
  }

  for _, name in ipairs { "clamp", "is_leap", "checked_mul", "swap64", "mix" } do
    it(name .. " gives the same exact results in Rust, Python and TypeScript", function()
      local case = CASES[name]
      local want = {}
      for i, x in ipairs(case.inputs) do want[i] = { value = case.expect(table.unpack(x)) } end
      each_language(function(language)
        local run = build(dir, language, case.sig, SOURCES[name][language], name)
        local got, err = observe(run, case.sig, case.inputs)
        assert.same(want, got, language)
        assert.equal("", err, language)
      end)
    end)
  end

  it("write the same bytes in every language: a record per input, then the count and the first and last inputs", function()
    local sig = sig_of({ "a:u8", "flag:bool" }, { "i16", "bool" })
    local src = { rust = "pub fn f(a: u8, flag: bool) -> (i16, bool) { if a == 9 { panic!(\"nine\") } (-(a as i16), !flag) }\n",
                  python = "def f(a, flag):\n    if a == 9:\n        raise ValueError('nine')\n    return (-a, not flag)\n",
                  typescript = "exports.f = (a, flag) => { if (a === 9) throw new Error('nine'); return [-a, !flag]; };\n" }
    local inputs = { { 3, true }, { 9, false }, { 255, false } }
    local want = "\0\253\255\0" .. "\1\0\0\0" .. "\0\1\255\1" .. "\3\0\0\0" .. "\3\1" .. "\255\0"
    each_language(function(language)
      local code, out = build(dir, language, sig, src[language], "f")(inputs)
      assert.equal(0, code, language)
      assert.equal(want, out, language)
    end)
  end)

  it("refuse a bad encoding with exit 3 before the candidate is loaded", function()
    local sig = sig_of({ "a:u8", "flag:bool" }, "u8")
    local src = { rust = "pub fn f(a: u8, flag: bool) -> u8 { if flag { a } else { 0 } }\n",
                  python = "import sys\nsys.stderr.write('loaded')\ndef f(a, flag):\n    return a if flag else 0\n",
                  typescript = "process.stderr.write('loaded');\nexports.f = (a, flag) => flag ? a : 0;\n" }
    each_language(function(language)
      local run = build(dir, language, sig, src[language], "f")
      for _, bytes in ipairs { "", "\1", "\1\2", "\1\1\1" } do
        local code, out, err = run(bytes)
        assert.equal(3, code, language .. " " .. #bytes)
        assert.equal("", out)
        assert.equal("", err)
      end
      assert.same({ { value = 7 } }, observe(run, sig, { { 7, true } }))
    end)
  end)

  it("a raise or panic is !raise with its cause; the other inputs still answer", function()
    local sig = sig_of({ "a:u8", "b:u8" }, "u8")
    local src = { rust = "pub fn div(a: u8, b: u8) -> u8 { if b == 0 { panic!(\"divide by zero\") } a / b }\n",
                  python = "def div(a, b):\n    return a // b\n",
                  typescript = "exports.div = (a, b) => { if (b === 0) throw new RangeError('divide by zero'); "
                    .. "return Math.floor(a / b); };\n" }
    each_language(function(language)
      local run = build(dir, language, sig, src[language], "div")
      local got, err = observe(run, sig, { { 9, 2 }, { 9, 0 }, { 5, 0 }, { 255, 255 } })
      assert.same({ { value = 4 }, { marker = "raise" }, { marker = "raise" }, { value = 1 } }, got, language)
      local detail = assert(err:match "^vkit driver: raise 2 9,0 (.-)\n$", language .. ": " .. err)
      assert.matches(language == "python" and "ZeroDivisionError" or "divide by zero", detail)
    end)
  end)

  it("at most the policy's cause lines: distinct causes past them are one `more` line", function()
    local sig = sig_of({ "a:u8", "b:bool" }, "u8")
    local src = { rust = "pub fn boom(a: u8, b: bool) -> u8 { if b { a } else { panic!(\"boom {}\", a) } }\n",
                  python = "def boom(a, b):\n    if b:\n        return a\n    raise ValueError('boom %d' % a)\n",
                  typescript = "exports.boom = (a, b) => { if (b) return a; throw new Error('boom ' + a); };\n" }
    local inputs = { { 200, true } }
    for a = 1, 10 do inputs[#inputs + 1] = { a, false } end
    local lines = require("vkit.policy").change.causes.lines
    each_language(function(language)
      local got, err = observe(build(dir, language, sig, src[language], "boom"), sig, inputs)
      assert.same({ value = 200 }, got[1])
      for i = 2, 11 do assert.same({ marker = "raise" }, got[i]) end
      local seen = {}
      for line in err:gmatch "[^\n]+" do seen[#seen + 1] = line end
      assert.equal(lines, #seen, language .. ": " .. err)
      assert.matches("^vkit driver: raise 1 1,false .*boom 1", seen[1])
      assert.matches("^vkit driver: raise 1 7,false .*boom 7", seen[lines - 1])
      assert.equal(("vkit driver: more %d 0 -"):format(10 - (lines - 1)), seen[lines])
    end)
  end)

  it("python: builtins a candidate replaces at import do not move answers; its stdout is a protocol failure", function()
    if not TOOLS.python then return pending "python3.11" end
    local sig = sig_of({ "a:u8", "b:u8" }, "u8")
    local inputs = { { 1, 2 }, { 3, 4 }, { 5, 6 } }
    local tamper = "import builtins\nbuiltins.enumerate = lambda xs: reversed(list(zip(range(len(xs)), xs)))\n"
      .. "builtins.type = lambda v: int\nbuiltins.len = lambda v: 0\ndef add(a, b):\n    return a + b\n"
    assert.same({ { value = 3 }, { value = 7 }, { value = 11 } },
      observe(build(dir, "python", sig, tamper, "add", "tamper"), sig, inputs))
    local code, out = build(dir, "python", sig, "print('1,2 99')\ndef add(a, b):\n    return a + b\n", "add", "print")(inputs)
    assert.equal(0, code)
    local ok, _, why = sd.parse(sig, out, inputs)
    assert.is_nil(ok)
    assert.equal("extra-bytes", why)  -- its look-alike line is bytes beyond the records and trailer
  end)

  it("a missing function is !raise for every input, named once", function()
    local sig = sig_of({ "a:u8", "b:u8" }, "u8")
    for _, language in ipairs { "python", "typescript" } do
      if TOOLS[language] then
        local run = build(dir, language, sig, language == "python" and "def other(a, b):\n    return 0\n"
          or "exports.other = () => 0;\n", "absent")
        local got, err = observe(run, sig, { { 1, 2 }, { 3, 4 } })
        assert.same({ { marker = "raise" }, { marker = "raise" } }, got)
        assert.equal("vkit driver: missing 2 1,2 absent\n", err)
      end
    end
  end)

  -- Values outside the declared type, one case per input: the case index
  -- selects what the candidate returns.  Result (u32, u64, bool).
  local BAD_SIG = sig_of({ "case:u8" }, { "u32", "u64", "bool" })
  local BAD = {
    python = {
      source = "def bad(case):\n    return [\n        (1, 2, True),\n        (True, 2, True),\n"
        .. "        (1, 2 ** 64, True),\n        (1, 2, 1),\n        (1, 2),\n        [1, 2, True],\n"
        .. "        (-1, 2, True),\n        (1.0, 2, True),\n        (1, 2, None),\n        (2 ** 32, 2, False),\n"
        .. "    ][case]\n",
      causes = { [1] = "component 1: type bool", [2] = "component 2: an integer of 65 bits",
                 [3] = "component 3: 1", [4] = "a tuple of 2, not 3", [5] = "type list",
                 [6] = "component 1: -1", [7] = "component 1: type float", [8] = "component 3: type NoneType",
                 [9] = "component 1: 4294967296" },
    },
    typescript = {
      source = "exports.bad = (c) => [\n  [1, 2n, true],\n  [-0, 2n, true],\n  [1.5, 2n, true],\n"
        .. "  [1, 2, true],\n  [1n, 2n, true],\n  [1, 2n],\n  [1, 2n, 1],\n  [4294967296, 2n, true],\n"
        .. "  [1, 18446744073709551616n, true],\n  [1, -1n, true],\n  { 0: 1, 1: 2n, 2: true, length: 3 },\n"
        .. "  [NaN, 2n, true],\n  [1, 2n, true, 4],\n][c];\n",
      causes = { [1] = "component 1: -0", [2] = "component 1: 1.5", [3] = "component 2: 2",
                 [4] = "component 1: 1n", [5] = "an array of 2, not 3", [6] = "component 3: 1",
                 [7] = "component 1: 4294967296", [8] = "component 2: 18446744073709551616n",
                 [9] = "component 2: -1n", [10] = "type object", [11] = "component 1: NaN",
                 [12] = "an array of 4, not 3" },
    },
  }

  for _, language in ipairs { "python", "typescript" } do
    it(language .. ": a value outside the declared type is !range with its cause, never coerced", function()
      if not TOOLS[language] then return pending(language) end
      local bad = BAD[language]
      local run = build(dir, language, BAD_SIG, bad.source, "bad")
      assert.same({ { value = { 1, 2, true } } }, observe(run, BAD_SIG, { { 0 } }))
      for case, cause in pairs(bad.causes) do
        local got, err = observe(run, BAD_SIG, { { 0 }, { case } })
        assert.same({ { value = { 1, 2, true } }, { marker = "range" } }, got, language .. " case " .. case)
        assert.equal(("vkit driver: range 1 %d %s\n"):format(case, cause), err, language .. " case " .. case)
      end
    end)
  end

  it("python and typescript: a scalar bool where an int is declared, an int where a bool is, a number where a bigint is", function()
    local int_sig, bool_sig, wide_sig = sig_of({ "x:u8" }, "u8"), sig_of({ "x:u8" }, "bool"), sig_of({ "x:u8" }, "i64")
    local cases = {
      { int_sig, "python", "def f(x):\n    return True\n", "type bool" },
      { bool_sig, "python", "def f(x):\n    return 1\n", "1" },
      { int_sig, "python", "def f(x):\n    return 256\n", "256" },
      { wide_sig, "python", "def f(x):\n    return 2 ** 63\n", "9223372036854775808" },
      { int_sig, "typescript", "exports.f = (x) => true;\n", "type boolean" },
      { bool_sig, "typescript", "exports.f = (x) => 1;\n", "1" },
      { wide_sig, "typescript", "exports.f = (x) => 5;\n", "5" },
      { int_sig, "typescript", "exports.f = (x) => 5n;\n", "5n" },
      { int_sig, "typescript", "exports.f = (x) => '5';\n", "type string" },
      { int_sig, "typescript", "exports.f = (x) => -0;\n", "-0" },
      { int_sig, "typescript", "exports.f = (x) => undefined;\n", "type undefined" },
    }
    for i, c in ipairs(cases) do
      if TOOLS[c[2]] then
        local run = build(dir, c[2], c[1], c[3], "f")
        local got, err = observe(run, c[1], { { 3 } })
        assert.same({ { marker = "range" } }, got, c[2] .. " " .. i)
        assert.equal("vkit driver: range 1 3 " .. c[4] .. "\n", err, c[2] .. " " .. i)
      end
    end
  end)
end)

describe("a 3-parameter product of 2^16 inputs", function()
  local dir, done
  before_each(function() dir, done = t.tempdir() end)
  after_each(function() done() end)

  local sig = sig_of({ "a:u8", "b:i16", "c:bool" }, "i32")
  local BASE = {
    rust = "pub fn f(a: u8, b: i16, c: bool) -> i32 { if c { a as i32 + b as i32 } else { a as i32 - b as i32 } }\n",
    python = "def f(a, b, c):\n    return a + b if c else a - b\n",
    typescript = "exports.f = (a, b, c) => c ? a + b : a - b;\n",
  }
  local CANDIDATE = {
    rust = "pub fn f(a: u8, b: i16, c: bool) -> i32 {\n    if a == 200 && b == -7 && c { return 0; }\n"
      .. "    if c { a as i32 + b as i32 } else { a as i32 - b as i32 }\n}\n",
    python = "def f(a, b, c):\n    if (a, b, c) == (200, -7, True):\n        return 0\n    return a + b if c else a - b\n",
    typescript = "exports.f = (a, b, c) => (a === 200 && b === -7 && c) ? 0 : c ? a + b : a - b;\n",
  }

  it("is run whole on both sides, and the one input where they differ is found", function()
    local d = assert(domain.parse(sig, "a=*,b=-64..63,c=*"))
    assert.equal(1 << 16, d.size)
    local inputs = {}
    for i = 0, d.size - 1 do inputs[i + 1] = domain.at(d, i) end
    each_language(function(language)
      local base = observe(build(dir, language, sig, BASE[language], "f", "base"), sig, inputs)
      local cand = observe(build(dir, language, sig, CANDIDATE[language], "f", "candidate"), sig, inputs)
      local differ = {}
      for i = 1, #inputs do
        if base[i].value ~= cand[i].value then differ[#differ + 1] = inputs[i] end
      end
      assert.same({ { 200, -7, true } }, differ, language)
      assert.equal(200 * 256 + (-7 + 64) * 2 + 1, domain.index(d, differ[1]))
      assert.equal(193, base[domain.index(d, differ[1]) + 1].value)
      local boxes = assert(domain.group(sig, differ))
      assert.same({ "a=200,b=-7,c=true" }, { domain.box_text(sig, boxes[1]) })
    end)
  end)
end)

-- Fresh mode (issue 34, the seed's issue 29): for a side outside the pure
-- profile, Rust forks a process per input, Python executes the module anew
-- per input, TypeScript evaluates it in a new V8 context per input.  A
-- module-level counter / static / global changes the answer after the
-- first call: in batch mode the later inputs see it, in fresh mode every
-- input gets the first call's answer.
describe("multi-parameter fresh drivers", function()
  local dir, done
  before_each(function() dir, done = t.tempdir() end)
  after_each(function() done() end)

  local sig = sig_of({ "x:i32", "flag:bool" }, { "i32", "bool" })
  local MODES = { rust = "fork-per-input", python = "fresh-module-per-input", typescript = "fresh-context-per-input" }
  local STATEFUL = {
    rust = "use std::sync::atomic::{AtomicI32, Ordering};\nstatic CALLS: AtomicI32 = AtomicI32::new(0);\n"
      .. "pub fn f(x: i32, flag: bool) -> (i32, bool) {\n    let n = CALLS.fetch_add(1, Ordering::SeqCst);\n"
      .. "    (x.wrapping_add(n), flag)\n}\n",
    python = "calls = 0\ndef f(x, flag):\n    global calls\n    calls += 1\n    return (x + calls - 1, flag)\n",
    typescript = "var calls = 0;\nglobalThis.seen = (globalThis.seen || 0);\n"
      .. "exports.f = (x, flag) => { calls++; globalThis.seen++; return [x + calls + globalThis.seen - 2, flag]; };\n",
  }
  local INPUTS = { { 10, true }, { 10, true }, { -3, false }, { 10, true } }

  it("batch mode: the later calls see the state (the reason fresh mode exists)", function()
    each_language(function(language)
      local got = observe(build(dir, language, sig, STATEFUL[language], "f", "batch"), sig, INPUTS)
      assert.are_not.same({ 10, true }, got[2].value, language)
    end)
  end)

  it("fresh mode: every input gets the first call's answer, the same bytes as a process per input", function()
    each_language(function(language)
      local run = build(dir, language, sig, STATEFUL[language], "f", "fresh", MODES[language])
      local got = observe(run, sig, INPUTS)
      assert.same({ { value = { 10, true } }, { value = { 10, true } }, { value = { -3, false } },
                    { value = { 10, true } } }, got, language)
      -- the batch driver given one input (per_input's process per input) writes the same records
      local single = build(dir, language, sig, STATEFUL[language], "f", "single")
      local _, out = run(INPUTS)
      local parts = {}
      for i, x in ipairs(INPUTS) do
        local _, one = single({ x })
        parts[i] = one:sub(1, records.result_bytes(sig))
      end
      assert.equal(table.concat(parts), out:sub(1, #INPUTS * records.result_bytes(sig)), language)
    end)
  end)

  it("fresh mode: a raise is !raise with its cause, a missing function !raise named, a value out of type !range", function()
    local RAISING = {
      rust = "pub fn f(x: i32, flag: bool) -> (i32, bool) {\n    if x == 0 { panic!(\"zero\"); }\n    (x, flag)\n}\n",
      python = "def f(x, flag):\n    if x == 0:\n        raise ValueError('zero')\n    return (x if x != 7 else 1 << 40, flag)\n",
      typescript = "exports.f = (x, flag) => { if (x === 0) throw new Error('zero'); return [x === 7 ? 0.5 : x, flag]; };\n",
    }
    each_language(function(language)
      local run = build(dir, language, sig, RAISING[language], "f", "raising", MODES[language])
      local got, err = observe(run, sig, { { 1, true }, { 0, false }, { 7, true } })
      assert.same({ value = { 1, true } }, got[1], language)
      assert.same({ marker = "raise" }, got[2], language)
      assert.matches("vkit driver: raise 1 0,false [^\n]*zero", err, nil, language)
      if language ~= "rust" then
        assert.same({ marker = "range" }, got[3], language)
        assert.matches("vkit driver: range 1 7,true", err, nil, language)
      end
    end)
    for _, language in ipairs { "python", "typescript" } do
      if TOOLS[language] then
        local run = build(dir, language, sig, language == "python" and "def g(x):\n    return x\n" or "exports.g = 1;\n",
          "f", "missing", MODES[language])
        local got, err = observe(run, sig, { { 1, true }, { 2, false } })
        assert.same({ { marker = "raise" }, { marker = "raise" } }, got)
        assert.matches("vkit driver: missing 2 1,true", err)
      end
    end
  end)

  it("rust fork per input: a child that dies without an answer is a crash record, never a value; the others answer", function()
    if not TOOLS.rust then return pending "rust (needs rustc)" end
    local DYING = "pub fn f(x: i32, flag: bool) -> (i32, bool) {\n"
      .. "    if x == 1 { std::process::exit(0); }\n"
      .. "    if x == 2 { std::process::abort(); }\n"
      .. "    if x == 3 { std::process::exit(9); }\n"
      .. "    (x, flag)\n}\n"
    local run = build(dir, "rust", sig, DYING, "f", "dying", "fork-per-input")
    local inputs = { { 5, true }, { 1, true }, { 2, false }, { 3, true }, { 6, false } }
    local got, err = observe(run, sig, inputs)
    assert.same({ { value = { 5, true } }, { marker = "crash" }, { marker = "crash" }, { marker = "crash" },
                  { value = { 6, false } } }, got)
    assert.matches("vkit driver: crash 3 1,true the input's process ended without an answer", err)
  end)

  it("refuse a bad encoding with exit 3 before the candidate is loaded, as the batch drivers", function()
    each_language(function(language)
      local run = build(dir, language, sig, STATEFUL[language], "f", "enc", MODES[language])
      local code, out = run(string.pack("<i4B", 1, 2))
      assert.equal(3, code, language)
      assert.equal("", out, language)
    end)
  end)

  it("have no fresh mode but their language's", function()
    assert.has_error(function() sd.driver("python", sig, "/tmp/x.py", "f", "fork-per-input") end)
    assert.has_error(function() sd.driver("rust", sig, "/tmp/x.rs", "f", "fresh-context-per-input") end)
  end)
end)
