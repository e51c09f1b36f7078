--- Printing a verification: issuer-controlled text is escaped first, so a
--  bundle cannot repaint the terminal, reorder a replay command it invites
--  the reader to paste (bidi overrides), or forge a line of vkit's own
--  output (line and paragraph separators).
local json = require "vkit.json"
local value = require "vkit.vac.value"
local terminal = require "vkit.terminal"

local M = {}

-- Escaping and colour are the terminal's (vkit.terminal), shared with the
-- run reports.
M.escape = terminal.escape
M.style = terminal.style
local PLAIN = terminal.PLAIN

function M.failure_line(f, style)
  local fail = (style or PLAIN).fail "FAIL"
  if f.detail and f.detail ~= "" then return fail .. " " .. M.escape(f.name .. ": " .. f.detail) end
  return fail .. " " .. M.escape(f.name)
end

M.PROVED = "  proved offline: manifest schema, artifact presence + sha256, bundle closure,\n"
  .. "  stated limitations, stamp agreement, declared results recomputed from artifacts."
M.NOT_REPLAY = "semantic replay: NOT run by this tool. A structural PASS means the bundle is\n"
  .. "  internally honest, not that the issuer's grader agrees. To re-earn the\n"
  .. "  verdicts, run the bundle's replay block at the pinned issuer_commit:"

local function replay_of(m)
  if json.kind(m) ~= "object" or json.kind(m.replay) ~= "object" then return nil end
  local commands = {}
  if json.kind(m.replay.commands) == "array" then
    for i, c in ipairs(m.replay.commands) do commands[i] = value.str(c) end
  end
  local expected = type(m.replay.expected) == "string" and m.replay.expected or nil
  return { commands = commands, expected = expected, issuer_commit = m.replay.issuer_commit }
end

