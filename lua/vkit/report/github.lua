--- GitHub Actions workflow commands (`::error file=…,line=…,title=…::…`):
--  printed by a step, each becomes an annotation on the pull request's
--  diff at the changed function.  One line per annotation
--  (vkit.report.annotations); a passing run prints one `::notice`.
--  Escaped as GitHub's runner reads them: in the message %, CR and LF; in
--  a property also : and , (which would end the property).
local annotations = require "vkit.report.annotations"
local visible = require("vkit.report.markup").visible_controls

local M = {}

local DATA = { ["%"] = "%25", ["\r"] = "%0D", ["\n"] = "%0A" }
local PROPERTY = { ["%"] = "%25", ["\r"] = "%0D", ["\n"] = "%0A", [":"] = "%3A", [","] = "%2C" }

function M.data(s) return (tostring(s):gsub("[%%\r\n]", DATA)) end
function M.property(s) return (tostring(s):gsub("[%%\r\n:,]", PROPERTY)) end

-- An escape sequence or a bidi control in run-supplied text must not reach
-- the log either (a line break is escaped, so cannot start a command).
local function clean(s) return visible(tostring(s)) end

local LEVELS = { error = "error", warning = "warning", note = "notice" }

function M.render(model)
  local a = annotations.of(model)
  local out = {}
  local function props(title)
    local p = {}
    if a.location then
      -- the file name is run-supplied text too (a binding map's source)
      p[#p + 1] = "file=" .. M.property(clean(a.location.file))
      if a.location.line then p[#p + 1] = "line=" .. a.location.line end
    end
    p[#p + 1] = "title=" .. M.property(clean(title))
    return table.concat(p, ",")
  end
  for _, item in ipairs(a.items) do
    out[#out + 1] = ("::%s %s::%s"):format(LEVELS[item.level] or "error", props(item.title), M.data(clean(item.message)))
  end
  if #out == 0 then
    out[1] = ("::notice %s::%s"):format(props(("vkit %s"):format(model.outcome or model.status)),
      M.data(clean(model.headline or ("%s %s"):format(model.outcome or model.status, model.run_id))))
  end
  return table.concat(out, "\n") .. "\n"
end

return M
