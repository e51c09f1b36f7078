--- Finding toolchains, to write an environment model.
--
-- An environment model is the target owner's declaration of the native
-- tools paired execution may use, each pinned by hash.  This module only
-- helps write one (`vkit change intent init`, the demo and the specs use
-- it): it looks for the real tool binaries (never a rustup proxy or a pyenv
-- shim) and hashes what it finds.  Whatever it writes is then checked like
-- any declaration.
--
-- Two ways to find a toolchain:
--
-- * on this host (no root): Rust in ~/.rustup/toolchains/stable-x86_64-
--   unknown-linux-gnu or /usr, Python's /usr/bin/python3.11 or python3,
--   TypeScript's pinned native compiler where vkit keeps it (the build
--   tree's build/typescript/, or share/vkit/typescript/ when installed) with
--   /usr/bin/node.  These paths can depend on the machine (a home directory);
-- * under a toolchain root: a directory at a stable location (/opt/...)
--   that every machine installs with the same bytes.  The model then names
--   every file by a path under that root as given (a link inside the root
--   is followed, a link leading out of it is refused), so an intent accepted
--   on one machine certifies on another with the same toolchain, and a file
--   with other bytes is named by the pin check.  Layout under the root:
--     rust        bin/rustc, lib/librustc_driver-*.so, lib/libLLVM*.so*,
--                 lib/rustlib/x86_64-unknown-linux-gnu/lib/*
--     python      bin/python3.11 or bin/python3
--     typescript  lib/tsc and lib/*.d.ts (the @typescript/typescript-linux-x64
--                 package), bin/node
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"
local boot = require "vkit.boot"
local policy = require("vkit.policy").change

local M = {}

-- A pin of the regular file at path, by its real path (the host).
local function host_pin(path)
  local real = fs.realpath(path)
  if not real then return nil end
  local st = fs.lstat(real)
  if not st or st.kind ~= "file" then return nil end
  return { path = real, sha256 = assert(hash.file(real)) }
end

-- The pinner of files under a toolchain root: the path named under the
-- root as given, its bytes those of the file it leads to, which must stay
-- inside the root.  Returns pin | nil, problem (nil, nil: no such file).
local function root_pinner(root)
  local real_root = fs.realpath(root)
  return function(path)
    local real = fs.realpath(path)
    if not real then return nil end
    if real ~= real_root and real:sub(1, #real_root + 1) ~= real_root .. "/" then
      return nil, ("%s leads to %s, outside the toolchain root %s"):format(path, real, root)
    end
    local st = fs.lstat(real)
    if not st or st.kind ~= "file" then return nil end
    return { path = root .. real:sub(#real_root + 1), sha256 = assert(hash.file(real)) }
  end
end

local function first(pin, paths)
  for _, p in ipairs(paths) do
    local found, problem = pin(p)
    if found or problem then return found, problem end
  end
end

-- Every pinnable file of dir whose name passes keep (sorted), into deps.
local function add_files(deps, pin, dir, keep)
  for _, name in ipairs(fs.list(dir) or {}) do
    if not keep or keep(name, dir .. "/" .. name) then
      local d, problem = pin(dir .. "/" .. name)
      if problem then return nil, problem end
      if d then deps[#deps + 1] = d end
    end
  end
  return deps
end

local FINDERS = {}

-- Rust: rustc and the libraries it reads as code (the compiler driver,
-- LLVM and the target's standard library).
function FINDERS.rust(roots, pin)
  for _, root in ipairs(roots) do
    local rustc, problem = pin(root .. "/bin/rustc")
    if problem then return nil, problem end
    if rustc and fs.lstat(root .. "/lib/rustlib") then
      local deps, dproblem = add_files(json.array(), pin, root .. "/lib", function(name, path)
        local st = fs.lstat(path)
        return (name:match "^librustc_driver" or name:match "^libLLVM") and st and st.size > 4096
      end)
      if not deps then return nil, dproblem end
      deps, dproblem = add_files(deps, pin, root .. "/lib/rustlib/x86_64-unknown-linux-gnu/lib")
      if not deps then return nil, dproblem end
      return { rustc = rustc, dependencies = deps }
    end
  end
end

function FINDERS.python(roots, pin)
  for _, root in ipairs(roots) do
    local py, problem = first(pin, { root .. "/bin/python3.11", root .. "/bin/python3" })
    if py or problem then return py and { python3 = py }, problem end
  end
end

-- TypeScript: the pinned native compiler's directories vkit keeps
-- (policies/change.lua typescript_dirs, under vkit's root) on the host.
function M.typescript_package()
  for _, rel in ipairs(policy.typescript_dirs) do
    local dir = boot.root .. "/" .. rel
    for _, name in ipairs(fs.list(dir) or {}) do
      if name:match "^typescript%-linux%-x64%-" and fs.lstat(dir .. "/" .. name .. "/lib/tsc") then
        return dir .. "/" .. name
      end
    end
  end
end

function FINDERS.typescript(roots, pin, rooted)
  for _, root in ipairs(roots) do
    local package = rooted and root or M.typescript_package()
    local tsc, problem = package and pin(package .. "/lib/tsc")
    if problem then return nil, problem end
    local node
    node, problem = first(pin, rooted and { root .. "/bin/node" } or { "/usr/bin/node", "/usr/local/bin/node" })
    if problem then return nil, problem end
    if tsc and node then
      local deps, dproblem = add_files(json.array(), pin, package .. "/lib", function(name) return name:match "%.d%.ts$" end)
      if not deps then return nil, dproblem end
      return { tsc = tsc, node = node, dependencies = deps }
    end
  end
end

local HOST_ROOTS = {
  rust = function()
    return { (os.getenv "HOME" or "/root") .. "/.rustup/toolchains/stable-x86_64-unknown-linux-gnu", "/usr" }
  end,
  python = function() return { "/usr" } end,
  typescript = function() return { "host" } end,
}

--- One language's toolchain: {<tool> = {path, sha256}, dependencies} or
--  nil, message.  opts.toolchain_root: find it under that directory only.
function M.toolchain(language, opts)
  local finder = FINDERS[language]
  if not finder then return nil, ("no toolchain finder for the language %q"):format(tostring(language)) end
  local root = opts and opts.toolchain_root
  if root then
    if root:sub(1, 1) ~= "/" then return nil, ("the toolchain root %s is not an absolute path"):format(root) end
    root = root:gsub("/+$", "")
    local st = fs.realpath(root) and fs.lstat(fs.realpath(root))
    if not st or st.kind ~= "dir" then return nil, ("the toolchain root %s is not a directory"):format(root) end
    local chain, problem = finder({ root }, root_pinner(root), true)
    if not chain then
      return nil, problem or ("no %s toolchain under %s (see `vkit change intent init --help` for the layout)"):format(
        language, root)
    end
    return chain
  end
  local chain, problem = finder(HOST_ROOTS[language](), host_pin, false)
  if not chain then return nil, problem or ("no %s toolchain found on this host"):format(language) end
  return chain
end

--- An environment model document declaring the given languages' tools;
--  opts.toolchain_root as for toolchain (one root for every language).
function M.environment_model(languages, opts)
  local chains = {}
  for _, language in ipairs(languages) do
    local chain, message = M.toolchain(language, opts)
    if not chain then return nil, message end
    chains[language] = chain
  end
  return { schema_version = 1, env = { LC_ALL = "C", PATH = "/usr/bin:/bin", TMPDIR = "/tmp" }, toolchains = chains }
end

return M
