--- The SARIF 2.1.0 view of a run's report (OASIS SARIF 2.1.0): one run
--  of the tool "vkit" whose results are the report's annotations
--  (vkit.report.annotations), each located at the changed function's
--  file and line, with the rules they break.  Code-scanning services
--  (GitHub, GitLab, Azure DevOps) read it; the specs check it with
--  Microsoft's SARIF multitool (`make sarif-multitool`).
local json = require "vkit.json"
local annotations = require "vkit.report.annotations"

local M = {}

M.SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

--- A repository-relative path as a relative URI reference (RFC 3986):
--  every byte but the unreserved ones and "/" percent-encoded, so a name
--  holding a space, "#", "?" or "%" still names the file, not a fragment
--  or a query.
function M.uri(path)
  return (tostring(path):gsub("[^%w%-%._~/]", function(c) return ("%%%02X"):format(c:byte()) end))
end

local function location(loc)
  local physical = { artifactLocation = { uri = M.uri(loc.file) } }
  if loc.line then physical.region = { startLine = loc.line } end
  return json.array { { physicalLocation = physical } }
end

function M.render(model)
  local a = annotations.of(model)
  local rules, index = json.array(), {}
  local results = json.array()
  for _, item in ipairs(a.items) do
    if not index[item.rule] then
      rules[#rules + 1] = { id = item.rule, shortDescription = { text = annotations.describe(item.rule) } }
      index[item.rule] = #rules - 1
    end
    local r = { ruleId = item.rule, ruleIndex = index[item.rule], level = item.level, message = { text = item.message } }
    if a.location then r.locations = location(a.location) end
    results[#results + 1] = r
  end
  local target = model.target or {}
  local run = {
    tool = { driver = { name = "vkit", version = require("vkit.boot").version, rules = rules } },
    automationDetails = { id = ("vkit/%s/%s"):format(model.kind, model.run_id) },
    results = results,
    properties = { outcome = model.outcome or model.status, passing = model.passing == true, run_id = model.run_id,
                   ["function"] = target["function"], language = target.language, base = target.base,
                   candidate = target.candidate },
  }
  return json.encode({ ["$schema"] = M.SCHEMA, version = "2.1.0", runs = json.array { run } }, { indent = 2 }) .. "\n"
end

return M
