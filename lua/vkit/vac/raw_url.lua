--- The commit-addressed raw URLs of the VAC registry (seed 003): made at
-- generation, parsed at `--check-fetched`.
--
-- A registry entry pins each artifact's sha256 and a URL those bytes are
-- servable from, addressed at pinned_commit, never at a branch: a pin on a
-- mutable ref such as `main` expires silently on the issuer's next push.
-- Whether a URL is commit-addressed depends on where its host's raw-URL
-- scheme puts the ref, so a URL is parsed against a closed set of schemes
-- and its ref is read from that one position.  A 40-hex string elsewhere in
-- it (a later path segment, a query string, a fragment) proves nothing, and
-- a host whose scheme is not in the set is refused, never guessed.
--
--   raw.githubusercontent.com/<owner>/<name>/<ref>/<path>
--   github.com/<owner>/<name>/raw/<ref>/<path>
--   gitlab.com/<owner>/<name>/-/raw/<ref>/<path>
--
-- A URL is https, with no userinfo, no port, no query string and no
-- fragment; its owner, name, the scheme's fixed segments and the ref are
-- written literally (no percent-encoding, no empty or dot segment); the
-- ref is exactly 40 lowercase hex digits.  Path segments may carry
-- percent-escapes, which are decoded before the path is compared; made
-- here, every byte of a path segment but A-Z a-z 0-9 - . _ ~ is escaped.
local M = {}

--- Every reason a URL is refused, each named in the problem line.
M.REASONS = {
  "malformed-url", "not-https", "userinfo", "port", "query-string", "fragment", "unknown-host", "unknown-url-form",
  "empty-segment", "dot-segment", "percent-encoding", "mutable-ref", "ref-not-pinned-commit", "wrong-host",
  "wrong-repository", "wrong-path",
}

--- The hosts, each with its segments after owner/name (`{ref}` where the
--  ref goes, the path after them) and the host its repositories live on.
M.SCHEMES = {
  ["raw.githubusercontent.com"] = { after = { "{ref}" }, repo_host = "github.com" },
  ["github.com"] = { after = { "raw", "{ref}" }, repo_host = "github.com" },
  ["gitlab.com"] = { after = { "-", "raw", "{ref}" }, repo_host = "gitlab.com" },
}

