--- Text a reader sees as it is: C0 controls (but tab, newline and carriage
-- return), the bidi controls that reorder what a reader sees, and bytes
-- that are not UTF-8, written as visible \xNN / \uNNNN text.  Used by the
-- report formats (vkit.report.markup) and wherever a run-supplied name is
-- echoed (vkit.runs.named), so it sits below both.
local function visible_controls(s)
  s = s:gsub("[\0-\8\11\12\14-\31\127]", function(c) return ("\\x%02x"):format(c:byte()) end)
  for _, cp in ipairs { 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067,
    0x2068, 0x2069 } do
    s = s:gsub(utf8.char(cp), ("\\u%04x"):format(cp))
  end
  -- bytes that are not UTF-8
  if not utf8.len(s) then
    local out, i = {}, 1
    while i <= #s do
      local ok, cp = pcall(utf8.codepoint, s, i)
      if ok and cp then
        local ch = utf8.char(cp)
        out[#out + 1] = ch
        i = i + #ch
      else
        out[#out + 1] = ("\\x%02x"):format(s:byte(i))
        i = i + 1
      end
    end
    s = table.concat(out)
  end
  return s
end

return visible_controls
