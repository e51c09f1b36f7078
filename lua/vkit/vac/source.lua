--- The artifacts of one bundle directory as the profiles read them: every
--  read hashes the very bytes it parses and checks them against the
--  manifest's pin (SPEC §2.4), so a file that changes between two reads (a
--  concurrent writer, a filesystem that serves other bytes on a second
--  open) can never be judged as the pinned bytes.  A read whose bytes do
--  not hash to the pin yields nothing; the artifact is then `mismatched`
--  and the verifier names `sha256-mismatch` and drops what any check
--  derived while reading it.
--
-- An artifact no check reads is hashed by settle(), once, at the end: its
-- bytes are judged by nothing else.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"
local jsonload = require "vkit.vac.jsonload"
local value = require "vkit.vac.value"
local policy = require("vkit.policy").vac

local kind = json.kind
local Source = {}
Source.__index = Source

--- A source over root: pins maps a listed path to the sha256 its bytes
--  must have; failures is the bundle's failure list.
function Source.new(root, pins, failures)
  return setmetatable({ root = root, pins = pins, failures = failures, state = {}, actual = {} }, Source)
end

function Source:path(rel) return self.root .. "/" .. rel end

--- Has some read of rel produced bytes other than its pin?  Then the
--  digest those bytes had.
function Source:mismatched(rel)
  if self.state[rel] == "mismatch" then return self.actual[rel] end
  return nil
end

--- Was every read of rel so far of its pinned bytes (and was there one)?
function Source:verified(rel) return self.state[rel] == "ok" end

-- Records the outcome of one read of rel whose bytes hashed to actual (a
-- mismatch is sticky: later good reads do not undo it).
function Source:record(rel, actual)
  local pin = self.pins[rel]
  if not pin then return true end
  if actual == pin then
    if self.state[rel] == nil then self.state[rel] = "ok" end
    return true
  end
  self.state[rel], self.actual[rel] = "mismatch", actual
  return false
end

--- Hashes every listed path in rels that no read has settled yet (its bytes
--  are judged by nothing else); true when all of them hold their pins.
function Source:settle(rels)
  local all = true
  for _, rel in ipairs(rels) do
    if self.pins[rel] and self.state[rel] == nil then
      local actual, err = hash.file(self:path(rel), { nofollow = true })
      if not actual then
        self.state[rel], self.actual[rel] = "mismatch", false
        self.unreadable = self.unreadable or {}
        self.unreadable[rel] = err
      else
        self:record(rel, actual)
      end
    end
    if self.state[rel] == "mismatch" then all = false end
  end
  return all
end

local WANT = {
  object = { object = true, message = "an object" },
  array = { array = true, message = "an array" },
  ["object or array"] = { object = true, array = true, message = "an object or an array" },
}

local function name_load_failure(failures, rel, class, detail)
  if class == "too-deep" or class == "strict" then
    failures:addf("invalid-json", "%s: %s", rel, detail)
  else
    failures:addf("artifact-unparsable", "%s: %s", rel, detail)
  end
end

-- The outcome of one jsonload read of rel: true when it may be used,
-- false when it failed (a mismatch is recorded, any other failure named).
local function loaded(self, rel, ok, class, detail)
  if ok then return self:record(rel, self.pins[rel]) end
  if class == "mismatch" then
    self:record(rel, detail)
  else
    if self.pins[rel] and class ~= "io" then self:record(rel, self.pins[rel]) end
    name_load_failure(self.failures, rel, class, detail)
  end
  return false
end

-- v when it has the shape want; else nil, the failure named.
local function shaped(self, rel, want, v)
  local w = WANT[want]
  if not w[kind(v)] then
    self.failures:addf("artifact-unparsable", "%s: top level must be %s", rel, w.message)
    return nil
  end
  return v
end

function Source:json(rel, want)
  local v, class, detail = jsonload.file(self:path(rel), self.pins[rel])
  if not loaded(self, rel, v ~= nil, class, detail) then return nil end
  return shaped(self, rel, want, v)
end

