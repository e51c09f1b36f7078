--- The command line's view of a project's Git repository: found upward
-- from a directory as `git` finds it, and Git revisions (HEAD, branch and
-- tag names, main~1, unique abbreviated ids) turned into full commit ids.
--
-- Only the command line resolves revisions, once, before anything is
-- bound: what it records (a request, a job, a report) holds full ids, and
-- the request format, preflight and the library API keep refusing a name
-- or a short id (vkit.git's exact-commit rule), so a recorded run never
-- depends on where a branch pointed later.  A name that denotes several
-- refs, or a hex word that is also a ref's name, is refused as ambiguous
-- rather than taken as Git's first rule would take it.
local fs = require "vkit.fs"

local M = {}

local function git()
  local ok, mod = pcall(require, "vkit.git")
  return ok and mod or nil
end

--- The project directory for `path` (default "."): the top of the Git
--  work tree holding it, found upward like git does, else the directory
--  itself (a project outside Git: a store still lives there).  Returns its
--  real path, or nil and a sentence when `path` is not a directory.
function M.project(path)
  path = path or "."
  local real = fs.realpath(path)
  local st = real and fs.lstat(real)
  if not st or st.kind ~= "dir" then return nil, ("%s is not a directory"):format(path) end
  local g = git()
  local repo = g and g.open(real, { search = true })
  if not repo then return real end
  local top = repo:workdir()
  repo:close()
  return top and (fs.realpath(top) or top) or real
end

--- Opens the Git repository holding `path` (default "."), searching
--  upward: repo, its work-tree directory; or nil and a sentence.
function M.open(path)
  path = path or "."
  local g = git()
  if not g then return nil, "this vkit was built without Git support" end
  local real = fs.realpath(path) or path
  local repo, message = g.open(real, { search = true })
  if not repo then return nil, ("%s is not a Git repository (%s)"):format(path, tostring(message)) end
  local top = repo:workdir()
  return repo, top and (fs.realpath(top) or top) or repo:path()
end

--- The full commit id a revision names in `repo` (whose directory `where`
--  names it in messages): id, or nil, a sentence ("HEAD~9: no such
--  revision in /path") and the code (not-found, ambiguous,
--  invalid-revision, not-a-commit).
-- Where Git looks a name up, in its order (gitrevisions(7)).
local REF_RULES = { "%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD" }

-- The existing refs the name at the start of `rev` (before ~ ^ @ : or a
-- brace) can denote by Git's rules, in that order.
local function refs_named(repo, rev)
  local name = rev:match "^([^~^@:{]+)"
  if not name then return {} end
  local found = {}
  for _, rule in ipairs(REF_RULES) do
    local full = rule:format(name)
    if full:find "^refs/" then
      for _, ref in ipairs(repo:refs(full) or {}) do
        if ref.name == full then found[#found + 1] = full end
      end
    end
  end
  return found, name
end

-- Why `rev` is ambiguous, or nil.  Git takes the first ref its rules find
-- (with a warning; libgit2 silently), and a ref over an abbreviated id, so
-- whoever can push a tag could otherwise move a name the caller meant: a
-- tag `origin/main` shadows the remote-tracking branch origin/main, a tag
-- named like the base's short id the base, and one named like its full
-- id does too when that commit was not fetched (a shallow clone).
local function ambiguity(repo, rev)
  local found, name = refs_named(repo, rev)
  if #found > 1 then
    return ("%s names %d refs (%s); give the full ref name"):format(name, #found, table.concat(found, ", "))
  end
  if found[1] and name:find "^%x+$" and #name >= 4 then
    return ("the ref %s is named so, and it reads as a commit id too; give the full ref name, or delete the "
      .. "ref"):format(found[1])
  end
  return nil
end

function M.resolve(repo, rev, where)
  if rev == "" then return nil, ("an empty revision names no commit in %s"):format(where), "not-found" end
  local why = ambiguity(repo, rev)
  if why then return nil, ("%s: ambiguous in %s (%s)"):format(rev, where, why), "ambiguous" end
  local id, message, code = repo:resolve(rev)
  if id then return id end
  local sentences = {
    ["not-found"] = "%s: no such revision in %s",
    ["ambiguous"] = "%s: ambiguous in %s (more than one object starts so; type more digits)",
    ["invalid-revision"] = "%s: not a revision in %s",
    ["not-a-commit"] = "%s: names no commit in %s",
  }
  local sentence = sentences[code]
  if sentence then return nil, sentence:format(rev, where) .. (code == "not-a-commit" and (" (" .. message .. ")") or ""), code end
  return nil, ("%s in %s"):format(message, where), code
end

return M
