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

--- Verifies a bundle directory or a .tar/.tar.gz/.tgz archive of one:
--  {name, failures, manifest, verdict = "pass"|"fail"} or nil, message
--  when path is neither.
function M.verify(path)
  local archive = require "vkit.vac.archive"
  local verify = require "vkit.vac.verify"
  local name = path:gsub("/+$", ""):match "([^/]*)$"
  if name == "" then name = path end
  local st = fs.lstat(path)
  if st and st.kind == "link" then
    local real = fs.realpath(path)
    st = real and fs.lstat(real)
    path = real or path
  end
  local result
  if st and st.kind == "dir" then
    local root = fs.realpath(path) or path
    local failures, m = verify.directory(root)
    result = { name = name, failures = failures, manifest = m }
  elseif st and st.kind == "file" and archive.is_archive_name(path) then
    result = archive.verify(path, name)
  else
    return nil, ("not a bundle directory or tar archive: %s"):format(path)
  end
  result.verdict = #result.failures == 0 and "pass" or "fail"
  return result
end

return M
