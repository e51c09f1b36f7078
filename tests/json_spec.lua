local vkit = require "vkit"
local t = require "tests.support.run"
local json = require "vkit.json" -- the C module itself (vkit.json is its public face, without read)

local function fails_with(code, text)
  local value, message, got, offset = json.decode(text)
  assert.is_nil(value, ("accepted %q"):format(text))
  assert.equal(code, got, ("%q: %s"):format(text, tostring(message)))
  assert.is_number(offset)
  return message, offset
end

describe("vkit.json.decode", function()
  it("keeps integral numbers as Lua integers and others as floats", function()
    assert.equal("integer", math.type(json.decode "3"))
    assert.equal("3", tostring(json.decode "3"))
    assert.equal("float", math.type(json.decode "3.0"))
    assert.equal("float", math.type(json.decode "1e2"))
    assert.equal(math.maxinteger, json.decode "9223372036854775807")
    assert.equal(math.mininteger, json.decode "-9223372036854775808")
    assert.equal("float", math.type(json.decode "9223372036854775808"))
    assert.equal(0, json.decode "-0")
  end)

  it("keeps null distinct from absent", function()
    local v = json.decode '{"a":null}'
    assert.equal(json.null, v.a)
    assert.is_nil(v.b)
    assert.equal(json.null, json.decode("[null]")[1])
  end)

  it("keeps [] and {} distinct through a round trip", function()
    assert.equal("[]", json.encode(json.decode "[]"))
    assert.equal("{}", json.encode(json.decode "{}"))
    assert.equal('{"a":[],"b":{}}', json.encode(json.decode '{"b":{},"a":[]}'))
    assert.equal("array", json.kind(json.decode "[]"))
    assert.equal("object", json.kind(json.decode "{}"))
  end)

  -- kind() of an unmarked table classifies it as encode() would (json_encode.c's
  -- marked_kind, which exact_key shares): its spec cannot catch a change
  -- here, as its model asks kind() too.
  it("names an unmarked table's kind by its keys, and nothing for one JSON cannot hold", function()
    assert.equal("array", json.kind { 1, 2 })
    assert.equal("object", json.kind { a = 1 })
    assert.is_nil(json.kind {})
    assert.is_nil(json.kind { 1, a = 1 })
    assert.is_nil(json.kind { [2] = 1 })
    assert.is_nil(json.kind { [true] = 1 })
    assert.equal("array", json.kind(json.array { a = 1 })) -- a mark wins over the keys
    assert.equal("object", json.kind(json.object { 1 }))
  end)

  it("decodes strings with escapes and surrogate pairs to UTF-8", function()
    assert.equal("a\"\\/\b\f\n\r\t", json.decode [["a\"\\\/\b\f\n\r\t"]])
    assert.equal("\u{20ac}\u{1F600}", json.decode [["\u20ac\ud83d\ude00"]])
    assert.equal("\0", json.decode [["\u0000"]])
  end)

  -- Strings are scanned sixteen and eight bytes at a time: every piece at
  -- every offset across those strides, checked against lua-cjson.
  it("decodes plain runs, multi-byte characters and escapes at every offset", function()
    local cjson = require "cjson"
    local pieces = { "\\n", "\\u00e9", "\\ud83d\\ude00", "\\\"", "\u{e9}", "\u{20ac}", "\u{1F600}", "\127" }
    for _, piece in ipairs(pieces) do
      for before = 0, 33 do
        for _, after in ipairs { 0, 1, 7, 8, 15, 16, 17 } do
          local text = '"' .. ("a"):rep(before) .. piece .. ("b"):rep(after) .. piece .. '"'
          assert.equal(cjson.decode(text), json.decode(text), text)
          local key = "{" .. text .. ":1}"
          assert.equal(1, json.decode(key)[cjson.decode(text)], key)
        end
        -- what follows an escape is still validated
        local prefix = '"' .. ("a"):rep(before) .. "\\n" .. ("c"):rep(before % 17)
        fails_with("invalid-utf8", prefix .. '\255"')
        fails_with("invalid-utf8", prefix .. '\195"')
        fails_with("invalid-json", prefix .. '\t"')
        fails_with("invalid-json", prefix)
      end
    end
  end)

  -- White space is skipped sixteen bytes at a time: runs of every length,
  -- of each of its four bytes, end where the next token begins; \f and
  -- \v are not JSON white space at any offset.
  it("skips white space runs of every length and nothing else", function()
    local ws = { " ", "\t", "\n", "\r" }
    for n = 0, 40 do
      local run = {}
      for i = 1, n do run[i] = ws[(i * 7 + n) % 4 + 1] end
      run = table.concat(run)
      assert.same({ 1, { a = 2 } }, json.decode("[" .. run .. "1" .. run .. "," .. run .. '{"a"' .. run .. ":2}]"), n)
      fails_with("invalid-json", "[" .. run .. "\f1]")
      fails_with("invalid-json", "[1" .. run .. "\v]")
    end
  end)

  it("accepts the JSON grammar's edge cases", function()
    for _, text in ipairs { "[]", "{}", " [1] ", "\t\r\n0\n", "-0.0e-0", "1E+2", '""', "[[[]]]", '{"":1}', "true" } do
      assert.is_not_nil(json.decode(text), text)
    end
  end)

  it("refuses duplicate keys, naming the key and its byte offset", function()
    local message, offset = fails_with("duplicate-key", '{"a":1,"a":2}')
    assert.equal(7, offset)
    assert.matches('"a"', message)
    fails_with("duplicate-key", '{"x":{"k":1,"k":null}}')
    fails_with("duplicate-key", '{"\\u0061":1,"a":2}') -- same key, spelled differently
  end)

  -- In the spirit of JSONTestSuite's n_ cases: each must be refused.
  local invalid = {
    "", " ", "[", "]", "[1,]", "[,1]", "[1,,2]", "[1 2]", "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "{a:1}",
    "{\"a\":1 \"b\":2}", "[01]", "[-01]", "[.5]", "[1.]", "[1e]", "[1e+]", "[+1]", "[--1]", "[0x10]",
    "[NaN]", "[Infinity]", "[-Infinity]", "[nan]", "[True]", "[nul]", "['a']", "[\"\\x\"]", "[\"\\u00\"]",
    "[\"\\u00zz\"]", "[\"a", "[\"a\tb\"]", "[\"a\nb\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]",
    "\239\187\191[]", "[]x", "[] []", "[1]]", "[\0]", "{\"a\":undefined}", "// c\n[]", "/* c */[]", "[1,2", "{",
    "{\"a\":}", "[\"\\", "\"\\u12", "-", "1.5e", "[\"a\"\"b\"]",
  }

  it("refuses every malformed document in the corpus", function()
    for _, text in ipairs(invalid) do fails_with("invalid-json", text) end
  end)

  it("refuses invalid UTF-8: stray, overlong, surrogate and out-of-range bytes", function()
    for _, text in ipairs { '["\255"]', '["\192\175"]', '["\224\128\175"]', '["\237\160\128"]',
                            '["\244\144\128\128"]', '["\195"]', '["\128"]' } do
      fails_with("invalid-utf8", text)
    end
  end)

  it("refuses numbers that overflow a double", function()
    fails_with("number-out-of-range", "1e400")
    fails_with("number-out-of-range", "[-1e999]")
  end)

  -- The decoder computes short decimals itself (Clinger's fast path) and
  -- leaves the rest to strtod; tonumber is strtod throughout.
  it("reads every decimal as the nearest double, as strtod does", function()
    local function same(s)
      local v, w = json.decode(s), tonumber(s)
      assert.is_true(v == w and math.type(v) == "float" and 1 / v == 1 / w, s)
      -- inside a document, the same
      local r = assert(json.decode(('{"x":%s}'):format(s)))
      assert.is_true(r.x == w, s)
    end
    for _, s in ipairs { "0.0", "-0.0", "1.0", "0.875", "0.1", "1e22", "1e23", "1e-22", "1e-23", "9007199254740992.0",
      "9007199254740993.0", "9007199254740993e1", "1234567890123456789.5", "12345678901234567890.5",
      "0.000000000000000000000000001", "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308",
      "100000000000000000000000.0e-1", "-2.5E+10", "5e-0", "5e+0" } do
      same(s)
    end
    math.randomseed(20261201)
    for _ = 1, 20000 do
      local ds = {}
      for i = 1, math.random(1, 21) do ds[i] = math.random(0, 9) end
      ds = table.concat(ds)
      local dot = math.random(1, #ds)
      local s = (ds:sub(1, dot):gsub("^0+(%d)", "%1")) .. "." .. (ds:sub(dot + 1) .. "0"):sub(1, math.max(1, #ds - dot))
      if math.random() < 0.4 then s = s .. "e" .. math.random(-40, 40) end
      if math.random() < 0.5 then s = "-" .. s end
      same(s)
    end
  end)

  it("limits nesting depth", function()
    fails_with("too-deep", ("["):rep(300) .. ("]"):rep(300))
    assert.is_not_nil(json.decode(("["):rep(256) .. ("]"):rep(256)))
    assert.is_nil(json.decode(("["):rep(10) .. ("]"):rep(10), { max_depth = 5 }))
  end)

  -- Issue 14 item 5: the recursive parser overflowed the C stack at ~40,000
  -- levels (~22,000 under ASan) while max_depth allowed 100,000.  Every
  -- max_depth the API accepts must be safe on every path, whatever the
  -- input's depth, so each is tried on 10,000,000 levels in a process of
  -- its own (a crash must fail the spec, not end the runner).
  it("is safe at every allowed max_depth on 10M-deep input, through decode, read and lines", function()
    local dir, cleanup = t.tempdir()
    local script = dir .. "/deep.lua"
    t.write(script, [[
local json = require "vkit.json"
local depth, dir = tonumber((...)), select(2, ...)
local deep = ("["):rep(10000000)
local objects = ('{"a":'):rep(2000000)
local f = assert(io.open(dir .. "/deep.json", "wb")) f:write(deep) f:close()
f = assert(io.open(dir .. "/deep.jsonl", "wb")) f:write("[1]\n", objects, "\n") f:close()
local out = {}
out[#out + 1] = select(3, json.decode(deep, { max_depth = depth }))
out[#out + 1] = select(3, json.decode(objects, { max_depth = depth }))
out[#out + 1] = select(3, json.read(dir .. "/deep.json", 1 << 30, { max_depth = depth }))
for n, v, _, code in json.lines(dir .. "/deep.jsonl", { max_depth = depth }) do
  if n == 2 then out[#out + 1] = code end
end
-- the deepest nesting allowed, well formed, decodes
local ok = json.decode(("["):rep(depth) .. ("]"):rep(depth), { max_depth = depth })
local okobj = json.decode(('{"a":'):rep(depth) .. "1" .. ("}"):rep(depth), { max_depth = depth })
out[#out + 1] = tostring(json.kind(ok)) .. "," .. tostring(json.kind(okobj))
print(table.concat(out, " "))
]])
    local tried = 0
    for _, depth in ipairs { 256, 4096, 4097, 40000, 100000 } do
      if pcall(json.decode, "[]", { max_depth = depth }) then
        tried = tried + 1
        local r = t.vkit { "script", script, tostring(depth), dir }
        assert.equal(0, r.code, ("max_depth %d: %s"):format(depth, r.stderr:sub(1, 400)))
        assert.equal("too-deep too-deep too-deep too-deep array,object\n", r.stdout)
      end
    end
    cleanup()
    assert.equal(2, tried) -- 256 and 4096, the largest allowed
    assert.has_error(function() json.decode("[]", { max_depth = 4097 }) end)
    assert.has_error(function() json.read("/dev/null", 1, { max_depth = 0 }) end)
  end)

  it("refuses nesting deeper than the C stack allows rather than overflowing it", function()
    -- a small stack (ulimit -s 256 KiB): 4096 levels no longer fit, and the
    -- parser says so instead of dying of SIGSEGV
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/deep.lua", [[
local json = require "vkit.json"
local v, message, code = json.decode(('{"a":'):rep(4096) .. "1" .. ("}"):rep(4096), { max_depth = 4096 })
print(code, message)
]])
    local out = dir .. "/out"
    local _, _, code = os.execute(("sh -c %s > %s 2>&1"):format(
      t.quote(("ulimit -s 256 && exec %s script %s"):format(t.quote(vkit.exe), t.quote(dir .. "/deep.lua"))), t.quote(out)))
    local text = t.slurp(out)
    cleanup()
    assert.equal(0, code, text:sub(1, 400))
    assert.matches("^too%-deep\t.*nesting deeper than the C stack allows", text)
  end)

  it("reports a byte offset that points at the problem", function()
    local _, offset = fails_with("invalid-json", '{"a": [1, 2, x]}')
    assert.equal(13, offset)
  end)
end)

describe("vkit.json.encode", function()
  it("writes sorted keys and keeps the float subtype visible", function()
    assert.equal('{"a":1,"b":[true,false,null],"c":3.0,"d":0.5}',
      json.encode { d = 0.5, c = 3.0, b = json.array { true, false, json.null }, a = 1 })
  end)

  it("indents on request", function()
    assert.equal('{\n  "a": [\n    1\n  ]\n}', json.encode({ a = { 1 } }, { indent = 2 }))
  end)

  it("refuses what JSON cannot say", function()
    assert.has_error(function() json.encode {} end)
    assert.has_error(function() json.encode { 1, x = 2 } end)
    assert.has_error(function() json.encode { [1] = 1, [3] = 3 } end)
    assert.has_error(function() json.encode(0 / 0) end)
    assert.has_error(function() json.encode(math.huge) end)
    assert.has_error(function() json.encode "\255" end)
    assert.has_error(function() json.encode(print) end)
    local cycle = {}
    cycle.self = cycle
    assert.has_error(function() json.encode(cycle) end)
  end)

  it("escapes control characters", function()
    assert.equal([["\u0001\u001f\"\\\n"]], json.encode "\1\31\"\\\n")
  end)

  it("round-trips a decoded document", function()
    local text = '{"a":[1,2.5,"x",null,{}],"b":{"c":[]},"d":-7}'
    assert.equal(text, json.encode(json.decode(text)))
  end)
end)

describe("vkit.json.canonical (RFC 8785)", function()
  -- RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
  local numbers = {
    { "0000000000000000", "0" }, { "8000000000000000", "0" },
    { "0000000000000001", "5e-324" }, { "8000000000000001", "-5e-324" },
    { "7fefffffffffffff", "1.7976931348623157e+308" }, { "ffefffffffffffff", "-1.7976931348623157e+308" },
    { "4340000000000000", "9007199254740992" }, { "c340000000000000", "-9007199254740992" },
    { "4430000000000000", "295147905179352830000" }, { "44b52d02c7e14af5", "9.999999999999997e+22" },
    { "44b52d02c7e14af6", "1e+23" }, { "44b52d02c7e14af7", "1.0000000000000001e+23" },
    { "444b1ae4d6e2ef4e", "999999999999999700000" }, { "444b1ae4d6e2ef4f", "999999999999999900000" },
    { "444b1ae4d6e2ef50", "1e+21" }, { "3eb0c6f7a0b5ed8c", "9.999999999999997e-7" },
    { "3eb0c6f7a0b5ed8d", "0.000001" }, { "41b3de4355555553", "333333333.3333332" },
    { "41b3de4355555554", "333333333.33333325" }, { "41b3de4355555555", "333333333.3333333" },
    { "41b3de4355555556", "333333333.3333334" }, { "41b3de4355555557", "333333333.33333343" },
    { "becbf647612f3696", "-0.0000033333333333333333" }, { "43143ff3c1cb0959", "1424953923781206.2" },
  }

  it("formats numbers as ECMAScript does (Appendix B)", function()
    for _, case in ipairs(numbers) do
      local v = string.unpack(">d", (case[1]:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)))
      assert.equal(case[2], json.canonical(v), case[1])
    end
  end)

  it("refuses NaN and Infinity (Appendix B)", function()
    for _, hex in ipairs { "7fffffffffffffff", "7ff0000000000000" } do
      local v = string.unpack(">d", (hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)))
      assert.has_error(function() json.canonical(v) end)
    end
  end)

  it("reproduces the example of section 3.2.2", function()
    local input = [[{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }]]
    local expected = '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
      .. '"string":"\u{20ac}$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    assert.equal(expected, json.canonical(assert(json.decode(input))))
  end)

  it("sorts keys by UTF-16 code units (section 3.2.3)", function()
    local input = [[{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",
      "1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}]]
    local out = json.canonical(assert(json.decode(input)))
    local order = {}
    for value in out:gmatch ':"([^"]*)"' do order[#order + 1] = value end
    assert.same({ "Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis", "Euro Sign",
                  "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh" }, order)
  end)

  it("prints integral floats as integers and refuses integers beyond 2^53", function()
    assert.equal("[3,3]", json.canonical(json.array { 3.0, 3 }))
    assert.equal("9007199254740992", json.canonical(1 << 53))
    assert.has_error(function() json.canonical((1 << 53) + 1) end)
  end)

  it("digests the canonical bytes", function()
    local v = json.decode '{"b":1, "a":[1.0]}'
    assert.equal('{"a":[1],"b":1}', json.canonical(v))
    assert.equal(vkit.hash.sha256 '{"a":[1],"b":1}', json.digest(v))
  end)
end)

describe("vkit.json.lines", function()
  it("streams rows and reports bad ones without ending the loop", function()
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/rows.jsonl", '{"a":1}\n[2]\n\n{"a":1,"a":1}\n"last"')
    local seen = {}
    for lineno, value, message, code in json.lines(dir .. "/rows.jsonl") do
      seen[#seen + 1] = { lineno, value ~= nil and json.encode(value) or code }
    end
    cleanup()
    assert.same({ { 1, '{"a":1}' }, { 2, "[2]" }, { 3, "blank-line" }, { 4, "duplicate-key" }, { 5, '"last"' } }, seen)
  end)

  it("names a missing file", function()
    assert.equal("ENOENT", select(3, json.lines "/nonexistent/rows.jsonl"))
  end)
end)

describe("lua-cjson", function()
  it("stays available to scripts as require 'cjson'", function()
    assert.equal(2, require("cjson").decode("[1,2]")[2])
  end)
end)
