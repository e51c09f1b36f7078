-- The pieces under the VAC verifier that carry Python's definitions
-- (round, repr, str.strip, \d, splitlines) and the archive reader, on
-- their own, with hostile inputs.
local vkit = require "vkit"
local t = require "tests.support.run"
local number = require "vkit.vac.number"
local text = require "vkit.vac.text"
local output = require "vkit.vac.output"
local archive = require "vkit.vac.archive"

describe("vkit.vac.number", function()
  -- expected values are Python 3.11's round() and repr()
  local rounds = {
    { 2.675, 2, "2.67" }, { 0.125, 2, "0.12" }, { 0.375, 2, "0.38" }, { 2.5, 0, "2.0" }, { 3.5, 0, "4.0" },
    { -0.001, 0, "-0.0" }, { -0.00001, 2, "-0.0" }, { 1 / 3, 3, "0.333" }, { 5 / 7, 3, "0.714" },
    { 8 / 14, 4, "0.5714" }, { 1234.5, -1, "1230.0" }, { 1235.0, -1, "1240.0" }, { 1234.6, -1, "1230.0" },
    { 1e300, -301, "0.0" }, { 1.5e-200, 200, "1e-200" }, { 2.5e-200, 200, "2e-200" }, { 0.1, 400, "0.1" },
    { 123.456, -400, "0.0" },
  }
  for _, c in ipairs(rounds) do
    it(("round(%s, %d) == %s"):format(number.float_repr(c[1]), c[2], c[3]), function()
      assert.equal(c[3], number.float_repr(number.round(c[1], c[2])))
    end)
  end

  -- round(x, 0..22) takes an exact product (Dekker) instead of printing
  -- "%.Nf" and reading it back: held to that printf path, which rounds the
  -- exact binary value half to even, over seeded doubles of every kind,
  -- decimal ties and the doubles either side of them, and binary ties.
  it("rounds to 0..22 places as printf's exact rounding does, ties and their neighbours included", function()
    local function printf_round(x, places)
      return tonumber(string.format("%." .. places .. "f", x) .. (places == 0 and ".0" or ""))
    end
    local function bits(x) return string.unpack("<i8", string.pack("<d", x)) end
    local function from_bits(b) return string.unpack("<d", string.pack("<i8", b)) end
    local checked = 0
    local function check(x, p)
      if x ~= x or x == math.huge or x == -math.huge then return end
      local got, want = number.round(x, p), printf_round(x, p)
      checked = checked + 1
      if got ~= want or (got == 0 and 1 / got ~= 1 / want) then
        error(("round(%.17g, %d): %.17g, printf %.17g"):format(x, p, got, want))
      end
    end
    math.randomseed(22)
    for _ = 1, 20000 do
      local p = math.random(0, 22)
      check(from_bits(math.random(math.mininteger, math.maxinteger)), p)
      check(math.random() * 10 ^ math.random(-25, 20), p)
      local x = math.random(0, 10 ^ math.random(1, 15)) / 10 ^ math.random(0, 16)
      check(x, p)
      check(-x, p)
      local tie = (math.random(0, 1 << 40) + 0.5) / 10 ^ p
      check(tie, p)
      check(-tie, p)
      check(from_bits(bits(tie) + 1), p)
      check(from_bits(bits(tie) - 1), p)
      check(math.random(0, 1 << 30) / 2 ^ math.random(0, 30), math.random(0, 22))
    end
    for p = 0, 22 do
      for _, x in ipairs { 0.5, 1.5, 2.5, 0.125, 0.375, 2.675, 1e22, 4503599627370495.5, 2 ^ 52, 2 ^ 52 / 10 ^ p,
        0.25, 0.2499999999999999, 0.75, 5e-324, -0.0, 0.0 } do
        check(x, p)
        check(-x, p)
      end
    end
    assert.is_true(checked > 150000)
  end)

  it("keeps integers integers, rounding negative places half to even", function()
    assert.equal(7, number.round(7, 4))
    assert.equal(math.type(7), math.type(number.round(7, 4)))
    assert.equal(120, number.round(125, -1))
    assert.equal(140, number.round(135, -1))
  end)

  it("writes floats as Python's repr", function()
    local reprs = { { 1e16, "1e+16" }, { 1e15, "1000000000000000.0" }, { 1e-5, "1e-05" }, { 0.0001, "0.0001" },
      { 0.1 + 0.2, "0.30000000000000004" }, { -0.0, "-0.0" }, { 5e-324, "5e-324" }, { 1.5, "1.5" },
      { 123456789012345678.0, "1.2345678901234568e+17" } }
    for _, c in ipairs(reprs) do assert.equal(c[2], number.float_repr(c[1])) end
    assert.equal("3", number.str(3))
    assert.equal("3.0", number.str(3.0))
  end)

  -- float_repr starts its search for the shortest digits at 15 (16, 17):
  -- held to the search from one digit up over seeded doubles of every
  -- kind, subnormals included.
  it("finds the shortest digits that read back, as a search from one digit up does", function()
    local function shortest(x)
      for p = 0, 16 do
        local s = string.format("%." .. p .. "e", x)
        if tonumber(s) == x then return tonumber(s), #(s:match "^%-?(%d%.?%d*)e"):gsub("%.", ""):gsub("0+$", "") end
      end
    end
    math.randomseed(20)
    local function check(x)
      if x ~= x or x == math.huge or x == -math.huge or x == 0 then return end
      local want, ndigits = shortest(x)
      local got = number.float_repr(x)
      assert.equal(want, tonumber(got), got)
      local mant = got:match "^%-?([%d.]+)"
      local n = #mant:gsub("%.", ""):gsub("^0+", ""):gsub("0+$", "")
      assert.is_true(n <= math.max(ndigits, 1), ("%s: %d digits, shortest %d"):format(got, n, ndigits))
    end
    for _ = 1, 2500 do
      check(string.unpack("<d", string.pack("<i8", math.random(math.mininteger, math.maxinteger))))
      check(math.random() * 10 ^ math.random(-30, 30))
      check(math.random(0, 999999) / 10 ^ math.random(0, 6))
      check(math.random(1, 1 << 52) * 2 ^ -1074) -- subnormal
    end
    for _, x in ipairs { 0.1, 0.5, 1e23, 9.999999999999999e22, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308,
      2.225073858507201e-308, 1 / 3, 2 / 3 } do
      check(x)
    end
  end)
end)

