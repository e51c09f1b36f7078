--- Reading JSON evidence so that a refusal gets the reason the VAC rules
--  give it.
--
-- SPEC §4 decides nesting depth on the text, before parsing: a document
-- nested deeper than 256 levels is `invalid-json` even when it is also
-- malformed earlier on.  Any other parse failure of an evidence artifact is
-- `artifact-unparsable`.  vkit's decoder is stricter than the reference's
-- (duplicate keys, NaN/Infinity, numbers beyond a double, lone surrogate
-- escapes): those refusals are `invalid-json` too, and documented.
--
-- The fast path decodes once with vkit.json (C); the exact text rules run
-- only when that fails, to name the failure the way the spec does.
--
-- Every reader takes an optional pin, the sha256 the file's bytes must
-- have: each read (the fast one and any second read that names a failure)
-- hashes exactly the bytes it parses, and bytes that do not hash to the pin
-- are never parsed or never count: the reader fails with class "mismatch"
-- and the digest read as its detail.
local json = require "vkit.json"
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local text = require "vkit.vac.text"
local policy = require("vkit.policy").vac

local M = {}

M.MAX_DEPTH = policy.max_json_depth

--- The line breaks, besides LF, at which the reference verifier cuts a
--  JSON Lines artifact into rows: Python's str.splitlines() (CR, and so
--  CRLF; VT, FF, FS, GS, RS; U+0085, U+2028, U+2029).  vkit's C readers
--  know none of them: M.lines and Source:tally_lines hand this list to
--  json.lines and json.tally_lines, which then leave a row holding one to
--  the exact rules here (slow_rows), and slow_rows cuts at each of them.
M.LINE_BREAKS = { "\r", "\v", "\f", "\28", "\29", "\30", "\194\133", "\226\128\168", "\226\128\169" }

-- M.LINE_BREAKS as gsub patterns: the one-byte breaks in one class, each
-- longer one on its own.
local BREAK_PATTERNS = (function()
  local class, patterns = {}, {}
  for _, b in ipairs(M.LINE_BREAKS) do
    local escaped = b:gsub("%W", "%%%0")
    if #b == 1 then class[#class + 1] = escaped else patterns[#patterns + 1] = escaped end
  end
  table.insert(patterns, 1, "[" .. table.concat(class) .. "]")
  return patterns
end)()

local BOM = "\239\187\191"

--- Do arrays and objects in s nest deeper than limit (counted on the text,
--  brackets inside strings not counted, a stray closer ignored)?
function M.too_deep(s, limit)
  local depth, i = 0, 1
  while true do
    local p, _, c = s:find('(["%[%]{}])', i)
    if not p then return false end
    i = p + 1
    if c == '"' then
      while true do
        local q, _, d = s:find('(["\\])', i)
        if not q then return false end
        i = q + 1
        if d == '"' then break end
        i = i + 1
      end
    elseif c == "[" or c == "{" then
      depth = depth + 1
      if depth > limit then return true end
    elseif depth > 0 then
      depth = depth - 1
    end
  end
end

-- Why vkit's decoder refused bytes the reference's parser would accept.
local function stricter(bytes, message, code, offset)
  if code == "duplicate-key" or code == "number-out-of-range" then return true end
  if code == "invalid-json" then
    if message and message:find("surrogate", 1, true) then return true end
    local at = bytes:sub((offset or 0) + 1, (offset or 0) + 9)
    if at:find "^NaN" or at:find "^Infinity" or at:find "^%-Infinity" then return true end
  end
  return false
end

--- Classifies a failed decode of bytes: "too-deep", "strict" or
--  "unparsable", with a detail.
local function classify(bytes, message, code, offset)
  if not utf8.len(bytes) then return "unparsable", "not valid UTF-8" end
  if bytes:sub(1, 3) ~= BOM and M.too_deep(bytes, M.MAX_DEPTH) then
    return "too-deep", ("nested deeper than %d levels"):format(M.MAX_DEPTH)
  end
  if stricter(bytes, message, code, offset) then return "strict", message end
  return "unparsable", message
end

