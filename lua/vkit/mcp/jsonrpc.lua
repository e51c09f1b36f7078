--- JSON-RPC 2.0 messages as MCP restricts them: classification of what a
--  client sent and construction of what the server answers.  Pure.
--
-- MCP: a request id is a string or an integer, never null; params, when
-- present, are an object; a notification gets no response.  When the id of
-- a bad message cannot be read, the error response carries "id": null, as
-- JSON-RPC 2.0 requires.
local json = require "vkit.json"

local M = {}

M.PARSE_ERROR = -32700
M.INVALID_REQUEST = -32600
M.METHOD_NOT_FOUND = -32601
M.INVALID_PARAMS = -32602
M.INTERNAL_ERROR = -32603

function M.valid_id(id)
  return type(id) == "string" or math.type(id) == "integer"
end

function M.result(id, result)
  return json.object { jsonrpc = "2.0", id = id, result = result }
end

function M.error(id, code, message, data)
  local err = json.object { code = code, message = message }
  if data ~= nil then err.data = data end
  if id == nil or not M.valid_id(id) then id = json.null end
  return json.object { jsonrpc = "2.0", id = id, error = err }
end

function M.notification(method, params)
  return json.object { jsonrpc = "2.0", method = method, params = params }
end

--- What a decoded message is: "request", "notification" or "response"
--  (a client's answer to a server request; vkit sends none, so these are
--  ignored); or nil and the error response to send.
function M.classify(msg)
  if json.kind(msg) ~= "object" then
    return nil, M.error(nil, M.INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
  end
  local id = msg.id
  local has_id = id ~= nil
  if has_id and not M.valid_id(id) then
    return nil, M.error(nil, M.INVALID_REQUEST, "Invalid Request: an id must be a string or an integer (MCP forbids null)")
  end
  if msg.jsonrpc ~= "2.0" then
    return nil, M.error(id, M.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be exactly "2.0"')
  end
  if msg.method == nil then
    if has_id and (msg.result ~= nil) ~= (msg.error ~= nil) then return "response" end
    return nil, M.error(id, M.INVALID_REQUEST, 'Invalid Request: no "method"')
  end
  if type(msg.method) ~= "string" then
    return nil, M.error(id, M.INVALID_REQUEST, 'Invalid Request: "method" must be a string')
  end
  if msg.params ~= nil and json.kind(msg.params) ~= "object" then
    if not has_id then return "notification" end   -- nobody to tell; ignored like any notification we do not use
    return nil, M.error(id, M.INVALID_PARAMS, 'Invalid params: "params" must be an object')
  end
  return has_id and "request" or "notification"
end

return M
