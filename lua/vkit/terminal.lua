--- Text for a terminal: what a run, a receipt or a bundle supplied is
--  escaped before it is printed, so it cannot repaint the terminal, reorder
--  a line with bidi controls, or forge a line of vkit's own output; and
--  colour only where it is wanted.
local M = {}

local UNSAFE = {}
for _, cp in ipairs { 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
  0x2069 } do UNSAFE[cp] = true end

local function unsafe(cp) return cp < 0x20 or cp == 0x7F or (cp >= 0x80 and cp <= 0x9F) or UNSAFE[cp] end

--- s with control characters (C0, DEL, C1), bidi controls and line or
--  paragraph separators written as \xNN / \uNNNN, and bytes that are not
--  UTF-8 as \xNN.
function M.escape(s)
  s = tostring(s)
  if s:find "^[\32-\126]*$" then return s end -- all printable ASCII (anchored: one pass)
  local out, i, n = {}, 1, #s
  while i <= n do
    -- printable ASCII is copied a run at a time
    local j = s:find("[^\32-\126]", i)
    if not j then
      out[#out + 1] = s:sub(i)
      break
    end
    if j > i then out[#out + 1] = s:sub(i, j - 1) end
    i = j
    local b = s:byte(i)
    if b < 0x80 then -- C0 or DEL
      out[#out + 1] = ("\\x%02x"):format(b)
      i = i + 1
    else
      local ok, cp = pcall(utf8.codepoint, s, i)
      local len = ok and #utf8.char(cp) or 0
      if not ok or s:sub(i, i + len - 1) ~= utf8.char(cp) then
        out[#out + 1] = ("\\x%02x"):format(b)
        i = i + 1
      else
        if unsafe(cp) then
          out[#out + 1] = cp < 0x100 and ("\\x%02x"):format(cp) or ("\\u%04x"):format(cp)
        else
          out[#out + 1] = s:sub(i, i + len - 1)
        end
        i = i + len
      end
    end
  end
  return table.concat(out)
end

-- ---------------------------------------------------------------------
-- Colour: only on a terminal, never with NO_COLOR set (to anything but
-- the empty string, https://no-color.org) and never in JSON.

M.PLAIN = setmetatable({}, { __index = function() return function(s) return s end end })

local SGR = { pass = "32", fail = "31", error = "33", dim = "2" }

--- The styling of words printed on stream: style.pass("PASS") and so on,
--  ANSI colour when stream is stdout on a terminal and colour is allowed.
function M.style(stream, json_output)
  if json_output or stream ~= io.stdout then return M.PLAIN end
  local no_color = os.getenv "NO_COLOR"
  if no_color and no_color ~= "" then return M.PLAIN end
  -- vkit.sys asks the kernel (one ioctl), without vkit.term's readline
  if not require("vkit.sys").isatty(1) then return M.PLAIN end
  local style = {}
  for k, code in pairs(SGR) do style[k] = function(s) return "\27[" .. code .. "m" .. s .. "\27[0m" end end
  return style
end

return M
