-- vkit.json tallies (issue 20 item 1): rows counted in C by the values of
-- named fields.  What they must never do is accept a row the decoder
-- refuses: every refusal, at the first, a middle and the last row, across
-- a read buffer, and a line past max_line end the tally as not-exact at
-- that row, and a seeded fuzz holds the counts to the decoder's.
local vkit = require "vkit"
local t = require "tests.support.run"
local json, hash = require "vkit.json", vkit.hash -- json.tally_lines: the C primitive (internal)

local FIELDS = { "suite", "member", "ok" }

-- The VAC profile's line breaks (Python's str.splitlines()), which every
-- case below but the ones on line_breaks itself reads with.
local LINE_BREAKS = require("vkit.vac.jsonload").LINE_BREAKS

local function tally(path, opts)
  opts = opts or {}
  opts.fields = opts.fields or FIELDS
  if opts.line_breaks == nil then opts.line_breaks = LINE_BREAKS end
  if opts.line_breaks == false then opts.line_breaks = nil end
  return json.tally_lines(path, opts)
end

-- The tally the decoder implies: combinations of the fields' values, in
-- order of first appearance (keys compared exactly, as C compares them).
local function reference(lines, fields)
  local order, by, rows = {}, {}, 0
  for _, line in ipairs(lines) do
    if line:find "[^ \t]" then
      rows = rows + 1
      local v = assert(json.decode(line))
      local parts = {}
      for i, f in ipairs(fields) do
        local x = v[f]
        parts[i] = x == nil and "-" or (math.type(x) or type(x)) .. ":" .. tostring(x)
      end
      local key = table.concat(parts, "\0")
      if not by[key] then
        by[key] = { n = 0, first = rows, key = key }
        order[#order + 1] = by[key]
      end
      by[key].n = by[key].n + 1
    end
  end
  return rows, order
end

local function key_of(c, fields)
  local parts = {}
  for i, f in ipairs(fields) do
    local x = c.row[f]
    parts[i] = x == nil and "-" or (math.type(x) or type(x)) .. ":" .. tostring(x)
  end
  return table.concat(parts, "\0")
end

-- The tally r of lines is the decoder's, row for row.
local function agrees(r, lines, why)
  local rows, order = reference(lines, FIELDS)
  assert.equal(rows, r.rows, why)
  assert.equal(#order, #r.combos, why)
  for i, c in ipairs(r.combos) do
    assert.equal(order[i].key, key_of(c, FIELDS), why)
    assert.equal(order[i].n, c.n, why)
    assert.equal(order[i].first, c.first, why)
  end
end

describe("vkit.json.tally_lines", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("counts rows by the values of named fields, in order of first appearance", function()
    local p = dir .. "/rows.jsonl"
    t.write(p, table.concat({
      '{"suite":"a","member":1,"ok":true,"x":[1,{"y":null}]}',
      '  ',
      '{"member":1,"suite":"a","ok":true}',
      '{"suite":"a","member":1.0,"ok":false}',
      '{"suite":"b","ok":null}',
      '{"suite":"a","member":1,"ok":true}',
    }, "\n") .. "\n")
    local r = assert(tally(p))
    assert.equal(5, r.rows)
    assert.equal(3, #r.combos)
    local c1, c2, c3, c4 = table.unpack(r.combos)
    assert.same({ n = 3, first = 1 }, { n = c1.n, first = c1.first })
    assert.equal("a", c1.row.suite)
    assert.equal("integer", math.type(c1.row.member))
    assert.is_true(c1.row.ok)
    assert.equal("float", math.type(c2.row.member))
    assert.equal(3, c2.first)
    assert.equal(json.null, c3.row.ok)
    assert.is_nil(c3.row.member) -- absent stays absent
    assert.equal("object", json.kind(c3.row))
    assert.is_nil(c4)
  end)

  it("reads a named field's decimal as the decoder does (the nearest double)", function()
    local p = dir .. "/rows.jsonl"
    local values = { "0.1", "-0.0", "1e23", "9007199254740993.0", "0.000000000000000000000000001", "2.5e-3", "7" }
    local lines = {}
    for i, v in ipairs(values) do lines[i] = ('{"suite":%s}'):format(v) end
    t.write(p, table.concat(lines, "\n") .. "\n")
    local r = assert(tally(p))
    assert.equal(#values, #r.combos)
    for i, v in ipairs(values) do
      local want = json.decode(v)
      local got = r.combos[i].row.suite
      assert.is_true(got == want and math.type(got) == math.type(want) and 1 / got == 1 / want, v)
    end
  end)

  -- A combination's key holds each field's tag, then each string's length
  -- (one byte below 255, else 255 and eight) and bytes: two rows whose
  -- strings join to the same bytes, split at another place, stay apart.
  it("keeps apart rows whose strings split the same bytes differently, at every length around 255", function()
    local lines = {}
    for _, n in ipairs { 0, 1, 2, 7, 8, 9, 15, 16, 17, 253, 254, 255, 256, 257, 300 } do
      local joined = ("x"):rep(n + 2)
      for cut = math.max(0, n - 1), n + 2 do
        lines[#lines + 1] = ('{"suite":"%s","member":"%s"}'):format(joined:sub(1, cut), joined:sub(cut + 1))
        lines[#lines + 1] = ('{"suite":"%s","member":"%s","ok":null}'):format(joined:sub(1, cut), joined:sub(cut + 1))
      end
      lines[#lines + 1] = ('{"suite":"%s"}'):format(("y"):rep(n))
      lines[#lines + 1] = ('{"member":"%s"}'):format(("y"):rep(n))
    end
    local all = {} -- each row twice: counted under its own combination
    for i, l in ipairs(lines) do all[i], all[#lines + i] = l, l end
    local p = dir .. "/rows.jsonl"
    t.write(p, table.concat(all, "\n") .. "\n")
    local r = assert(tally(p))
    agrees(r, all, "strings split around 255")
    assert.equal(#lines, #r.combos) -- no two of the rows above are one combination
  end)

  -- A row that repeats the last row's keys is read by matching each key's
  -- lead (its ',', the key, its ':') against the last row's: every row
  -- below follows a row of the base shape and differs from it at one place
  -- a byte comparison could miss (white space, order, a key one byte
  -- longer or shorter, a key more or fewer, another type of value), with
  -- unnamed keys whose leads are 14 to 19 bytes long (a lead of up to 16
  -- is compared in one sixteen-byte load) and keys of 63 to 66 bytes as
  -- written (a tally remembers a key of up to 64 in its place; a longer
  -- one sends every row to the full scan).
  it("reads a row that nearly repeats the last row's keys as the decoder does", function()
    for _, n in ipairs { 10, 11, 12, 13, 14, 15, 60, 61, 62, 63 } do
      local pad = ("k"):rep(n)
      local base = ('{"suite":"s","%s":0,"member":"m","ok":true}'):format(pad)
      local variants = {
        base,
        ('{"suite":"s", "%s":0,"member":"m","ok":true}'):format(pad),
        ('{"suite":"s" ,"%s":0,"member":"m","ok":true}'):format(pad),
        ('{ "suite":"s","%s":0,"member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s" :0,"member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":true }'):format(pad),
        ('{"suite":"s","%sk":0,"member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":true}'):format(pad:sub(2)),
        ('{"suite":"s","%s":0,"ok":true,"member":"m"}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m"}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":true,"z":1}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","okk":true}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","o":true}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":false}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":null}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":"true"}'):format(pad),
        ('{"suite":"s","%s":0,"member":1,"ok":true}'):format(pad),
        ('{"suite":"s","%s":0,"member":-1.5e2,"ok":true}'):format(pad),
        ('{"suite":"s","%s":[0],"member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s":{"ok":false},"member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s":"0,\\"member\\":\\"x\\"","member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s":"0,","member":"m","ok":true}'):format(pad),
        ('{"suite":"s","%s":0,"member":"m","ok":true}  '):format(pad),
      }
      local lines = {}
      for _, v in ipairs(variants) do
        lines[#lines + 1] = base
        lines[#lines + 1] = v
        lines[#lines + 1] = v
      end
      local p = dir .. "/rows.jsonl"
      t.write(p, table.concat(lines, "\n") .. "\n")
      local r = assert(tally(p))
      agrees(r, lines, "key of " .. n .. " bytes")
    end
  end)

  it("checks the bytes against a pin, hashed while they are scanned", function()
    local p = dir .. "/rows.jsonl"
    local text = ('{"suite":"s","member":"m","ok":true}\n'):rep(1000)
    t.write(p, text)
    assert.equal(1000, tally(p, { sha256 = hash.sha256(text) }).rows)
    local v, message, code, actual = tally(p, { sha256 = hash.sha256 "else" })
    assert.is_nil(v)
    assert.equal("sha256-mismatch", code)
    assert.equal(hash.sha256(text), actual)
    assert.matches("read " .. actual, message)
  end)

  -- every refusal of the decoder, and what the scanner leaves to it
  local REFUSED = {
    '{"suite":"a",}', '{"suite":"a" "member":1}', '{"suite":01}', '{"suite":1.}', '{"suite":NaN}',
    '{"suite":Infinity}', '{"suite":"a\\x"}', '{"suite":"\\ud800"}', '{"x":"\\udc00"}', '{"suite":"a\1"}',
    '{"suite":"a","suite":"b"}', '{"x":{"k":1,"k":2}}', '{"x":1e400}', '{"x":' .. ("["):rep(300) .. ("]"):rep(300)
    .. '}', '\239\187\191{"suite":"a"}', '{"suite":"a"} x', '{"suite":"\255"}', '{"suite":"\192\128"}',
    '{"suite":"a"', 'nul', '{"ok":tru}', '{"x":[1,]}',
  }
  local UNDECIDED = { -- valid JSON the scanner leaves to the decoder
    '[1]', '"row"',
    '{"su\\u0069te":"a"}', '{"suite":"\\u00e9"}', '{"suite":[1]}', '{"member":{"a":1}}', '{"x":"a\226\128\168b"}',
    '{"x":1}\r', '{"suite":"a","k01":1,"k02":1,"k03":1,"k04":1,"k05":1,"k06":1,"k07":1,"k08":1,"k09":1,"k10":1,'
    .. '"k11":1,"k12":1,"k13":1,"k14":1,"k15":1,"k16":1,"k17":1,"k18":1,"k19":1,"k20":1,"k21":1,"k22":1,"k23":1,'
    .. '"k24":1,"k25":1,"k26":1,"k27":1,"k28":1,"k29":1,"k30":1,"k31":1,"k32":1}',
  }

  it("never accepts a row the decoder refuses: not-exact at that row, first, middle or last", function()
    local good = '{"suite":"s","member":"m","ok":true}'
    for _, bad in ipairs(REFUSED) do
      assert.is_nil(json.decode(bad), bad) -- the decoder does refuse it
      for _, at in ipairs { 1, 50, 100 } do
        local lines = {}
        for i = 1, 100 do lines[i] = i == at and bad or good end
        local p = dir .. "/rows.jsonl"
        t.write(p, table.concat(lines, "\n") .. "\n")
        local v, message, code, row, line = tally(p)
        assert.is_nil(v, ("accepted %q at row %d"):format(bad, at))
        assert.equal("not-exact", code, message)
        assert.equal(at, row, ("%q at row %d: %s"):format(bad, at, message))
        assert.equal(at, line)
      end
    end
    for _, odd in ipairs(UNDECIDED) do
      if not odd:find "\r" then assert.is_not_nil(json.decode(odd), odd) end
      local p = dir .. "/rows.jsonl"
      t.write(p, good .. "\n\n" .. odd .. "\n" .. good .. "\n")
      local v, message, code, row, line = tally(p)
      assert.is_nil(v, odd)
      assert.equal("not-exact", code)
      assert.equal(2, row, message)
      assert.equal(3, line, message) -- the blank line counts as a line, not a row
    end
  end)

  -- The file is read in 2 MiB chunks, ahead of the scan on a second thread
  -- from 1 MiB (csrc/chunks.c).
  local CHUNK = 2 << 20

  it("reads rows split across its 2 MiB reads, and refuses a bad one there", function()
    local p = dir .. "/rows.jsonl"
    local row = '{"suite":"s","member":"m","ok":true,"pad":"' .. ("x"):rep(200) .. '"}\n'
    local n = (3 * CHUNK) // #row + 2 -- three boundaries, each inside a row
    t.write(p, row:rep(n))
    local r = assert(tally(p))
    assert.equal(n, r.rows)
    assert.equal(n, r.combos[1].n)
    for _, boundary in ipairs { CHUNK, 2 * CHUNK, 3 * CHUNK } do
      local straddling = boundary // #row + 1
      for _, bad in ipairs { { '"ok":true', '"ok":True' }, { '"pad":"x', '"pad":"\1' }, { '"suite":"s"', '"suite":"s\\q"' } } do
        local lines = {}
        for i = 1, n do lines[i] = i == straddling and row:gsub(bad[1], bad[2], 1) or row end
        t.write(p, table.concat(lines))
        local v, _, code, at = tally(p)
        assert.is_nil(v, bad[2])
        assert.equal("not-exact", code)
        assert.equal(straddling, at, bad[2])
      end
    end
  end)

  -- A file under 1 MiB is read in chunks a page larger than its size (no
  -- huge page for a few rows): at every size around a page, the one read
  -- shorter than a chunk ends the file, its last row and pin included.
  it("reads a small file whole at every size around a page, its pin to the last byte", function()
    local p = dir .. "/small.jsonl"
    local row = '{"suite":"s","member":"m","ok":true}\n'
    for _, size in ipairs { 64, 4094, 4095, 4096, 4097, 8191, 8192, 8193 } do
      local head = row:rep((size - 60) // #row)
      local last = '{"suite":"t","member":"m","ok":false,"pad":"'
      local text = head .. last .. ("x"):rep(size - #head - #last - 3) .. '"}\n'
      assert.equal(size, #text)
      t.write(p, text)
      local lines = {}
      for l in text:gmatch "[^\n]+" do lines[#lines + 1] = l end
      agrees(assert(tally(p, { sha256 = hash.sha256(text) })), lines, size .. " bytes")
      t.write(p, text:sub(1, -2) .. " ")
      local v, _, code = tally(p, { sha256 = hash.sha256(text) })
      assert.is_nil(v, size .. " bytes")
      assert.equal("sha256-mismatch", code)
    end
  end)

  it("checks a pin over a file read ahead on the second thread, to its last byte", function()
    local p = dir .. "/rows.jsonl"
    local text = ('{"suite":"s","member":"m","ok":true}\n'):rep((3 * CHUNK) // 37 + 5)
    t.write(p, text)
    assert.equal(#text // 37, tally(p, { sha256 = hash.sha256(text) }).rows)
    t.write(p, text:sub(1, -2) .. " ") -- the last byte differs: a blank where the newline was
    local v, _, code, actual = tally(p, { sha256 = hash.sha256(text) })
    assert.is_nil(v)
    assert.equal("sha256-mismatch", code)
    assert.equal(hash.sha256(text:sub(1, -2) .. " "), actual)
  end)

  -- Rows that repeat the last row's keys, in order and without white space,
  -- are read by comparing their keys' bytes (scan_row_fast): whatever one
  -- byte does to such a row, the tally agrees with the decoder or leaves
  -- the row to it, and never accepts one it refuses.
  it("agrees with the decoder on rows of one shape, mutated byte by byte", function()
    math.randomseed(20261202)
    local named = { '"a"', '"b"', '1', '1.0', '-0', '2e3', 'true', 'false', 'null', '"é"', '"a"', 'true', '7' }
    local other = { '"x"', '[1,{"y":null}]', '{}', '-1.5e-3', '"\\u0041"', 'true', '0' }
    local function row()
      return ('{"suite":%s,"member":%s,"ok":%s,"x":%s}'):format(named[math.random(#named)],
        named[math.random(#named)], named[math.random(#named)], other[math.random(#other)])
    end
    local agreed, refused = 0, 0
    for _ = 1, 300 do
      local lines = {}
      for i = 1, math.random(2, 40) do lines[i] = row() end
      local at = math.random(#lines)
      if math.random() < 0.5 then -- one byte changed, dropped or added
        local l = lines[at]
        local k = math.random(#l)
        local op = math.random(3)
        lines[at] = l:sub(1, k - 1) .. (op == 2 and "" or string.char(math.random(0, 255))) .. l:sub(op == 3 and k or k + 1)
      end
      local p = dir .. "/shape.jsonl"
      t.write(p, table.concat(lines, "\n") .. "\n")
      local first_bad
      for i, l in ipairs(lines) do
        if not first_bad and l:find "[^ \t]" and (l:find "[\r\n]" or json.decode(l) == nil) then first_bad = i end
      end
      local r, message, code, row_at = tally(p)
      if first_bad then
        assert.is_nil(r, lines[first_bad])
        assert.equal("not-exact", code)
        assert.is_true(row_at <= first_bad, message) -- at the bad row, or at a row left to the decoder before it
        refused = refused + 1
      elseif r then
        agrees(r, lines, lines[at])
        agreed = agreed + 1
      end
    end
    assert.is_true(agreed > 30 and refused > 100, ("agreed %d, refused %d"):format(agreed, refused))
  end)

  it("leaves a line longer than max_line to the decoder (a 64 MiB line)", function()
    local p = dir .. "/rows.jsonl"
    local long = '{"suite":"' .. ("x"):rep(64 << 20) .. '"}'
    t.write(p, '{"suite":"a"}\n' .. long .. "\n")
    local v, message, code, row = tally(p, { max_line = 64 << 20 })
    assert.is_nil(v)
    assert.equal("not-exact", code)
    assert.matches("max_line", message)
    assert.equal(2, row) -- the row being read
    assert.equal(2, tally(p, { max_line = (64 << 20) + 16 }).rows)
  end)

  it("agrees with the decoder on seeded random rows, mutated byte by byte", function()
    math.randomseed(20261201)
    local atoms = { '"a"', '"b"', '1', '1.0', '-0', '2e3', 'true', 'false', 'null', '"é"', '"a"', '1', 'true' }
    local nested = { '"\\u0041"', '[]', '{}', '[1,"x"]', '{"z":1}' } -- decided only outside the named fields
    local keys = { "suite", "member", "ok", "other", "x" }
    local function row()
      local parts, used = {}, {}
      for _ = 1, math.random(0, 5) do
        local k = keys[math.random(#keys)]
        if not used[k] or math.random() < 0.02 then
          used[k] = true
          local pool = (k == "other" or k == "x") and math.random() < 0.5 and nested or atoms
          parts[#parts + 1] = ('"%s":%s'):format(k, pool[math.random(#pool)])
        end
      end
      return "{" .. table.concat(parts, ",") .. "}"
    end
    local agreed, refused, undecided = 0, 0, 0
    for _ = 1, 300 do
      local lines = {}
      for i = 1, math.random(1, 30) do lines[i] = row() end
      if math.random() < 0.3 then -- one byte changed somewhere
        local i = math.random(#lines)
        local s = lines[i]
        local at = math.random(#s)
        lines[i] = s:sub(1, at - 1) .. string.char(math.random(0, 255)) .. s:sub(at + 1)
      end
      local p = dir .. "/fuzz.jsonl"
      t.write(p, table.concat(lines, "\n"))
      local decodable = true
      for _, l in ipairs(lines) do
        if l:find "[^ \t]" and (l:find "[\r\n]" or json.decode(l) == nil) then decodable = false end
      end
      local r, _, code = tally(p)
      if not decodable then
        assert.is_nil(r, table.concat(lines, "\n"))
        assert.equal("not-exact", code)
        refused = refused + 1
      elseif r then
        agrees(r, lines)
        agreed = agreed + 1
      else
        undecided = undecided + 1
      end
    end
    assert.is_true(agreed > 100 and refused > 30, ("agreed %d, refused %d, undecided %d"):format(agreed, refused,
      undecided))
  end)

  -- json.read's tally reads a file of two chunks or more (256 KiB by
  -- default; `chunk` sets it, 0 reads whole) in chunks hashed on a second
  -- thread, the rows scanned as they come.  Whatever it cannot read there
  -- (a row longer than a carried tail may be, a document whose array does
  -- not begin in the first chunk) it reads whole, so with 4 KiB chunks
  -- every document below must come out exactly as read whole: the value,
  -- the tally, or the refusal, message for message.
  describe("json.read's tally, read in chunks", function()
    local CHUNKED = 4096
    local how -- the last outcome's tally.read

    -- What json.read makes of the file: its value and tally, or its refusal.
    local function outcome(p, chunk, pin)
      how = nil
      local v, r, code, detail = json.read(p, 1 << 30, { stream = "cases", tally = FIELDS, chunk = chunk, sha256 = pin })
      if v == nil then return table.concat({ "refused", tostring(r), tostring(code), tostring(detail) }, " | ") end
      local parts = { json.encode(v) }
      if type(r) == "table" then
        parts[2] = "rows " .. r.rows
        how = r.read
        for _, c in ipairs(r.combos) do parts[#parts + 1] = ("%s n=%d first=%d"):format(json.encode(c.row), c.n, c.first) end
      else
        parts[2] = "no tally: " .. tostring(r)
      end
      return table.concat(parts, "\n")
    end

    -- The document text, written to p, reads the same in chunks as whole;
    -- returns that and how the chunked read read it ("chunks", "whole", or
    -- nil for a refusal).
    local function same_both_ways(p, text, why, pin)
      t.write(p, text)
      local whole = outcome(p, 0, pin)
      assert.equal("whole", how or "whole", why)
      assert.equal(whole, outcome(p, CHUNKED, pin), why)
      return whole, how
    end

    -- n rows of varied lengths (so that chunk boundaries fall at every kind
    -- of place), joined by sep
    local function rows(n, seed, sep)
      math.randomseed(seed)
      local out = {}
      for i = 1, n do
        local suite = ({ "a", "b", "c" })[math.random(3)]
        local ok = ({ "true", "false", "null", "1", "2.5" })[math.random(5)]
        out[i] = ('{"suite":"%s","member":"m%d","ok":%s,"note":"%s"}'):format(suite, math.random(4), ok,
          ("n"):rep(math.random(0, 300)))
      end
      return table.concat(out, sep or ",")
    end

    it("reads rows cut at every kind of place by the chunks' ends, as whole", function()
      local p = dir .. "/doc.json"
      for seed = 1, 8 do
        local sep = ({ ",", ", ", ",\n  ", " ,\t" })[seed % 4 + 1]
        local text = '{"meta":{"n":1},"cases":[' .. rows(300, seed, sep) .. '],"z":[1,2]}'
        local r, read = same_both_ways(p, text, "seed " .. seed)
        assert.matches("rows 300", r)
        assert.equal("chunks", read)
      end
      -- white space longer than a chunk, between rows and before the close
      local text = '{"cases":[' .. rows(40, 9) .. (" "):rep(3 * CHUNKED) .. "," .. rows(40, 10) .. ("\n"):rep(CHUNKED + 7) .. "]}"
      local r, read = same_both_ways(p, text, "long white space")
      assert.matches("rows 80", r)
      assert.equal("chunks", read)
    end)

    it("ends the file where a chunk ends, and reads a file of two chunks or just under", function()
      local p = dir .. "/doc.json"
      for _, size in ipairs { 2 * CHUNKED - 1, 2 * CHUNKED, 2 * CHUNKED + 1, 3 * CHUNKED, 4 * CHUNKED, 4 * CHUNKED + 1 } do
        local head = '{"cases":[' .. rows(8, size) .. "]"
        local text = head .. (" "):rep(size - #head - 1) .. "}"
        assert.equal(size, #text)
        local whole, read = same_both_ways(p, text, size .. " bytes")
        assert.matches("rows 8", whole)
        assert.equal(size < 2 * CHUNKED and "whole" or "chunks", read, size .. " bytes")
        -- and a byte after the document, at the very end
        same_both_ways(p, text .. "x", size .. " bytes and one")
      end
    end)

    it("reads whole what it cannot read in chunks: a long row, a long head", function()
      local p = dir .. "/doc.json"
      local long = '{"suite":"a","member":"m1","ok":true,"note":"' .. ("x"):rep(3 * CHUNKED) .. '"}'
      local text = '{"cases":[' .. rows(50, 11) .. "," .. long .. "," .. rows(50, 12) .. "]}"
      local r, read = same_both_ways(p, text, "a row longer than a chunk")
      assert.matches("rows 101", r)
      assert.equal("whole", read)
      -- a row as long as a chunk is carried whole into the next one
      long = '{"suite":"a","member":"m1","ok":true,"note":"' .. ("x"):rep(CHUNKED - 60) .. '"}'
      text = '{"cases":[' .. rows(50, 11) .. "," .. long .. "," .. long .. "," .. rows(50, 12) .. "]}"
      r, read = same_both_ways(p, text, "rows as long as a chunk")
      assert.matches("rows 102", r)
      assert.equal("chunks", read)
      text = '{"meta":"' .. ("m"):rep(3 * CHUNKED) .. '","cases":[' .. rows(50, 13) .. "]}"
      r, read = same_both_ways(p, text, "the array past the first chunk")
      assert.matches("rows 50", r)
      assert.equal("whole", read)
      text = '{"cases":[],"tail":"' .. ("t"):rep(3 * CHUNKED) .. '"}'
      r, read = same_both_ways(p, text, "an empty array and a long tail")
      assert.matches("rows 0", r)
      assert.equal("chunks", read)
    end)

    it("never takes a document that ends early for the file", function()
      local p = dir .. "/doc.json"
      -- no streamed array: the first chunk holds a whole document, and what
      -- follows in the file decides (with the file's last chunk read, and
      -- hashed, while the first is still being read, or not)
      for _, spaces in ipairs { 2 * CHUNKED, 3 * CHUNKED } do
        local r = same_both_ways(p, '{"x":1}' .. (" "):rep(spaces) .. "z", "bytes after the value")
        assert.matches("trailing bytes", r)
        r = same_both_ways(p, '{"x":1}' .. (" "):rep(spaces), "white space after the value")
        assert.matches("no tally", r)
      end
      local r
      r = same_both_ways(p, '{"cases":[' .. rows(60, 14) .. "]}" .. (" "):rep(CHUNKED) .. "{}", "a second value")
      assert.matches("trailing bytes", r)
      r = same_both_ways(p, '{"cases":{"a":[' .. rows(60, 15) .. "]}}", "the member not an array")
      assert.matches("no tally", r)
      r = same_both_ways(p, '{"cases":[' .. rows(60, 16) .. '],"cases":[]}', "the member twice")
      assert.matches("duplicate%-key", r)
    end)

    it("refuses every bad row as a whole read does, first, middle or last", function()
      local p = dir .. "/doc.json"
      local body = rows(120, 17)
      local text = '{"cases":[' .. body .. "]}"
      local marks = {}
      for at in text:gmatch '()"member"' do marks[#marks + 1] = at end
      local bad = { '"member":True', '"member":"\1', '"member":"\\q"', '"member":[1', '"member":1e999', '"member":"m1","suite"' }
      for _, at in ipairs { marks[1], marks[60], marks[#marks] } do
        for _, b in ipairs(bad) do
          local cooked = text:sub(1, at - 1) .. b .. text:sub(at + #'"member"')
          local r = same_both_ways(p, cooked, b)
          assert.matches("^refused", r, b)
        end
      end
    end)

    it("agrees with a whole read on seeded random bytes changed, added or taken out", function()
      local p = dir .. "/doc.json"
      local text = '{"meta":{"n":[1,2]},"cases":[' .. rows(100, 18, ", ") .. '],"z":"end"}'
      math.randomseed(20261201)
      local pieces = { '"', "\\", "{", "}", "[", "]", ",", ":", " ", "\n", "1", "x", "\0", "\226\128\168" }
      for i = 1, 300 do
        local at = math.random(#text)
        local piece = pieces[math.random(#pieces)]
        local op = i % 3
        local cooked = op == 0 and text:sub(1, at - 1) .. piece .. text:sub(at + 1)
          or op == 1 and text:sub(1, at - 1) .. piece .. text:sub(at)
          or text:sub(1, at - 1) .. text:sub(at + 1)
        same_both_ways(p, cooked, ("change %d at byte %d"):format(i, at))
      end
    end)

    it("checks the pin over every byte it read in chunks", function()
      local p = dir .. "/doc.json"
      local text = '{"cases":[' .. rows(100, 19) .. "]}"
      local r, read = same_both_ways(p, text, "pinned", hash.sha256(text))
      assert.matches("rows 100", r)
      assert.equal("chunks", read)
      for _, changed in ipairs { " " .. text:sub(2), text:sub(1, -2) .. "]", text .. " " } do
        r = same_both_ways(p, changed, "a byte changed", hash.sha256(text))
        assert.matches("sha256%-mismatch", r)
      end
    end)

    it("takes chunks of 4096 bytes to 64 MiB, or 0 for a whole read, and refuses any other size", function()
      local p = dir .. "/doc.json"
      t.write(p, '{"cases":[' .. rows(100, 20) .. "]}")
      for _, chunk in ipairs { 0, 4096, 64 << 20 } do
        local v, r = json.read(p, 1 << 30, { stream = "cases", tally = FIELDS, chunk = chunk })
        assert.is_table(v, chunk)
        assert.equal(100, r.rows)
        assert.equal(chunk == 4096 and "chunks" or "whole", r.read, chunk) -- 64 MiB: under two chunks
      end
      for _, chunk in ipairs { 4095, (64 << 20) + 1, -1, 100 } do
        assert.has_error(function() json.read(p, 1 << 30, { stream = "cases", tally = FIELDS, chunk = chunk }) end,
          "bad argument #3 to 'read' (chunk must be 0 or 4096..64 MiB)")
      end
    end)
  end)

  it("tallies a document's top-level array member through json.read, the rest decoded", function()
    local p = dir .. "/doc.json"
    t.write(p, '{"meta":{"n":2},"cases":[{"suite":"a","ok":true},{"ok":true,"suite":"a"},{"suite":"b"}],"z":[1]}')
    local v, r = json.read(p, 1 << 20, { stream = "cases", tally = FIELDS })
    assert.equal(2, v.meta.n)
    assert.is_nil(v.cases)
    assert.equal(1, v.z[1])
    assert.equal(3, r.rows)
    assert.equal(2, #r.combos)
    assert.equal(2, r.combos[1].n)
    t.write(p, '{"cases":[{"suite":"a"},{"suite":"a","suite":"b"}]}')
    local nv, message, code = json.read(p, 1 << 20, { stream = "cases", tally = FIELDS })
    assert.is_nil(nv)
    assert.equal("not-exact", code)
    assert.matches("row 2", message)
    assert.has_error(function() json.read(p, 10, { tally = FIELDS }) end)
    assert.has_error(function() json.tally_lines(p, { fields = {} }) end)
  end)
end)
