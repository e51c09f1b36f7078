--- Tool results (CallToolResult).  A tool returns ok(value) or
--  refused(sentence [, value]); render() turns either into the result the
--  negotiated revision defines.
--
-- A failure to do what was asked (bad arguments, an unknown run, a blocked
-- or failed run, a refused bundle) is a result with isError: true and the
-- sentence first, never a protocol error, so a model can read it and
-- correct itself.  The structured value is also sent as serialized JSON
-- text, as the specification recommends for older clients.
local json = require "vkit.json"

local M = {}

function M.ok(value)
  return { value = value }
end

function M.refused(sentence, value)
  return { refusal = sentence, value = value }
end

local function text(s)
  return json.object { type = "text", text = s }
end

--- The CallToolResult object; features from vkit.mcp.versions.
function M.render(r, features)
  local content = json.array()
  if r.refusal then content[#content + 1] = text(r.refusal) end
  if r.value ~= nil then content[#content + 1] = text(json.encode(r.value, { indent = 2 })) end
  local result = json.object { content = content, isError = r.refusal ~= nil }
  if r.value ~= nil and features.structured then result.structuredContent = r.value end
  return result
end

return M
