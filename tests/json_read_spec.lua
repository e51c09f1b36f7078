-- vkit.json.read: decode(file bytes) without the bytes as a Lua string, the
-- file refused as vkit.fs.read refuses it, and one top-level array member
-- optionally streamed element by element.
local vkit = require "vkit"
local t = require "tests.support.run"
local json, fs = require "vkit.json", vkit.fs -- json.read: the C primitive (internal)

local function same_as_decode(path, text, opts)
  t.write(path, text)
  local got = { json.read(path, 1 << 30, opts) }
  local want = { json.decode(text, opts) }
  if want[1] ~= nil then
    assert.equal(json.canonical(want[1]), json.canonical(got[1]))
    assert.equal(json.kind(want[1]), json.kind(got[1]))
  else
    assert.same(want, got)
  end
end

describe("vkit.json.read", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("decodes a file as decode decodes its bytes, values and refusals alike", function()
    local p = dir .. "/doc.json"
    same_as_decode(p, '{"a":[1,2.5,"x",null,true,{}],"b":{"c":[]}}')
    same_as_decode(p, "[]")
    same_as_decode(p, '"just a string"')
    same_as_decode(p, '{"a":1,"a":2}')
    same_as_decode(p, '{"a":1,}')
    same_as_decode(p, "\239\187\191{}")
    same_as_decode(p, "[[[1]]]", { max_depth = 2 })
    same_as_decode(p, "")
  end)

  it("decodes a document of megabytes (read into huge-page memory) exactly", function()
    local rows = {}
    for i = 1, 100000 do
      rows[i] = ('{"id":"case-%d","kind":"k%d","passed":%s,"w":%d.5}'):format(i, i % 7, i % 3 == 0, i)
    end
    local text = '{"rows":[' .. table.concat(rows, ",") .. '],"n":100000}'
    assert.is_true(#text > 4 << 20)
    same_as_decode(dir .. "/big.json", text)
  end)

  it("refuses what vkit.fs.read refuses, with the same message and code", function()
    local p = dir .. "/doc.json"
    t.write(p, "[1,2,3]")
    assert.is_true(os.execute(("ln -s %s %s"):format(t.quote(p), t.quote(dir .. "/link.json"))))
    local cases = {
      { dir .. "/link.json", 100, { nofollow = true } },
      { dir, 100, {} },
      { p, 3, {} },
      { dir .. "/absent.json", 100, {} },
    }
    for _, c in ipairs(cases) do
      local _, fs_message, fs_code = fs.read(c[1], c[2], c[3])
      local v, message, code = json.read(c[1], c[2], c[3])
      assert.is_nil(v)
      assert.equal(fs_code, code)
      assert.equal(fs_message, message)
    end
    assert.equal(3, #json.read(dir .. "/link.json", 100)) -- followed without nofollow
  end)

  describe("streaming", function()
    local function stream(text, member)
      local p = dir .. "/s.json"
      t.write(p, text)
      local seen = {}
      local r = { json.read(p, 1 << 20, { stream = member or "cases", each = function(i, v)
        seen[#seen + 1] = { i, json.canonical(v) }
      end }) }
      return r, seen
    end

    it("passes each element of the top-level array member and leaves it out of the value", function()
      local r, seen = stream '{"a":1,"cases":[{"x":1},[2],3,null],"b":[true]}'
      assert.equal('{"a":1,"b":[true]}', json.canonical(r[1]))
      assert.equal(4, r[2])
      assert.same({ { 1, '{"x":1}' }, { 2, "[2]" }, { 3, "3" }, { 4, "null" } }, seen)
    end)

    it("counts an empty array and streams past the batch sizes", function()
      local r, seen = stream '{"cases":[]}'
      assert.equal(0, r[2])
      assert.equal("{}", json.canonical(r[1]))
      local items, keys = {}, {}
      for i = 1, 100 do items[i] = tostring(i) end
      for i = 1, 40 do keys[i] = ('"k%d":%d'):format(i, i) end
      r, seen = stream('{' .. table.concat(keys, ",") .. ',"cases":[' .. table.concat(items, ",") .. "]}")
      assert.equal(100, r[2])
      assert.equal(100, #seen)
      assert.equal(40, #(function() local n = {} for k in pairs(r[1]) do n[#n + 1] = k end return n end)())
    end)

    it("leaves a member that is not an array, or not at the top level, in the value", function()
      for _, text in ipairs { '{"cases":{"x":1}}', '{"cases":"x"}', '{"o":{"cases":[1]}}', '[{"cases":[1]}]', '{"a":1}' } do
        local r, seen = stream(text)
        assert.equal(json.canonical(json.decode(text)), json.canonical(r[1]))
        assert.is_nil(r[2])
        assert.same({}, seen)
      end
    end)

    it("still refuses a repeated member key, and any later error, after streaming", function()
      local r, seen = stream '{"cases":[1],"cases":[2]}'
      assert.same({ nil, 'duplicate-key at byte 13: duplicate object key "cases"', "duplicate-key", 13 }, r)
      assert.same({ { 1, "1" } }, seen) -- what was seen before the refusal is the caller's to drop
      r = stream '{"cases":[1,2],"z":}'
      assert.equal("invalid-json", r[3])
      r = stream('{"cases":[' .. string.rep("[", 300) .. string.rep("]", 300) .. "]}")
      assert.equal("too-deep", r[3])
    end)

    it("keeps only the named fields of an object element, still checking the others", function()
      local p = dir .. "/f.json"
      local function project(text)
        t.write(p, text)
        local seen = {}
        local r = { json.read(p, 1 << 20, { stream = "cases", fields = { "a", "b" }, each = function(i, v)
          seen[i] = json.canonical(v)
        end }) }
        return r, seen
      end
      local r, seen = project '{"cases":[{"a":1,"x":"drop","b":{"x":2},"y":[{"a":3}]},[{"a":1,"z":2}],{"z":"\\u00e9"},7]}'
      assert.equal(4, r[2])
      assert.same({ '{"a":1,"b":{"x":2}}', '[{"a":1,"z":2}]', "{}", "7" }, seen)
      -- what is dropped is checked as anything else
      local bad = '{"cases":[{"a":1,"x":"\255"}]}'
      r = project(bad)
      assert.same({ json.decode(bad) }, r)
      assert.equal("invalid-utf8", r[3])
      r = project '{"cases":[{"x":1,"a":2,"x":3}]}'
      assert.equal("duplicate-key", r[3])
      local many = {}
      for i = 1, 40 do many[#many + 1] = ('"k%d":"v%d"'):format(i, i) end
      r, seen = project('{"cases":[{' .. table.concat(many, ",") .. ',"a":true,"k3":0}]}')
      assert.equal("duplicate-key", r[3])
      r, seen = project('{"cases":[{' .. table.concat(many, ",") .. ',"a":true}]}')
      assert.same({ '{"a":true}' }, seen)
      assert.has_error(function() json.read(p, 100, { fields = { "a" } }) end)
    end)

    it("gives the keys of a top-level object member in document order", function()
      local p = dir .. "/o.json"
      local function order(text, member)
        t.write(p, text)
        local keys = {}
        local v = json.read(p, 1 << 20, { order_of = member or "series", each_key = function(k) keys[#keys + 1] = k end })
        return keys, v
      end
      local keys, v = order '{"a":1,"series":{"z":1,"b":{"k":2},"\\u0061":[1],"é":null},"c":{"y":1}}'
      assert.same({ "z", "b", "a", "é" }, keys)
      assert.equal(4, #(function() local n = {} for k in pairs(v.series) do n[#n + 1] = k end return n end)())
      assert.same({}, (order '{"series":[{"a":1}]}'))
      assert.same({}, (order '{"series":{}}'))
      assert.same({}, (order '{"o":{"series":{"a":1}}}'))
      assert.same({}, (order '[{"series":{"a":1}}]'))
      local many = {}
      for i = 40, 1, -1 do many[#many + 1] = ('"k%d":%d'):format(i, i) end
      keys = order('{"series":{' .. table.concat(many, ",") .. "}}")
      assert.equal(40, #keys)
      assert.equal("k40", keys[1])
      assert.equal("k1", keys[40])
    end)

    it("raises a misuse and lets an error in the callback through", function()
      local p = dir .. "/s.json"
      t.write(p, '{"cases":[1]}')
      assert.has_error(function() json.read(p, 100, { stream = "cases" }) end)
      assert.has_error(function() json.read(p, 100, { stream = 1, each = print }) end)
      assert.has_error(function() json.read(p, 100, { order_of = "cases" }) end)
      assert.has_error(function() json.read(p, 100, { stream = "cases", each = function() error "boom" end }) end)
    end)
  end)
end)

-- Issue 14 item 2: a read that must hold a pin hashes the bytes it parses.
describe("pinned reads (sha256 = hex)", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("json.read decodes bytes that hash to the pin and refuses others unparsed", function()
    local p = dir .. "/doc.json"
    t.write(p, '{"a":1}')
    local pin = vkit.hash.sha256 '{"a":1}'
    assert.equal(1, json.read(p, 100, { sha256 = pin }).a)
    t.write(p, '{"a":2}')
    local v, message, code, actual = json.read(p, 100, { sha256 = pin })
    assert.is_nil(v)
    assert.equal("sha256-mismatch", code)
    assert.equal(vkit.hash.sha256 '{"a":2}', actual)
    assert.matches(pin, message)
    -- a document that does not decode but holds its pin fails as decode does
    t.write(p, "{")
    assert.equal("invalid-json", select(3, json.read(p, 100, { sha256 = vkit.hash.sha256 "{" })))
    -- and one that holds another pin is not parsed at all
    assert.equal("sha256-mismatch", select(3, json.read(p, 100, { sha256 = pin })))
    assert.has_error(function() json.read(p, 100, { sha256 = "ABC" }) end)
    assert.has_error(function() json.read(p, 100, { sha256 = pin:upper() }) end)
  end)

  it("json.lines checks every byte read against the pin at the end", function()
    local p = dir .. "/rows.jsonl"
    local text = '{"a":1}\n{"a":2}\n'
    t.write(p, text)
    local rows, last = 0, nil
    for _, v, _, code in json.lines(p, { sha256 = vkit.hash.sha256(text) }) do
      if v then rows = rows + 1 else last = code end
    end
    assert.equal(2, rows)
    assert.is_nil(last)
    local seen = {}
    for n, v, _, code, actual in json.lines(p, { sha256 = vkit.hash.sha256 "other" }) do
      seen[#seen + 1] = v and "row" or (code .. " " .. n .. " " .. actual)
    end
    assert.same({ "row", "row", "sha256-mismatch 3 " .. vkit.hash.sha256(text) }, seen)
  end)

  it("json.lines with line_breaks stops at a row holding one of them, and reads it without", function()
    local breaks = require("vkit.vac.jsonload").LINE_BREAKS
    for _, brk in ipairs { "\r\n", "\r", "\194\133", "\226\128\168", "\226\128\169" } do
      local p = dir .. "/rows.jsonl"
      t.write(p, '{"a":1}\n{"a":"x' .. brk .. 'y"}\n')
      local codes = {}
      for _, v, _, code in json.lines(p, { line_breaks = breaks }) do
        codes[#codes + 1] = v and "row" or code
        if not v then break end
      end
      assert.same({ "row", "line-break" }, codes)
      codes = {} -- without the list, LF alone ends a row (a CR in a string is refused by the decoder)
      for _, v, _, code in json.lines(p) do codes[#codes + 1] = v and "row" or code end
      local cut = brk == "\r\n" and { "row", "invalid-json", "invalid-json" } or brk == "\r" and
        { "row", "invalid-json" } or { "row", "row" }
      assert.same(cut, codes)
    end
  end)

  it("json.lines refuses a link with nofollow and a FIFO without waiting", function()
    t.write(dir .. "/rows.jsonl", "1\n")
    assert(fs.symlink("rows.jsonl", dir .. "/link.jsonl"))
    assert.equal("not-a-regular-file", select(3, json.lines(dir .. "/link.jsonl", { nofollow = true })))
    assert(fs.mkfifo(dir .. "/fifo"))
    assert.equal("not-a-regular-file", select(3, json.lines(dir .. "/fifo")))
  end)
end)
