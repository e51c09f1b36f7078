--- Escaping run-supplied text for the report formats.  A receipt, a
--  candidate's output or a bundle's text must never add markup, a link or a
--  script to a report a reviewer opens.
local M = {}

local ENTITIES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

-- Characters XML 1.0 cannot hold at all (C0 controls but tab, newline and
-- carriage return), and the bidi controls that reorder what a reader sees;
-- written as visible \xNN / \uNNNN text.
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
M.visible_controls = visible_controls

--- Text for HTML and XML content and attribute values.
function M.html(s)
  return (visible_controls(tostring(s)):gsub("[&<>\"']", ENTITIES))
end
M.xml = M.html

--- Text for a Markdown table cell or paragraph: no markup survives (the
--  characters that open emphasis, code, links, HTML, tables or
--  strikethrough anywhere, and a block marker at the start, are
--  backslash-escaped), and no line break or pipe can end the cell.
function M.md(s)
  s = visible_controls(tostring(s)):gsub("[\r\n]+", " ")
  s = s:gsub("([\\`*_%[%]<>|~&])", "\\%1")
  s = s:gsub("^([#>+%-=])", "\\%1"):gsub("^(%d+)([.)])", "%1\\%2")
  return s
end

--- Text for a Markdown code span (`...`): nothing inside one is markup, so
--  nothing is backslash-escaped; a backtick, which would end it, becomes '.
function M.md_code(s)
  return (visible_controls(tostring(s)):gsub("[\r\n]+", " "):gsub("`", "'"))
end

return M
