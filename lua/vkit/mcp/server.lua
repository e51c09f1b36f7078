--- The MCP server: one session over newline-delimited JSON-RPC 2.0.
--
-- Lifecycle (MCP "Lifecycle"): WAIT_INIT accepts only initialize and ping;
-- every other request is refused (-32600, "not initialized") and other
-- notifications are ignored.  initialize negotiates the revision
-- (vkit.mcp.versions) and the session serves tools/list and tools/call
-- from then on; notifications/initialized marks the client ready.
--
-- Errors: unreadable JSON -32700 (id null); a message that is not a valid
-- request -32600 (id null when the id cannot be read); unknown method
-- -32601; bad params, an unknown tool or cursor -32602; a handler bug
-- -32603.  Tool failures are tool results with isError: true
-- (vkit.mcp.results).  Notifications are never answered.
--
-- Requests are handled one at a time, in order.  No tool waits for a job
-- except within the bound its caller gave (0..60 s): certification and
-- verification run in the job store's detached worker.
local json = require "vkit.json"
local vkit = require "vkit.core"
local jsonrpc = require "vkit.mcp.jsonrpc"
local versions = require "vkit.mcp.versions"
local tools = require "vkit.mcp.tools"
local arguments = require "vkit.mcp.arguments"
local results = require "vkit.mcp.results"
local framing = require "vkit.mcp.framing"
local project_mod = require "vkit.mcp.project"
local policy = require("vkit.policy").mcp

local M = {}
local Session = {}
Session.__index = Session

M.INSTRUCTIONS = "vkit checks claims about software so that a stranger can re-check them. change_certify queues "
  .. "the certification of a change against its accepted intent and returns a run id; run_wait and run_get follow "
  .. "the run. verify runs a component's pinned external checks; vac_verify checks a VAC evidence bundle. No result "
  .. "is a source proof or an approval."

--- A session.  opts: project (a vkit.mcp.project), send(message), log(text).
function M.new(opts)
  return setmetatable({ project = opts.project, send = opts.send, log = opts.log or function() end,
                        state = "wait_init" }, Session)
end

local function first_line(s)
  return (tostring(s):match "^[^\n]*")
end

local handlers = {}

function handlers.initialize(self, id, params)
  if self.state ~= "wait_init" then
    return jsonrpc.error(id, jsonrpc.INVALID_REQUEST, "Invalid Request: the session is already initialized")
  end
  local info = params.clientInfo
  if type(params.protocolVersion) ~= "string" or json.kind(params.capabilities) ~= "object"
      or json.kind(info) ~= "object" or type(info.name) ~= "string" or type(info.version) ~= "string" then
    return jsonrpc.error(id, jsonrpc.INVALID_PARAMS, "Invalid params: initialize needs protocolVersion (a string), "
      .. "capabilities (an object) and clientInfo {name, version}")
  end
  self.version = versions.negotiate(params.protocolVersion)
  self.features = versions.features(self.version)
  self.state = "wait_initialized"
  self.log(("client %s %s asked for %s; speaking %s"):format(info.name, info.version, params.protocolVersion,
    self.version))
  return jsonrpc.result(id, json.object {
    protocolVersion = self.version,
    capabilities = json.object { tools = json.object() },
    serverInfo = json.object { name = "vkit", version = vkit.versions.vkit },
    instructions = M.INSTRUCTIONS,
  })
end

function handlers.ping(_, id)
  return jsonrpc.result(id, json.object())
end

handlers["tools/list"] = function(self, id, params)
  if params.cursor ~= nil then
    return jsonrpc.error(id, jsonrpc.INVALID_PARAMS, "Invalid params: unknown cursor (the tool list has one page)")
  end
  return jsonrpc.result(id, json.object { tools = tools.definitions(self.features) })
end

--- notifications/progress for a request that carried a progressToken.
function Session:progress_reporter(params)
  local meta = params._meta
  local token = json.kind(meta) == "object" and meta.progressToken or nil
  if not jsonrpc.valid_id(token) then return nil end
  return function(progress, total, message)
    local p = json.object { progressToken = token, progress = progress + 0.0, total = total + 0.0 }
    if self.features.progress_message then p.message = message end
    self.send(jsonrpc.notification("notifications/progress", p))
  end
end

