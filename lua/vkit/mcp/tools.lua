--- The tools `vkit mcp` offers: one module per tool under
--  lua/vkit/mcp/tools/, each {name, title, description, annotations,
--  input (JSON Schema), output (JSON Schema), run(args, ctx) -> result
--  from vkit.mcp.results}.
local json = require "vkit.json"

local M = {}

M.NAMES = { "change_certify", "run_get", "run_wait", "run_list", "run_report", "verify", "vac_verify" }

local loaded = {}

--- The tool module named `name`, or nil.
function M.find(name)
  if type(name) ~= "string" then return nil end
  for _, known in ipairs(M.NAMES) do
    if known == name then
      loaded[name] = loaded[name] or require("vkit.mcp.tools." .. name)
      return loaded[name]
    end
  end
  return nil
end

--- The tools/list entries for a negotiated revision's features: titles,
--  output schemas and annotations only where that revision defines them.
function M.definitions(features)
  local list = json.array()
  for i, name in ipairs(M.NAMES) do
    local tool = M.find(name)
    local entry = json.object { name = tool.name, description = tool.description, inputSchema = tool.input }
    if features.structured then
      entry.title = tool.title
      entry.outputSchema = tool.output
    end
    if features.annotations then
      local annotations = json.object { title = tool.title }
      for k, v in pairs(tool.annotations) do annotations[k] = v end
      entry.annotations = annotations
    end
    list[i] = entry
  end
  return list
end

return M
