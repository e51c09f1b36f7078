--- A bundle directory on disk: every listed artifact present, a regular
--  file reached through no link, and hashing to its manifest sha256; and
--  closure: nothing in the directory the manifest does not list (SPEC §1,
--  §2.4).  Links and special files are refused (`unsafe-bundle`) before
--  anything is read through them.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local manifest = require "vkit.vac.manifest"

local M = {}

-- What each component of rel under root is: "ok" (and the path), "link",
-- "missing", "special" (and its type) or "dir" for the final component.
-- entries maps every path the walk of root found to its lstat; without
-- it (the walk failed) each component is lstat'ed here.  A "." component
-- is the directory reached so far, as lstat would find it.
local function reach(root, rel, entries)
  local path, key = root, nil
  local parts = {}
  for part in rel:gmatch "[^/]+" do parts[#parts + 1] = part end
  for i, part in ipairs(parts) do
    path = path .. "/" .. part
    local st
    if part == "." then
      st = { kind = "dir" }
    elseif entries then
      key = key and (key .. "/" .. part) or part
      st = entries[key]
    else
      st = fs.lstat(path)
    end
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

--- Checks presence: returns pins, listed and slots.  pins maps each listed
--  artifact that is present (a regular file reached through no link) to
--  the sha256 its bytes must have; they are hashed as they are read (see
--  vkit.vac.source), not here, so the bytes hashed are the bytes judged.
--  slots[path] lists where in failures its sha256-mismatch belongs, once
--  per entry: {at, order} (after the first `at`, in manifest order), for
--  M.name_mismatches.  A path listed twice with different
--  pins is hashed here (the bundle fails as duplicate-artifact anyway), and
--  pinned to what it holds when one entry agrees.
function M.verify_artifacts(root, m, failures)
  local entries, listed = manifest.listed(m)
  local pins, slots, pinned = {}, {}, {}
  for _, e in ipairs(entries) do
    if manifest.is_hex64(e.sha256) then
      pinned[e.path] = pinned[e.path] or {}
      table.insert(pinned[e.path], e.sha256)
    end
  end
  -- one walk answers both presence (each entry's components) and closure
  local walk, walk_err = fs.walk(root)
  local found
  if walk then
    found = {}
    for _, entry in ipairs(walk) do found[entry.path] = entry end
  end
  local hashed = {}
  for i, e in ipairs(entries) do
    local state, where = reach(root, e.path, found)
    if state == "link" then
      failures:add("unsafe-bundle", e.path .. ": symlink")
    elseif state == "special" then
      failures:addf("unsafe-bundle", "%s: not a regular file (%s)", e.path, where)
    elseif state ~= "ok" then
      failures:add("missing-artifact", e.path)
    elseif manifest.is_hex64(e.sha256) then
      local pins_of = pinned[e.path]
      local agree = true
      for _, p in ipairs(pins_of) do agree = agree and p == pins_of[1] end
      if agree then
        pins[e.path] = e.sha256
      else
        local actual, err = hashed[e.path], nil
        if actual == nil then
          actual, err = hash.file(where, { nofollow = true })
          hashed[e.path] = actual or false
        end
        if not actual then
          failures:addf("missing-artifact", "%s: %s", e.path, err or "unreadable")
        elseif actual ~= e.sha256 then
          failures:addf("sha256-mismatch", "%s: manifest %s, file %s", e.path, e.sha256, actual)
        else
          pins[e.path] = actual -- hashed: every later read must hold the same bytes
        end
      end
      if pins[e.path] then
        slots[e.path] = slots[e.path] or {}
        table.insert(slots[e.path], { at = #failures, order = i })
      end
    end
  end
  -- closure: a verified bundle cannot smuggle content
  if not walk then
    failures:addf("unsafe-bundle", "cannot walk the bundle: %s", walk_err)
    return pins, listed, slots
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
  return pins, listed, slots
end

--- Names, at the place verify_artifacts left for it, the failure of every
--  pinned artifact whose bytes as read did not hold their pin (source is
--  the vkit.vac.source that read them).
function M.name_mismatches(pins, slots, source, failures)
  local late = {}
  for rel, pin in pairs(pins) do
    if slots[rel] and source:mismatched(rel) ~= nil then
      local actual = source:mismatched(rel)
      local f
      if actual then
        f = { name = "sha256-mismatch", detail = ("%s: manifest %s, file %s"):format(rel, pin, actual) }
      else
        f = { name = "missing-artifact", detail = ("%s: %s"):format(rel, source.unreadable[rel]) }
      end
      for _, slot in ipairs(slots[rel]) do late[#late + 1] = { at = slot.at, order = slot.order, failure = f } end
    end
  end
  -- latest slot first, so an insertion never moves a slot still to fill;
  -- within a slot, in manifest order (entries were listed in that order)
  table.sort(late, function(a, b)
    if a.at ~= b.at then return a.at > b.at end
    return a.order > b.order
  end)
  for _, x in ipairs(late) do table.insert(failures, x.at + 1, x.failure) end
end

return M
