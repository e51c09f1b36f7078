--- The `vkit` table: what scripts, the REPL and the CLI all share.
--
-- C modules built into the executable (vkit.hash, vkit.fs, vkit.json, ...)
-- are loaded eagerly: the host preloads every one it was built with.  The
-- shared ones (vkit.git with libgit2, vkit.term with readline) and the Lua
-- packages under lua/vkit/ (vac, protocol, change, ...) load on first use, so
-- `vkit.git` costs nothing -- not even loading libgit2 -- until a script
-- touches it.  `vkit.policies.<name>` reads policies/<name>.lua.
local boot = require "vkit.boot"

local shared = {}
for _, name in ipairs(boot.shared) do shared[name] = true end

-- boot.libgit2 loads libgit2 when read: read it only when asked for.
local versions = setmetatable({ vkit = boot.version, lua = boot.lua, openssl = boot.openssl }, {
  __index = function(t, key)
    if key ~= "libgit2" then return nil end
    rawset(t, key, boot.libgit2)
    return rawget(t, key)
  end,
})

local vkit = { version = boot.version, exe = boot.exe, root = boot.root, versions = versions }

for name in pairs(package.preload) do
  local short = name:match "^vkit%.([%w_]+)$"
  if short and short ~= "boot" and not shared[short] then vkit[short] = require(name) end
end

vkit.policies = require "vkit.policy"

-- The names __index would load, for the REPL's completion: the shared
-- modules and the packages and modules under lua/vkit/.
local function loadable()
  local names = {}
  for name in pairs(shared) do names[#names + 1] = name end
  for _, entry in ipairs(vkit.fs.list(vkit.root .. "/lua/vkit") or {}) do
    local name = entry:match "^([%a_][%w_]*)%.lua$" or entry:match "^([%a_][%w_]*)$"
    if name and name ~= "init" and name ~= "boot" then names[#names + 1] = name end
  end
  return names
end

return setmetatable(vkit, {
  __complete = loadable,
  __index = function(t, key)
    if type(key) ~= "string" or not key:match "^[%a_][%w_]*$" then return nil end
    local name = "vkit." .. key
    if not (shared[key] and package.preload[name]) and not package.searchpath(name, package.path) then
      return nil
    end
    local module = require(name)
    rawset(t, key, module)
    return module
  end,
})
