--- The stdout of the multi-parameter profile's batch drivers (issue 34),
-- read in Lua.  Pure.
--
-- Binary and fixed-width, because at 2^20 inputs parsing a text line per
-- input cost more than running the candidate (measured: 38 s of 69 s for
-- a Python certification); records are read with string.unpack, and each
-- DISTINCT record is decoded once.
--
--   body     one record per input, in the order given: a status byte
--            (0 a value, 1 `raise`, 2 `range`, 3 `crash`: in a fresh
--            driver's fork-per-input mode, the input's own process ended
--            without an answer), then each result component
--            little-endian in its type's width (policies/signatures.lua
--            types[T].bytes; a bool one byte 0 or 1); a marker's
--            components are zero bytes.
--   trailer  the record count (u32 LE), then the first and the last input
--            re-encoded by the driver from the values it DECODED: records
--            are positional, so this is what shows the driver read the
--            inputs it was given (a text line used to echo each input).
--
-- Anything else is a named protocol failure, never an observation:
-- `truncated` / `extra-bytes` (fewer / more bytes than one record per
-- input given and the trailer), `wrong-count` (the trailer counts another
-- number of records), `wrong-input` (the echoed inputs are not the first
-- and last given), `malformed` (a status byte, a bool, or a marker's
-- bytes outside the format).
local signature = require "vkit.change.signature"

local M = {}

M.STATUS = { [0] = "value", [1] = "raise", [2] = "range", [3] = "crash" }

local PACK = { bool = "B", u8 = "B", i8 = "b", u16 = "I2", i16 = "i2", u32 = "I4", i32 = "i4", u64 = "i8", i64 = "i8" }
M.PACK = PACK

local function width(types)
  local n = 0
  for _, t in ipairs(types) do n = n + signature.type(t).bytes end
  return n
end

--- Bytes of one input record (stdin) and one result record (stdout) of `sig`.
function M.input_bytes(sig) return width(signature.param_types(sig)) end
function M.result_bytes(sig) return 1 + width(sig.returns) end

--- Bytes of a whole stdout for `n` inputs.
function M.output_bytes(sig, n)
  return n * M.result_bytes(sig) + 4 + 2 * M.input_bytes(sig)
end

local function fail(code, fmt, ...) return nil, fmt:format(...), code end

--- Checks a stdout's frame against the stdin `input` (n records, in
--  order): true, or nil, message, code (see above).  The length is checked
--  first, against the n inputs given, never against what the stdout says.
function M.check_frame(sig, stdout, input)
  local r, w = M.input_bytes(sig), M.result_bytes(sig)
  local n = #input // r
  local want = M.output_bytes(sig, n)
  if #stdout < want then return fail("truncated", "%d bytes where %d inputs need %d", #stdout, n, want) end
  if #stdout > want then return fail("extra-bytes", "%d bytes where %d inputs need %d", #stdout, n, want) end
  local body = n * w
  local count = string.unpack("<I4", stdout, body + 1)
  if count ~= n then return fail("wrong-count", "the trailer counts %d records for %d inputs", count, n) end
  if stdout:sub(body + 5, body + 4 + r) ~= input:sub(1, r) or stdout:sub(body + 5 + r) ~= input:sub(-r) then
    return fail("wrong-input", "the driver echoed inputs other than the first and last given")
  end
  return true
end

--- A decoder of `sig`'s result records: decode(record) -> {value = a
--  value or list} | {marker = "raise" | "range"}, or nil, message.  Each
--  distinct record is decoded once (most inputs share a few results).
function M.decoder(sig)
  local fmt = "<B"
  for _, t in ipairs(sig.returns) do fmt = fmt .. PACK[t] end
  local zero = ("\0"):rep(M.result_bytes(sig) - 1)
  local cache = {}
  local function decode(rec)
    local values = table.pack(string.unpack(fmt, rec))
    local status = M.STATUS[values[1]]
    if not status then return nil, ("status byte %d"):format(values[1]) end
    if status ~= "value" then
      if rec:sub(2) ~= zero then return nil, "a marker record with result bytes" end
      return { marker = status }
    end
    local out = {}
    for i, t in ipairs(sig.returns) do
      local v = values[i + 1]
      if t == "bool" then
        if v > 1 then return nil, ("component %d: bool byte %d"):format(i, v) end
        v = v == 1
      end
      out[i] = v
    end
    return { value = sig.tuple and out or out[1] }
  end
  return function(rec)
    local hit = cache[rec]
    if hit == nil then
      local o, msg = decode(rec)
      hit = o or msg
      cache[rec] = hit
    end
    if type(hit) == "string" then return nil, hit end
    return hit
  end
end

--- The records of a checked stdout as strings, in order (equal results are
--  equal strings: compared and used as table keys without decoding), or
--  nil, message, code.  Every record is validated by `decode`.
function M.records(sig, stdout, input, decode)
  local ok, msg, code = M.check_frame(sig, stdout, input)
  if not ok then return nil, msg, code end
  local w, out, sub = M.result_bytes(sig), {}, string.sub
  for i = 1, #input // M.input_bytes(sig) do
    local rec = sub(stdout, (i - 1) * w + 1, i * w)
    if not decode(rec) then
      return nil, ("record %d: %s"):format(i, select(2, decode(rec))), "malformed"
    end
    out[i] = rec
  end
  return out
end

return M
