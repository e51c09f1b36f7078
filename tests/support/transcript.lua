--- Expected output as documents show it: lines in order, `…` standing
--  for whatever differs from run to run (ids, digests, paths).
local M = {}

--- A line of expected output as an anchored Lua pattern.
function M.pattern(line)
  local parts = {}
  for piece in (line .. "…"):gmatch "(.-)…" do parts[#parts + 1] = (piece:gsub("%p", "%%%0")) end
  return "^" .. table.concat(parts, ".-") .. "%s*$"
end

--- Whether every non-empty expected line matches an output line, in
--  order (other output lines may come between); else false and the first
--  expected line that does not.
function M.shows(output, expected)
  local lines = {}
  for l in output:gmatch "[^\n]*" do lines[#lines + 1] = l end
  local at = 1
  for want in expected:gmatch "[^\n]+" do
    local p = M.pattern(want)
    while at <= #lines and not lines[at]:match(p) do at = at + 1 end
    if at > #lines then return false, want end
    at = at + 1
  end
  return true
end

return M
