--- The Markdown view of a run's report, for a pull request or a review:
--  the verdict, what was verified (file, function, language, base and
--  candidate first), each method with its coverage, one findings list
--  (ranges of inputs, the methods that saw each), what is and is not
--  established, and the retained artifacts (project-relative) with their
--  SHA-256.  Run-supplied text is escaped (markup.md).
local markup = require "vkit.report.markup"
local findings = require "vkit.report.findings"
local md, code = markup.md, markup.md_code

local M = {}

M.FINDINGS_SHOWN = require("vkit.policy").report.findings_shown.markdown

local function add(out, s) out[#out + 1] = s end

function M.render(model)
  local out = {}
  add(out, ("# vkit %s `%s`: %s"):format(md(model.kind_title or model.kind), model.run_id,
    md(model.outcome or model.status:upper())))
  add(out, "")
  if model.message or model.error then
    add(out, ("**%s**%s"):format(md(model.reason or model.status), " — " .. md(model.message or model.error)))
    add(out, "")
  end
  if #model.subject > 0 then
    add(out, "| | |")
    add(out, "|---|---|")
    for _, s in ipairs(model.subject) do add(out, ("| %s | %s |"):format(md(s.label), md(s.value))) end
    add(out, "")
  end
  add(out, "## Methods")
  add(out, "")
  add(out, "| method | result | coverage |")
  add(out, "|---|---|---|")
  for _, m in ipairs(model.methods) do
    add(out, ("| %s | %s%s | %s |"):format(md(m.name), m.passing and "✅ " or m.sampled and "⚠️ sampled: " or "❌ ",
      md(m.result or "-"),
      md(m.coverage and m.coverage.text or "")))
  end
  add(out, "")
  local list = findings.list(model)
  if #list > 0 then
    add(out, ("## Findings (%d)"):format(#list))
    add(out, "")
    for i, f in ipairs(list) do
      if i > M.FINDINGS_SHOWN then
        add(out, ("- … and %d more (see the JSON report)"):format(#list - M.FINDINGS_SHOWN))
        break
      end
      add(out, ("- **%s**: %s%s%s"):format(md(f.title), f.rule and ("`%s` — "):format(code(f.rule)) or "",
        md(f.detail or ""), (f.seen or "") ~= "" and (" (seen by " .. md(f.seen) .. ")") or ""))
      for _, field in ipairs(f.fields or {}) do add(out, ("  - %s: `%s`"):format(md(field.label), code(field.value))) end
    end
    add(out, "")
  end
  for _, m in ipairs(model.methods) do
    if m.notes and #m.notes > 0 then
      add(out, ("### %s: notes"):format(md(m.name)))
      add(out, "")
      for _, step in ipairs(m.notes) do add(out, "- " .. md(step)) end
      add(out, "")
    end
  end
  add(out, "## Established")
  add(out, "")
  if #model.established == 0 then add(out, "Nothing: this run does not make its claim.") end
  for _, s in ipairs(model.established) do add(out, "- " .. md(s)) end
  add(out, "")
  add(out, "## Not established")
  add(out, "")
  for _, s in ipairs(model.not_established) do add(out, "- " .. md(s)) end
  add(out, "")
  if #model.artifacts > 0 then
    add(out, "## Retained artifacts")
    add(out, "")
    add(out, "| SHA-256 | bytes | path |")
    add(out, "|---|---:|---|")
    for _, a in ipairs(model.artifacts) do
      local note = a.missing and " (gone)" or a.changed and " (**changed since the run recorded it**)" or ""
      add(out, ("| `%s` | %s | %s%s |"):format(a.missing and "-" or code(a.sha256), a.missing and "-" or tostring(a.size),
        md(a.display or a.path), note))
    end
    add(out, "")
  end
  return table.concat(out, "\n")
end

return M