--- The preamble of a profile that counts rows: the artifact rel, a JSON
--  object, and its member key, an array of objects (non-empty when
--  opts.nonempty): data, rows; or nil, the failure named (an unreadable
--  artifact as Source:json names it; otherwise artifact-unparsable,
--  "<rel>: no <key>[] array", then opts.hint when given).
function Source:object_rows(rel, key, opts)
  local data = self:json(rel, "object")
  if not data then return nil end
  local rows = data[key]
  if not (value.is_array(rows) and (not (opts and opts.nonempty) or #rows > 0) and value.all_objects(rows)) then
    self.failures:addf("artifact-unparsable", "%s: no %s[] array%s", rel, key, opts and opts.hint or "")
    return nil
  end
  return data, rows
end

--- Source:json, and the keys of its top-level object member in document
--  order (see jsonload.file_ordered): value, keys.
function Source:json_ordered(rel, want, member)
  local v, keys, detail = jsonload.file_ordered(self:path(rel), member, self.pins[rel])
  if not loaded(self, rel, v ~= nil, keys, detail) then return nil end -- keys is the failure class
  return shaped(self, rel, want, v), keys
end

--- Source:json for a large artifact: the elements of its top-level array
--  member go to consumer (see jsonload.file_streaming); value, count.
function Source:json_stream(rel, want, member, consumer)
  local v, count, detail = jsonload.file_streaming(self:path(rel), member, consumer, self.pins[rel])
  if not loaded(self, rel, v ~= nil, count, detail) then return nil end -- count is the failure class
  return shaped(self, rel, want, v), count
end

function Source:lines(rel, consumer)
  local ok, class, detail = jsonload.lines(self:path(rel), consumer, self.pins[rel])
  return loaded(self, rel, ok, class, detail)
end

-- ---------------------------------------------------------------------
-- Tallies (vkit.json.tally_lines, json.read's tally): the rows of an
-- artifact counted in C by the values of a few fields, one entry per
-- distinct combination ({row, n, first}), without a Lua value per row.
-- The scanner decides only what it can vouch for: nil here means "read it
-- the ordinary way" (Source:lines, Source:json_stream), which then names
-- whatever is wrong exactly as before; a read whose bytes do not hold the
-- pin is recorded as a mismatch like any other.

-- The outcome of a tally of rel: result, or nil.
local function tallied(self, rel, result, code, detail)
  if result then
    self:record(rel, self.pins[rel])
    return result
  end
  if code == "sha256-mismatch" then self:record(rel, detail) end
  return nil
end

--- The non-blank lines of the JSON Lines artifact rel tallied by fields:
--  {rows, combos} or nil (also at a line break the reference cuts at
--  besides LF, jsonload.LINE_BREAKS: Source:lines then reads the rows).
function Source:tally_lines(rel, fields)
  local result, _, code, detail = json.tally_lines(self:path(rel), { fields = fields, sha256 = self.pins[rel],
    nofollow = true, max_line = policy.max_line_bytes, line_breaks = jsonload.LINE_BREAKS })
  return tallied(self, rel, result, code, detail)
end

--- The JSON document rel with the elements of its top-level array member
--  tallied by fields: value (without the member), {rows, combos}; or nil
--  (also when the document has no such member).
function Source:tally_stream(rel, member, fields)
  local value, result, code, detail = json.read(self:path(rel), policy.max_artifact_bytes, {
    max_depth = jsonload.MAX_DEPTH, nofollow = true, sha256 = self.pins[rel], stream = member, tally = fields })
  if value == nil then return tallied(self, rel, nil, code, detail) end
  if type(result) ~= "table" then return nil end
  return value, tallied(self, rel, result)
end

function Source:bytes(rel)
  local bytes, err = fs.read(self:path(rel), policy.max_artifact_bytes, { nofollow = true })
  if not bytes then
    self.failures:addf("artifact-unparsable", "%s: %s", rel, err)
    return nil
  end
  if self.pins[rel] and not self:record(rel, hash.sha256(bytes)) then return nil end
  return bytes
end

function Source:text(rel)
  local bytes = self:bytes(rel)
  if bytes and not utf8.len(bytes) then
    self.failures:addf("artifact-unparsable", "%s: not valid UTF-8", rel)
    return nil
  end
  return bytes
end

--- The sha256 of rel's bytes as judged: a listed path that some read has
--  already found holding its pin is those bytes, its pin (it is not read
--  again); otherwise the digest of its bytes as read now, checked against
--  its pin like any read (nil on a mismatch).
function Source:sha256(rel)
  if self.state[rel] == "ok" then return self.pins[rel] end
  local actual = hash.file(self:path(rel), { nofollow = true })
  if actual and self.pins[rel] and not self:record(rel, actual) then return nil end
  return actual
end

return Source
