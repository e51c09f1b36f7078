--- What a run's report says at the source, for the formats a CI system
--  attaches to lines of a pull request (SARIF, GitHub annotations): one
--  annotation per finding (a range of inputs, merged across methods), or,
--  when a run that does not pass found nothing to point at (blocked,
--  unknown, failed), one for why; none for a run that passes.
--
--   of(model) -> {location = {file, line} | nil, items = {{rule, level,
--                 title, message}}}
-- level is SARIF's: "error" when the run does not make its claim; a
-- sampled method's agreement is not a pass either (it stays an error).
local findings = require "vkit.report.findings"

local M = {}

M.RULES = {
  ["standing-requirement"] = "The candidate returned an output the accepted intent's standing requirements do not allow.",
  guard = "The candidate returned an output outside the outputs a difference-policy guard approves.",
  ["unapproved-difference"] = "The candidate returned another output than the base where no guard approves a difference.",
  observation = "The candidate's output could not be observed as a value.",
  preservation = "The base's output could not be observed, so preservation could not be judged.",
}

local function sentence(s)
  s = tostring(s or ""):gsub("%s+$", "")
  if s == "" or s:find("[.!?]$") then return s end
  return s .. "."
end

function M.describe(rule)
  return M.RULES[rule] or ("vkit reported %s."):format(rule)
end

function M.of(model)
  local target = model.target or {}
  local out = { location = target.file and { file = target.file, line = target.line } or nil, items = {} }
  if model.passing then return out end
  local word = model.outcome or model.status or "failed"
  for _, f in ipairs(findings.list(model)) do
    local rule = f.rule or model.reason or word
    out.items[#out.items + 1] = { rule = rule, level = "error",
      title = ("vkit %s: %s"):format(word, f.title),
      message = sentence(("%s: %s%s%s"):format(f.title, f.rule and (f.rule .. " — ") or "", f.detail or "",
        (f.seen or "") ~= "" and (" (seen by " .. f.seen .. ")") or "")) }
  end
  if #out.items == 0 then
    local rule = model.reason or word
    out.items[1] = { rule = rule, level = "error", title = ("vkit %s"):format(word),
                     message = sentence(model.message or model.error or ("the run ended %s"):format(word)) }
  end
  return out
end

return M
