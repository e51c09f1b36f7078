--- vkit.core: the C primitives and the host's facts, for library modules.
--
-- The public facade (`require "vkit"`, lua/vkit/init.lua) sits above every
-- package: its `vkit.change` or `vkit.store` load the whole certification
-- and the store.  A library module that reached `vkit.json` or `vkit.exe`
-- through the facade would depend on everything above it, and the packages
-- would form a circle.  Library modules take the floor from here instead:
-- the C modules as they are, the process launcher's Lua face (vkit.proc),
-- the policies and what the host knows about itself.
local boot = require "vkit.boot"

local M = {
  exe = boot.exe,          -- the running executable's absolute path
  root = boot.root,        -- the library root (lua/, policies/, examples)
  version = boot.version,
  policies = require "vkit.policy",
  json = require "vkit.json",
  hash = require "vkit.hash",
  fs = require "vkit.fs",
  sys = require "vkit.sys",
  proc = require "vkit.proc",
}

-- boot.libgit2 loads libgit2 when read: read it only when asked for.
M.versions = setmetatable({ vkit = boot.version, lua = boot.lua, openssl = boot.openssl }, {
  __index = function(t, key)
    if key ~= "libgit2" then return nil end
    rawset(t, key, boot.libgit2)
    return rawget(t, key)
  end,
})

return M
