-- The MCP server (`vkit mcp`, docs/mcp.md).  Waits are bounded by
-- policies/store.lua max_wait_seconds, like every other --wait.
local MiB = 1024 * 1024

return {
  -- One newline-delimited JSON-RPC message.  A longer line is refused with
  -- -32600 (id null) and skipped up to its newline without being kept in
  -- memory; the server keeps serving.  A change request with the largest
  -- contract the seeds allow (4,096 requirements) stays far below this.
  max_message_bytes = 4 * MiB,
  -- run_wait's default bound when the call names none: below the 60 s
  -- request timeout MCP clients commonly use (the official SDK's default).
  run_wait_default_seconds = 30,
  -- A waiting tool call whose request carries _meta.progressToken sends a
  -- notifications/progress this often, so clients may reset their timeouts.
  progress_interval_ms = 1000,
}
