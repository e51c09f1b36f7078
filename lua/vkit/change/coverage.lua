--- Coverage: how much of the accepted domain a method result covers, in
-- one record and one sentence that every surface shows (the CLI, `vkit run
-- show/list`, MCP, the REPL, examples).  Pure.
--
--   record(method, checked, accepted, scope) -> {method, checked, accepted,
--     scope = "sampled"|"all_inputs"|"model", statement}
--   statement: "checked N of M accepted inputs (method)"
--
-- "Checked" means judged: the input's observations were complete and
-- stable enough to decide conformance or violation.  A cut records an
-- observation-policy setting that a limit reduced, with that limit.
local M = {}

function M.statement(c)
  if c.inputs then
    return ("checked %d of %d accepted inputs (%s: %s)"):format(c.checked, c.accepted, c.method, c.inputs)
  end
  return ("checked %d of %d accepted inputs (%s)"):format(c.checked, c.accepted, c.method)
end

--- inputs (optional): the accepted inputs in words, for a domain of several
--  parameters ("x in -5..5, flag in *"), so the sentence says which.
function M.record(method, checked, accepted, scope, inputs)
  local c = { method = method, checked = checked, accepted = accepted, scope = scope, inputs = inputs }
  c.statement = M.statement(c)
  return c
end

local LIMIT_WORDS = {
  max_invocations = function(v) return ("the %d-invocation budget"):format(v) end,
  deadline_ms = function(v) return ("the %d-second deadline"):format(v // 1000) end,
}

--- "max_inputs 301 cut to 56 by the 128-invocation budget"
function M.cut_sentence(cut)
  local limit = LIMIT_WORDS[cut.limit]
  return ("%s %s cut to %s by %s"):format(cut.setting, tostring(cut.requested), tostring(cut.applied),
    limit and limit(cut.limit_value) or (cut.limit .. " " .. tostring(cut.limit_value)))
end

--- The lines a summary shows for a certification summary's methods:
--  "<method> <result>: checked N of M accepted inputs (<method>)" and one
--  line per cut.  Tolerates summaries written before coverage existed.
function M.lines(summary)
  local lines = {}
  if type(summary) ~= "table" or type(summary.methods) ~= "table" then return lines end
  for _, m in ipairs(summary.methods) do
    local c = type(m.coverage) == "table" and m.coverage.statement or "coverage not recorded"
    lines[#lines + 1] = ("%s %s: %s"):format(m.method, tostring(m.result), c)
    for _, cut in ipairs(type(m.cuts) == "table" and m.cuts or {}) do
      lines[#lines + 1] = ("  %s"):format(M.cut_sentence(cut))
    end
  end
  return lines
end

return M
