--- VAC, Verifiable Agent Claims (seed 003): the structural verifier of
-- capability evidence bundles, the drafter and the registry.
--
-- Structural verification is not semantic replay: a clean verdict says the
-- bundle is internally honest (schema, hashes, closure, stamps, every
-- declared number recomputed from the pinned artifacts), not that the
-- issuer's grader agrees; the bundle's replay block says how to re-earn it.
-- @module vkit.vac
local vac = require "vkit.vac"

local M = {}

--- Every reason name `verify` can give a failure.
-- @table REASONS
M.REASONS = {}
for i, r in ipairs(vac.REASONS) do M.REASONS[i] = r end

--- Verifies one bundle: a directory, or a `.tar`, `.tar.gz` or `.tgz` archive of one.
-- @string path
-- @treturn table `{name, verdict = "pass"|"fail", failures = {{reason, detail},...}, manifest}`
-- @return nil, message, code: `no-such-path`, `unsupported-compression`, `not-a-bundle`
function M.verify(path)
  return vac.verify(path)
end

--- Drafts `dir/vac.json` over a directory of evidence artifacts: the mechanical
-- fields derived (every file's SHA-256, the issuer and pinned commit of the
-- enclosing Git repository), every judgment field a `TODO(...)` marker that
-- `verify` refuses.  Never overwrites a manifest.
-- @string dir
-- @treturn boolean true
-- @treturn {string,...} warnings (a dirty working tree, ...)
-- @treturn table the manifest written
-- @return nil, message
function M.draft(dir)
  return require("vkit.vac.draft").run(dir)
end

--- Builds the registry document from configured issuer checkouts, hashing
-- committed blobs at each checkout's `HEAD` (never the working tree) and
-- verifying every configured bundle; a bundle that is not admissible is
-- recorded pending with its reason.
-- @string config_path the issuer configuration (`{"issuers": [{repo, checkout, bundles, raw_url?}]}`)
-- @treturn table the registry (`registry_version`, `protocol`, `entries`, `pending`)
-- @return nil, message
function M.registry(config_path)
  local registry = require "vkit.vac.registry"
  local issuers, message = registry.load_config(config_path)
  if not issuers then return nil, message end
  return registry.build(issuers, require "vkit.git")
end

--- The registry document's bytes, as `vkit vac registry` writes them.
-- @tparam table doc
-- @treturn string
function M.encode_registry(doc)
  return require("vkit.vac.registry").encode(doc)
end

--- Checks a registry against artifacts fetched into dir (`dir/<entry name>/<path>`):
-- every byte must hash to its pin, nothing unpinned may be there, every
-- pinned URL must address a full commit, and every entry must rebuild exactly.
-- @tparam table doc a registry document
-- @string dir
-- @treturn {string,...} the problems, one sentence each (empty: every entry holds)
function M.check_fetched(doc, dir)
  return require("vkit.vac.registry").check_fetched(doc, dir)
end

return M
