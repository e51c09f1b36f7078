--- The Kani toolchain pin (seed 001): a host-owned, closed-format record of
-- every file and directory mode in the selected Kani and Rust installation
-- trees, the rustup binary and its proxy directory (`~/.cargo/bin`, which
-- also holds the `kani` launcher), and any supplied host libraries.
--
--   capture(desc)     -> pin | nil, problem     measure a host installation
--   parse(text)       -> pin | nil, problem     strict reader of PIN.json
--   validate(pin)     -> {ok = true} | {ok = false, missing = bool, changes = {...}}
--   digest(pin)       -> hex                     RFC 8785 digest of the pin
--
-- Measuring streams every regular file through SHA-256 (vkit.hash.file) and
-- records links by their target without following them; FIFOs, sockets and
-- devices are refused.  The runner validates before and after the engine
-- run.  What this does not close (seed 001): host utilities, the OS, kernel,
-- vkit itself and unpinned libraries stay in the trust boundary, and a
-- change that is restored between the two scans is not seen.
local vkit = require "vkit.core"

local M = {}

M.schema = "vkit.kani-toolchain.v1"
M.tree_names = { "kani", "rust", "cargo_bin" }

local function absolute(p)
  return type(p) == "string" and p:sub(1, 1) == "/" and not p:find("//", 1, true)
    and not p:find("\0", 1, true) and (p == "/" or p:sub(-1) ~= "/")
    and not ("/" .. p .. "/"):find("/%.%.?/") and utf8.len(p) ~= nil
end

-- One manifest entry for path (with lstat record st) under root.
local function entry_for(root, rel, st)
  local e = { path = rel, kind = st.kind, mode = st.mode }
  if st.kind == "file" then
    local full = rel == "." and root or (root .. "/" .. rel)
    local sha, size = vkit.hash.file(full)
    if not sha then return nil, ("%s: %s"):format(full, size) end
    local after = vkit.fs.lstat(full)
    if not after or after.kind ~= "file" or after.size ~= size then
      return nil, ("%s changed while it was hashed"):format(full)
    end
    e.size, e.sha256 = size, sha
  elseif st.kind == "link" then
    e.target = st.target or ""
  elseif st.kind ~= "dir" then
    return nil, ("%s/%s is a special file (%s)"):format(root, rel, st.type or st.kind)
  end
  return e
end

