--- `vkit vac registry` (SPEC §5): registry.json, regenerated mechanically
--  from configured local issuer checkouts.
--
-- Only committed bytes count: each checkout's HEAD tree is read through
-- vkit.git (never the working tree), every configured bundle is
-- materialized from its blobs into a private directory and verified, and
-- an admissible one becomes an entry pinning every artifact's sha256 and a
-- URL addressed at the commit the bytes were read from.  A bundle that is
-- not admissible is recorded as pending with its exact reasons, never
-- dropped.  The output depends on nothing but the committed trees and the
-- configuration: no clock, no environment, byte-reproducible.
--
-- Configuration (JSON):
--   {"issuers": [{"repo": "https://host/owner/name", "checkout": "../name",
--                 "bundles": "vac" | "certifications/*",
--                 "raw_url": "https://raw.example/{owner}/{name}/{commit}/{path}"}]}
-- `checkout` is relative to the configuration file; `raw_url` is optional
-- (the default serves raw files of public GitHub repositories).
--
-- `raw_url` must be a template whose URLs vkit.vac.raw_url parses: a known
-- host's raw-URL scheme with {commit} where that scheme puts the ref.
--
-- `--check-fetched DIR` compares fetched artifacts (DIR/<entry name>/<path>)
-- with the pins of an existing registry: every URL must parse under its
-- host's raw-URL scheme with pinned_commit as its ref (read where the
-- scheme puts the ref, never found anywhere in the URL), the issuer's
-- repository and the artifact's path; every byte must hash to its pin,
-- nothing may be missing or extra, the fetched bundle must verify, and the
-- entry rebuilt from it must equal the committed one.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"
local verify = require "vkit.vac.verify"
local draft = require "vkit.vac.draft"
local raw_url = require "vkit.vac.raw_url"
local policy = require("vkit.policy").vac

local array, object, kind = json.array, json.object, json.kind
local M = {}

M.VERSION = "0.1"
M.DEFAULT_RAW_URL = "https://raw.githubusercontent.com/{owner}/{name}/{commit}/{path}"
M.GATES = object {
  structural = "vkit vac verify: clean over the committed bytes at generation; re-proven over fetched artifacts "
    .. "by vkit vac registry --check-fetched",
  semantic = "NOT run by vkit: replay the bundle's replay block at issuer_commit (SPEC §5: acceptance is two-gated)",
  grading = "NOT machine-checked: SPEC §5 rule 3 rests on human review of protocol.grading and on replay",
}
M.PROTOCOL = "acceptance is two-gated (SPEC §5): structural verification by vkit vac verify over the committed "
  .. "bytes, then semantic replay by the issuer's own deterministic regrader, which this registry does not run"

local function is_commit(s) return type(s) == "string" and #s == 40 and not s:find "[^0-9a-f]" end

--- The commit-addressed URL of one artifact (its path escaped).
function M.url(template, owner_name, commit, path)
  return raw_url.format(template, owner_name, commit, path)
end

-- nil, or why the URLs a raw_url template makes for this issuer could not
-- be checked: the template is tried on a sample commit and path, and the
-- URL must parse under its host's scheme as exactly that artifact.
local function template_problem(template, issuer, repo)
  local commit, path = ("0123456789abcdef"):rep(3):sub(1, 40), "bundle/vac.json"
  local ok, reason, detail = raw_url.check(M.url(template, issuer, commit, path),
    { commit = commit, issuer = issuer, repo = repo, path = path })
  if not ok then return ("%s: %s"):format(reason, detail) end
end

