--- The `vkit` table: what scripts, the REPL and the CLI all share.
--
-- C modules (vkit.hash, vkit.fs, vkit.json, ...) are loaded eagerly: the host
-- preloads every one it was built with.  Lua packages under lua/vkit/ (vac,
-- protocol, change, ...) load on first use, so `vkit.vac` costs nothing until
-- a script touches it.  `vkit.policies.<name>` reads policies/<name>.lua.
local boot = require "vkit.boot"

local vkit = {
  version = boot.version,
  exe = boot.exe,
  root = boot.root,
  versions = { vkit = boot.version, lua = boot.lua, openssl = boot.openssl, libgit2 = boot.libgit2 },
}

for name in pairs(package.preload) do
  local short = name:match "^vkit%.([%w_]+)$"
  if short and short ~= "boot" then vkit[short] = require(name) end
end

vkit.policies = require "vkit.policy"

return setmetatable(vkit, {
  __index = function(t, key)
    if type(key) ~= "string" or not key:match "^[%a_][%w_]*$" then return nil end
    if not package.searchpath("vkit." .. key, package.path) then return nil end
    local module = require("vkit." .. key)
    rawset(t, key, module)
    return module
  end,
})
