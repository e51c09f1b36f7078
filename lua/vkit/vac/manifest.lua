--- The manifest (vac.json) rules: the draft gate (SPEC §2.7) and the
--  schema (SPEC §2), as pure functions over the decoded manifest.
local hash = require "vkit.hash"
local json = require "vkit.json"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local profiles = require "vkit.vac.profiles"

local kind, null = json.kind, json.null
local nonblank, get = text.nonblank, value.get

local M = {}

M.VERSIONS = { ["0.1"] = true, ["0.2"] = true }
M.DRAFT_VERSION = "0.1"
M.TODO = "TODO("

local sorted_keys = require("vkit.tables").sorted_keys
M.sorted_keys = sorted_keys

--- Every string value, at any depth, that begins "TODO(" (the reference's
--  rule: str.startswith; a key or a later "TODO(" is no marker), as failures in document path
--  order ("claim.limitations[0]").  Iterative: the manifest is issuer
--  controlled and may nest as deep as the decoder allows.
-- Does any string value in v begin "TODO("?  (The same walk without the
-- paths and the key sorting a failure needs: most manifests carry none.)
local byte = string.byte
local function has_marker(v)
  local stack, n = { v }, 1
  local prefix = M.TODO
  while n > 0 do
    local node = stack[n]
    stack[n] = nil
    n = n - 1
    local t = type(node)
    if t == "string" then
      if byte(node, 1) == 84 and node:sub(1, 5) == prefix then return true end -- "T"
    elseif t == "table" then
      for _, child in pairs(node) do
        n = n + 1
        stack[n] = child
      end
    end
  end
  return false
end

