--- Numbers as the VAC reference defines them (Python 3.11 floats):
--  round(x, n) is the correctly rounded decimal of the exact binary value,
--  ties to even, read back as the nearest double; repr(x) is the shortest
--  text that reads back as x.  glibc's printf rounds the exact binary
--  value the same way, so "%.Nf" is the fast path and the rest is exact
--  decimal arithmetic on strings.
local M = {}

local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

-- Adds one to a string of decimal digits.
local function increment(digits)
  local i = #digits
  while i >= 1 and digits:sub(i, i) == "9" do i = i - 1 end
  if i == 0 then return "1" .. ("0"):rep(#digits) end
  return digits:sub(1, i - 1) .. string.char(digits:byte(i) + 1) .. ("0"):rep(#digits - i)
end

-- |x| rounded to a multiple of 10^k (k >= 1), half to even on the exact value.
local function round_tens(a, k)
  local ip = math.floor(a)
  local sticky = a ~= ip
  local int = string.format("%.0f", ip)
  if k > #int then return 0.0 end
  local head, tail = int:sub(1, #int - k), int:sub(#int - k + 1)
  local half = "5" .. ("0"):rep(k - 1)
  local up
  if tail > half then up = true
  elseif tail < half then up = false
  elseif sticky then up = true
  else up = head ~= "" and (head:byte(#head) - 48) % 2 == 1 end
  if head == "" then head = "0" end
  if up then head = increment(head) end
  return tonumber(head .. "e" .. k) + 0.0
end

-- x (tiny) rounded to p >= 100 fractional digits.
local function round_fine(a, p)
  local sci = string.format("%.40e", a)
  local e10 = tonumber(sci:match "e([-+]%d+)$")
  local keep = p + e10 + 1
  if keep > 100 then return a end
  if keep >= 1 then return tonumber(string.format("%." .. (keep - 1) .. "e", a)) end
  if keep < 0 then return 0.0 end
  -- keep == 0: the result is 0 or 10^-p, decided by the leading digits
  local lead, rest = sci:match "^(%d)%.(%d+)e"
  local d = tonumber(lead)
  if d > 5 or (d == 5 and rest:find "[1-9]") then return tonumber("1e-" .. p) end
  return 0.0
end

-- 10^0 .. 10^22, each exact (10^22 is the largest power of ten a double
-- holds exactly), built by multiplication: every product is exact.
local POW10 = { [0] = 1.0 }
for k = 1, 22 do POW10[k] = POW10[k - 1] * 10.0 end

-- a * b as p + e exactly (Dekker's product, Veltkamp's split into 26-bit
-- halves), for a, b >= 0 whose product is far from overflow and underflow.
local SPLIT = 134217729.0 -- 2^27 + 1
local function two_product(a, b)
  local p = a * b
  local t = SPLIT * a
  local ah = t - (t - a)
  local al = a - ah
  t = SPLIT * b
  local bh = t - (t - b)
  local bl = b - bh
  return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl
end

-- a >= 0 rounded to `places` (0..22) fractional digits, half to even on
-- a's exact value, as the nearest double; nil when a * 10^places is 2^52
-- or more (then "%.Nf" decides).  The exact product is p + e; below 2^52
-- its fractional part p - floor(p), and that minus 0.5, are exact
-- (Sterbenz), and a nonzero difference outweighs e (at most half an ulp of
-- p), so only an exact-looking tie asks e.  The integer r is exact, and
-- r / 10^places, both exact, is correctly rounded by the division.
local function round_fast(a, places)
  local scale = POW10[places]
  local p, e = two_product(a, scale)
  if p >= 4503599627370496.0 then return nil end -- 2^52
  if p < 0.25 then return 0.0 end -- the exact product is below 0.5
  local r = p // 1
  local d = (p - r) - 0.5
  if d > 0 or (d == 0 and (e > 0 or (e == 0 and r % 2 == 1))) then r = r + 1 end
  return r / scale
end

--- Python's round(x, places) for an integer or float x and integer places.
function M.round(x, places)
  if math.type(x) == "integer" then
    if places >= 0 then return x end
    if places < -18 then return 0 end
    local unit = 10 ^ -places // 1 | 0
    local q, r = x // unit, x % unit
    if 2 * r > unit or (2 * r == unit and q % 2 == 1) then q = q + 1 end
    return q * unit
  end
  if not finite(x) then return x end
  if places > 323 then return x end
  if places < -308 then return 0.0 * x end
  if places >= 0 and places <= 22 then
    local sign = (x < 0 or (x == 0 and 1 / x < 0)) and -1.0 or 1.0
    local r = round_fast(sign * x, places)
    if r then return sign * r end
  end
  if places >= 0 and places <= 99 then
    -- "%.0f" prints no point, and "-0" would read back as the integer 0
    return tonumber(string.format("%." .. places .. "f", x) .. (places == 0 and ".0" or ""))
  end
  local sign = (x < 0 or (x == 0 and 1 / x < 0)) and -1.0 or 1.0
  local a = math.abs(x)
  local r
  if places < 0 then
    r = round_tens(a, -places)
  elseif a >= 1e-80 then
    r = a
  else
    r = round_fine(a, places)
  end
  return sign * r
end

--- Python's repr() of a float.
function M.float_repr(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  if x == 0 then return (1 / x < 0) and "-0.0" or "0.0" end
  -- the shortest digits that read back as x (what repr prints): a normal
  -- double rounded to 15 significant digits is within half a step of that
  -- grid, so it reads back exactly when some 15-digit-or-shorter decimal
  -- does, and then is it (its trailing zeros go below); otherwise 16, then
  -- 17 always.  A subnormal has fewer bits than that argument needs: every
  -- precision is tried from 1 digit up.
  local s
  for p = math.abs(x) >= 2.2250738585072014e-308 and 14 or 0, 16 do
    s = string.format("%." .. p .. "e", x)
    if tonumber(s) == x then break end
  end
  local sign, lead, frac, e = s:match "^(%-?)(%d)%.?(%d*)e([-+]%d+)$"
  local digits = (lead .. frac):gsub("0+$", "")
  if digits == "" then digits = "0" end
  local e10 = tonumber(e)
  local decpt = e10 + 1
  if decpt <= -4 or decpt > 16 then
    local mant = digits:sub(1, 1) .. (#digits > 1 and ("." .. digits:sub(2)) or "")
    return ("%s%se%s%02d"):format(sign, mant, e10 < 0 and "-" or "+", math.abs(e10))
  end
  if decpt <= 0 then return sign .. "0." .. ("0"):rep(-decpt) .. digits end
  if decpt >= #digits then return sign .. digits .. ("0"):rep(decpt - #digits) .. ".0" end
  return sign .. digits:sub(1, decpt) .. "." .. digits:sub(decpt + 1)
end

--- Python's str() of an int or float.
function M.str(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  return M.float_repr(x)
end

return M
