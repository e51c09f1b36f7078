--- The plain-text view of a run's report: what `vkit run show` prints.
--  Every string that came from a run (a receipt, a candidate's output, a
--  bundle) is escaped for the terminal first.  style (vkit.terminal.style)
--  colours the outcome word on a terminal; without it the text is plain.
local terminal = require "vkit.terminal"
local findings_mod = require "vkit.report.findings"
local escape = terminal.escape

local M = {}

M.FINDINGS_SHOWN = require("vkit.policy").report.findings_shown.text

local function line(out, fmt, ...)
  out[#out + 1] = fmt:format(...)
end

local function findings(out, model)
  local list = findings_mod.list(model)
  if #list == 0 then return end
  line(out, "findings (%d):", #list)
  for i = 1, math.min(#list, M.FINDINGS_SHOWN) do
    local f = list[i]
    line(out, "  - %s: %s", escape(f.title), escape(f.detail or ""))
    if f.rule then line(out, "      %-12s %s", "rule", escape(f.rule)) end
    for _, field in ipairs(f.fields or {}) do line(out, "      %-12s %s", escape(field.label), escape(field.value)) end
    if (f.seen or "") ~= "" then line(out, "      %-12s %s", "seen by", escape(f.seen)) end
  end
  if #list > M.FINDINGS_SHOWN then line(out, "  ... and %d more", #list - M.FINDINGS_SHOWN) end
end

function M.render(model, style)
  style = style or terminal.PLAIN
  local out = {}
  local word = escape(model.outcome or model.status:upper())
  word = model.passing and style.pass(word) or style.fail(word)
  line(out, "%s  %s  %s", word, model.run_id, escape(model.kind_title or model.kind))
  if model.message or model.error then
    line(out, "  %s%s", model.reason and (escape(model.reason) .. ": ") or "", escape(model.message or model.error))
  end
  for _, s in ipairs(model.subject) do line(out, "  %-16s %s", escape(s.label), escape(s.value)) end
  if #model.methods > 0 then line(out, "methods:") end
  for _, m in ipairs(model.methods) do
    line(out, "  %-18s %-24s %s", escape(m.name), escape(m.result or "-"), escape(m.coverage and m.coverage.text or ""))
    for _, step in ipairs(m.notes or {}) do line(out, "    %s", escape(step)) end
    if m.report then
      line(out, "    report %s (sha256 %s)", escape(m.report.display or m.report.path), tostring(m.report.sha256))
    end
  end
  findings(out, model)
  if #model.established > 0 then
    line(out, "established:")
    for _, s in ipairs(model.established) do line(out, "  %s", s) end
  end
  line(out, "not established:")
  for _, s in ipairs(model.not_established) do line(out, "  %s", s) end
  if #model.artifacts > 0 then
    line(out, "retained:")
    for _, a in ipairs(model.artifacts) do
      local note = a.missing and "  (gone)" or a.changed and "  (CHANGED since the run recorded it)" or ""
      line(out, "  %s  %s%s", a.missing and ("-"):rep(64) or a.sha256, escape(a.display or a.path), note)
    end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