--- Decodes one JSON document held in bytes: value, or nil, class, detail
--  where class is "too-deep", "strict" or "unparsable".
function M.decode(bytes)
  local value, message, code, offset = json.decode(bytes, { max_depth = M.MAX_DEPTH })
  if value ~= nil then return value end
  return nil, classify(bytes, message, code, offset)
end

-- The bytes of path, read whole and checked against pin: bytes | nil,
-- class, detail.
local function read_pinned(path, pin)
  local bytes, err = fs.read(path, policy.max_artifact_bytes, { nofollow = true })
  if not bytes then return nil, "io", err end
  if pin then
    local actual = hash.sha256(bytes)
    if actual ~= pin then return nil, "mismatch", actual end
  end
  return bytes
end

-- Options of a fast read of the file at path.
local function read_opts(pin, extra)
  extra = extra or {}
  extra.max_depth, extra.nofollow, extra.sha256 = M.MAX_DEPTH, true, pin
  return extra
end

-- What json.read's refusal (message, code, digest) means to the caller:
-- nil, "mismatch", digest for bytes that do not hold their pin, nil, "io",
-- message for a file that could not be read, or nothing for bytes that do
-- not decode (named from the bytes by a second read).
local function refusal(message, code, detail)
  if code == "sha256-mismatch" then return "mismatch", detail end
  if detail == nil then return "io", message end -- no offset: the file was refused
  return nil
end

--- Reads and decodes the JSON document at path: value | nil, class, detail
--  (class "io" for a file that cannot be read, "mismatch" for bytes that do
--  not hash to pin).  json.read decodes without holding the bytes as a Lua
--  string; a refusal is named from the bytes.
-- After json.read refused path: the refusal named from the bytes (value,
-- bytes if the file decodes now, having changed in between but still
-- holding its pin, which only an unpinned file can do).
local function refuse_or_decode(path, pin)
  local bytes, rclass, rdetail = read_pinned(path, pin)
  if not bytes then return nil, rclass, rdetail end
  local v, class, detail = M.decode(bytes)
  if v == nil then return nil, class, detail end
  return v, bytes
end

function M.file(path, pin)
  local value, message, code, detail = json.read(path, policy.max_artifact_bytes, read_opts(pin))
  if value ~= nil then return value end
  local class, why = refusal(message, code, detail)
  if class then return nil, class, why end
  local v, dclass, ddetail = refuse_or_decode(path, pin)
  if v ~= nil then return v end
  return nil, dclass, ddetail
end

