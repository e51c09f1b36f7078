--- Printing a verification: issuer-controlled text is escaped first, so a
--  bundle cannot repaint the terminal, reorder a replay command it invites
--  the reader to paste (bidi overrides), or forge a line of vkit's own
--  output (line and paragraph separators).
local json = require "vkit.json"
local value = require "vkit.vac.value"

local M = {}

local UNSAFE = {}
for _, cp in ipairs { 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
  0x2069 } do UNSAFE[cp] = true end

local function unsafe(cp) return cp < 0x20 or cp == 0x7F or (cp >= 0x80 and cp <= 0x9F) or UNSAFE[cp] end

--- s with control characters (C0, DEL, C1), bidi controls and line or
--  paragraph separators written as \xNN / \uNNNN, and bytes that are not
--  UTF-8 as \xNN.
function M.escape(s)
  s = tostring(s)
  if not s:find "[%c\128-\255]" then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local b = s:byte(i)
    if b < 0x80 then
      out[#out + 1] = unsafe(b) and ("\\x%02x"):format(b) or string.char(b)
      i = i + 1
    else
      local ok, cp = pcall(utf8.codepoint, s, i)
      local len = ok and #utf8.char(cp) or 0
      if not ok or s:sub(i, i + len - 1) ~= utf8.char(cp) then
        out[#out + 1] = ("\\x%02x"):format(b)
        i = i + 1
      else
        if unsafe(cp) then
          out[#out + 1] = cp < 0x100 and ("\\x%02x"):format(cp) or ("\\u%04x"):format(cp)
        else
          out[#out + 1] = s:sub(i, i + len - 1)
        end
        i = i + len
      end
    end
  end
  return table.concat(out)
end

function M.failure_line(f)
  if f.detail and f.detail ~= "" then return "FAIL " .. M.escape(f.name .. ": " .. f.detail) end
  return "FAIL " .. M.escape(f.name)
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
function M.text(result)
  local lines = {}
  for _, f in ipairs(result.failures) do lines[#lines + 1] = M.failure_line(f) end
  local verdict = #result.failures == 0 and "PASS" or ("FAIL — %d named reason(s)"):format(#result.failures)
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

--- The same verification as one stable JSON object.
function M.json(result)
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
  return inert_json(json.encode(doc, { indent = 2 })) .. "\n"
end

return M