-- Could the manifest text bytes decode to a string that begins "TODO("?
-- Only if the bytes hold "TODO(" or an escape that may spell one of its
-- characters: \u0054, \u004f, \u0044 and \u0028 all begin "\u00" (a
-- JSON escape's u is lower case; no other escape gives T, O, D or "(").
-- Two plain searches, where the walk visits every value.
local function may_hold_marker(bytes)
  return bytes:find("TODO(", 1, true) ~= nil or bytes:find("\\u00", 1, true) ~= nil
end
M.may_hold_marker = may_hold_marker

--- bytes (optional): the text m was decoded from, which rules the walk out
--  when it cannot hold a marker.
function M.todo_failures(m, failures, bytes)
  if bytes and not may_hold_marker(bytes) then return end
  if not has_marker(m) then return end
  local stack = { { m, "" } }
  while #stack > 0 do
    local node, path = table.unpack(table.remove(stack))
    local k = kind(node)
    if k == "object" then
      local keys = sorted_keys(node)
      for i = #keys, 1, -1 do
        local key = keys[i]
        stack[#stack + 1] = { node[key], path == "" and key or (path .. "." .. key) }
      end
    elseif k == "array" then
      for i = #node, 1, -1 do stack[#stack + 1] = { node[i], ("%s[%d]"):format(path, i - 1) } end
    elseif k == "string" and node:sub(1, #M.TODO) == M.TODO then
      failures:add("draft-incomplete", path .. " is an unauthored TODO")
    end
  end
end

--- SPEC §2.4: relative, forward-slash, no "..", not vac.json, no control
--  characters, nothing Windows would read as a drive or a root.
function M.safe_relpath(p)
  if not nonblank(p) or p == "vac.json" or p:find("\\", 1, true) then return false end
  if not p:find "^[^\0-\31\127]*$" then return false end -- a control character (anchored: one pass; %c by range)
  -- a second character ':' is a drive to Windows ("C:x", "1:x")
  local second = utf8.offset(p, 2)
  if second and p:sub(second, second) == ":" then return false end
  if p:sub(1, 1) == "/" then return false end
  -- without "..", no component is ".." and some component is not "." exactly
  -- when some character is neither "/" nor "."
  if not p:find("..", 1, true) then return p:find "[^/.]" ~= nil end
  local parts = 0
  for part in p:gmatch "[^/]+" do
    if part == ".." then return false end
    if part ~= "." then parts = parts + 1 end
  end
  return parts > 0
end

local is_hex64 = hash.is_digest -- a string of 64 lowercase hex digits
M.is_hex64 = is_hex64

local function nonempty_object(v)
  return kind(v) == "object" and next(v) ~= nil
end

local function nonempty_array(v)
  return kind(v) == "array" and #v > 0
end

-- A non-empty array of strings that each carry a non-space character.
local function nonblank_list(v)
  if not nonempty_array(v) then return false end
  for _, x in ipairs(v) do
    if not nonblank(x) then return false end
  end
  return true
end

--- The schema rules of SPEC §2 (and §2.5.1 for 0.2); appends failures.
function M.validate(m, failures)
  local version = m.vac_version
  if not (type(version) == "string" and M.VERSIONS[version]) then
    failures:addf("schema-violation", "vac_version: must be one of ['0.1', '0.2'], got %s", value.show(version))
  end
  if version == "0.2" then
    local checks = get(get(m, "results"), "checks")
    if kind(checks) == "array" then
      for i, c in ipairs(checks) do
        if kind(c) == "object" and c.scope ~= nil then
          failures:addf("schema-violation", "results.checks[%d].scope: scope is derived from the check's "
            .. "primary evidence reference, never declared", i - 1)
        end
      end
    end
  end

  local function need_object(parent, key, path)
    local v = get(parent, key)
    if kind(v) ~= "object" then
      failures:add("schema-violation", path .. ": object required")
      return {}
    end
    return v
  end
  local function need_text(parent, key, path)
    if not nonblank(get(parent, key)) then failures:add("schema-violation", path .. ": non-empty string required") end
  end

  local claim = need_object(m, "claim", "claim")
  need_text(claim, "capability", "claim.capability")
  need_text(claim, "scope", "claim.scope")
  if not nonblank_list(claim.limitations) then failures:add("empty-limitations") end

  local subject = need_object(m, "subject", "subject")
  if subject.kind ~= "agent" and subject.kind ~= "suite-archetype" then
    failures:add("schema-violation", "subject.kind: must be 'agent' or 'suite-archetype'")
  end
  need_text(subject, "id", "subject.id")
  if not nonempty_object(subject.version) then
    failures:add("schema-violation", "subject.version: at least one pinned identifier required"
      .. " (an unpinned subject is unverifiable)")
  end

  local protocol = need_object(m, "protocol", "protocol")
  for _, k in ipairs { "issuer", "issuer_commit", "task", "grading", "control_policy" } do
    need_text(protocol, k, "protocol." .. k)
  end
  local hashes = protocol.hashes
  local hashes_ok = nonempty_object(hashes)
  if hashes_ok then
    for _, h in pairs(hashes) do
      if not nonblank(h) then hashes_ok = false end
    end
  end
  if not hashes_ok then failures:add("schema-violation", "protocol.hashes: at least one named content hash required") end

  local evidence = m.evidence
  if not nonempty_array(evidence) then
    failures:add("schema-violation", "evidence: non-empty array required")
  else
    local seen = {}
    for i, e in ipairs(evidence) do
      if kind(e) ~= "object" or not M.safe_relpath(e.path) then
        failures:addf("schema-violation", "evidence[%d].path: safe relative path required", i - 1)
      else
        if not is_hex64(e.sha256) then
          failures:addf("schema-violation", "evidence[%d].sha256: 64 lowercase hex chars required", i - 1)
        end
        if seen[e.path] then failures:add("duplicate-artifact", e.path) end
        seen[e.path] = true
      end
    end
  end

  local results = need_object(m, "results", "results")
  if kind(results.summary) ~= "object" then failures:add("schema-violation", "results.summary: object required") end
  local checks = results.checks
  if not nonempty_array(checks) then
    failures:add("schema-violation", "results.checks: at least one profile check required")
  else
    for i, c in ipairs(checks) do
      if kind(c) ~= "object" then
        failures:addf("schema-violation", "results.checks[%d]: object required", i - 1)
      elseif not profiles.known(c.profile) then
        failures:addf("unknown-profile", "results.checks[%d]: %s", i - 1, value.show(c.profile))
      end
    end
  end

  local replay = need_object(m, "replay", "replay")
  local rc = replay.issuer_commit
  if not nonblank(rc) then
    failures:add("missing-issuer-commit")
  elseif nonblank(protocol.issuer_commit) and rc ~= protocol.issuer_commit then
    failures:addf("issuer-commit-mismatch", "replay %s != protocol %s", rc, protocol.issuer_commit)
  end
  if not nonblank_list(replay.commands) then failures:add("schema-violation", "replay.commands: non-empty list of commands required") end
  if not nonblank(replay.expected) then failures:add("schema-violation", "replay.expected: expected outcome required") end
end

--- The evidence entries whose path is safe, in manifest order, and the set
--  of their paths.
function M.listed(m)
  local entries, set = {}, {}
  if kind(m.evidence) == "array" then
    for _, e in ipairs(m.evidence) do
      if kind(e) == "object" and M.safe_relpath(e.path) then
        entries[#entries + 1] = e
        set[e.path] = true
      end
    end
  end
  return entries, set
end

M.null = null
return M
