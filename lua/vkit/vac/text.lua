--- Text rules VAC inherits from its reference (Python 3.11, Unicode 14):
--  what counts as whitespace (str.strip, regex \s), as a decimal digit
--  (regex \d, int()), how a string is cut by code points, how tags are
--  stripped from narrative html.  Strings are UTF-8 bytes throughout.
local M = {}

-- Zero code point of every Unicode 14 decimal-digit (Nd) run; each run is
-- the ten digits 0..9 in order (a Unicode stability guarantee).
local ND_ZEROS = {
  0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66,
  0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810,
  0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
  0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30,
  0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
  0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60,
  0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140,
  0x1E2F0, 0x1E950, 0x1FBF0,
}

-- str.isspace() / regex \s: the same 29 code points in Python 3.11.
local SPACE = {}
for _, cp in ipairs { 0x9, 0xA, 0xB, 0xC, 0xD, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
  0x2028, 0x2029, 0x202F, 0x205F, 0x3000 } do SPACE[cp] = true end
for cp = 0x2000, 0x200A do SPACE[cp] = true end

--- The value 0..9 of a decimal digit code point, or nil.
function M.digit_value(cp)
  if cp < 0x80 then
    if cp >= 0x30 and cp <= 0x39 then return cp - 0x30 end
    return nil
  end
  -- binary search for the last zero <= cp
  local lo, hi = 1, #ND_ZEROS
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if ND_ZEROS[mid] <= cp then lo = mid else hi = mid - 1 end
  end
  local d = cp - ND_ZEROS[lo]
  if d >= 0 and d <= 9 then return d end
  return nil
end

function M.is_space(cp) return SPACE[cp] == true end

--- Code points of a valid UTF-8 string, as an array.
function M.codepoints(s)
  local out, n = {}, 0
  for _, cp in utf8.codes(s) do
    n = n + 1
    out[n] = cp
  end
  return out
end

--- s with Python's str.strip() applied (Unicode whitespace at both ends).
function M.strip(s)
  local ascii = s:match "^[ \t\n\v\f\r\28-\31]*(.-)[ \t\n\v\f\r\28-\31]*$"
  if not ascii:find "[\128-\255]" then return ascii end
  local cps = M.codepoints(s)
  local i, j = 1, #cps
  while i <= j and SPACE[cps[i]] do i = i + 1 end
  while j >= i and SPACE[cps[j]] do j = j - 1 end
  return utf8.char(table.unpack(cps, i, j))
end

--- Python's `isinstance(v, str) and v.strip()`: a string with a non-space.
function M.nonblank(v)
  if type(v) ~= "string" then return false end
  local b = v:byte(1)
  if b and b > 32 and b < 128 then return true end -- starts with a printable ASCII character
  if v:find "[^ \t\n\v\f\r\28-\31]" == nil then return false end
  if not v:find "[\128-\255]" then return true end
  return M.strip(v) ~= ""
end

--- The first n code points of s (Python's s[:n]).
function M.prefix(s, n)
  local stop = utf8.offset(s, n + 1)
  if not stop then return s end
  return s:sub(1, stop - 1)
end

-- Non-ASCII whitespace as UTF-8 byte sequences, for gsub, and the bytes
-- every match of each begins with (before its class): a plain search for
-- them rules the gsub out.
local WIDE_SPACE = { "\194\133", "\194\160", "\225\154\128", "\226\128[\128-\138]", "\226\128[\168\169\175]",
  "\226\129\159", "\227\128\128" }
local WIDE_SPACE_LEAD = {}
for i, pat in ipairs(WIDE_SPACE) do WIDE_SPACE_LEAD[i] = pat:match "^[^%[]*" end

--- Python's `re.sub(r"\s+", " ", s).strip()`.
function M.squeeze(s)
  if not s:find "^[^\28-\31]*$" then s = s:gsub("[\28-\31]", " ") end -- anchored: one pass
  if not s:find "^[\0-\127]*$" then
    for i, pat in ipairs(WIDE_SPACE) do
      if s:find(WIDE_SPACE_LEAD[i], 1, true) then s = s:gsub(pat, " ") end
    end
  end
  s = s:gsub("[ \t\n\v\f\r]+", " ")
  -- the one space a run left at either end (a pattern with "(.-) ?$" would
  -- try the end at every character)
  if s:byte(1) == 32 then s = s:sub(2) end
  if s:byte(-1) == 32 then s = s:sub(1, -2) end
  return s
end

--- Python's `re.sub(r"<[^>]+>", "", s)`: a tag needs at least one
--  character between < and >, and a < with no later > stays text.
function M.strip_tags(s)
  local out, n, i = {}, 0, 1
  while true do
    local lt = s:find("<", i, true)
    if not lt then break end
    local gt = s:find(">", lt + 1, true)
    if not gt then break end
    n = n + 1
    if gt == lt + 1 then
      out[n] = s:sub(i, lt)
      i = lt + 1
    else
      out[n] = s:sub(i, lt - 1)
      i = gt + 1
    end
  end
  n = n + 1
  out[n] = s:sub(i)
  return table.concat(out)
end

--- Decimal digits starting at code point index i of cps: value, next index
--  (the value is nil when no digit is there).
function M.digits(cps, i)
  local v, j = nil, i
  while cps[j] do
    local d = M.digit_value(cps[j])
    if not d then break end
    v = (v or 0) * 10 + d
    j = j + 1
  end
  return v, j
end

--- A run of decimal digits (any script) starting at byte i of the valid
--  UTF-8 string s: its value and the byte after it, or nil, i.
function M.digits_at(s, i)
  local v, j = nil, i
  while j <= #s do
    local b = s:byte(j)
    local cp, len
    if b < 0x80 then
      cp, len = b, 1
    else
      cp = utf8.codepoint(s, j)
      len = #utf8.char(cp)
    end
    local d = M.digit_value(cp)
    if not d then break end
    v = (v or 0) * 10 + d
    j = j + len
  end
  return v, j
end

--- Does s, stripped, read as a number (the summary rule of SPEC 2.5)?
--  Grammar: [+-]? (\d+ \.? \d* | \. \d+) ([eE] [+-]? \d+)? %?
function M.is_numeral(s)
  local cps = M.codepoints(M.strip(s))
  local i = 1
  local function digits()
    local start = i
    while cps[i] and M.digit_value(cps[i]) do i = i + 1 end
    return i > start
  end
  if cps[i] == 0x2B or cps[i] == 0x2D then i = i + 1 end
  if digits() then
    if cps[i] == 0x2E then i = i + 1 end
    digits()
  elseif cps[i] == 0x2E then
    i = i + 1
    if not digits() then return false end
  else
    return false
  end
  if cps[i] == 0x65 or cps[i] == 0x45 then
    local save = i
    i = i + 1
    if cps[i] == 0x2B or cps[i] == 0x2D then i = i + 1 end
    if not digits() then i = save end
  end
  if cps[i] == 0x25 then i = i + 1 end
  return cps[i] == nil
end

return M
