--- Helpers the VAC specs share.
local vkit = require "vkit"
local fs = vkit.fs

local M = {}

--- Copies the tree at src (directories and regular files) to dst.
function M.copy_tree(src, dst)
  assert(fs.mkdirs(dst))
  for _, e in ipairs(assert(fs.walk(src))) do
    if e.kind == "dir" then assert(fs.mkdirs(dst .. "/" .. e.path))
    else assert(fs.copy_file(src .. "/" .. e.path, dst .. "/" .. e.path)) end
  end
end

return M
