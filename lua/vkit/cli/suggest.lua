--- "Did you mean ...?" for a mistyped command or action: the names of the
-- command table closest to what was typed.  Pure: strings in, strings out.
--
--   distance(a, b)       -> the optimal-string-alignment distance (Damerau-
--                           Levenshtein where no substring is edited twice):
--                           insertions, deletions, substitutions and swaps of
--                           two neighbours each cost 1 ("shwo" -> "show": 1)
--   closest(word, names) -> the names nearest to word, sorted; empty when
--                           none is near enough to be what was meant
--   hint(word, names)    -> "; did you mean 'show'?" or ""
local M = {}

function M.distance(a, b)
  local la, lb = #a, #b
  -- d[i][j]: the distance between a's first i bytes and b's first j
  local d = {}
  for i = 0, la do d[i] = { [0] = i } end
  for j = 0, lb do d[0][j] = j end
  for i = 1, la do
    local ca = a:byte(i)
    for j = 1, lb do
      local cb = b:byte(j)
      local cost = ca == cb and 0 or 1
      local best = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and ca == b:byte(j - 1) and a:byte(i - 1) == cb then
        best = math.min(best, d[i - 2][j - 2] + 1)
      end
      d[i][j] = best
    end
  end
  return d[la][lb]
end

-- How far a name may be from what was typed and still be suggested: a
-- third of the word's length, at least 1 and at most 2 edits, so "rn"
-- suggests "run" but "x" suggests nothing in particular.
local function tolerance(word)
  return math.max(1, math.min(2, #word // 3))
end

function M.closest(word, names)
  local lowered = word:lower()
  local best, out = math.huge, {}
  for _, name in ipairs(names) do
    local d = M.distance(lowered, name:lower())
    -- a unique start of a name is also what was meant ("cert" -> certify)
    if #lowered >= 3 and name:lower():sub(1, #lowered) == lowered then d = math.min(d, 1) end
    if d <= tolerance(word) and d < #name then
      if d < best then best, out = d, {} end
      if d == best then out[#out + 1] = name end
    end
  end
  table.sort(out)
  return out
end

function M.hint(word, names)
  local near = M.closest(word, names)
  if #near == 0 then return "" end
  local quoted = {}
  for i, name in ipairs(near) do quoted[i] = "'" .. name .. "'" end
  return "; did you mean " .. table.concat(quoted, " or ") .. "?"
end

return M
