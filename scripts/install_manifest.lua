-- The install manifest, PREFIX/share/vkit/install-manifest.txt, and the
-- removal of what it lists (scripts/install.lua: `make uninstall`, and a
-- second `make install`).  Loaded with dofile; returns its functions.
--
-- The manifest is one line per entry, "f REL" for a file install wrote and
-- "d REL" for a directory it made, REL relative to the prefix.  Removal is
-- in two steps:
--
--   check(prefix)  reads the manifest and looks at every entry beneath the
--                  prefix, one component at a time, never following a link
--                  (vkit.fs directory handles: openat with O_NOFOLLOW).  An
--                  entry that is absolute or has an empty, "." or ".."
--                  component, that reaches a symbolic link anywhere on its
--                  way or at its end, or that names something other than
--                  what install made there, refuses the whole manifest,
--                  named, before anything is removed.  Entries already gone
--                  are passed over.
--   remove(plan)   removes the files, the manifest, then the directories
--                  that are empty, deepest first, each again beneath the
--                  prefix with no link followed (dir:remove, dir:rmdir): a
--                  link swapped in since the check is refused there, named,
--                  and nothing after it is removed.
--
-- So nothing outside the prefix is ever removed, and a refused manifest
-- removes nothing at all.
local fs = require "vkit.fs" -- the C module: its directory handles
local policies = require("vkit").policies

local M = {}

M.PATH = "share/vkit/install-manifest.txt"

local KIND = { f = "file", d = "dir" }
local NOUN = { file = "a file", dir = "a directory", link = "a symbolic link", other = "a special file" }

-- Why rel cannot name anything beneath the prefix, or nil.
local function outside(rel)
  if rel:sub(1, 1) == "/" then return "is absolute" end
  if #rel >= 4096 then return "is longer than a path can be" end
  if rel:find("%z") then return "holds a NUL byte" end
  for part in (rel .. "/"):gmatch "([^/]*)/" do
    if part == "" or part == "." or part == ".." then return ("has a %q component: it leaves the prefix"):format(part) end
  end
end

-- The entries of the manifest's bytes: {kind = "file"|"dir", path, line},
-- or nil and why.
local function parse(bytes)
  if bytes ~= "" and bytes:sub(-1) ~= "\n" then return nil, "does not end with a newline (cut short?)" end
  local entries = {}
  for line in bytes:gmatch "([^\n]*)\n" do
    local kind, path = line:match "^([fd]) (.+)$"
    if not kind then return nil, ("holds the line %q, which is not \"f PATH\" or \"d PATH\""):format(line) end
    entries[#entries + 1] = { kind = KIND[kind], path = path, line = line }
  end
  return entries
end

--- What uninstalling from prefix would remove: a plan for remove(), false
--  when nothing is installed there (no prefix or no manifest), or nil and
--  a message naming the entry that refuses the whole manifest.
function M.check(prefix)
  local root, message, code = fs.opendir(prefix)
  if not root then
    if code == "ENOENT" then return false end
    return nil, message
  end
  local bytes
  bytes, message, code = root:read(M.PATH, policies.api.fs_read_max_bytes)
  if not bytes then
    root:close()
    if code == "ENOENT" then return false end
    return nil, ("the manifest %s cannot be read: %s"):format(M.PATH, message)
  end
  local entries
  entries, message = parse(bytes)
  if not entries then
    root:close()
    return nil, ("the manifest %s %s"):format(M.PATH, message)
  end
  local plan = { root = root, files = {}, dirs = {} }
  for _, e in ipairs(entries) do
    local why = outside(e.path)
    local st
    if not why then
      st, message, code = root:lstat(e.path)
      if not st and code ~= "ENOENT" then
        why = code == "link-in-path" and ("crosses a symbolic link (%s)"):format(message) or message
      elseif st and st.kind ~= e.kind then
        why = ("is %s (%s/%s), where install made %s"):format(NOUN[st.kind], prefix, e.path, NOUN[e.kind])
      end
    end
    if why then
      root:close()
      return nil, ("the manifest entry %q %s"):format(e.line, why)
    end
    if st then table.insert(e.kind == "file" and plan.files or plan.dirs, e.path) end
  end
  table.sort(plan.dirs, function(a, b) return #a > #b end)
  return plan
end

--- Removes what check() planned: the files, the manifest, then each
--  directory that is empty.  Returns the number of files removed, or nil
--  and a message naming the entry that was refused (removal stops there).
function M.remove(plan)
  local root, removed = plan.root, 0
  local function fail(rel, message)
    root:close()
    return nil, ("refused %s: %s"):format(rel, message)
  end
  for _, rel in ipairs(plan.files) do
    local ok, message, code = root:remove(rel)
    if ok then removed = removed + 1
    elseif code ~= "ENOENT" then return fail(rel, message) end
  end
  local ok, message, code = root:remove(M.PATH)
  if not ok and code ~= "ENOENT" then return fail(M.PATH, message) end
  for _, rel in ipairs(plan.dirs) do
    ok, message, code = root:rmdir(rel)
    if not ok and code ~= "ENOENT" and code ~= "ENOTEMPTY" then return fail(rel, message) end
  end
  root:close()
  return removed
end

return M
