--- The stdio transport's framing (MCP "stdio"): one JSON-RPC message per
--  line, UTF-8, no embedded newline; nothing else on stdout.
--
-- The reader never keeps more than max_bytes of a line: a longer line is
-- consumed up to its newline and reported as too large, so a client cannot
-- make the server buffer an unbounded line (Lua's read("l") would).  It
-- reads a byte at a time from the FILE buffer because a larger read would
-- block until that many bytes arrived, while the client waits for an answer.
local json = require "vkit.json"

local M = {}

local CHUNK = 4096

--- A line reader over `file`.  Each call returns the next line without its
--  terminator (a trailing CR is dropped, as the MCP SDKs do); or nil,
--  "too-large", size for a line of more than max_bytes bytes, already
--  skipped; or nil at the end of input.  A final unterminated line counts.
function M.reader(file, max_bytes)
  return function()
    local pieces, chunk, n, size = {}, {}, 0, 0
    while true do
      local c = file:read(1)
      if c == nil then
        if size == 0 then return nil end
        break
      end
      if c == "\n" then break end
      size = size + 1
      if size <= max_bytes then
        n = n + 1
        chunk[n] = c
        if n == CHUNK then
          pieces[#pieces + 1] = table.concat(chunk)
          chunk, n = {}, 0
        end
      end
    end
    if size > max_bytes then return nil, "too-large", size end
    pieces[#pieces + 1] = table.concat(chunk, "", 1, n)
    local line = table.concat(pieces)
    if line:sub(-1) == "\r" then line = line:sub(1, -2) end
    return line
  end
end

--- One message as its line (without the newline).  vkit.json escapes every
--  control character inside strings, so the line cannot contain a newline.
function M.encode(message)
  local line = json.encode(message)
  assert(not line:find "[\r\n]", "an encoded message contains a line break")
  return line
end

--- A writer of messages to `file`, flushed at once (the client is waiting).
function M.writer(file)
  return function(message)
    file:write(M.encode(message), "\n")
    file:flush()
  end
end

return M