local function hosts()
  local list = {}
  for h in pairs(M.SCHEMES) do list[#list + 1] = h end
  table.sort(list)
  return table.concat(list, ", ")
end

local function refuse(reason, fmt, ...) return nil, reason, fmt:format(...) end

local function decode(segment)
  if segment:find "%%" and (segment:find "%%%X" or segment:find "%%%x%X" or segment:find "%%.?$") then return nil end
  return (segment:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- Escapes one path segment: every byte but the unreserved ones.
function M.escape(segment)
  return (segment:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

--- A repository-relative path as a URL path: each segment escaped.
function M.escape_path(path)
  return (path:gsub("[^/]+", M.escape))
end

--- The URL of one artifact from a template with {owner}, {name}, {commit}
--  and {path} (owner/name and commit as they are, the path escaped).
function M.format(template, owner_name, commit, path)
  local owner, name = owner_name:match "^([^/]+)/([^/]+)$"
  return (template:gsub("{(%w+)}", { owner = owner, name = name, commit = commit, path = M.escape_path(path) }))
end

--- Parses a raw URL: {host, owner, name, ref, path (its segments,
--  decoded), written_path (as the URL writes it), repo_host} or nil,
--  reason (one of M.REASONS), detail.
function M.parse(url)
  if type(url) ~= "string" then return refuse("malformed-url", "the URL is a %s, not a string", type(url)) end
  local cut = url:find "[?#]"
  if cut then
    if url:sub(cut, cut) == "?" then
      return refuse("query-string", "a raw URL has no query string (%s): a query can choose what is served",
        url:sub(cut))
    end
    return refuse("fragment", "a raw URL has no fragment (%s)", url:sub(cut))
  end
  -- RFC 3986's unreserved and sub-delims, ":", "@", "/" and "%": anything
  -- else (a space, a backslash, a control, a byte past ASCII) is malformed.
  local bad = url:find "[^%w%-%._~!%$&'%(%)%*%+,;=:@/%%]"
  if bad then
    return refuse("malformed-url", "byte %d (0x%02X) may not appear in a URL as it is", bad, url:byte(bad))
  end
  local scheme, rest = url:match "^(%a[%w+.-]*)://(.*)$"
  if not scheme then return refuse("malformed-url", "no scheme://host at its start") end
  if scheme ~= "https" then return refuse("not-https", "its scheme is %s, not https", scheme) end
  local authority, path = rest:match "^([^/]*)(.*)$"
  if authority:find "@" then
    return refuse("userinfo", "its authority %s carries userinfo", authority)
  end
  if authority:find ":" then return refuse("port", "its authority %s names a port", authority) end
  if authority == "" or not authority:find "^[%w.-]+$" then
    return refuse("malformed-url", "its host %q is not a host name", authority)
  end
  local host = authority:lower()
  local scheme_of = M.SCHEMES[host]
  if not scheme_of then
    return refuse("unknown-host", "%s is not a host whose raw-URL scheme vkit knows (%s)", authority, hosts())
  end
  local segments = {}
  for s in (path:sub(2) .. "/"):gmatch "([^/]*)/" do segments[#segments + 1] = s end
  if path == "" then segments = {} end
  for i, s in ipairs(segments) do
    if s == "" then return refuse("empty-segment", "path segment %d is empty", i) end
    local decoded = decode(s)
    if not decoded then return refuse("malformed-url", "path segment %d (%s) has a broken percent-escape", i, s) end
    if decoded == "." or decoded == ".." then
      return refuse("dot-segment", "path segment %d is %s: a client resolves it away", i, s)
    end
  end
  local fixed = 2 + #scheme_of.after
  if #segments <= fixed then
    return refuse("unknown-url-form", "%s's raw URLs are /<owner>/<name>/%s/<path>", host,
      (table.concat(scheme_of.after, "/"):gsub("{ref}", "<ref>")))
  end
  local ref
  for i = 1, fixed do
    local s = segments[i]
    if s:find "%%" then
      return refuse("percent-encoding", "segment %d (%s) is percent-encoded: owner, name and ref are written literally",
        i, s)
    end
    local want = scheme_of.after[i - 2]
    if want == "{ref}" then
      ref = s
    elseif want and s ~= want then
      return refuse("unknown-url-form", "segment %d is %s where %s's raw URLs have %s", i, s, host, want)
    end
  end
  if not (#ref == 40 and not ref:find "[^0-9a-f]") then
    return refuse("mutable-ref", "its ref %q, where %s puts the ref, is not a full commit id (40 lowercase hex "
      .. "digits): a pin on a mutable ref expires on the next push", ref, host)
  end
  local rel, written = {}, {}
  for i = fixed + 1, #segments do
    rel[#rel + 1] = decode(segments[i])
    written[#written + 1] = segments[i]
  end
  return { host = host, owner = segments[1], name = segments[2], ref = ref, path = rel,
           written_path = table.concat(written, "/"), repo_host = scheme_of.repo_host }
end

-- The host of a repository URL (https://host/..., ssh://user@host:port/...,
-- user@host:path), lower-cased; nil when it names none.
local function repo_host(repo)
  if type(repo) ~= "string" then return nil end
  local authority = repo:match "^[%a][%w+.-]*://([^/]*)" or repo:match "^[^/:@]+@([^/:]+):"
  if not authority then return nil end
  return (authority:gsub("^.*@", ""):gsub(":%d*$", ""):lower())
end

--- Checks that url addresses exactly this artifact: expect = {commit,
--  issuer = "owner/name", repo (the issuer's repository URL), path (the
--  repository-relative path)}.  true, or nil, reason, detail.
function M.check(url, expect)
  local u, reason, detail = M.parse(url)
  if not u then return nil, reason, detail end
  if u.ref ~= expect.commit then
    return refuse("ref-not-pinned-commit", "its ref %s is not the pinned commit %s", u.ref, tostring(expect.commit))
  end
  local from = repo_host(expect.repo)
  if from ~= u.repo_host then
    return refuse("wrong-host", "%s serves %s repositories, and the issuer repository %s is %s", u.host, u.repo_host,
      tostring(expect.repo), from and ("on " .. from) or "on no host")
  end
  if u.owner .. "/" .. u.name ~= expect.issuer then
    return refuse("wrong-repository", "it addresses %s/%s, not the issuer %s", u.owner, u.name, tostring(expect.issuer))
  end
  local want = {}
  for s in tostring(expect.path):gmatch "[^/]+" do want[#want + 1] = s end
  local same = #want == #u.path
  for i = 1, #want do same = same and want[i] == u.path[i] end
  if not same then
    return refuse("wrong-path", "it addresses %s, not the artifact's path %s", u.written_path,
      M.escape_path(tostring(expect.path)))
  end
  return true
end

return M
