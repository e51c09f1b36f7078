--- VAC, Verifiable Agent Claims (seed 003; egnaro9/vac-protocol SPEC.md):
--  the structural verifier, its archive reader, the drafter and the
--  registry.  `vkit.vac.verify(path)` is the one call most scripts need.
local fs = require "vkit.fs"

local M = {}

--- Every reason name `verify` can emit (SPEC §4 and §2.5.1).
M.REASONS = {
  "missing-manifest", "invalid-json", "draft-incomplete", "schema-violation", "empty-limitations",
  "missing-artifact", "sha256-mismatch", "unlisted-file", "duplicate-artifact", "unknown-profile",
  "check-artifact-not-listed", "artifact-unparsable", "summary-mismatch", "summary-outruns-checks",
  "raw-aggregate-mismatch", "stamp-mismatch", "missing-issuer-commit", "issuer-commit-mismatch",
  "unsafe-archive", "unsafe-bundle", "evidence-unchecked", "unscopable-check",
}

-- Archive names vkit does not read: tar under another compression.
local FOREIGN = {
  { "%.tar%.bz2$", "bzip2" }, { "%.tbz2?$", "bzip2" }, { "%.tar%.xz$", "xz" }, { "%.txz$", "xz" },
  { "%.tar%.zst$", "zstd" }, { "%.tzst$", "zstd" }, { "%.tar%.lz$", "lzip" }, { "%.tar%.lzma$", "lzma" },
  { "%.tlz$", "lzma" }, { "%.tar%.Z$", "compress" }, { "%.taZ$", "compress" },
}

--- Verifies a bundle directory or a .tar/.tar.gz/.tgz archive of one:
--  {name, failures, manifest, verdict = "pass"|"fail"}, or nil, message,
--  code when path is no bundle to verify: code "no-such-path" (nothing
--  there), "unsupported-compression" (a tar compressed with bzip2, xz,
--  zstd, lzip, lzma or compress, by its name or its first bytes) or
--  "not-a-bundle" (anything else: a file that is not a .tar/.tar.gz/.tgz
--  archive, a special file).
-- The archive names verify reads: .tar, .tar.gz, .tgz (the archive reader
-- is loaded only for one of them).
local function archive_name(p) return p:find "%.tar%.gz$" ~= nil or p:find "%.tgz$" ~= nil or p:find "%.tar$" ~= nil end

function M.verify(path)
  local verify = require "vkit.vac.verify"
  local name = path:gsub("/+$", ""):match "([^/]*)$"
  if name == "" then name = path end
  local st = fs.lstat(path)
  if st and st.kind == "link" then
    local real = fs.realpath(path)
    st = real and fs.lstat(real)
    path = real or path
  end
  if not st then return nil, ("not a bundle: %s: no such file or directory"):format(path), "no-such-path" end
  local result
  if st.kind == "dir" then
    local root = fs.realpath(path) or path
    local failures, m = verify.directory(root)
    result = { name = name, failures = failures, manifest = m }
  elseif st.kind == "file" and archive_name(path) then
    local why, code
    result, why, code = require("vkit.vac.archive").verify(path, name)
    if not result then return nil, ("not a bundle: %s: %s"):format(path, why), code end
  else
    for _, f in ipairs(FOREIGN) do
      if st.kind == "file" and path:find(f[1]) then
        return nil, ("not a bundle: %s: a %s-compressed tar: unsupported compression (vkit reads .tar, .tar.gz and .tgz)"):format(
          path, f[2]), "unsupported-compression"
      end
    end
    local what = st.kind == "file" and "a file that is not a bundle archive" or ("a special file (" .. tostring(st.type or st.kind) .. ")")
    return nil, ("not a bundle: %s: %s (a bundle is a directory, or a .tar, .tar.gz or .tgz archive of one)"):format(
      path, what),
      "not-a-bundle"
  end
  result.verdict = #result.failures == 0 and "pass" or "fail"
  return result
end

return M
