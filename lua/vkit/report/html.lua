--- The HTML view of a run's report: one self-contained page (inline CSS,
--  no script, no external resource; a Content-Security-Policy forbids
--  both), with the accepted domain drawn as an inline SVG strip of its
--  inputs (checked, omitted and violating) and a chart of what base and
--  candidate return over it (vkit.report.chart); a multi-parameter domain
--  (issue 34) as a grid of two of its parameters (vkit.report.grid_svg).
--  Run-supplied text is escaped (markup.html).  Elements carry ids and
--  data- attributes so the page can be checked through its DOM.
local h = require("vkit.report.markup").html
local findings = require "vkit.report.findings"
local chart = require "vkit.report.chart"
local grid_svg = require "vkit.report.grid_svg"

local M = {}

M.FINDINGS_SHOWN = require("vkit.policy").report.findings_shown.html
M.STRIP_WIDTH, M.STRIP_HEIGHT = 960, 28

local STYLE = [[
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#1b1b1b}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
.verdict{display:inline-block;padding:.15em .6em;border-radius:.3em;color:#fff;font-weight:600}
.pass{background:#1a7f37}.fail{background:#b42318}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
code,.mono{font-family:ui-monospace,monospace;font-size:.9em;word-break:break-all}
.changed{color:#b42318;font-weight:600}
.legend span{display:inline-block;width:.9em;height:.9em;margin:0 .3em 0 1em;vertical-align:middle}
]]

local function add(out, s) out[#out + 1] = s end

-- The domain strip: one rect per checked or omitted run of inputs, one
-- line per violating input, to scale.
local function strip(out, d)
  local n = d.to - d.from + 1
  local W, H = M.STRIP_WIDTH, M.STRIP_HEIGHT
  local function x(v) return ("%.3f"):format((v - d.from) / n * W) end
  local function w(lo, hi) return ("%.3f"):format(math.max((hi - lo + 1) / n * W, 0.5)) end
  add(out, ('<svg id="domain" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
    .. 'role="img" aria-label="accepted inputs %d to %d" data-from="%d" data-to="%d">'):format(W, H + 14, W, H + 14,
    d.from, d.to, d.from, d.to))
  add(out, ('<rect class="omitted" x="0" y="0" width="%d" height="%d" fill="#d0d5dd" data-from="%d" data-to="%d"/>')
    :format(W, H, d.from, d.to))
  for _, r in ipairs(d.checked) do
    add(out, ('<rect class="checked" x="%s" y="0" width="%s" height="%d" fill="#2e9e55" data-from="%d" data-to="%d"/>')
      :format(x(r[1]), w(r[1], r[2]), H, r[1], r[2]))
  end
  for _, v in ipairs(d.violating) do
    add(out, ('<rect class="violating" x="%s" y="0" width="%s" height="%d" fill="#d92d20" data-input="%d"/>')
      :format(x(v), ("%.3f"):format(math.max(W / n, 2)), H, v))
  end
  add(out, ('<text x="0" y="%d" font-size="11">%d</text><text x="%d" y="%d" font-size="11" text-anchor="end">%d</text>')
    :format(H + 12, d.from, W, H + 12, d.to))
  add(out, "</svg>")
  add(out, '<p class="legend"><span style="background:#2e9e55"></span>checked<span style="background:#d0d5dd"></span>'
    .. 'omitted<span style="background:#d92d20"></span>violating</p>')
end

function M.render(model)
  local out = {}
  local word = model.outcome or model.status:upper()
  add(out, "<!DOCTYPE html>")
  add(out, '<html lang="en"><head><meta charset="utf-8">')
  add(out, [[<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">]])
  add(out, ("<title>vkit %s %s: %s</title>"):format(h(model.kind_title or model.kind), h(model.run_id), h(word)))
  add(out, "<style>" .. STYLE .. "</style></head><body>")
  add(out, ('<h1>vkit %s <code>%s</code> <span id="verdict" class="verdict %s" data-passing="%s">%s</span></h1>'):format(
    h(model.kind_title or model.kind), h(model.run_id), model.passing and "pass" or "fail", tostring(model.passing == true),
    h(word)))
  if model.message or model.error then
    add(out, ('<p id="reason"><strong>%s</strong> — %s</p>'):format(h(model.reason or model.status),
      h(model.message or model.error)))
  end
  if #model.subject > 0 then
    add(out, '<table id="subject">')
    for _, s in ipairs(model.subject) do
      add(out, ('<tr><th>%s</th><td class="mono">%s</td></tr>'):format(h(s.label), h(s.value)))
    end
    add(out, "</table>")
  end
  if model.domain then
    add(out, "<h2>Accepted domain</h2>")
    strip(out, model.domain)
    if model.domain.series then
      add(out, "<h2>What base and candidate return</h2>")
      chart.render(out, model.domain)
    end
  end
  if model.grid then
    add(out, "<h2>Accepted domain</h2>")
    grid_svg.render(out, model.grid)
  end
  add(out, '<h2>Methods</h2><table id="methods"><tr><th>method</th><th>result</th><th>coverage</th></tr>')
  for _, m in ipairs(model.methods) do
    add(out, ('<tr class="method" data-method="%s" data-result="%s" data-passing="%s" data-sampled="%s" data-checked="%s" '
      .. 'data-total="%s"><td>%s</td><td>%s</td><td>%s</td></tr>'):format(h(m.name), h(m.result or "-"),
      tostring(m.passing == true), tostring(m.sampled == true),
      tostring(m.coverage and m.coverage.checked or ""), tostring(m.coverage and m.coverage.total or ""), h(m.name),
      h(m.result or "-"), h(m.coverage and m.coverage.text or "")))
  end
  add(out, "</table>")
  local list = findings.list(model)
  if #list > 0 then
    add(out, ('<h2>Findings (%d)</h2><ul id="findings">'):format(#list))
    for i, f in ipairs(list) do
      if i > M.FINDINGS_SHOWN then
        add(out, ("<li>… and %d more (see the JSON report)</li>"):format(#list - M.FINDINGS_SHOWN))
        break
      end
      local fields = {}
      for _, field in ipairs(f.fields or {}) do
        fields[#fields + 1] = ("<br>%s: <code>%s</code>"):format(h(field.label), h(field.value))
      end
      add(out, ('<li class="finding" data-from="%s" data-to="%s" data-count="%s" data-rule="%s" data-seen="%s">'
        .. '<strong>%s</strong>: %s%s%s%s</li>'):format(tostring(f.from or ""), tostring(f.to or ""),
        tostring(f.count or ""), h(f.rule or ""), h(f.seen or ""), h(f.title),
        f.rule and ("<code>%s</code> — "):format(h(f.rule)) or "", h(f.detail or ""),
        (f.seen or "") ~= "" and (" <em>(seen by %s)</em>"):format(h(f.seen)) or "", table.concat(fields)))
    end
    add(out, "</ul>")
  end
  for _, m in ipairs(model.methods) do
    if m.notes and #m.notes > 0 then
      add(out, ('<h2>%s: notes</h2><ul class="notes" data-method="%s">'):format(h(m.name), h(m.name)))
      for _, step in ipairs(m.notes) do add(out, ("<li>%s</li>"):format(h(step))) end
      add(out, "</ul>")
    end
  end
  add(out, '<h2>Established</h2><ul id="established">')
  if #model.established == 0 then add(out, "<li>Nothing: this run does not make its claim.</li>") end
  for _, s in ipairs(model.established) do add(out, ("<li>%s</li>"):format(h(s))) end
  add(out, '</ul><h2>Not established</h2><ul id="not-established">')
  for _, s in ipairs(model.not_established) do add(out, ("<li>%s</li>"):format(h(s))) end
  add(out, "</ul>")
  if #model.artifacts > 0 then
    add(out, '<h2>Retained artifacts</h2><table id="artifacts"><tr><th>SHA-256</th><th>bytes</th><th>path</th></tr>')
    for _, a in ipairs(model.artifacts) do
      local note = a.missing and ' <span class="changed">gone</span>'
        or a.changed and ' <span class="changed">changed since the run recorded it</span>' or ""
      add(out, ('<tr class="artifact"><td class="mono">%s</td><td>%s</td><td class="mono">%s%s</td></tr>'):format(
        a.missing and "-" or h(a.sha256), a.missing and "-" or tostring(a.size), h(a.display or a.path), note))
    end
    add(out, "</table>")
  end
  add(out, "</body></html>")
  return table.concat(out, "\n") .. "\n"
end

return M
