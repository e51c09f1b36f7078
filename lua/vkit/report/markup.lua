--- Escaping run-supplied text for the report formats.  A receipt, a
--  candidate's output or a bundle's text must never add markup, a link or a
--  script to a report a reviewer opens.
local M = {}

local ENTITIES = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

local visible_controls = require "vkit.visible"
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