--- The human report: one FAIL line per failure, the verdict, the plain
--  statement that this is not replay, and the bundle's replay block.
function M.text(result, style)
  style = style or PLAIN
  local lines = {}
  for _, f in ipairs(result.failures) do lines[#lines + 1] = M.failure_line(f, style) end
  local verdict = #result.failures == 0 and style.pass "PASS"
    or (style.fail "FAIL" .. " — %d named reason(s)"):format(#result.failures)
  lines[#lines + 1] = ("structural verification: %s (%s)"):format(verdict, M.escape(result.name))
  if result.archive_refused then return table.concat(lines, "\n") .. "\n" end
  lines[#lines + 1] = M.PROVED
  lines[#lines + 1] = M.NOT_REPLAY
  local replay = replay_of(result.manifest)
  if not replay then
    lines[#lines + 1] = "    (replay block unreadable — see failures above)"
  else
    for _, c in ipairs(replay.commands) do lines[#lines + 1] = "    $ " .. M.escape(c) end
    if replay.expected and replay.expected:find "%S" then
      lines[#lines + 1] = "    expected: " .. M.escape(replay.expected)
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- JSON escapes C0 controls already; the rest of the unsafe set is written
-- as \u escapes so the bytes on the terminal stay inert.
local function inert_json(s)
  return (s:gsub("\127", "\\u007f"):gsub("\194([\128-\159])", function(c) return ("\\u%04x"):format(c:byte()) end)
    :gsub("\226\128([\142\143\168\169\170-\174])", function(c) return ("\\u%04x"):format(0x2000 + c:byte() - 0x80) end)
    :gsub("\226\129([\166-\169])", function(c) return ("\\u%04x"):format(0x2040 + c:byte() - 0x80) end))
end

--- The same verification as one stable JSON object (a table, for
--  M.json and M.batch_json).
function M.json_doc(result)
  local failures = json.array {}
  for i, f in ipairs(result.failures) do
    failures[i] = json.object { reason = f.name, detail = f.detail or "" }
  end
  local reasons = json.array {}
  local seen = {}
  for _, f in ipairs(result.failures) do
    if not seen[f.name] then
      seen[f.name] = true
      reasons[#reasons + 1] = f.name
    end
  end
  table.sort(reasons)
  local replay = replay_of(result.manifest)
  local doc = json.object {
    bundle = result.name,
    verdict = #result.failures == 0 and "pass" or "fail",
    failures = failures,
    reasons = reasons,
    structural_only = true,
    statement = "structural verification is not semantic replay: a PASS means the bundle is internally honest, "
      .. "not that the issuer's grader agrees; run the replay block at the pinned issuer_commit to re-earn the verdicts",
    replay = replay and json.object {
      commands = json.array(replay.commands),
      expected = replay.expected or json.null,
      issuer_commit = type(replay.issuer_commit) == "string" and replay.issuer_commit or json.null,
    } or json.null,
  }
  return doc
end

local function encode(doc) return inert_json(json.encode(doc, { indent = 2 })) .. "\n" end

--- The same verification as one stable JSON object.
function M.json(result) return encode(M.json_doc(result)) end

--- {"error": {"code", "message"}}: a failure under --json, on stdout.
function M.error_json(code, message)
  return encode(json.object { error = json.object { code = code, message = message } })
end

-- ---------------------------------------------------------------------
-- Several bundles: rows are {result = verification} or {path, code,
-- message} for an operand that could not be verified.

local function tally(rows)
  local t = { bundles = #rows, passed = 0, failed = 0, errors = 0 }
  for _, r in ipairs(rows) do
    if not r.result then t.errors = t.errors + 1
    elseif r.result.verdict == "pass" then t.passed = t.passed + 1
    else t.failed = t.failed + 1 end
  end
  return t
end

local function width(s) return utf8.len(s) or #s end

local function pad(s, n) return s .. (" "):rep(math.max(0, n - width(s))) end

--- The table of several verifications and its total.
function M.batch_text(rows, style)
  style = style or PLAIN
  local names, w = {}, 6
  for i, r in ipairs(rows) do
    names[i] = M.escape(r.result and r.result.name or r.path)
    w = math.max(w, width(names[i]))
  end
  w = math.min(w, 60)
  local lines = { ("%s  %s  %s"):format(pad("RESULT", 6), pad("BUNDLE", w), "REASONS") }
  for i, r in ipairs(rows) do
    local word, why
    if not r.result then
      word, why = style.error(pad("ERROR", 6)), M.escape(r.code .. ": " .. r.message)
    elseif r.result.verdict == "pass" then
      word, why = style.pass(pad("PASS", 6)), ""
    else
      word = style.fail(pad("FAIL", 6))
      why = ("%s (%d failure%s)"):format(table.concat(r.result.failures:names(), ", "), #r.result.failures,
        #r.result.failures == 1 and "" or "s")
    end
    lines[#lines + 1] = (("%s  %s  %s"):format(word, pad(names[i], w), why):gsub("%s+$", ""))
  end
  local t = tally(rows)
  lines[#lines + 1] = ("total: %d bundles, %d passed, %d failed, %d not verified"):format(t.bundles, t.passed,
    t.failed, t.errors)
  lines[#lines + 1] = "structural verification is not semantic replay: run each bundle's replay block at its "
    .. "pinned issuer_commit to re-earn its verdicts (vkit vac verify BUNDLE shows it)"
  return table.concat(lines, "\n") .. "\n"
end

--- {"bundles": [verification or {bundle, error}], "total": {...}}.
function M.batch_json(rows)
  local list = json.array {}
  for i, r in ipairs(rows) do
    list[i] = r.result and (r.doc or M.json_doc(r.result))
      or json.object { bundle = r.path, error = json.object { code = r.code, message = r.message } }
  end
  local t = tally(rows)
  return encode(json.object { bundles = list, total = json.object(t) })
end

function M.conformance_json(report)
  local cases = json.array {}
  for i, c in ipairs(report.cases) do
    cases[i] = json.object { name = c.name, ok = c.ok, want = c.want, got = c.got }
  end
  return encode(json.object { passed = report.passed, failed = report.failed, cases = cases })
end

function M.draft_json(path, artifacts, markers, warnings)
  return encode(json.object { manifest = path, artifacts = artifacts, markers = markers,
    warnings = json.array(warnings) })
end

function M.check_fetched_json(problems, entries)
  return encode(json.object { verdict = #problems == 0 and "pass" or "fail", entries = entries,
    problems = json.array(problems) })
end

function M.registry_json(path, doc)
  local pending = json.array {}
  for i, p in ipairs(doc.pending) do pending[i] = json.object { name = p.name, reason = p.reason } end
  local accepted = json.array {}
  for i, e in ipairs(doc.entries) do accepted[i] = e.name end
  return encode(json.object { registry = path, accepted = accepted, pending = pending })
end

return M
