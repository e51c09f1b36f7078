-- Issue 20 item 4: the fast path changes nothing.  Generated fleet and
-- crashkit bundles, honest and tampered at one seeded random row (each
-- re-hashed honestly, so only recomputation can name the lie), are
-- verified with the tallies and with the plain decoder (the tallies
-- switched off), and must give the very same failures, in order, with the
-- same details.
local vkit = require "vkit"
local t = require "tests.support.run"
local bundles = require "bench.vac_bundles"
local Source = require "vkit.vac.source"
local fs = vkit.fs

local function failures(root)
  local out = {}
  for i, f in ipairs(vkit.vac.verify(root).failures) do out[i] = f.name .. ": " .. tostring(f.detail) end
  return out
end

-- The failures with the tallies, then without them (the plain decoder).
local function both(root)
  local fast = failures(root)
  local tally_lines, tally_stream = Source.tally_lines, Source.tally_stream
  local used = false
  Source.tally_lines = function() used = true return nil end
  Source.tally_stream = function() used = true return nil end
  local ok, plain = pcall(failures, root)
  Source.tally_lines, Source.tally_stream = tally_lines, tally_stream
  assert(ok, plain)
  assert.is_true(used, "the plain run must have been offered a tally")
  return fast, plain
end

-- Rewrites line `at` (1-based) of the file at path through fn.
local function edit_line(path, at, fn)
  local lines = {}
  for line in (t.slurp(path) .. ""):gmatch "([^\n]*)\n" do lines[#lines + 1] = line end
  local before = lines[at]
  lines[at] = fn(before)
  t.write(path, table.concat(lines, "\n") .. "\n")
  return lines[at] ~= before
end

local FLEET_TAMPERS = {
  { "a contradicting detected flag", function(l) return (l:gsub('"detected":(%a+)', function(v)
    return '"detected":' .. (v == "true" and "false" or "true") end)) end },
  { "a suite with no aggregate row", function(l) return (l:gsub('"suite":"suite%-%d+"', '"suite":"suite-new"')) end },
  { "a clean pass turned false alarm", function(l)
    return (l:gsub('"clean_passed":true', '"clean_passed":false'):gsub('"detected":true', '"detected":false')) end },
  { "a line that is not an object", function() return "[1]" end },
  { "a duplicate key", function(l) return (l:gsub("^{", '{"member":"x",')) end },
  { "NaN", function(l) return (l:gsub('"i":%d+', '"i":NaN')) end },
  { "a blank line", function(l) return "   \n" .. l end },
  { "a U+2028 in a string", function(l) return (l:gsub('"suite":"', '"suite":"\226\128\168')) end },
  { "an integer suite", function(l) return (l:gsub('"suite":"suite%-%d+"', '"suite":7')) end },
  { "an escaped key", function(l) return (l:gsub('"suite":', '"su\\u0069te":')) end },
  { "a CRLF line end", function(l) return l .. "\r" end },
  { "a list as a member", function(l) return (l:gsub('"member":"[^"]*"', '"member":["m"]')) end },
  -- a row like its neighbours but for one thing (rows that repeat the last
  -- row's keys are read by comparing bytes: each of these leaves that path)
  { "a key one byte off", function(l) return (l:gsub('"member":', '"membes":')) end },
  { "white space after a key", function(l) return (l:gsub('"member":', '"member" :')) end },
  { "a literal cut short", function(l) return (l:gsub('"clean_passed":(%a+)', '"clean_passed":tru')) end },
  { "a leading zero", function(l) return (l:gsub('"i":(%d+)', '"i":0%1')) end },
  { "an integer past 64 bits", function(l) return (l:gsub('"i":(%d+)', '"i":99999999999999999999%1')) end },
  { "a control character in a value", function(l) return (l:gsub('"suite":"suite', '"suite":"\1suite')) end },
  { "an extra key", function(l) return (l:gsub("}$", ',"extra":{"k":[1,2]}}')) end },
  { "a missing key", function(l) return (l:gsub('"i":%d+,', '')) end },
  { "a row cut short", function(l) return l:sub(1, -3) end },
}

-- {name, does it apply to this case, the case edited}
local function has(p) return function(c) return c:find(p) ~= nil end end
local function sub(p, r) return function(c) return (c:gsub(p, r, 1)) end end
local CRASH_TAMPERS = {
  { "a contradicting flag", has "", function(c)
    return (c:gsub('"flagged":(%a+)', function(v) return '"flagged":' .. (v == "true" and "false" or "true") end, 1)) end },
  { "an unknown severity", has '"severity":"high"', sub('"severity":"high"', '"severity":"High"') },
  { "passed as a number", has '"passed":true', sub('"passed":true', '"passed":1') },
  { "a blank kind", has "", sub('"kind":"kind%-%d+"', '"kind":" "') },
  { "an escaped kind", has "", sub('"kind":"kind%-', '"kind":"kind\\u002d') },
  { "a case turned failure", function(c) return c:find '"passed":true' and c:find '"truncated":false' end,
    function(c) return (c:gsub('"passed":true', '"passed":false', 1):gsub('"flagged":false', '"flagged":true', 1)) end },
  { "a duplicate key", has "", sub('^{"flagged"', '{"passed":true,"flagged"') },
  { "a key one byte off", has '"kind":', sub('"kind":', '"kinf":') },
  { "white space after a key", has "", sub('"passed":', '"passed" :') },
  { "a literal cut short", has '"truncated":false', sub('"truncated":false', '"truncated":fals') },
}

describe("vac tallies against the plain decoder", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("gives the same failures on an honest fleet bundle and on each tamper at a random line", function()
    math.randomseed(2026120101)
    local honest = dir .. "/fleet"
    bundles.fleet(honest, 20000)
    local fast, plain = both(honest)
    assert.same({}, fast)
    assert.same(plain, fast)
    for i, tamper in ipairs(FLEET_TAMPERS) do
      for _, at in ipairs { 1, math.random(2, 19999), 20000 } do
        local root = ("%s/f%d-%d"):format(dir, i, at)
        require("tests.vac_support").copy_tree(honest, root)
        local changed = edit_line(root .. "/raw_results.jsonl", at, tamper[2])
        bundles.rehash(root)
        fast, plain = both(root)
        assert.same(plain, fast, ("%s at line %d"):format(tamper[1], at))
        local harmless = { ["a blank line"] = true, ["a CRLF line end"] = true, ["an escaped key"] = true,
          ["white space after a key"] = true, ["an integer past 64 bits"] = true, ["an extra key"] = true,
          ["a missing key"] = true }
        assert.is_true(#fast > 0 or not changed or harmless[tamper[1]] == true, ("%s at line %d passed"):format(tamper[1], at))
        fs.remove_tree(root)
      end
    end
  end)

  it("gives the same failures on an honest crashkit bundle and on each tamper at a random case", function()
    math.randomseed(2026120102)
    local honest = dir .. "/crashkit"
    bundles.crashkit(honest, 5000)
    local fast, plain = both(honest)
    assert.same({}, fast)
    assert.same(plain, fast)
    local text = t.slurp(honest .. "/eval_run.json")
    for i, tamper in ipairs(CRASH_TAMPERS) do
      -- the k-th case (in document order) that the tamper's pattern finds
      local starts = {}
      local from = 1
      while true do
        local cs, ce = text:find('{"flagged"[^{}]*}', from)
        if not cs then break end
        if tamper[2](text:sub(cs, ce)) then starts[#starts + 1] = { cs, ce } end
        from = ce + 1
      end
      assert.is_true(#starts > 2, tamper[1])
      for _, k in ipairs { 1, math.random(2, #starts - 1), #starts } do
        local s, e = table.unpack(starts[k])
        local case = tamper[3](text:sub(s, e))
        local root = ("%s/c%d-%d"):format(dir, i, k)
        require("tests.vac_support").copy_tree(honest, root)
        t.write(root .. "/eval_run.json", text:sub(1, s - 1) .. case .. text:sub(e + 1))
        bundles.rehash(root)
        fast, plain = both(root)
        assert.same(plain, fast, ("%s at case %d"):format(tamper[1], k))
        assert.is_true(#fast > 0 or tamper[1] == "an escaped kind" or tamper[1] == "white space after a key",
          ("%s at case %d passed"):format(tamper[1], k))
        fs.remove_tree(root)
      end
    end
  end)
end)
