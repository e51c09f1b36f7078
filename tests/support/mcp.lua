--- An MCP session in process (vkit.mcp.server) for the specs: build
--  requests, open a session on a project directory, call a tool.
local json = require "vkit.json"
local server = require "vkit.mcp.server"
local project_mod = require "vkit.mcp.project"
local versions = require "vkit.mcp.versions"
local luassert = require "luassert"

local M = {}

function M.initialize(id, version)
  return json.encode { jsonrpc = "2.0", id = id or 1, method = "initialize",
    params = { protocolVersion = version or versions.LATEST, capabilities = json.object(),
               clientInfo = { name = "spec", version = "0" } } }
end

function M.request(id, method, params)
  return json.encode { jsonrpc = "2.0", id = id, method = method, params = params }
end

--- A session on `dir`; returns it and the list its messages go to.
function M.session(dir)
  local sent = {}
  local s = server.new { project = project_mod.new(dir), send = function(m)
    -- every message must survive the wire: encode, decode
    sent[#sent + 1] = assert(json.decode(json.encode(m)))
  end }
  return s, sent
end

function M.ready(dir, version)
  local s, sent = M.session(dir)
  s:receive(M.initialize(1, version))
  s:receive '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  for i = #sent, 1, -1 do sent[i] = nil end
  return s, sent
end

function M.call(s, sent, id, name, args, meta)
  local params = { name = name, arguments = args }
  if meta then params._meta = meta end
  local before = #sent
  s:receive(M.request(id, "tools/call", params))
  local progress = {}
  for i = before + 1, #sent - 1 do progress[#progress + 1] = sent[i] end
  local reply = sent[#sent]
  luassert.equal(id, reply.id)
  return reply.result, progress
end

return M