--- M.file, and the keys of the document's top-level object member `member`
--  in document order (none when it is not an object): value, keys.
function M.file_ordered(path, member, pin)
  local keys = {}
  local value, message, code, offset = json.read(path, policy.max_artifact_bytes,
    read_opts(pin, { order_of = member, each_key = function(k) keys[#keys + 1] = k end }))
  if value ~= nil then return value, keys end
  local class, why = refusal(message, code, offset)
  if class then return nil, class, why end
  local v, bytes, detail = refuse_or_decode(path, pin)
  if v == nil then return nil, bytes, detail end -- bytes is the failure class here
  return v, M.member_key_order(bytes, member)
end

--- M.file for a document too large to hold whole: the elements of its
--  top-level array member `member` go to consumer.element(i, value) as they
--  are decoded, and the value returned lacks that member: value, count, or
--  value, nil when there is no such array member.  consumer.begin() is
--  called before the first element and again if decoding has to restart; a
--  consumer keeps nothing it saw before the last begin().  Returns nil,
--  class, detail as M.file does, and the elements seen must then be dropped.
--  consumer.fields, when given, names the only members an element that is
--  an object needs: the others may be left out of it (they are still read
--  and checked).
function M.file_streaming(path, member, consumer, pin)
  consumer.begin()
  local value, count, code, offset = json.read(path, policy.max_artifact_bytes,
    read_opts(pin, { stream = member, each = consumer.element, fields = consumer.fields }))
  if value ~= nil then return value, count end
  local rclass, why = refusal(count, code, offset) -- count is the message here
  if rclass then return nil, rclass, why end
  local v, class, detail = refuse_or_decode(path, pin)
  if v == nil then return nil, class, detail end
  -- the file changed between the two reads: stream the value read last
  consumer.begin()
  local rows = json.kind(v) == "object" and v[member] or nil
  if json.kind(rows) ~= "array" then return v, nil end
  v[member] = nil
  for i, e in ipairs(rows) do consumer.element(i, e) end
  return v, #rows
end

-- The exact rules: the whole text decoded as UTF-8, newlines translated,
-- every line measured before any row is parsed, rows cut as splitlines()
-- cuts them, blank rows skipped.
local function slow_rows(path, row, pin)
  local bytes, class, detail = read_pinned(path, pin)
  if not bytes then return nil, class, detail end
  if not utf8.len(bytes) then return nil, "unparsable", "not valid UTF-8" end
  local s = bytes:gsub("\r\n?", "\n")
  if s:sub(1, 3) ~= BOM then
    local n = 0
    for line in (s .. "\n"):gmatch "(.-)\n" do
      n = n + 1
      if line:sub(1, 3) ~= BOM and M.too_deep(line, M.MAX_DEPTH) then
        return nil, "too-deep", ("line %d nested deeper than %d levels"):format(n, M.MAX_DEPTH)
      end
    end
  end
  for _, pattern in ipairs(BREAK_PATTERNS) do s = s:gsub(pattern, "\n") end
  local rows = {}
  for line in (s .. "\n"):gmatch "(.-)\n" do
    if text.strip(line) ~= "" then
      local value, message, code, offset = json.decode(line, { max_depth = M.MAX_DEPTH })
      if value == nil then
        local class = stricter(line, message, code, offset) and "strict" or "unparsable"
        return nil, class, ("row %d: %s"):format(#rows + 1, message)
      end
      rows[#rows + 1] = value
    end
  end
  for i, v in ipairs(rows) do row(i, v) end
  return true
end

--- Streams the rows of the JSON Lines file at path to consumer.row(n, value)
--  (n counts non-blank rows).  consumer.begin() is called before the first
--  row and again if streaming has to restart; a consumer keeps nothing it
--  saw before the last begin().  Returns true, or nil, class, detail, and
--  in that case the rows seen must be discarded.  The fast path is exact
--  for a file whose only line break is LF; at any other of M.LINE_BREAKS it
--  stops and the exact rules run.
function M.lines(path, consumer, pin)
  consumer.begin()
  local n, fast = 0, true
  local it, err, _, handle = json.lines(path, { max_depth = M.MAX_DEPTH, max_line = policy.max_line_bytes,
    nofollow = true, sha256 = pin, line_breaks = M.LINE_BREAKS })
  if not it then return nil, "io", err end
  do
    local _ <close> = handle
    for _, value, _, code, actual in it do
      if value ~= nil then
        n = n + 1
        consumer.row(n, value)
      elseif code == "sha256-mismatch" then
        return nil, "mismatch", actual
      elseif code ~= "blank-line" then
        fast = false
        break
      end
    end
  end
  if fast then return true end
  consumer.begin()
  return slow_rows(path, consumer.row, pin)
end

--- Keys of the object held under top-level member `member` of the JSON
--  object text s, in document order (vkit.json tables forget order, and a
--  few VAC derivations follow it).  s must already have decoded cleanly.
function M.member_key_order(s, member)
  local depth, i = 0, 1
  local keys, target, expect_key = nil, false, false
  local n = 0
  while true do
    local p, _, c = s:find('(["%[%]{}:,])', i)
    if not p then break end
    i = p + 1
    if c == '"' then
      local q = p
      while true do
        local r, _, d = s:find('(["\\])', q + 1)
        if d == '"' then q = r break end
        q = r + 1
      end
      i = q + 1
      local after = s:match("^%s*:", i)
      if after then
        local key = json.decode(s:sub(p, q))
        if depth == 1 and key == member then
          target = true
        elseif depth == 2 and keys then
          n = n + 1
          keys[n] = key
        end
      end
    elseif c == "{" or c == "[" then
      depth = depth + 1
      if depth == 2 and target and c == "{" then keys = {} end
    elseif c == "}" or c == "]" then
      if depth == 2 and keys then return keys end
      depth = depth - 1
      if depth == 1 then target = false end
    elseif c == "," and depth == 1 then
      target = false
    end
  end
  return keys or {}
end

return M