-- The bundle directories a pattern names in a sorted list of tree paths.
function M.bundle_dirs(pattern, paths)
  local dirs, seen = {}, {}
  local prefix = pattern:match "^(.*)/%*$"
  for _, p in ipairs(paths) do
    local dir
    if prefix then
      local rest = p:sub(#prefix + 2)
      if p:sub(1, #prefix + 1) == prefix .. "/" and rest:find "/" then dir = prefix .. "/" .. rest:match "^[^/]+" end
    elseif p:sub(1, #pattern + 1) == pattern .. "/" then
      dir = pattern
    end
    if dir and not seen[dir] then
      seen[dir] = true
      dirs[#dirs + 1] = dir
    end
  end
  table.sort(dirs)
  return dirs
end

-- The registry entry for a verified bundle directory (pure): digests are
-- the sha256 of the bytes the verification judged, so an entry pins what
-- was verified, not what a later read of the file returns.
local function entry(cfg, bundle_path, rels, pinned, m, digests)
  local artifacts = array {}
  for i, rel in ipairs(rels) do
    artifacts[i] = object {
      path = rel, sha256 = assert(digests[rel], "a clean bundle judged every file it holds"),
      url = M.url(cfg.raw_url, cfg.issuer, pinned, bundle_path .. "/" .. rel),
    }
  end
  local seen, list = {}, array {}
  for _, c in ipairs(m.results.checks) do
    if not seen[c.profile] then
      seen[c.profile] = true
      list[#list + 1] = c.profile
    end
  end
  table.sort(list)
  return object {
    name = cfg.name .. "/" .. bundle_path:match "([^/]+)$",
    issuer = cfg.issuer, issuer_repo = cfg.repo,
    issuer_commit = m.protocol.issuer_commit, -- the issuer's own declaration
    pinned_commit = pinned,                   -- the commit the bytes were read from
    vac_version = m.vac_version, bundle_path = bundle_path,
    capability = m.claim.capability,
    subject = ("%s: %s"):format(m.subject.kind, m.subject.id),
    summary = m.results.summary, profiles = list, artifacts = artifacts,
    status = "accepted", challenges = array {}, gates = M.GATES,
  }
end

--- Verifies a materialized bundle and builds its entry: entry | nil, reasons.
function M.judge(cfg, bundle_path, dir, rels, pinned)
  local failures, m, digests = verify.directory(dir)
  if #failures > 0 then
    local reasons = {}
    for i, f in ipairs(failures) do reasons[i] = f.detail and (f.name .. ": " .. f.detail) or f.name end
    return nil, "refused at generation: " .. table.concat(reasons, "; ")
  end
  if draft.owner_name("x/" .. tostring(m.protocol.issuer)) ~= cfg.issuer then
    return nil, ("issuer-mismatch: manifest protocol.issuer %q is not the configured issuer %q"):format(
      tostring(m.protocol.issuer), cfg.issuer)
  end
  return entry(cfg, bundle_path, rels, pinned, m, digests)
end

local function pending(cfg, bundle_path, reason)
  return object { name = cfg.name .. "/" .. bundle_path:match "([^/]+)$", issuer = cfg.issuer, issuer_repo = cfg.repo,
    bundle_path = bundle_path, reason = reason }
end

-- Is head on some remote-tracking branch (an ancestor of, or equal to, one
-- of refs/remotes/*)?  true, or false and why not.  A checkout with no
-- remote-tracking refs at all is refused too (seed 003: "generation refuses
-- a checkout HEAD that is on no remote branch"): nothing shows that any
-- server holds the commit its URLs address.
local function pushed(repo, head)
  local remotes, err = repo:refs "refs/remotes/"
  if not remotes then return false, "its remote-tracking refs cannot be read: " .. tostring(err) end
  local any = false
  for _, r in ipairs(remotes) do
    if r.target then
      any = true
      if repo:is_ancestor(head, r.target) then return true end
    end
  end
  if not any then return false, "the checkout has no remote-tracking branch at all (fetch its remote first)" end
  return false, "no remote-tracking branch contains it"
end

--- Scans one configured issuer: entries, pending | nil, message.
function M.scan(cfg, git)
  local repo, err = git.open(cfg.checkout)
  if not repo then return nil, ("%s: issuer checkout not readable at %s: %s"):format(cfg.issuer, cfg.checkout, err) end
  local head, herr = repo:head()
  if not head then
    repo:close()
    return nil, ("%s: %s"):format(cfg.issuer, herr)
  end
  local on_remote, why = pushed(repo, head)
  if not on_remote then
    repo:close()
    return nil, ("%s: HEAD %s is on no remote branch (%s); push it first, or the pinned URLs serve nothing"):format(
      cfg.issuer, head, why)
  end
  local tree, terr = repo:tree(head)
  if not tree then
    repo:close()
    return nil, ("%s: %s"):format(cfg.issuer, terr)
  end
  local paths = {}
  for i, e in ipairs(tree) do paths[i] = e.path end
  local entries, waiting = {}, {}
  local dirs = M.bundle_dirs(cfg.bundles, paths)
  if #dirs == 0 and not cfg.bundles:find "/%*$" then
    waiting[#waiting + 1] = pending(cfg, cfg.bundles, ("no committed files at %s: the issuer's bundle has not "
      .. "landed"):format(cfg.bundles))
  end
  for _, bp in ipairs(dirs) do
    local rels, modes = {}, {}
    for _, e in ipairs(tree) do
      if e.path:sub(1, #bp + 1) == bp .. "/" then
        rels[#rels + 1] = e.path:sub(#bp + 2)
        modes[#rels] = e.mode
      end
    end
    local has_manifest = false
    for _, r in ipairs(rels) do has_manifest = has_manifest or r == "vac.json" end
    if not has_manifest then
      waiting[#waiting + 1] = pending(cfg, bp, ("vac.json is not in the committed tree at %s"):format(bp))
    else
      local dir = assert(fs.mkdtemp((os.getenv "TMPDIR" or "/tmp") .. "/vkit-vac-registry-"))
      local problem
      for i, rel in ipairs(rels) do
        if modes[i] ~= "100644" and modes[i] ~= "100755" then
          problem = ("unsafe-bundle: %s is committed as mode %s, not a regular file"):format(rel, modes[i])
          break
        end
        local blob, berr = repo:read(head, bp .. "/" .. rel, policy.registry.max_blob_bytes)
        if not blob then
          problem = ("%s: %s"):format(rel, berr)
          break
        end
        local target = dir .. "/" .. rel
        assert(fs.mkdirs(target:match "^(.*)/[^/]*$"))
        assert(fs.write_atomic(target, blob.bytes, 420))
      end
      local e, reason
      if problem then
        reason = "refused at generation: " .. problem
      else
        e, reason = M.judge(cfg, bp, dir, rels, head)
      end
      fs.remove_tree(dir)
      if e then entries[#entries + 1] = e else waiting[#waiting + 1] = pending(cfg, bp, reason) end
    end
  end
  repo:close()
  return entries, waiting
end

--- Reads and checks a configuration file: {issuers} | nil, message.
function M.load_config(path)
  local text, err = fs.read(path, 1 << 20)
  if not text then return nil, err end
  local doc, jerr = json.decode(text)
  if not doc then return nil, path .. ": " .. jerr end
  if kind(doc) ~= "object" or kind(doc.issuers) ~= "array" then return nil, path .. ": an {\"issuers\": [...]} object required" end
  local base = path:match "^(.*)/[^/]*$" or "."
  local issuers = {}
  for i, c in ipairs(doc.issuers) do
    local issuer = kind(c) == "object" and draft.owner_name(c.repo)
    if not (issuer and type(c.checkout) == "string" and type(c.bundles) == "string" and c.bundles ~= "") then
      return nil, ("%s: issuers[%d] needs repo (…/owner/name), checkout and bundles"):format(path, i - 1)
    end
    if c.raw_url ~= nil and (type(c.raw_url) ~= "string" or not c.raw_url:find("{commit}", 1, true)) then
      return nil, ("%s: issuers[%d].raw_url must address {commit}"):format(path, i - 1)
    end
    local problem = template_problem(c.raw_url or M.DEFAULT_RAW_URL, issuer, c.repo)
    if problem then
      return nil, ("%s: issuers[%d]: its artifact URLs (%s) would not be commit-addressed raw URLs of %s: %s"):format(
        path, i - 1, c.raw_url and "raw_url" or "the default raw_url", c.repo, problem)
    end
    issuers[i] = {
      repo = c.repo, issuer = issuer, name = issuer:match "/(.*)$", bundles = c.bundles:gsub("/+$", ""),
      checkout = c.checkout:sub(1, 1) == "/" and c.checkout or (base .. "/" .. c.checkout),
      raw_url = c.raw_url or M.DEFAULT_RAW_URL,
    }
  end
  return issuers
end

local function by_name(a, b) return a.name < b.name end

--- The registry document for a list of issuer configurations.
function M.build(issuers, git)
  local entries, waiting = array {}, array {}
  for _, cfg in ipairs(issuers) do
    local e, p = M.scan(cfg, git)
    if not e then return nil, p end
    for _, x in ipairs(e) do entries[#entries + 1] = x end
    for _, x in ipairs(p) do waiting[#waiting + 1] = x end
  end
  table.sort(entries, by_name)
  table.sort(waiting, by_name)
  return object { registry_version = M.VERSION, protocol = M.PROTOCOL, entries = entries, pending = waiting }
end

function M.encode(doc) return json.encode(doc, { indent = 1 }) .. "\n" end

--- Checks fetched artifacts in dir against the registry doc: a list of
--  problems (empty when every entry holds).
function M.check_fetched(doc, dir)
  local problems = {}
  local function say(fmt, ...) problems[#problems + 1] = fmt:format(...) end
  for _, e in ipairs(kind(doc.entries) == "array" and doc.entries or {}) do
    local before = #problems
    local root = dir .. "/" .. tostring(e.name)
    if not is_commit(e.pinned_commit) then say("%s: pinned_commit %s is not a full commit id", e.name, tostring(e.pinned_commit)) end
    local rels, pinned = {}, {}
    for _, a in ipairs(e.artifacts or {}) do
      rels[#rels + 1] = a.path
      pinned[a.path] = true
      -- The URL is parsed under its host's raw-URL scheme: the ref where
      -- that scheme puts it must be the commit the bytes were read from,
      -- in the issuer's repository, at this artifact's path.
      local ok, reason, detail = raw_url.check(a.url, { commit = e.pinned_commit, issuer = e.issuer,
        repo = e.issuer_repo, path = tostring(e.bundle_path) .. "/" .. tostring(a.path) })
      if not ok then
        say("%s: %s: URL %s %s (%s: %s)", e.name, a.path, tostring(a.url),
          reason == "mutable-ref" and "is not addressed at a full commit id" or "is refused", reason, detail)
      end
      local sha = hash.file(root .. "/" .. a.path)
      if not sha then
        say("%s: %s: not fetched", e.name, a.path)
      elseif sha ~= a.sha256 then
        say("%s: %s: fetched bytes hash to %s, pinned %s", e.name, a.path, sha, a.sha256)
      end
    end
    local walk = fs.walk(root) or {}
    for _, w in ipairs(walk) do
      if w.kind ~= "dir" and not pinned[w.path] then say("%s: %s: fetched but not pinned", e.name, w.path) end
    end
    if #problems == before then
      local cfg = { name = e.name:match "^(.-)/[^/]*$", issuer = e.issuer, repo = e.issuer_repo, raw_url = "{commit}" }
      local rebuilt, reason = M.judge(cfg, e.bundle_path, root, rels, e.pinned_commit)
      if rebuilt then
        -- the URLs were checked above; everything else must rebuild exactly
        for i, a in ipairs(rebuilt.artifacts) do a.url = e.artifacts[i].url end
      end
      if not rebuilt then
        say("%s: %s", e.name, reason)
      elseif json.encode(rebuilt) ~= json.encode(e) then
        say("%s: the entry rebuilt from the fetched artifacts differs from the registry's", e.name)
      end
    end
  end
  return problems
end

--- Reads a registry document: doc (with an entries array) | nil, message.
function M.load_registry(path)
  local text, err = fs.read(path, 1 << 26)
  if not text then return nil, err end
  local doc, jerr = json.decode(text)
  if not doc then return nil, ("%s: %s"):format(path, jerr) end
  if kind(doc) ~= "object" or kind(doc.entries) ~= "array" then
    return nil, path .. ": not a registry (an object with an entries array)"
  end
  return doc
end

--- Writes doc to path atomically: true | nil, message.
function M.write(path, doc) return fs.write_atomic(path, M.encode(doc), 420) end

return M
