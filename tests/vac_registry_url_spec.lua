-- The registry's commit-addressed URLs (issue 30 item 7): `--check-fetched`
-- reads the ref where the host's raw-URL scheme puts it, never "a 40-hex
-- string somewhere in the URL", and refuses a host whose scheme it does
-- not know.  Before, `…/o/n/main/vac.json?/<sha>/` passed: the query string
-- held the pinned commit, the ref was `main`.
local vkit = require "vkit"
local t = require "tests.support.run"
local fs, json = vkit.fs, vkit.json
local raw_url = require "vkit.vac.raw_url"
local registry = require "vkit.vac.registry"
local has_git = pcall(require, "vkit.git")
local describe_git = has_git and describe or function(name) pending(name .. " (vkit.git is not built in)") end

local FIXTURES = vkit.root .. "/fixtures/vac"
local SHA = ("0123456789abcdef"):rep(3):sub(1, 40)
local OTHER = ("fedcba9876543210"):rep(3):sub(1, 40)
local RAW = "https://raw.githubusercontent.com/o/n/"
local EXPECT = { commit = SHA, issuer = "o/n", repo = "https://github.com/o/n", path = "b/vac.json" }

describe("a raw artifact URL", function()
  local function reason(url, expect)
    local ok, why, detail = raw_url.check(url, expect or EXPECT)
    if ok then return "ok" end
    assert.is_string(detail)
    return why
  end

  it("is accepted in each known host's scheme with the pinned commit where that scheme puts the ref", function()
    assert.equal("ok", reason(RAW .. SHA .. "/b/vac.json"))
    assert.equal("ok", reason("https://github.com/o/n/raw/" .. SHA .. "/b/vac.json"))
    assert.equal("ok", reason("https://gitlab.com/o/n/-/raw/" .. SHA .. "/b/vac.json",
      { commit = SHA, issuer = "o/n", repo = "https://gitlab.com/o/n", path = "b/vac.json" }))
    -- the host is case-insensitive (RFC 3986 3.2.2); the issuer's repository in any URL form
    assert.equal("ok", reason("https://RAW.GitHubUserContent.com/o/n/" .. SHA .. "/b/vac.json"))
    for _, repo in ipairs { "git@github.com:o/n.git", "ssh://git@github.com:22/o/n", "https://github.com/o/n.git" } do
      assert.equal("ok", reason(RAW .. SHA .. "/b/vac.json",
        { commit = SHA, issuer = "o/n", repo = repo, path = "b/vac.json" }), repo)
    end
  end)

  it("is refused with a query string or a fragment, whatever they hold", function()
    assert.equal("query-string", reason(RAW .. "main/b/vac.json?/" .. SHA .. "/"))
    assert.equal("query-string", reason(RAW .. SHA .. "/b/vac.json?ref=main"))
    assert.equal("query-string", reason(RAW .. SHA .. "/b/vac.json?"))
    assert.equal("fragment", reason(RAW .. "main/b/vac.json#/" .. SHA .. "/"))
    assert.equal("fragment", reason(RAW .. SHA .. "/b/vac.json#"))
    -- a fragment before a query: the fragment is what the URL has
    assert.equal("fragment", reason(RAW .. SHA .. "/b/vac.json#x?y"))
  end)

  it("is refused when the ref where the scheme puts it is not a full lowercase commit id", function()
    assert.equal("mutable-ref", reason(RAW .. "main/b/vac.json"))
    assert.equal("mutable-ref", reason(RAW .. "main/" .. SHA .. "/b/vac.json"))   -- a sha in the path, wrong position
    assert.equal("mutable-ref", reason("https://github.com/o/n/raw/main/" .. SHA .. "/b/vac.json"))
    assert.equal("mutable-ref", reason("https://gitlab.com/o/n/-/raw/main/" .. SHA .. "/b/vac.json",
      { commit = SHA, issuer = "o/n", repo = "https://gitlab.com/o/n", path = "b/vac.json" }))
    assert.equal("mutable-ref", reason(RAW .. SHA:upper() .. "/b/vac.json"))      -- uppercase hex
    assert.equal("mutable-ref", reason(RAW .. SHA:sub(1, 39) .. "/b/vac.json"))   -- 39 hex digits
    assert.equal("mutable-ref", reason(RAW .. SHA .. "a/b/vac.json"))            -- 41 hex digits
    assert.equal("mutable-ref", reason(RAW .. SHA:sub(1, 39) .. "g/b/vac.json"))  -- 40, not all hex
    -- a full commit id, but not the one the bytes were read from
    assert.equal("ref-not-pinned-commit", reason(RAW .. OTHER .. "/b/vac.json"))
  end)

  it("is refused when the pinned commit is in the path but the ref is another segment", function()
    -- the ref is the pinned commit, and "main" is then part of the path
    assert.equal("wrong-path", reason(RAW .. SHA .. "/main/b/vac.json"))
    assert.equal("wrong-path", reason(RAW .. SHA .. "/vac.json"))
    assert.equal("wrong-path", reason(RAW .. SHA .. "/b/vac.json/" .. SHA))
  end)

  it("is refused, never guessed, on a host whose raw-URL scheme is not known", function()
    for _, url in ipairs { "https://raw.example/o/n/" .. SHA .. "/b/vac.json",
                           "https://raw.githubusercontent.com.evil.example/o/n/" .. SHA .. "/b/vac.json",
                           "https://raw.githubusercontent.com./o/n/" .. SHA .. "/b/vac.json",
                           "https://bitbucket.org/o/n/raw/" .. SHA .. "/b/vac.json",
                           "https://127.0.0.1/o/n/" .. SHA .. "/b/vac.json" } do
      assert.equal("unknown-host", reason(url), url)
    end
    -- a known host, but not its raw-URL form
    assert.equal("unknown-url-form", reason("https://github.com/o/n/blob/" .. SHA .. "/b/vac.json"))
    assert.equal("unknown-url-form", reason("https://gitlab.com/o/n/raw/" .. SHA .. "/b/vac.json",
      { commit = SHA, issuer = "o/n", repo = "https://gitlab.com/o/n", path = "b/vac.json" }))
    assert.equal("unknown-url-form", reason(RAW .. SHA))
  end)

  it("is refused with userinfo, a port, another scheme, or a malformed authority", function()
    assert.equal("userinfo", reason("https://main@raw.githubusercontent.com/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("userinfo", reason("https://u:p@raw.githubusercontent.com/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("port", reason("https://raw.githubusercontent.com:443/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("port", reason("https://raw.githubusercontent.com:/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("not-https", reason("http://raw.githubusercontent.com/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("not-https", reason("HTTPS://raw.githubusercontent.com/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("malformed-url", reason("raw.githubusercontent.com/o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("malformed-url", reason("https:///o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b/vac json"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b\\vac.json"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b/vac.json\n"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b/v\195\164c.json"))
    assert.equal("malformed-url", reason(nil))
  end)

  it("is refused with percent-encoding in owner, name or ref, and decodes only the path", function()
    -- %61 is "a": decoded, this ref would be the pinned commit; it must be written literally
    assert.equal("percent-encoding", reason(RAW .. "%6" .. SHA:sub(1, 1) .. SHA:sub(2) .. "/b/vac.json"))
    assert.equal("percent-encoding", reason(RAW .. "%6D%61%69%6E/b/vac.json"))
    assert.equal("percent-encoding", reason("https://raw.githubusercontent.com/%6F/n/" .. SHA .. "/b/vac.json"))
    assert.equal("percent-encoding", reason("https://github.com/o/n/r%61w/" .. SHA .. "/b/vac.json"))
    -- in the path, an escape is decoded before the comparison ...
    assert.equal("ok", reason(RAW .. SHA .. "/b/vac%2Ejson"))
    assert.equal("ok", reason(RAW .. SHA .. "/b/a%20b%3F.json",
      { commit = SHA, issuer = "o/n", repo = "https://github.com/o/n", path = "b/a b?.json" }))
    -- ... but an escaped slash is one segment, and an escaped dot segment is still one
    assert.equal("wrong-path", reason(RAW .. SHA .. "/b%2Fvac.json"))
    assert.equal("dot-segment", reason(RAW .. SHA .. "/b/%2E%2E/b/vac.json"))
    assert.equal("dot-segment", reason(RAW .. SHA .. "/b/./vac.json"))
    assert.equal("dot-segment", reason("https://raw.githubusercontent.com/o/n/../n/" .. SHA .. "/b/vac.json"))
    assert.equal("empty-segment", reason(RAW .. SHA .. "/b//vac.json"))
    assert.equal("empty-segment", reason("https://raw.githubusercontent.com//o/n/" .. SHA .. "/b/vac.json"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b/vac.json%"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b/vac.json%4"))
    assert.equal("malformed-url", reason(RAW .. SHA .. "/b/vac%zz.json"))
  end)

  it("is refused when it addresses another repository or host", function()
    assert.equal("wrong-repository", reason("https://raw.githubusercontent.com/o/other/" .. SHA .. "/b/vac.json"))
    assert.equal("wrong-repository", reason("https://raw.githubusercontent.com/O/n/" .. SHA .. "/b/vac.json"))
    assert.equal("wrong-host", reason("https://gitlab.com/o/n/-/raw/" .. SHA .. "/b/vac.json"))
    assert.equal("wrong-host", reason(RAW .. SHA .. "/b/vac.json",
      { commit = SHA, issuer = "o/n", repo = "../n", path = "b/vac.json" }))
  end)

  it("names every reason it can give, and only those", function()
    local known = {}
    for _, r in ipairs(raw_url.REASONS) do known[r] = true end
    for _, r in ipairs { "query-string", "fragment", "mutable-ref", "ref-not-pinned-commit", "wrong-path",
                         "unknown-host", "unknown-url-form", "userinfo", "port", "not-https", "malformed-url",
                         "percent-encoding", "dot-segment", "empty-segment", "wrong-repository", "wrong-host" } do
      assert.is_true(known[r], r)
      known[r] = nil
    end
    assert.same({}, known)
  end)

  it("is made with its path escaped, so that it parses back as the same path", function()
    local path = "certifications/good/a b?#%+é.json"
    local url = registry.url(registry.DEFAULT_RAW_URL, "o/n", SHA, path)
    assert.equal(RAW .. SHA .. "/certifications/good/a%20b%3F%23%25%2B%C3%A9.json", url)
    assert.is_true(raw_url.check(url, { commit = SHA, issuer = "o/n", repo = "https://github.com/o/n", path = path }))
    -- the unreserved bytes stay as they are
    assert.equal(RAW .. SHA .. "/a-b_c.d~e/f.json", registry.url(registry.DEFAULT_RAW_URL, "o/n", SHA, "a-b_c.d~e/f.json"))
  end)
end)

-- Every file of a fixture bundle, as tree entries under prefix.
local bundle_entries = require("tests.support.git").tree_entries

describe_git("vkit vac registry --check-fetched on the ref's own position", function()
  local git = has_git and require "vkit.git"
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  -- An issuer repository holding one valid bundle (certifications/good),
  -- HEAD on origin/main, and its registry configuration.
  local function issuer(repo_url, raw)
    local root = dir .. "/toy-issuer"
    local repo = git.init(root)
    local head = repo:commit_tree { tree = repo:write_tree(bundle_entries(FIXTURES .. "/valid/v01", "certifications/good", {})),
                                    parents = {}, message = "bundles", ref = "HEAD" }
    repo:set_remote("origin", (repo_url or "https://github.com/example/toy-issuer") .. ".git")
    repo:set_ref("refs/remotes/origin/main", head)
    repo:close()
    t.write(dir .. "/vac-registry.json", json.encode(json.object { issuers = json.array {
      json.object { repo = repo_url or "https://github.com/example/toy-issuer", checkout = "toy-issuer",
                    bundles = "certifications/*", raw_url = raw },
    } }))
    return head
  end

  local function generate()
    return t.vkit { "vac", "registry", "--config", dir .. "/vac-registry.json", "--out", dir .. "/registry.json" }
  end

  -- The registry generated and its artifacts fetched into dir/fetched.
  local function generated()
    local r = generate()
    assert.equal(0, r.code, r.stdout .. r.stderr)
    local text = t.slurp(dir .. "/registry.json")
    local doc = json.decode(text)
    for _, e in ipairs(doc.entries) do
      for _, a in ipairs(e.artifacts) do
        local target = dir .. "/fetched/" .. e.name .. "/" .. a.path
        assert(fs.mkdirs(target:match "^(.*)/[^/]*$"))
        assert(fs.copy_file(FIXTURES .. "/valid/v01/" .. a.path, target))
      end
    end
    return text, doc
  end

  local function check(path, ...)
    local argv = { "vac", "registry", "--registry", path, "--check-fetched", dir .. "/fetched", ... }
    return t.vkit(argv)
  end

  -- The artifact vac.json of an entry.
  local function manifest_of(e)
    for _, a in ipairs(e.artifacts) do
      if a.path == "vac.json" then return a end
    end
    error "no vac.json artifact"
  end

  -- The registry with vac.json's URL replaced, checked: the result.
  local function with_url(text, doc, url)
    local original = manifest_of(doc.entries[1])
    local bytes = text:gsub(original.url:gsub("%p", "%%%0"), (url:gsub("%%", "%%%%")), 1)
    assert.are_not.equal(text, bytes)
    t.write(dir .. "/edited.json", bytes)
    return check(dir .. "/edited.json")
  end

  local BASE = "https://raw.githubusercontent.com/example/toy-issuer/"
  local PATH = "/certifications/good/vac.json"

  -- Each URL holds "/<pinned commit>/" somewhere: the substring rule of
  -- old passed every one of them.
  local CASES = {
    { "the query-string variant", "query-string", function(h) return BASE .. "main" .. PATH .. "?/" .. h .. "/" end },
    { "the fragment variant", "fragment", function(h) return BASE .. "main" .. PATH .. "#/" .. h .. "/" end },
    { "the commit in a query after the pinned-commit URL's path", "query-string",
      function(h) return BASE .. "main" .. PATH .. "?ref=/" .. h .. "/" end },
    { "the commit one segment after the ref", "mutable-ref", function(h) return BASE .. "main/" .. h .. PATH end },
    { "the commit as the ref, main in the path", "wrong-path", function(h) return BASE .. h .. "/main" .. PATH end },
    { "an unknown host", "unknown-host", function(h) return "https://raw.example/example/toy-issuer/" .. h .. PATH end },
    { "a known host's non-raw form", "unknown-url-form",
      function(h) return "https://github.com/example/toy-issuer/blob/" .. h .. PATH end },
    { "userinfo", "userinfo", function(h) return "https://main@raw.githubusercontent.com/example/toy-issuer/" .. h .. PATH end },
    { "a port", "port", function(h) return "https://raw.githubusercontent.com:8443/example/toy-issuer/" .. h .. PATH end },
    { "plain http", "not-https", function(h) return "http://raw.githubusercontent.com/example/toy-issuer/" .. h .. PATH end },
    { "another repository", "wrong-repository", function(h) return "https://raw.githubusercontent.com/example/other/" .. h .. PATH end },
  }

  for _, case in ipairs(CASES) do
    it(("refuses %s (%s)"):format(case[1], case[3]("<sha>")), function()
      local head = issuer()
      local text, doc = generated()
      assert.equal(0, check(dir .. "/registry.json").code, "the generated registry holds")
      local url = case[3](head)
      assert.truthy(url:find("/" .. head .. "/", 1, true))
      local r = with_url(text, doc, url)
      assert.equal(1, r.code, r.stdout)
      assert.matches("vac.json: URL " .. url:gsub("%p", "%%%0") .. " is [^\n]*%(" .. case[2]:gsub("%-", "%%-") .. ": ",
        r.stdout)
      assert.matches("check%-fetched: FAIL — 1 problem%(s%)", r.stdout)
    end)
  end

  it("names the reason under --json, and says a mutable ref is not a full commit id", function()
    local head = issuer()
    local text, doc = generated()
    local r = with_url(text, doc, BASE .. "main" .. PATH .. "?/" .. head .. "/")
    r = check(dir .. "/edited.json", "--json")
    assert.equal(1, r.code)
    local out = json.decode(r.stdout)
    assert.equal("fail", out.verdict)
    assert.equal(1, #out.problems)
    assert.matches("%(query%-string: a raw URL has no query string", out.problems[1])
    r = with_url(text, doc, BASE .. "main/" .. head .. PATH)
    assert.matches("vac.json: URL [^ ]+ is not addressed at a full commit id %(mutable%-ref: its ref \"main\", where "
      .. "raw%.githubusercontent%.com puts the ref", r.stdout)
  end)

  it("rebuilds each entry whose own pins hold, whatever another entry's URL", function()
    local head = issuer()
    local text, doc = generated()
    -- a second entry for the same fetched bundle, its capability edited: only
    -- rebuilding it from the fetched bytes shows that it differs
    local second = json.decode(text).entries[1]
    second.capability = "a capability the bundle does not state"
    doc.entries[2] = second
    manifest_of(doc.entries[1]).url = BASE .. "main" .. PATH .. "#/" .. head .. "/"
    t.write(dir .. "/two.json", json.encode(doc))
    local r = check(dir .. "/two.json")
    assert.equal(1, r.code)
    assert.matches("toy%-issuer/good: vac%.json: URL [^\n]*%(fragment: ", r.stdout)
    assert.matches("toy%-issuer/good: the entry rebuilt from the fetched artifacts differs from the registry's", r.stdout)
    assert.matches("FAIL — 2 problem%(s%)", r.stdout)
  end)

  describe("a configured raw_url", function()
    it("on github.com's raw form or gitlab.com's is generated and passes check-fetched", function()
      for _, case in ipairs {
        { "https://github.com/example/toy-issuer", "https://github.com/{owner}/{name}/raw/{commit}/{path}" },
        { "https://gitlab.com/example/toy-issuer", "https://gitlab.com/{owner}/{name}/-/raw/{commit}/{path}" },
      } do
        local head = issuer(case[1], case[2])
        local _, doc = generated()
        local url = manifest_of(doc.entries[1]).url
        assert.equal((case[2]:gsub("{owner}/{name}", "example/toy-issuer"):gsub("{commit}", head)
          :gsub("{path}", "certifications/good/vac.json")), url)
        local r = check(dir .. "/registry.json")
        assert.equal(0, r.code, r.stdout)
        fs.remove_tree(dir .. "/toy-issuer")
        fs.remove_tree(dir .. "/fetched")
      end
    end)

    it("is refused before anything is read when its URLs would not be commit-addressed raw URLs", function()
      for _, case in ipairs {
        { "https://raw.example/{owner}/{name}/{commit}/{path}", "unknown%-host" },
        { "https://raw.githubusercontent.com/{owner}/{name}/main/{path}?{commit}", "query%-string" },
        { "https://raw.githubusercontent.com/{owner}/{name}/main/{path}#{commit}", "fragment" },
        { "https://raw.githubusercontent.com/{owner}/{name}/main/{commit}/{path}", "mutable%-ref" },
        { "https://raw.githubusercontent.com/{owner}/{name}/{commit}/main/{path}", "wrong%-path" },
        { "https://raw.githubusercontent.com/{owner}/{name}/{commit}", "unknown%-url%-form" },
        { "https://raw.githubusercontent.com/{owner}/other/{commit}/{path}", "wrong%-repository" },
        { "https://gitlab.com/{owner}/{name}/-/raw/{commit}/{path}", "wrong%-host" },
      } do
        issuer(nil, case[1])
        local r = generate()
        assert.equal(2, r.code, case[1])
        assert.matches("issuers%[0%]: its artifact URLs %(raw_url%) would not be commit%-addressed raw URLs of "
          .. "https://github%.com/example/toy%-issuer: " .. case[2], r.stderr .. r.stdout)
        assert.is_nil(fs.lstat(dir .. "/registry.json"))
        fs.remove_tree(dir .. "/toy-issuer")
      end
    end)

    it("is refused by default for a repository whose host the default raw URL does not serve", function()
      issuer("https://gitlab.com/example/toy-issuer")
      local r = generate()
      assert.equal(2, r.code)
      assert.matches("the default raw_url%) would not be commit%-addressed raw URLs of https://gitlab%.com/example/"
        .. "toy%-issuer: wrong%-host", r.stderr .. r.stdout)
    end)
  end)
end)
