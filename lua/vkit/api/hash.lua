--- SHA-256 of bytes and files, incremental hashing, and the evidence digest.
--
-- Every digest is lowercase hexadecimal SHA-256 (FIPS 180-4), computed by
-- OpenSSL's libcrypto (EVP), linked into the executable.  A failure inside
-- OpenSSL itself raises ("SHA-256 failed"): a digest is never made up.  A failure of
-- the environment or the data returns `nil, message, code`; misuse (a wrong
-- argument type) raises.
-- @module vkit.hash
local hash = require "vkit.hash"

local M = {}

--- SHA-256 of a string.
-- @function sha256
-- @string bytes any bytes
-- @treturn string 64 lowercase hex digits
M.sha256 = hash.sha256

--- SHA-256 of a regular file, streamed in 1 MiB reads (never read whole).
-- A FIFO or device is refused without blocking on it.
-- @function file
-- @string path the file
-- @tparam[opt] table opts `{nofollow = true}`: refuse a symbolic link (`not-a-regular-file`)
-- @treturn string 64 lowercase hex digits
-- @treturn integer the size in bytes
-- @return nil, message, code: `not-a-regular-file`, `ENOENT`, `EACCES`, ...
M.file = hash.file

--- A new incremental hasher.
-- @function new
-- @treturn Hasher
M.new = hash.new

--- The evidence digest of seed 000 ("digest of sorted evidence path/hash pairs"):
-- SHA-256 over one record `path NUL sha256-hex LF` per pair, sorted by the
-- bytes of `path`.  The empty set's digest is SHA-256 of the empty string.
-- @function evidence_digest
-- @tparam {{path=string,sha256=string},...} pairs paths non-empty without NUL or
-- newline, hashes 64 lowercase hex digits
-- @treturn string 64 lowercase hex digits
-- @return nil, message, code: `duplicate-evidence-path`, `invalid-evidence-path`, `invalid-sha256`
M.evidence_digest = hash.evidence_digest

--- Is v a digest as this module writes one: a string of exactly 64
-- lowercase hex digits?  Any other value, a string of another length, or
-- one with an upper-case or non-hex character is not.
-- @function is_digest
-- @param v any value
-- @treturn boolean
M.is_digest = hash.is_digest

--- An incremental SHA-256 hasher (`vkit.hash.new()`); closed by `__gc` and `__close`.
-- @type Hasher

--- Adds bytes.
-- @function Hasher:update
-- @string bytes more input
-- @treturn Hasher the same hasher, for chaining

--- The digest of everything added so far; the hasher stays usable.
-- @function Hasher:hexdigest
-- @treturn string 64 lowercase hex digits

return M
