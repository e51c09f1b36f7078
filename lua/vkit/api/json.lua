--- One strict JSON reader and one canonical writer.
--
-- vkit decides and hashes with the same parser, so a document means one
-- thing to vkit.  Objects and arrays decode to tables carrying
-- `object_mt` / `array_mt`, so `{}` and `[]` survive a round trip; `null`
-- is the sentinel `vkit.json.null` (distinct from an absent key); an
-- integral number that fits 64 bits is a Lua integer, any other a float.
-- Encoding a value JSON cannot hold (a function, NaN, invalid UTF-8, an
-- unmarked empty table, mixed keys) raises: it is misuse.
-- @module vkit.json
local json = require "vkit.json"

local M = {}

--- The `null` sentinel (a light userdata), what `decode` gives for JSON `null`.
-- @field null
M.null = json.null

--- The metatable of decoded arrays (and of `array()`'s tables).
-- @field array_mt
M.array_mt = json.array_mt

--- The metatable of decoded objects (and of `object()`'s tables).
-- @field object_mt
M.object_mt = json.object_mt

--- Decodes RFC 8259 JSON strictly.
-- @function decode
-- @string text
-- @tparam[opt] table opts `{max_depth = 256}` (at most 4096)
-- @return the value
-- @return nil, message, code, byte_offset: `invalid-json` (comments, trailing
-- commas, NaN/Infinity, leading zeros, bad escapes, raw control characters,
-- lone surrogates, a BOM, trailing bytes), `invalid-utf8`, `duplicate-key`
-- (the message names the key), `too-deep`, `number-out-of-range`
M.decode = json.decode

--- Encodes with sorted keys; floats keep a visible fraction (`3.0`).
-- @function encode
-- @param value a JSON value (tables, strings, numbers, booleans, `null`)
-- @tparam[opt] table opts `{indent = n}`: pretty-printed with n spaces
-- @treturn string
M.encode = json.encode

--- RFC 8785 (JCS) canonical bytes: keys sorted by UTF-16 code units,
-- ECMAScript number formatting, minimal escapes.  Integers beyond 2^53 raise
-- (JCS numbers are IEEE doubles).
-- @function canonical
-- @param value a JSON value
-- @treturn string
M.canonical = json.canonical

--- SHA-256 (hex) of `canonical(value)`: the digest of a JSON value.
-- @function digest
-- @param value a JSON value
-- @treturn string 64 lowercase hex digits
M.digest = json.digest

--- A streaming JSON Lines reader: one value per line, a bad row never ends
-- the loop silently.  A line ends at LF (a CR before it is white space);
-- `line_breaks`, a list of byte sequences (each beginning with a control
-- character other than LF or a byte of 0x80 and up, at most 16 of up to 8
-- bytes), names what else the caller cuts rows at: a line holding one is
-- reported (`line-break`), not read, and the caller reads the file by its
-- own rules (the VAC profile passes Python's `str.splitlines()` breaks).
-- @function lines
-- @string path a regular file
-- @tparam[opt] table opts `{max_line = 64 MiB, max_depth = 256, nofollow = true, sha256 = hex, line_breaks = {...}}`
-- @return an iterator giving `lineno, value`, or `lineno, nil, message, code`
-- for a bad row (`blank-line`, `line-break`, a line over max_line, a decode failure)
-- @return nil, message, code when the file cannot be opened
M.lines = json.lines

--- The JSON kind of a Lua value.
-- @function kind
-- @param value
-- @treturn string|nil `"null"`, `"boolean"`, `"integer"`, `"number"`,
-- `"string"`, `"array"`, `"object"`, or nil for a value JSON cannot hold
-- (an unmarked empty table among them)
M.kind = json.kind

--- Marks a table (or a new one) as a JSON array.
-- @function array
-- @tparam[opt] table t
-- @treturn table t, with `array_mt`
M.array = json.array

--- Marks a table (or a new one) as a JSON object.
-- @function object
-- @tparam[opt] table t
-- @treturn table t, with `object_mt`
M.object = json.object

return M