describe("vkit.vac.text", function()
  it("reads numerals in any script, stripped of any Unicode whitespace", function()
    for _, s in ipairs { "9999", "0.5", "12%", " 1e5 ", "+.5", "-3.", "\227\128\128٣\227\128\128", "1E-3%" } do
      assert.is_true(text.is_numeral(s), s)
    end
    for _, s in ipairs { "", ".", "1e", "1.2.3", "12 %", "twelve", "1,000", "%", "0x10" } do
      assert.is_false(text.is_numeral(s), s)
    end
  end)

  it("strips and squeezes whitespace as Python does", function()
    assert.equal("a b", text.strip "\194\160\t a b\28\227\128\128")
    assert.is_false(text.nonblank "\226\128\175 \n")
    assert.is_true(text.nonblank " x ")
    assert.equal("a b c", text.squeeze " a\194\160\n b \t c\r\n")
  end)

  -- Every code point Python's \s matches in a str, and neighbours that
  -- share their leading bytes but are not spaces, alone, doubled, between
  -- words and at either end: squeeze and Python agree on each string.
  it("squeezes as re.sub(r'\\s+', ' ', s).strip() does, for every space Python knows and its neighbours", function()
    local cps = { 9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
      0x84, 0x86, 0x9F, 0xA1, 0x1681, 0x167F, 0x1FFF, 0x200B, 0x2010, 0x2027, 0x202A, 0x202E, 0x2030, 0x205E, 0x2060,
      0x2FFF, 0x3001, 27, 33, 127 }
    for c = 0x2000, 0x200A do cps[#cps + 1] = c end
    local inputs = {}
    for _, cp in ipairs(cps) do
      local c = utf8.char(cp)
      for _, form in ipairs { "%s", "%s%s", "a%sb", "%sa%s%sb%s", "a \n%s\tb" } do
        inputs[#inputs + 1] = form:gsub("%%s", c)
      end
    end
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local hexes = {}
    for i, s in ipairs(inputs) do hexes[i] = (s:gsub(".", function(ch) return ("%02x"):format(ch:byte()) end)) end
    assert(vkit.fs.write_atomic(dir .. "/in", table.concat(hexes, "\n") .. "\n"))
    local py = io.popen(("/usr/bin/python3.11 -c %s < %s"):format(t.quote(
      "import re,sys\nfor l in sys.stdin: print(re.sub(r'\\s+', ' ', bytes.fromhex(l.strip()).decode()).strip().encode().hex())"),
      t.quote(dir .. "/in")))
    local i = 0
    for line in py:lines() do
      i = i + 1
      local want = line:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)
      assert.equal(want, text.squeeze(inputs[i]), hexes[i])
    end
    assert.is_true(py:close())
    assert.equal(#inputs, i)
  end)

  it("strips tags like re.sub('<[^>]+>', '') without quadratic rescans", function()
    assert.equal("a b <> c < d", text.strip_tags "<p>a</p> <i>b</i> <> c < d")
    local hostile = ("<"):rep(200000)
    assert.equal(hostile, text.strip_tags(hostile))
  end)

  it("cuts strings by code points", function()
    assert.equal("2026-08-0€", text.prefix("2026-08-0€x", 10))
    assert.equal("ab", text.prefix("ab", 10))
  end)
end)

describe("vkit.vac.manifest path and pin rules", function()
  local manifest = require "vkit.vac.manifest"
  it("takes a relative path only when it names something below the bundle (SPEC §2.4)", function()
    local safe = { "a", "a/b", "./a", "a/.", "a/./b", "a//b", "a..b", "a.", ".a", "é", "x/y:z", "ab:", "\u{85}a", "...",
      "a/...", ".../a" }
    local unsafe = { "", " ", "vac.json", ".", "./", "./.", "//", "/a", "..", "../a", "a/..", "a/../b",
      "C:x", "1:x", "a:b", "é:x", "a\\b", "a\1b", "a\127b", "a\nb" }
    for _, p in ipairs(safe) do assert.is_true(manifest.safe_relpath(p), p) end
    for _, p in ipairs(unsafe) do assert.is_false(manifest.safe_relpath(p), p) end
  end)

  it("takes a pin only as 64 lowercase hex digits", function()
    local hex = ("0123456789abcdef"):rep(4)
    assert.is_true(manifest.is_hex64(hex))
    for _, v in ipairs { hex:sub(2), hex .. "0", hex:upper(), hex:sub(2) .. "g", hex:sub(2) .. " ", "x" .. hex:sub(2),
      hex:sub(1, 63) .. "\0", 7 } do
      assert.is_false(manifest.is_hex64(v), tostring(v))
    end
  end)

  -- The draft gate's text pre-check rules the walk out only where no string
  -- value can begin "TODO(": every character of the prefix spelled plain or
  -- escaped, in a value, a key or deep in arrays, must reach the walk.
  it("finds a TODO( marker from the manifest's text exactly where the walk over its values does", function()
    local Failures = require "vkit.vac.failures"
    local spell = { T = { "T", "\\u0054" }, O = { "O", "\\u004f", "\\u004F" }, D = { "D", "\\u0044" },
      ["("] = { "(", "\\u0028" } }
    local rng = 20261202
    local function pick(list)
      rng = (rng * 1103515245 + 12345) % 2147483648
      return list[rng % #list + 1]
    end
    local prefixes = { "", "x", " ", "\\u2014", "\\\\", "\\n" }
    local seen_marker, seen_plain, seen_ruled_out = 0, 0, 0
    for _ = 1, 400 do
      local word = {}
      for _, c in ipairs { "T", "O", "D", "O", "(" } do word[#word + 1] = pick(spell[c]) end
      local s = pick(prefixes) .. table.concat(word) .. pick { "", "x)", " y" }
      local doc = pick {
        ('{"a": "%s"}'):format(s), ('{"%s": "v"}'):format(s), ('{"a": [1, {"b": ["%s"]}]}'):format(s),
        ('{"a": "\\u2014 %s"}'):format(s), '{"a": "TODO", "b": "(TODO("}', ('{"a": "%s", "b": "\\u0054"}'):format(s),
        '{"a": "TODO [", "b": "\\u2014", "c": ["ToDo("]}',
      }
      local m = assert(vkit.json.decode(doc))
      local by_text, by_walk = Failures.new(), Failures.new()
      manifest.todo_failures(m, by_text, doc)
      manifest.todo_failures(m, by_walk)
      assert.same(by_walk, by_text, doc)
      if #by_walk > 0 then seen_marker = seen_marker + 1 else seen_plain = seen_plain + 1 end
      if not manifest.may_hold_marker(doc) then seen_ruled_out = seen_ruled_out + 1 end
    end
    assert.is_true(seen_marker > 0 and seen_plain > 0, "the generated manifests hold markers and non-markers")
    assert.is_true(seen_ruled_out > 0, "some manifest is ruled out by its text alone")
    assert.is_false(manifest.may_hold_marker '{"claim": "\\u2014 no marker", "TODO": "(x"}')
    assert.is_true(manifest.may_hold_marker '{"a": "\\u0054ODO("}')
  end)
end)

describe("vkit.vac.output.escape", function()
  it("writes C0, DEL, C1, bidi controls, separators and invalid bytes as escapes", function()
    assert.equal("a\\x1b[0m\\x7f\\x85\\u202e\\u2066\\u2028\\xff\\xc3z", output.escape "a\27[0m\127\194\133\226\128\174\226\129\166\226\128\168\255\195z")
    assert.equal("plain é ✓", output.escape "plain é ✓")
    -- each byte alone, and inside printable text: only 32-126 pass as they are
    for b = 0, 255 do
      local c = string.char(b)
      local want = (b >= 32 and b < 127) and c or ("\\x%02x"):format(b)
      assert.equal(want, output.escape(c), b)
      assert.equal("ab" .. want .. "cd", output.escape("ab" .. c .. "cd"), b)
    end
  end)

  -- The escape of a string, a byte or a code point at a time: the oracle
  -- vkit.terminal's run-at-a-time copy is held to.
  local function escape_slowly(s)
    local BIDI = { [0x200E] = 1, [0x200F] = 1, [0x2028] = 1, [0x2029] = 1, [0x2066] = 1, [0x2067] = 1, [0x2068] = 1,
      [0x2069] = 1 }
    for cp = 0x202A, 0x202E do BIDI[cp] = 1 end
    local function unsafe(cp) return cp < 0x20 or cp == 0x7F or (cp >= 0x80 and cp <= 0x9F) or BIDI[cp] end
    local out, i = {}, 1
    while i <= #s do
      local b = s:byte(i)
      local ok, cp = pcall(utf8.codepoint, s, i)
      local len = ok and #utf8.char(cp) or 0
      if b >= 0x80 and (not ok or s:sub(i, i + len - 1) ~= utf8.char(cp)) then
        out[#out + 1], i = ("\\x%02x"):format(b), i + 1
      else
        cp = b < 0x80 and b or cp
        local width = b < 0x80 and 1 or len
        out[#out + 1] = unsafe(cp) and (cp < 0x100 and ("\\x%02x"):format(cp) or ("\\u%04x"):format(cp))
          or s:sub(i, i + width - 1)
        i = i + width
      end
    end
    return table.concat(out)
  end

  it("escapes random mixtures of text, controls, bidi controls and broken UTF-8 as a byte-at-a-time walk does", function()
    local pieces = { "a", "Z", " ", "~", "\0", "\27", "\127", "\t", "é", "✓", "—", "\226\128\174", "\226\129\166",
      "\226\128\168", "\194\133", "\194\159", "\194\160", "\255", "\195", "\224\128\128", "\237\160\128",
      "\244\144\128\128", "\240\159\152\128", "word", "two words " }
    local rng = 20261202
    local function rand(k) rng = (rng * 1103515245 + 12345) % 2147483648; return rng % k + 1 end
    for _ = 1, 3000 do
      local parts = {}
      for p = 1, rand(12) - 1 do parts[p] = pieces[rand(#pieces)] end
      local s = table.concat(parts)
      assert.equal(escape_slowly(s), output.escape(s), (s:gsub(".", function(ch) return ("%02x"):format(ch:byte()) end)))
    end
  end)
end)

describe("vkit.archive (hostile tar streams)", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  local function header(name, size, typeflag, link)
    local function pad(s, n) return s .. ("\0"):rep(n - #s) end
    local function oct(n, w) return ("%0" .. (w - 1) .. "o"):format(n) .. "\0" end
    local h = pad(name, 100) .. oct(420, 8) .. oct(0, 8) .. oct(0, 8) .. oct(size, 12) .. oct(0, 12) .. "        "
      .. typeflag .. pad(link or "", 100) .. "ustar\0" .. "00" .. pad("", 64) .. oct(0, 8) .. oct(0, 8)
      .. pad("", 167)
    local sum = 0
    for i = 1, 512 do sum = sum + h:byte(i) end
    return h:sub(1, 148) .. ("%06o"):format(sum) .. "\0 " .. h:sub(157)
  end
  local function member(name, data, typeflag, link)
    data = data or ""
    return header(name, #data, typeflag or "0", link) .. data .. ("\0"):rep((512 - #data % 512) % 512)
  end
  local function entries(path, opts)
    local r = assert(require("vkit.archive").open(path, opts))
    local out = {}
    while true do
      local e, msg, code = r:next()
      if not e then
        r:close()
        return out, code, msg
      end
      e.data = ""
      while true do
        local chunk, _, c = r:read(7)
        if not chunk then return out, c end
        if chunk == "" then break end
        e.data = e.data .. chunk
      end
      out[#out + 1] = e
    end
  end

  it("reports kinds, links and data as data, applying pax and GNU long names", function()
    local long = ("d"):rep(150) .. "/file.txt"
    local pax = "31 path=pax/renamed-by-pax.txt\n"
    local bytes = member("a.txt", "hello") .. member("ln", nil, "2", "/etc/passwd") .. member("hl", nil, "1", "a.txt")
      .. member("dev", nil, "3") .. member("dir/", nil, "5") .. member("././@LongLink", long .. "\0", "L")
      .. member("short", "long-named") .. member("PaxHeader", pax, "x") .. member("orig.txt", "p")
      .. ("\0"):rep(1024)
    t.write(dir .. "/x.tar", bytes)
    local es, code = entries(dir .. "/x.tar")
    assert.is_nil(code)
    local got = {}
    for _, e in ipairs(es) do got[#got + 1] = e.path .. ":" .. e.kind .. ":" .. e.link .. ":" .. e.data end
    assert.same({ "a.txt:file::hello", "ln:symlink:/etc/passwd:", "hl:hardlink:a.txt:", "dev:char::", "dir/:dir::",
      long .. ":file::long-named", "pax/renamed-by-pax.txt:file::p" }, got)
  end)

  it("refuses a corrupt header, a truncated entry and caps", function()
    t.write(dir .. "/bad.tar", ("x"):rep(1024))
    local _, code = entries(dir .. "/bad.tar")
    assert.equal("bad-checksum", code)
    t.write(dir .. "/trunc.tar", member("a.txt", ("z"):rep(2000)):sub(1, 900))
    _, code = entries(dir .. "/trunc.tar")
    assert.equal("truncated", code)
    local many = {}
    for i = 1, 20 do many[i] = member("f" .. i, "x") end
    t.write(dir .. "/many.tar", table.concat(many) .. ("\0"):rep(1024))
    _, code = entries(dir .. "/many.tar", { max_entries = 10 })
    assert.equal("too-many-entries", code)
    t.write(dir .. "/big.tar", member("big", ("b"):rep(100000)) .. ("\0"):rep(1024))
    _, code = entries(dir .. "/big.tar", { max_bytes = 50000 })
    assert.equal("too-large", code)
    local _, msg, c = require("vkit.archive").open(dir)
    assert.is_nil(_)
    assert.equal("not-a-regular-file", c, msg)
    assert(vkit.fs.mkfifo(dir .. "/pipe.tar")) -- refused, not waited on
    assert.equal("not-a-regular-file", select(3, require("vkit.archive").open(dir .. "/pipe.tar")))
    assert.equal("ENOENT", select(3, require("vkit.archive").open(dir .. "/absent.tar")))
  end)

  it("reads a gzip stream of several members", function()
    local fixtures = vkit.root .. "/fixtures/vac/archives"
    local gz = assert(vkit.fs.read(fixtures .. "/valid-v01.tar.gz", 1 << 24))
    t.write(dir .. "/two.tar.gz", gz .. "\0\0\0\0" .. gz)
    local es, code = entries(dir .. "/two.tar.gz")
    assert.is_nil(code)
    assert.is_true(#es > 10)
  end)

  it("reads member names as the Lua layer judges them", function()
    assert.same({ "a", "b" }, archive.member_parts "./a//b/")
    assert.same({}, archive.member_parts "./")
    for _, bad in ipairs { "/abs", "a/../b", "..", "C:/x", "c:x", "a\\b", "a\nb" } do
      assert.is_nil(archive.member_parts(bad), bad)
    end
  end)
end)

describe("vkit.vac.value.key (Python's equality classes as table keys)", function()
  local value = require "vkit.vac.value"
  it("joins what Python's == joins and nothing else", function()
    assert.equal(value.key(1), value.key(1.0))
    assert.equal(value.key(1), value.key(true))
    assert.equal(value.key(0), value.key(-0.0))
    assert.equal(value.key(0.1), value.key(0.1))
    assert.not_equal(value.key(0.1), value.key(0.1 + 2 ^ -56))
    assert.not_equal(value.key(0.3), value.key(0.1 + 0.2))
    assert.not_equal(value.key("1"), value.key(1))
    assert.equal(value.key(nil), value.key(vkit.json.null))
    -- a float whose bits spell digits never meets the integer they spell
    local spelled = string.unpack("<d", "12345678")
    assert.not_equal(value.key(12345678), value.key(spelled))
    assert.not_equal(value.key(1e300), value.key(1e300 * (1 + 2 ^ -52)))
    assert.equal(value.key(2 ^ 53), value.key(math.tointeger(2 ^ 53)))
    assert.not_equal(value.key(2 ^ 53), value.key(math.tointeger(2 ^ 53) + 1))
    assert.not_equal(value.key(0 / 0), value.key(0 / 0)) -- a NaN equals nothing
    assert.is_nil(value.key(vkit.json.array { 1 }))
  end)

  it("keys whole values as json.dumps(sort_keys=True) tells them apart (value.canonical)", function()
    local A, O, null = vkit.json.array, vkit.json.object, vkit.json.null
    local c = value.canonical
    assert.equal(c(O { a = 1, b = A { "x" } }), c(O { b = A { "x" }, a = 1 }))
    assert.equal(c(A { 0.5, -3, "é" }), c(A { 0.5, -3, "é" }))
    local distinct = { 1, 1.0, true, false, null, 0.0, -0.0, "1", "", "n", A {}, O {}, A { "a", "b" }, A { "ab" },
      A { A {} }, A { O {} }, O { a = A {} }, O { a = O {} }, O { a = "b" }, O { ab = "" }, A { 2 ^ 53 },
      A { math.tointeger(2 ^ 53) }, O { [("}"):rep(125)] = 1 }, O { [("k"):rep(125)] = 1 }, A { "}", "]" }, A { "}]" } }
    local seen = {}
    for i, v in ipairs(distinct) do
      local key = c(v)
      assert.is_nil(seen[key], ("value %d keys like value %s"):format(i, tostring(seen[key])))
      seen[key] = i
    end
  end)

  -- value.canonical is vkit.json.exact_key, in C: held byte for byte to
  -- the Lua walk it replaced (the model here) over seeded random values,
  -- decoded and built, with the numbers and keys where a key could slip.
  it("writes exactly the bytes of the Lua walk it replaced, over seeded random values", function()
    local json = vkit.json
    local pack, SCALAR = string.pack, { [true] = "t", [false] = "F" }
    local function model(v, out)
      local k = json.kind(v)
      if k == "object" then
        local keys = {}
        for key in pairs(v) do keys[#keys + 1] = key end
        table.sort(keys)
        out[#out + 1] = "{"
        for _, key in ipairs(keys) do
          out[#out + 1] = pack("<Bs4", 0x6B, key)
          model(v[key], out)
        end
        out[#out + 1] = "}"
      elseif k == "array" then
        out[#out + 1] = "["
        for i = 1, #v do model(v[i], out) end
        out[#out + 1] = "]"
      elseif k == "string" then
        out[#out + 1] = pack("<Bs4", 0x73, v)
      elseif k == "number" then
        out[#out + 1] = pack("<Bd", 0x66, v)
      elseif k == "integer" then
        out[#out + 1] = pack("<Bj", 0x69, v)
      else
        out[#out + 1] = SCALAR[v] or "n"
      end
    end
    local function want(v)
      local out = {}
      model(v, out)
      return table.concat(out)
    end
    math.randomseed(2026)
    local numbers = { 0, 0.0, -0.0, 1, 1.0, -1, 2 ^ 53, math.maxinteger, math.mininteger, 1e300, -1e-300, 5e-324, 0.1 }
    local keys = { "", "a", "A", "a\0", "a\0b", "\0", "é", "\255", "k", "}", "aa", ("x"):rep(300) }
    local function random_value(depth)
      local r = math.random(depth > 3 and 6 or 9)
      if r == 1 then return numbers[math.random(#numbers)] end
      if r == 2 then return math.random(-1000, 1000) end
      if r == 3 then return string.unpack("<d", string.pack("<i8", math.random(math.mininteger, math.maxinteger)))
      end
      if r == 4 then return keys[math.random(#keys)] .. string.char(math.random(0, 255)):rep(math.random(0, 2)) end
      if r == 5 then return ({ true, false, json.null })[math.random(3)] end
      if r == 6 then return keys[math.random(#keys)] end
      if r == 7 then
        local a = {}
        for i = 1, math.random(0, 4) do a[i] = random_value(depth + 1) end
        return math.random(3) == 1 and (#a > 0 and a or { 1 }) or json.array(a) -- unmarked too
      end
      local o = {}
      for _ = 1, math.random(0, 5) do o[keys[math.random(#keys)] .. math.random(0, 2)] = random_value(depth + 1) end
      return math.random(3) == 1 and (next(o) and o or { x = 1 }) or json.object(o)
    end
    for _ = 1, 3000 do
      local v = random_value(0)
      assert.equal(want(v), value.canonical(v))
      local ok, text = pcall(json.encode, v) -- not when it holds broken UTF-8, NaN or an infinity
      if ok then
        local decoded = json.decode(text)
        assert.equal(want(decoded), value.canonical(decoded))
      end
    end
    -- what kind() names no JSON value is "n", as the walk wrote it
    for _, v in ipairs { {}, { 1, x = 1 }, print, json.null, nil } do assert.equal(want(v), value.canonical(v)) end
    assert.equal(want(math.huge), value.canonical(math.huge))
    -- nesting beyond the decoder's is refused, not a C stack overflow
    local deep = json.array {}
    for _ = 1, 2000 do deep = json.array { deep } end
    assert.error_matches(function() value.canonical(deep) end, "nested too deeply")
  end)

  it("keeps a label that is a list apart from a string spelling its text (severity.unknown)", function()
    local severity = require "vkit.vac.severity"
    local list = vkit.json.array { 1 }
    local out = severity.unknown({ "[1]", list, "[1]", 1, 1.0, true }, 6)
    assert.equal(3, #out)
  end)
end)

-- modeldrift-board-v1's flips follow each task through the points with
-- one table per model, not a set per point: held here to the set-based
-- reading of the rule (a task in a point's fails and not in the previous
-- point's broke; the other way round, recovered) over seeded series with
-- repeated tasks, null and absent fails, and the mock control.
describe("modeldrift-board-v1 flips", function()
  local json = require "vkit.json"
  local md = require "vkit.vac.profiles.modeldrift-board-v1"

  local function reference(series, order)
    local rows, alarms, days = {}, {}, {}
    for _, mid in ipairs(order) do
      if mid:sub(1, 5) ~= "mock:" then
        local provider = mid:match "^([^:]*):" or mid
        local counts, latest, prev = {}, {}, nil
        for _, p in ipairs(series[mid]) do
          if p.fails ~= nil then
            local cur = {}
            local fails = p.fails == json.null and {} or p.fails
            for _, t in ipairs(fails) do
              cur[t] = true
              local key = p.t:sub(1, 10) .. " " .. t
              days[key] = days[key] or {}
              days[key][provider] = true
            end
            if prev then
              for t in pairs(cur) do
                if not prev[t] then counts[t], latest[t] = (counts[t] or 0) + 1, "broke on " .. p.t:sub(1, 10) end
              end
              for t in pairs(prev) do
                if not cur[t] then counts[t], latest[t] = (counts[t] or 0) + 1, "recovered on " .. p.t:sub(1, 10) end
              end
            end
            prev = cur
          end
        end
        for t, n in pairs(counts) do rows[#rows + 1] = ("%s %s %d %s"):format(mid, t, n, latest[t]) end
      end
    end
    for key, providers in pairs(days) do
      local list = {}
      for prov in pairs(providers) do list[#list + 1] = prov end
      table.sort(list)
      if #list >= 3 then alarms[#alarms + 1] = key .. " " .. table.concat(list, ",") end
    end
    table.sort(rows)
    table.sort(alarms)
    return rows, alarms
  end

  it("count every flip and every probe alarm as the set-based rule does", function()
    math.randomseed(11)
    local tasks = { "a", "b", "c", "d", "e" }
    for round = 1, 400 do
      local series, order = {}, {}
      for m = 1, math.random(1, 5) do
        local mid = (m == 1 and round % 3 == 0) and "mock:x" or ("p" .. math.random(1, 4) .. ":m" .. m)
        if not series[mid] then
          order[#order + 1] = mid
          local pts = json.array {}
          for i = 1, math.random(0, 6) do
            local p = json.object { t = ("2026-08-%02dT00:00:00Z"):format(math.random(1, 3)) }
            local r = math.random()
            if r < 0.15 then
              p.fails = json.null
            elseif r < 0.85 then
              p.fails = json.array {}
              for k = 1, math.random(0, 4) do p.fails[k] = tasks[math.random(1, #tasks)] end
            end
            pts[i] = p
          end
          series[mid] = pts
        end
      end
      local want_rows, want_alarms = reference(series, order)
      local got = md.flips(series, order)
      local rows, alarms = {}, {}
      for _, list in ipairs { got.repeat_offenders, got.one_offs } do
        for _, r in ipairs(list) do rows[#rows + 1] = ("%s %s %d %s"):format(r.model, r.task, r.flips, r.latest) end
      end
      for _, a in ipairs(got.probe_alarms) do
        alarms[#alarms + 1] = a.day .. " " .. a.task .. " " .. table.concat(a.providers, ",")
        assert.equal(#a.providers, a.n_providers)
      end
      table.sort(rows)
      table.sort(alarms)
      assert.same(want_rows, rows, "round " .. round)
      assert.same(want_alarms, alarms, "round " .. round)
    end
  end)
end)
