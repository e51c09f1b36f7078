--- The JUnit XML view of a run's report, for CI systems that display test
--  reports: one test suite per run, one test case per method; a method
--  that does not make its claim is a <failure> carrying its findings, a run
--  that failed (infrastructure) an <error>, a method whose claim holds only
--  for the inputs it sampled <skipped> (neither a pass nor a failure).
--  Coverage goes to each case's <system-out>.
local x = require("vkit.report.markup").xml

local M = {}

local function add(out, s) out[#out + 1] = s end

local function findings_text(m)
  local lines = {}
  for _, f in ipairs(m.findings) do
    lines[#lines + 1] = ("%s: %s"):format(f.title, f.detail or "")
    for _, field in ipairs(f.fields or {}) do lines[#lines + 1] = ("  %s: %s"):format(field.label, field.value) end
  end
  local total = m.findings_total or #m.findings
  if total > #m.findings then lines[#lines + 1] = ("... and %d more"):format(total - #m.findings) end
  return table.concat(lines, "\n")
end

function M.render(model)
  local cases = {}
  for _, m in ipairs(model.methods) do cases[#cases + 1] = m end
  if #cases == 0 then
    -- Nothing ran (a blocked preflight, a failed run): one case says why.
    cases[1] = { name = model.status == "failed" and "run" or "preflight", result = model.reason or model.status,
                 passing = false, findings = { { title = model.reason or model.status,
                                                 detail = model.message or model.error or "" } } }
  end
  local failures, errors, skipped = 0, 0, 0
  local failed_run = model.status == "failed"
  for _, m in ipairs(cases) do
    if m.sampled then skipped = skipped + 1
    elseif not m.passing then
      if failed_run then errors = errors + 1 else failures = failures + 1 end
    end
  end
  local suite = ("vkit %s %s"):format(model.kind, model.run_id)
  local out = {}
  add(out, '<?xml version="1.0" encoding="UTF-8"?>')
  add(out, ('<testsuites name="vkit" tests="%d" failures="%d" errors="%d" skipped="%d">'):format(#cases, failures, errors,
    skipped))
  add(out, ('  <testsuite name="%s" tests="%d" failures="%d" errors="%d" skipped="%d" timestamp="%s">'):format(
    x(suite), #cases, failures, errors, skipped, x((model.updated_at or ""):gsub("Z$", ""))))
  add(out, "    <properties>")
  for _, p in ipairs { { "outcome", model.outcome or model.status }, { "passing", tostring(model.passing == true) },
                       { "reason", model.reason } } do
    if p[2] then add(out, ('      <property name="%s" value="%s"/>'):format(p[1], x(p[2]))) end
  end
  for _, s in ipairs(model.subject) do
    add(out, ('      <property name="%s" value="%s"/>'):format(x(s.label), x(s.value)))
  end
  add(out, "    </properties>")
  for _, m in ipairs(cases) do
    add(out, ('    <testcase name="%s" classname="vkit.%s">'):format(x(m.name), x(model.kind)))
    if m.sampled then
      add(out, ('      <skipped message="%s"/>'):format(x(("only the sampled inputs were checked: %s"):format(
        m.coverage and m.coverage.text or m.result or "-"))))
    elseif not m.passing then
      local tag = failed_run and "error" or "failure"
      add(out, ('      <%s message="%s" type="%s">%s</%s>'):format(tag,
        x(("%s%s"):format(m.result or "-", m.coverage and (": " .. m.coverage.text) or "")), x(m.result or "-"),
        x(findings_text(m)), tag))
    end
    if m.coverage then add(out, ("      <system-out>%s</system-out>"):format(x(m.coverage.text))) end
    add(out, "    </testcase>")
  end
  add(out, "  </testsuite>")
  add(out, "</testsuites>")
  return table.concat(out, "\n") .. "\n"
end

return M
