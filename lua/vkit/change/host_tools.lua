--- Finding this host's toolchains, to write an environment model.
--
-- An environment model is the target owner's declaration of the native
-- tools paired execution may use, each pinned by hash.  This module only
-- helps write one (the demo and the specs use it): it looks for the real
-- tool binaries (never a rustup proxy or a pyenv shim) and hashes what it
-- finds.  Whatever it writes is then checked like any declaration.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"

local M = {}

local function pin(path)
  local real = fs.realpath(path)
  if not real then return nil end
  local st = fs.lstat(real)
  if not st or st.kind ~= "file" then return nil end
  return { path = real, sha256 = assert(hash.file(real)) }
end

local function first(paths)
  for _, p in ipairs(paths) do
    local found = pin(p)
    if found then return found end
  end
end

--- The Rust toolchain: rustc and the libraries it reads as code (the
--  compiler driver, LLVM and the target's standard library).
function M.rust()
  local home = os.getenv "HOME" or "/root"
  local sysroots = { home .. "/.rustup/toolchains/stable-x86_64-unknown-linux-gnu", "/usr" }
  for _, root in ipairs(sysroots) do
    local rustc = pin(root .. "/bin/rustc")
    if rustc and fs.lstat(root .. "/lib/rustlib") then
      local deps = json.array()
      for _, name in ipairs(fs.list(root .. "/lib") or {}) do
        if name:match "^librustc_driver" or name:match "^libLLVM" then
          local d = pin(root .. "/lib/" .. name)
          if d and fs.lstat(root .. "/lib/" .. name).size > 4096 then deps[#deps + 1] = d end
        end
      end
      local std = root .. "/lib/rustlib/x86_64-unknown-linux-gnu/lib"
      for _, name in ipairs(fs.list(std) or {}) do
        local d = pin(std .. "/" .. name)
        if d then deps[#deps + 1] = d end
      end
      return { rustc = rustc, dependencies = deps }
    end
  end
end

function M.python()
  local py = first { "/usr/bin/python3.11", "/usr/bin/python3" }
  return py and { python3 = py }
end

function M.typescript()
  local vkit = require "vkit"
  local tsc_dir
  for _, name in ipairs(fs.list(vkit.root .. "/build/typescript") or {}) do
    if name:match "^typescript%-linux%-x64%-" then tsc_dir = vkit.root .. "/build/typescript/" .. name end
  end
  local tsc = tsc_dir and pin(tsc_dir .. "/lib/tsc")
  local node = first { "/usr/bin/node", "/usr/local/bin/node" }
  if not (tsc and node) then return nil end
  local deps = json.array()
  for _, name in ipairs(fs.list(tsc_dir .. "/lib") or {}) do
    if name:match "%.d%.ts$" then deps[#deps + 1] = pin(tsc_dir .. "/lib/" .. name) end
  end
  return { tsc = tsc, node = node, dependencies = deps }
end

--- An environment model document declaring the given languages' tools.
function M.environment_model(languages)
  local chains = {}
  for _, language in ipairs(languages) do
    local chain = M[language]()
    if not chain then return nil, ("no %s toolchain found on this host"):format(language) end
    chains[language] = chain
  end
  return { schema_version = 1, env = { LC_ALL = "C", PATH = "/usr/bin:/bin", TMPDIR = "/tmp" }, toolchains = chains }
end

return M