handlers["tools/call"] = function(self, id, params)
  if type(params.name) ~= "string" then
    return jsonrpc.error(id, jsonrpc.INVALID_PARAMS, 'Invalid params: tools/call needs "name" (a string)')
  end
  if params.arguments ~= nil and json.kind(params.arguments) ~= "object" then
    return jsonrpc.error(id, jsonrpc.INVALID_PARAMS, 'Invalid params: "arguments" must be an object')
  end
  local tool = tools.find(params.name)
  if not tool then return jsonrpc.error(id, jsonrpc.INVALID_PARAMS, "Unknown tool: " .. params.name) end
  local args = params.arguments or json.object()
  local ok, why = arguments.check(tool.input, args)
  local result
  if not ok then
    result = results.refused(("Invalid arguments for tool %s: %s"):format(tool.name, why))
  else
    local ctx = { project = self.project, progress = self:progress_reporter(params),
                  progress_interval_ms = policy.progress_interval_ms }
    local done, r = xpcall(tool.run, debug.traceback, args, ctx)
    if not done then
      self.log(("tool %s raised: %s"):format(tool.name, r))
      r = results.refused(("internal error in tool %s: %s"):format(tool.name, first_line(r)))
    end
    result = r
  end
  return jsonrpc.result(id, results.render(result, self.features))
end

function Session:request(msg)
  local method, id = msg.method, msg.id
  local params = msg.params or json.object()
  local handler = handlers[method]
  if self.state == "wait_init" and method ~= "initialize" and method ~= "ping" then
    return jsonrpc.error(id, jsonrpc.INVALID_REQUEST, "Invalid Request: the server is not initialized; send initialize first")
  end
  if not handler then return jsonrpc.error(id, jsonrpc.METHOD_NOT_FOUND, "Method not found: " .. method) end
  local ok, reply = xpcall(handler, debug.traceback, self, id, params)
  if not ok then
    self.log(("%s raised: %s"):format(method, reply))
    return jsonrpc.error(id, jsonrpc.INTERNAL_ERROR, "Internal error: " .. first_line(reply))
  end
  return reply
end

function Session:notification(msg)
  if msg.method == "notifications/initialized" and self.state == "wait_initialized" then
    self.state = "ready"
  end
end

--- The reply to one decoded message, or nil (notifications, responses).
function Session:message(msg)
  local kind, refusal = jsonrpc.classify(msg)
  if not kind then return refusal end
  if kind == "request" then return self:request(msg) end
  if kind == "notification" then self:notification(msg) end
  return nil
end

function Session:batch(list)
  if not (self.features and self.features.batches) then
    self.send(jsonrpc.error(nil, jsonrpc.INVALID_REQUEST, ("Invalid Request: JSON-RPC batches are not part of %s"):format(
      self.version and ("MCP " .. self.version) or "an uninitialized session")))
    return
  end
  if #list == 0 then
    self.send(jsonrpc.error(nil, jsonrpc.INVALID_REQUEST, "Invalid Request: an empty batch"))
    return
  end
  local replies = json.array()
  for _, msg in ipairs(list) do replies[#replies + 1] = self:message(msg) end
  if #replies > 0 then self.send(replies) end
end

--- Handles one framed line.
function Session:receive(line)
  if not line:find "%S" then return end   -- a blank line carries no message
  local msg, message, code, offset = json.decode(line)
  if msg == nil then
    self.send(jsonrpc.error(nil, jsonrpc.PARSE_ERROR, ("Parse error: %s"):format(message),
      json.object { code = code, offset = offset }))
    return
  end
  if json.kind(msg) == "array" then return self:batch(msg) end
  local reply = self:message(msg)
  if reply then self.send(reply) end
end

--- A line longer than policies/mcp.lua max_message_bytes (already skipped).
function Session:oversized(size)
  self.send(jsonrpc.error(nil, jsonrpc.INVALID_REQUEST, ("Invalid Request: a message of %d bytes exceeds the limit of %d "
    .. "bytes (policies/mcp.lua max_message_bytes); it was skipped"):format(size, policy.max_message_bytes)))
end

--- Serves until the input ends.  opts: project (directory), input, output
--  (files), log(text).  Returns 0.
function M.serve(opts)
  local read = framing.reader(opts.input, policy.max_message_bytes)
  local session = M.new { project = project_mod.new(opts.project), send = framing.writer(opts.output), log = opts.log }
  while true do
    local line, err, size = read()
    if line then
      session:receive(line)
    elseif err == "too-large" then
      session:oversized(size)
    else
      return 0
    end
  end
end

return M
