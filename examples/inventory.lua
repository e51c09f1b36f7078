--- examples/inventory.lua: a content inventory of a directory tree.
--
--   vkit script examples/inventory.lua [DIR]
--
-- Walks DIR without following links, hashes every regular file, and prints
-- a canonical JSON inventory plus its evidence digest (seed 000's digest of
-- sorted path/hash pairs).  Links and special files are listed as refused:
-- an inventory that silently skipped them would claim more than it checked.
local vkit = require "vkit"

local root = arg[1] or (vkit.root .. "/examples")
local entries, err = vkit.fs.walk(root)
if not entries then
  io.stderr:write("inventory: ", err, "\n")
  os.exit(1)
end

local files, refused = vkit.json.array(), vkit.json.array()
for _, entry in ipairs(entries) do
  if entry.kind == "file" then
    local sha256 = assert(vkit.hash.file(root .. "/" .. entry.path))
    files[#files + 1] = { path = entry.path, sha256 = sha256, size = entry.size, mode = ("%04o"):format(entry.mode) }
  elseif entry.kind ~= "dir" then
    refused[#refused + 1] = { path = entry.path, kind = entry.type }
  end
end

local inventory = {
  root = root,
  files = files,
  refused = refused,
  evidence_digest = assert(vkit.hash.evidence_digest(files)),
}
print(vkit.json.encode(inventory, { indent = 2 }))
io.stderr:write(("%d files hashed, %d entries refused, inventory digest %s\n"):format(
  #files, #refused, vkit.json.digest(inventory)))
os.exit(#refused == 0 and 0 or 1)
