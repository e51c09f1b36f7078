--- The project a `vkit mcp` server serves: its directory and, opened on
--  first use, its job store (so a server used only for vac_verify never
--  creates .vkit/).
local fs = require "vkit.fs"
local store_mod = require "vkit.store"

local M = {}
local Project = {}
Project.__index = Project

-- The --store URL of `vkit mcp` (nil: VKIT_STORE, else the project's file store).
M.store_url = nil

function M.new(dir, store_url)
  return setmetatable({ dir = dir, store_url = store_url or M.store_url }, Project)
end

--- The job store, or nil and a sentence.
function Project:store()
  if not self.opened then
    local ok, store = pcall(store_mod.open, { store = self.store_url, project = self.dir })
    if not ok then return nil, ("cannot open the job store of %s: %s"):format(self.dir, tostring(store)) end
    self.opened = store
  end
  return self.opened
end

--- A path named by a client: absolute as given, relative to the project.
function Project:path(p)
  if p:sub(1, 1) == "/" then return p end
  return (fs.realpath(self.dir) or self.dir) .. "/" .. p
end

return M
