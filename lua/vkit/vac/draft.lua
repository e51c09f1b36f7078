--- `vkit vac draft <dir>` (SPEC §2.7): scaffold vac.json over the files in
--  dir.  Mechanical fields are derived: the sha256 of every file, the issuer
--  (owner/name from the enclosing repository's "origin" remote), the issuer
--  commit (HEAD; a dirty working tree is a printed warning, not a refusal),
--  the replay clone/checkout lines and a checks skeleton naming the §3
--  profiles.  Every judgment field is a `TODO(<field>): <guidance>` marker,
--  so `verify` refuses the draft until a person has authored it; scope and
--  limitations in particular are never inferred.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"
local manifest = require "vkit.vac.manifest"
local profiles = require "vkit.vac.profiles"

local array, object = json.array, json.object
local M = {}

local function todo(field, guidance) return ("TODO(%s): %s"):format(field, guidance) end

--- owner/name from a remote URL (https, ssh, scp-like or a local path),
--  or nil.
function M.owner_name(url)
  if type(url) ~= "string" then return nil end
  local path = url:gsub("[?#].*$", ""):gsub("/+$", ""):gsub("%.git$", "")
  path = path:gsub("^[%w+.-]+://[^/]*", "") -- scheme://host
  path = path:gsub("^[^/:]+@[^/:]+:", "") -- user@host:path
  local owner, name = path:match "([^/:]+)/([^/]+)$"
  if not owner or owner == "." or owner == ".." or name == "." or name == ".." then return nil end
  return owner .. "/" .. name
end

--- The draft manifest (pure).  files: sorted {path, sha256}; git: nil or
--  {issuer = "owner/name" | nil, url = remote url | nil, commit = hex | nil}.
function M.build(files, git)
  git = git or {}
  local evidence, checks = array {}, array {}
  local names = table.concat(profiles.NAMES, ", ")
  for i, f in ipairs(files) do
    evidence[i] = object { path = f.path, sha256 = f.sha256 }
    checks[i] = object {
      profile = todo(("results.checks[%d].profile"):format(i - 1),
        "the SPEC §3 profile that recomputes numbers from this artifact, one of " .. names
        .. " (add the profile's other references; drop the check if another one reads this file)"),
      artifact = f.path,
      expect = object {
        declared = todo(("results.checks[%d].expect"):format(i - 1),
          "the numbers this check declares, each a field the profile recomputes"),
      },
    }
  end
  local commit = git.commit or todo("protocol.issuer_commit",
    "the full commit of the issuer repository that produced and regrades this evidence (no enclosing Git repository found)")
  local commands = array {}
  if git.url then
    commands[#commands + 1] = ("git clone %s issuer"):format(git.url)
  else
    commands[#commands + 1] = todo("replay.commands[0]", "clone the issuer repository (no origin remote found)")
  end
  commands[#commands + 1] = git.commit and ("git -C issuer checkout %s"):format(git.commit)
    or todo("replay.commands[1]", "check out issuer_commit")
  commands[#commands + 1] = todo(("replay.commands[%d]"):format(#commands),
    "install the issuer and run its deterministic regrader or audit against this bundle's artifacts")
  commands[#commands + 1] = todo(("replay.commands[%d]"):format(#commands),
    "compare what the regrader produced with this bundle (for example cmp, byte for byte)")
  return object {
    vac_version = manifest.DRAFT_VERSION,
    claim = object {
      capability = todo("claim.capability", "the one-sentence claim, authored by a person"),
      scope = todo("claim.scope", "where the claim holds: task set, grading regime, environment; never inferred"),
      limitations = array { todo("claim.limitations[0]", "what this claim does not cover; non-claims are mandatory, "
        .. "never inferred") },
    },
    subject = object {
      kind = todo("subject.kind", "'agent' or 'suite-archetype'"),
      id = todo("subject.id", "the subject's name as the issuer ran it"),
      version = object { pinned = todo("subject.version", "every identifier that pins the exact subject: model id, "
        .. "harness commit, config, seed") },
    },
    protocol = object {
      issuer = git.issuer or todo("protocol.issuer", "the issuing repository as owner/name (no origin remote found)"),
      issuer_commit = commit,
      task = todo("protocol.task", "the task family, archetype or board within the issuer"),
      hashes = object { named = todo("protocol.hashes", "the content hashes pinning the protocol inputs, named as "
        .. "the artifacts carry them") },
      grading = todo("protocol.grading", "how verdicts are computed; a deterministic procedure"),
      control_policy = todo("protocol.control_policy", "the negative controls the protocol ran"),
    },
    evidence = evidence,
    results = object {
      summary = object { headline = todo("results.summary", "headline numbers for people, each re-earned by a check "
        .. "(JSON numbers, never numerals in quotes)") },
      checks = checks,
    },
    replay = object {
      issuer_commit = commit,
      commands = commands,
      expected = todo("replay.expected", "the expected outcome: exit codes and report text"),
    },
  }
end

-- The enclosing repository's facts, and warnings about it.
local function git_facts(dir)
  local ok, git = pcall(require, "vkit.git")
  if not ok then return nil, { "vkit.git is not built into this vkit; issuer and commit left as TODO markers" } end
  local repo = git.open(dir, { search = true })
  if not repo then return nil, { "no enclosing Git repository; issuer and commit left as TODO markers" } end
  local facts, warnings = {}, {}
  facts.commit = repo:head()
  if not facts.commit then warnings[#warnings + 1] = "the repository has no commit yet; issuer_commit left as a TODO" end
  local url = repo:remote_url "origin"
  if url then
    facts.url = url
    facts.issuer = M.owner_name(url)
  else
    warnings[#warnings + 1] = "no 'origin' remote; protocol.issuer left as a TODO"
  end
  local dirty = repo.dirty and repo:dirty()
  if dirty and #dirty > 0 then
    warnings[#warnings + 1] = ("the working tree is dirty (%d path(s)); drafting is not certifying, but commit "
      .. "before you issue"):format(#dirty)
  end
  repo:close()
  return facts, warnings
end

--- Drafts dir/vac.json: true, {warnings}, manifest | nil, message.
function M.run(dir)
  local st = fs.lstat(dir)
  if not st or st.kind ~= "dir" then return nil, dir .. ": not a directory" end
  if fs.lstat(dir .. "/vac.json") then
    return nil, dir .. "/vac.json exists; a draft never overwrites a manifest"
  end
  local entries, err = fs.walk(dir)
  if not entries then return nil, err end
  local files = {}
  for _, e in ipairs(entries) do
    if e.kind == "link" or e.kind == "other" then
      return nil, ("%s: a bundle holds only regular files (found a %s)"):format(e.path, e.type or e.kind)
    end
    if e.kind == "file" then
      if not manifest.safe_relpath(e.path) then return nil, e.path .. ": not a path a manifest can list" end
      local sha, herr = hash.file(dir .. "/" .. e.path, { nofollow = true })
      if not sha then return nil, ("%s: %s"):format(e.path, herr) end
      files[#files + 1] = { path = e.path, sha256 = sha }
    end
  end
  if #files == 0 then return nil, dir .. ": no artifact files to draft over" end
  local facts, warnings = git_facts(dir)
  local m = M.build(files, facts)
  -- written beside nothing of the bundle, then put in place with O_EXCL
  -- (vkit.fs.copy_file): a vac.json that appeared since the check above is
  -- never replaced
  local tmp, terr = fs.mkdtemp((os.getenv "TMPDIR" or "/tmp") .. "/vkit-vac-draft-")
  if not tmp then return nil, terr end
  local ok, werr = fs.write_atomic(tmp .. "/vac.json", json.encode(m, { indent = 2 }) .. "\n", 420)
  if ok then ok, werr = fs.copy_file(tmp .. "/vac.json", dir .. "/vac.json", 420) end
  fs.remove_tree(tmp)
  if not ok then
    if tostring(werr):find("EEXIST", 1, true) or fs.lstat(dir .. "/vac.json") then
      return nil, dir .. "/vac.json exists; a draft never overwrites a manifest"
    end
    return nil, werr
  end
  return true, warnings, m
end

return M
