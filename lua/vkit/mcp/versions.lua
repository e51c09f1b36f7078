--- MCP protocol revisions vkit speaks, and what each allows.  Pure.
--
-- Negotiation (lifecycle, "Version Negotiation"): a requested revision the
-- server supports is answered with itself; any other with the latest one.
-- The list covers every revision the pinned official TypeScript SDK speaks
-- (tests/mcp/package-lock.json: SUPPORTED_PROTOCOL_VERSIONS of 1.32.2).
local M = {}

-- Newest first.  structured: tool titles, outputSchema and
-- structuredContent (2025-06-18); annotations: tool annotations (2025-03-26);
-- progress_message: the message of a progress notification (2025-03-26);
-- batches: JSON-RPC batches, which 2025-03-26 required servers to receive
-- and 2025-06-18 removed (earlier revisions inherit them from JSON-RPC 2.0).
local function revision(version, structured, since_2025_03_26, batches)
  return { version = version, structured = structured, annotations = since_2025_03_26,
           progress_message = since_2025_03_26, batches = batches }
end
M.SUPPORTED = {
  revision("2025-11-25", true, true, false),
  revision("2025-06-18", true, true, false),
  revision("2025-03-26", false, true, true),
  revision("2024-11-05", false, false, true),
  revision("2024-10-07", false, false, true),
}
M.LATEST = M.SUPPORTED[1].version

local by_version = {}
for _, entry in ipairs(M.SUPPORTED) do by_version[entry.version] = entry end

--- The revision to answer a client that asked for `requested`.
function M.negotiate(requested)
  if by_version[requested] then return requested end
  return M.LATEST
end

--- The feature flags of a negotiated revision.
function M.features(version)
  return assert(by_version[version], "not a supported MCP revision")
end

function M.list()
  local out = {}
  for i, entry in ipairs(M.SUPPORTED) do out[i] = entry.version end
  return out
end

return M
