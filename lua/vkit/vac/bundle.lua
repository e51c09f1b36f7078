--- A bundle directory on disk: every listed artifact present, a regular
--  file reached through no link, and hashing to its manifest sha256; and
--  closure: nothing in the directory the manifest does not list (SPEC §1,
--  §2.4).  Links and special files are refused (`unsafe-bundle`) before
--  anything is read through them.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local manifest = require "vkit.vac.manifest"

local M = {}

-- lstat of each component of rel under root: "ok", "link", "missing",
-- "special" or "dir" for the final component.
local function reach(root, rel)
  local path = root
  local parts = {}
  for part in rel:gmatch "[^/]+" do parts[#parts + 1] = part end
  for i, part in ipairs(parts) do
    path = path .. "/" .. part
    local st = fs.lstat(path)
    if not st then return "missing" end
    if st.kind == "link" then return "link" end
    if i < #parts then
      if st.kind ~= "dir" then return "missing" end
    elseif st.kind == "dir" then
      return "dir"
    elseif st.kind ~= "file" then
      return "special", st.type
    end
  end
  return "ok", path
end

--- Checks presence and hashes; returns the set of trusted paths.
function M.verify_artifacts(root, m, failures)
  local entries, listed = manifest.listed(m)
  local trusted = {}
  for _, e in ipairs(entries) do
    local state, where = reach(root, e.path)
    if state == "link" then
      failures:add("unsafe-bundle", e.path .. ": symlink")
    elseif state == "special" then
      failures:addf("unsafe-bundle", "%s: not a regular file (%s)", e.path, where)
    elseif state ~= "ok" then
      failures:add("missing-artifact", e.path)
    elseif manifest.is_hex64(e.sha256) then
      local actual, err = hash.file(where)
      if not actual then
        failures:addf("missing-artifact", "%s: %s", e.path, err)
      elseif actual ~= e.sha256 then
        failures:addf("sha256-mismatch", "%s: manifest %s, file %s", e.path, e.sha256, actual)
      else
        trusted[e.path] = true
      end
    end
  end
  -- closure: a verified bundle cannot smuggle content
  local walk, err = fs.walk(root)
  if not walk then
    failures:addf("unsafe-bundle", "cannot walk the bundle: %s", err)
    return trusted, listed
  end
  for _, entry in ipairs(walk) do
    local rel = entry.path
    if entry.kind == "link" then
      if not listed[rel] then failures:add("unsafe-bundle", rel .. ": symlink") end
    elseif entry.kind == "other" then
      if not listed[rel] then failures:addf("unsafe-bundle", "%s: not a regular file (%s)", rel, entry.type) end
    elseif entry.kind == "file" then
      if rel ~= "vac.json" and not listed[rel] then failures:add("unlisted-file", rel) end
    end
  end
  return trusted, listed
end

return M
