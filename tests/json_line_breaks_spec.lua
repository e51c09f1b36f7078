-- Issue 32: which bytes end a JSON Lines row besides LF is the caller's
-- rule, passed as data (opts.line_breaks); the C readers know no other.
-- Without a list, LF alone ends a row and a CR is JSON white space; with
-- one, a row holding any listed sequence is not read in C (json.lines
-- stops with "line-break", a tally gives up at that row), and the VAC
-- profile hands over its reference's list (jsonload.LINE_BREAKS, Python's
-- str.splitlines()), so a bundle holding such a byte is judged as the
-- reference judges it, with the tally as without it.
local vkit = require "vkit"
local t = require "tests.support.run"
local json, fs = require "vkit.json", vkit.fs
local jsonload = require "vkit.vac.jsonload"
local Source = require "vkit.vac.source"
local bundles = require "bench.vac_bundles"

local FIELDS = { "suite", "member" }
local ROW = '{"suite":"s","member":"m"}'

-- Rows in which each sequence stands where the scanner reads it: inside a
-- string, and (for CR and TAB, JSON white space) between two members.
local function rows_with(seq)
  local rows = { ('{"suite":"s%sx","member":"m"}'):format(seq) }
  if seq == "\r" or seq == "\t" then rows[#rows + 1] = ('{"suite":"s",%s"member":"m"}'):format(seq) end
  return rows
end

describe("line breaks as the caller's data (opts.line_breaks)", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  local function tally(text, breaks)
    local p = dir .. "/rows.jsonl"
    t.write(p, text)
    return json.tally_lines(p, { fields = FIELDS, line_breaks = breaks })
  end

  it("a tally without a list reads a CR, U+2028 or U+0085 in a row as the decoder does: LF alone ends a row", function()
    local seen = 0
    for _, seq in ipairs { "\r", "\194\133", "\226\128\168", "\226\128\169" } do
      for _, row in ipairs(rows_with(seq)) do
        if json.decode(row) then -- a CR inside a string is refused by the decoder, and so left to it
          local r = assert(tally(ROW .. "\n" .. row .. "\n" .. ROW .. "\n"), row)
          assert.equal(3, r.rows, row)
          seen = seen + 1
        end
      end
    end
    assert.equal(4, seen)
    -- CRLF line ends, and a line holding only a CR is blank, as json.lines reads them
    local r = assert(tally(ROW .. "\r\n \r\n" .. ROW .. "\r\n"))
    assert.equal(2, r.rows)
    assert.equal(1, #r.combos)
  end)

  it("a tally with the VAC profile's list gives up at the row holding any of its sequences", function()
    for _, seq in ipairs(jsonload.LINE_BREAKS) do
      for _, row in ipairs(rows_with(seq)) do
        local v, message, code, at, line = tally(ROW .. "\n\n" .. row .. "\n" .. ROW .. "\n", jsonload.LINE_BREAKS)
        assert.is_nil(v, ("%q accepted"):format(row))
        assert.equal("not-exact", code, message)
        assert.equal(2, at, message)
        assert.equal(3, line, message)
      end
    end
    local v, _, code = tally(ROW .. "\r\n", jsonload.LINE_BREAKS)
    assert.is_nil(v)
    assert.equal("not-exact", code)
  end)

  it("a tally gives up at exactly the sequences listed, and at no other", function()
    local u2028 = rows_with("\226\128\168")[1]
    local cr = rows_with("\r")[2]
    -- U+2028 alone: a CR is white space again, U+2029 (same first bytes) ordinary
    assert.equal(2, assert(tally(ROW .. "\n" .. cr .. "\r\n", { "\226\128\168" })).rows)
    assert.equal(2, assert(tally(ROW .. "\n" .. rows_with("\226\128\169")[1] .. "\n", { "\226\128\168" })).rows)
    assert.equal("not-exact", select(3, tally(ROW .. "\n" .. u2028 .. "\n", { "\226\128\168" })))
    -- CR alone: U+2028 is read as the decoder reads it
    assert.equal(2, assert(tally(ROW .. "\n" .. u2028 .. "\n", { "\r" })).rows)
    assert.equal("not-exact", select(3, tally(ROW .. "\n" .. cr .. "\n", { "\r" })))
    -- a TAB listed is no white space, nor blank
    assert.equal("not-exact", select(3, tally(ROW .. "\n" .. rows_with("\t")[2] .. "\n", { "\t" })))
    assert.equal(2, assert(tally(ROW .. "\n" .. rows_with("\t")[2] .. "\n")).rows)
    assert.equal("not-exact", select(3, tally(ROW .. "\n \t \n", { "\t" })))
    assert.equal(1, assert(tally(ROW .. "\n \t \n")).rows)
  end)

  it("json.lines stops at a listed sequence only", function()
    local p = dir .. "/rows.jsonl"
    local function codes(text, breaks)
      t.write(p, text)
      local out = {}
      for _, v, _, code in json.lines(p, { line_breaks = breaks }) do out[#out + 1] = v and "row" or code end
      return out
    end
    local u2028 = rows_with("\226\128\168")[1]
    assert.same({ "row", "row" }, codes(ROW .. "\n" .. u2028 .. "\n"))
    assert.same({ "row", "line-break" }, codes(ROW .. "\n" .. u2028 .. "\n", jsonload.LINE_BREAKS))
    assert.same({ "row", "row" }, codes(ROW .. "\n" .. u2028 .. "\n", { "\194\133" }))
    assert.same({ "row", "row" }, codes(ROW .. "\r\n" .. ROW .. "\r\n"))
    assert.same({ "line-break", "line-break" }, codes(ROW .. "\r\n" .. ROW .. "\r\n", { "\r" }))
  end)

  it("refuses a list the scanner could not honour where it looks", function()
    local p = dir .. "/rows.jsonl"
    t.write(p, ROW .. "\n")
    local many = {}
    for i = 1, 17 do many[i] = "\r" end
    for _, bad in ipairs { "\r", { "a" }, { " " }, { "\n" }, { "" }, { 13 }, { ("\194"):rep(9) }, many } do
      assert.has_error(function() json.tally_lines(p, { fields = FIELDS, line_breaks = bad }) end)
      assert.has_error(function() json.lines(p, { line_breaks = bad }) end)
    end
  end)

  -- A fleet bundle with a listed sequence at one raw line: the reference
  -- cuts the row there, so the artifact is unparsable; vkit says so with
  -- the tally offered (it gives up, and the rows are read the exact way)
  -- as without it.
  it("leaves a VAC bundle's verdict with such a byte what the reference's is, with the tally and without", function()
    local honest = dir .. "/fleet"
    bundles.fleet(honest, 40)
    local function failures(root)
      local out = {}
      for i, f in ipairs(vkit.vac.verify(root).failures) do out[i] = f.name end
      return out
    end
    local function edited(seq, k)
      local root = dir .. "/edited"
      require("tests.vac_support").copy_tree(honest, root)
      local raw = root .. "/raw_results.jsonl"
      local text = t.slurp(raw)
      local pattern = k == 1 and '"suite":"' or ',"member":'
      local at = assert(text:find(pattern, #text // 2, true))
      local cut = at + (k == 1 and #pattern or 1) - 1
      t.write(raw, text:sub(1, cut) .. seq .. text:sub(cut + 1))
      bundles.rehash(root)
      return root
    end
    assert.same({}, failures(honest))
    for _, seq in ipairs(jsonload.LINE_BREAKS) do
      for k = 1, (seq == "\r") and 2 or 1 do
        local root = edited(seq, k)
        local fast = failures(root)
        local tally_lines = Source.tally_lines
        Source.tally_lines = function() return nil end
        local ok, plain = pcall(failures, root)
        Source.tally_lines = tally_lines
        assert(ok, plain)
        assert.same(plain, fast, ("%q"):format(seq))
        assert.same({ "artifact-unparsable" }, fast, ("%q"):format(seq))
        fs.remove_tree(root)
      end
    end
  end)
end)
