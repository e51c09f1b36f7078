--- `vkit mcp`: a Model Context Protocol server on stdio (docs/mcp.md).
local args = require "vkit.args"
local fs = require "vkit.fs"

local USAGE = [[usage: vkit mcp [--project DIR] [--store URL]

Serves the Model Context Protocol on stdin/stdout (newline-delimited
JSON-RPC 2.0) until stdin ends: tools change_certify, run_get, run_wait,
run_list, run_report,
verify and vac_verify over the project's job store (DIR, default the
current directory).  Only protocol messages go to stdout; logs go to
stderr.  Register it with an MCP client as the command `vkit` with the
arguments `mcp --project DIR` (docs/mcp.md).

options:
  --project DIR   the project whose job store the tools use (default: the
                  current directory)
  --help          this text

exit codes: 0 stdin ended, 2 usage (DIR is not a directory)]]

return {
  summary = "serve the Model Context Protocol on stdio (change_certify, run_get, run_wait, run_list, run_report, verify, vac_verify)",
  usage = USAGE,
  run = function(argv)
    local opts, err = args.parse(argv, { options = { project = "string", store = "string" }, max = 0 })
    if not opts then return require("vkit.cli").usage_error(err, "mcp") end
    local dir = opts.project or "."
    local real = fs.realpath(dir)
    local st = real and fs.lstat(real)
    if not st or st.kind ~= "dir" then
      return require("vkit.cli").usage_error(("--project %s is not a directory"):format(dir), "mcp")
    end
    local function log(text) io.stderr:write("vkit mcp: ", text, "\n") end
    log(("serving %s on stdio (MCP %s)"):format(real, table.concat(require("vkit.mcp.versions").list(), ", ")))
    require("vkit.mcp.project").store_url = opts.store
    return require("vkit.mcp.server").serve { project = real, input = io.stdin, output = io.stdout, log = log }
  end,
}