--- Every entry under root, root itself as "." first, then in walk order.
function M.measure_tree(root)
  local st, err = vkit.fs.lstat(root)
  if not st then return nil, err, "missing" end
  if st.kind ~= "dir" then return nil, ("%s is not a directory"):format(root), st.kind == "link" and "link" or "missing" end
  local entries = { assert(entry_for(root, ".", st)) }
  local walked, werr = vkit.fs.walk(root)
  if not walked then return nil, werr end
  for _, w in ipairs(walked) do
    if not utf8.len(w.path) or w.path:find("\n", 1, true) then
      return nil, ("%s/%s: a path that is not UTF-8 text cannot be pinned"):format(root, w.path)
    end
    local e, eerr = entry_for(root, w.path, w)
    if not e then return nil, eerr end
    entries[#entries + 1] = e
  end
  return entries
end

local function measure_file(path)
  local st, err = vkit.fs.lstat(path)
  if not st then return nil, err, "missing" end
  local e, eerr = entry_for(path, ".", st)
  if not e then return nil, eerr end
  e.path = path
  return e
end

local function in_tree(entries, root, path)
  if path:sub(1, #root + 1) ~= root .. "/" then return nil end
  local rel = path:sub(#root + 2)
  for _, e in ipairs(entries) do
    if e.path == rel then return e end
  end
  return nil
end

local function array(list)
  return setmetatable(list, vkit.json.array_mt)
end

--- Measures an installation.  desc = {platform, kani_version, rust_toolchain,
-- home, launcher, kani_root, rust_root, cargo_bin, rustup_home,
-- rustup_binary, host_libraries = {paths}}.
function M.capture(desc)
  local pin = {
    schema = M.schema,
    platform = desc.platform,
    kani_version = desc.kani_version,
    rust_toolchain = desc.rust_toolchain,
    home = desc.home,
    launcher = desc.launcher,
    rustup = { home = desc.rustup_home, binary = desc.rustup_binary },
    trees = {},
    host_libraries = array {},
  }
  for _, name in ipairs(M.tree_names) do
    local root = desc[name == "cargo_bin" and "cargo_bin" or (name .. "_root")]
    if not absolute(root) then return nil, ("%s root must be an absolute path"):format(name) end
    local entries, err = M.measure_tree(root)
    if not entries then return nil, err end
    pin.trees[name] = { root = root, entries = array(entries) }
  end
  for _, lib in ipairs(desc.host_libraries or {}) do
    if not absolute(lib) then return nil, ("host library %q must be an absolute path"):format(tostring(lib)) end
    local e, err = measure_file(lib)
    if not e then return nil, err end
    pin.host_libraries[#pin.host_libraries + 1] = e
  end
  table.sort(pin.host_libraries, function(a, b) return a.path < b.path end)
  local ok, problem = M.check(pin)
  if not ok then return nil, problem end
  return pin
end

-- ---- the closed format --------------------------------------------------

local function keys_exactly(t, allowed, where)
  if vkit.json.kind(t) ~= "object" and not (type(t) == "table" and getmetatable(t) == nil) then
    return ("%s must be an object"):format(where)
  end
  for k in pairs(t) do
    if allowed[k] == nil then return ("%s has an unknown field %q"):format(where, tostring(k)) end
  end
  for k, required in pairs(allowed) do
    if required and t[k] == nil then return ("%s lacks %q"):format(where, k) end
  end
  return nil
end

local ENTRY_KEYS = { path = true, kind = true, mode = true, size = false, sha256 = false, target = false }

local function check_entry(e, where, relative)
  local problem = keys_exactly(e, ENTRY_KEYS, where)
  if problem then return problem end
  if relative then
    if type(e.path) ~= "string" or e.path == "" or (e.path ~= "." and (e.path:sub(1, 1) == "/"
      or ("/" .. e.path .. "/"):find("/%.%.?/"))) then
      return where .. ": path must be relative without . or .. components"
    end
  elseif not absolute(e.path) then
    return where .. ": path must be absolute"
  end
  if math.type(e.mode) ~= "integer" or e.mode < 0 or e.mode > 4095 then return where .. ": mode must be 0..4095" end
  if e.kind == "file" then
    if math.type(e.size) ~= "integer" or e.size < 0 then return where .. ": a file needs its size" end
    if not vkit.hash.is_digest(e.sha256) then
      return where .. ": a file needs its sha256"
    end
    if e.target ~= nil then return where .. ": a file has no target" end
  elseif e.kind == "link" then
    if type(e.target) ~= "string" then return where .. ": a link needs its target" end
    if e.size ~= nil or e.sha256 ~= nil then return where .. ": a link has no size or sha256" end
  elseif e.kind == "dir" then
    if e.size ~= nil or e.sha256 ~= nil or e.target ~= nil then return where .. ": a directory has only a mode" end
  else
    return where .. ": kind must be file, dir or link"
  end
  return nil
end

--- Checks the closed format of a pin table: true | nil, problem.
function M.check(pin)
  local problem = keys_exactly(pin, {
    schema = true, platform = true, kani_version = true, rust_toolchain = true, home = true,
    launcher = true, rustup = true, trees = true, host_libraries = true,
  }, "the pin")
  if problem then return nil, problem end
  if pin.schema ~= M.schema then return nil, "unknown pin schema" end
  for _, k in ipairs { "platform", "kani_version", "rust_toolchain" } do
    if type(pin[k]) ~= "string" or pin[k] == "" then return nil, k .. " must be a non-empty string" end
  end
  for _, k in ipairs { "home", "launcher" } do
    if not absolute(pin[k]) then return nil, k .. " must be an absolute path" end
  end
  problem = keys_exactly(pin.rustup, { home = true, binary = true }, "rustup")
  if problem then return nil, problem end
  if not absolute(pin.rustup.home) or not absolute(pin.rustup.binary) then return nil, "rustup paths must be absolute" end
  problem = keys_exactly(pin.trees, { kani = true, rust = true, cargo_bin = true }, "trees")
  if problem then return nil, problem end
  for _, name in ipairs(M.tree_names) do
    local tree = pin.trees[name]
    problem = keys_exactly(tree, { root = true, entries = true }, "trees." .. name)
    if problem then return nil, problem end
    if not absolute(tree.root) then return nil, ("trees.%s.root must be absolute"):format(name) end
    if type(tree.entries) ~= "table" or #tree.entries == 0 then return nil, ("trees.%s.entries must be a nonempty array"):format(name) end
    local root = tree.entries[1]
    if root.path ~= "." or root.kind ~= "dir" then return nil, ("trees.%s must start with its root directory"):format(name) end
    local paths = {}
    for i, e in ipairs(tree.entries) do
      problem = check_entry(e, ("trees.%s.entries[%d]"):format(name, i), true)
      if problem then return nil, problem end
      if paths[e.path] then return nil, ("trees.%s lists %q twice"):format(name, e.path) end
      paths[e.path] = true
    end
  end
  -- Kani's layout: KANI_HOME/kani-VERSION holding a `toolchain` link to
  -- the Rust toolchain it was set up with.
  local kani_root = pin.trees.kani.root
  if kani_root:match "[^/]+$" ~= "kani-" .. pin.kani_version then
    return nil, ("the Kani tree must be named kani-%s"):format(pin.kani_version)
  end
  local link = in_tree(pin.trees.kani.entries, kani_root, kani_root .. "/toolchain")
  if not link or link.kind ~= "link" or link.target ~= pin.trees.rust.root then
    return nil, "the Kani tree's toolchain link must point at the pinned Rust tree"
  end
  local bin = pin.trees.cargo_bin
  local launcher = in_tree(bin.entries, bin.root, pin.launcher)
  if not launcher or launcher.kind ~= "file" then return nil, "the launcher must be a file in the pinned cargo_bin tree" end
  local rustup = in_tree(bin.entries, bin.root, pin.rustup.binary)
  if not rustup or rustup.kind ~= "file" then return nil, "the rustup binary must be a file in the pinned cargo_bin tree" end
  if type(pin.host_libraries) ~= "table" then return nil, "host_libraries must be an array" end
  for i, e in ipairs(pin.host_libraries) do
    problem = check_entry(e, ("host_libraries[%d]"):format(i), false)
    if problem then return nil, problem end
  end
  return true
end

--- Reads PIN.json text strictly (vkit.json, closed format).
function M.parse(text)
  local pin, message = vkit.json.decode(text)
  if pin == nil then return nil, "the pin is not valid JSON: " .. tostring(message) end
  local ok, problem = M.check(pin)
  if not ok then return nil, problem end
  return pin
end

function M.digest(pin)
  return vkit.json.digest(pin)
end

-- ---- validation ----------------------------------------------------------

local FIELDS = { "kind", "mode", "size", "sha256", "target" }

local function compare(expected, actual, where, changes)
  local index = {}
  for _, e in ipairs(actual) do index[e.path] = e end
  local seen = {}
  for _, e in ipairs(expected) do
    seen[e.path] = true
    local a = index[e.path]
    if not a then
      changes[#changes + 1] = { where = where, path = e.path, change = "missing" }
    else
      for _, f in ipairs(FIELDS) do
        if e[f] ~= a[f] then
          changes[#changes + 1] = { where = where, path = e.path, change = f }
          break
        end
      end
    end
  end
  for _, a in ipairs(actual) do
    if not seen[a.path] then changes[#changes + 1] = { where = where, path = a.path, change = "added" } end
  end
end

--- Re-measures every pinned tree and file (streaming their contents) and
-- compares with the pin.  missing = true when a pinned root or file does
-- not exist at all (the toolchain is absent rather than changed).
function M.validate(pin)
  local changes, missing = array {}, false
  for _, name in ipairs(M.tree_names) do
    local tree = pin.trees[name]
    local actual, err, code = M.measure_tree(tree.root)
    if not actual then
      if code == "missing" then missing = true end
      changes[#changes + 1] = { where = name, path = tree.root, change = code or "unreadable", detail = err }
    else
      compare(tree.entries, actual, name, changes)
    end
  end
  for _, lib in ipairs(pin.host_libraries) do
    local actual, err, code = measure_file(lib.path)
    if not actual then
      if code == "missing" then missing = true end
      changes[#changes + 1] = { where = "host_libraries", path = lib.path, change = code or "unreadable", detail = err }
    else
      compare({ lib }, { actual }, "host_libraries", changes)
    end
  end
  return { ok = #changes == 0, missing = missing, changes = changes }
end

return M
