--- Helpers for the vkit.git specs: fresh repositories, hand-made loose
--  objects (zlib streams with stored blocks, so a spec can write any bytes,
--  including lies, without an external compressor) and directory snapshots.
local vkit = require "vkit"
local t = require "tests.support.run"

local M = {}

--- A fresh directory holding a new repository at dir .. "/repo".
function M.repo()
  local dir, cleanup = t.tempdir()
  local repo = assert(vkit.git.init(dir .. "/repo"))
  return repo, dir, function()
    repo:close()
    cleanup()
  end
end

--- Every file below the directory src as tree entries under prefix,
--  appended to out (write_tree's {path, bytes} entries).
function M.tree_entries(src, prefix, out)
  for _, e in ipairs(assert(vkit.fs.walk(src))) do
    if e.kind == "file" then
      out[#out + 1] = { path = prefix .. "/" .. e.path, bytes = assert(vkit.fs.read(src .. "/" .. e.path, 1 << 24)) }
    end
  end
  return out
end

--- A commit of `files` ({path = bytes} or entries for write_tree).
function M.commit(repo, files, parents, ref)
  local entries = {}
  for k, v in pairs(files) do
    entries[#entries + 1] = type(v) == "table" and v or { path = k, bytes = v }
  end
  local tree = assert(repo:write_tree(entries))
  return assert(repo:commit_tree { tree = tree, parents = parents, message = "c\n", ref = ref }), tree
end

--- A commit whose root tree is written raw from {name, mode, oid} entries.
function M.raw_commit(repo, entries)
  return assert(repo:commit_tree { tree = assert(repo:write_tree_raw(entries)), message = "hostile\n" })
end

local function adler32(s)
  local a, b = 1, 0
  for i = 1, #s do
    a = (a + s:byte(i)) % 65521
    b = (b + a) % 65521
  end
  return b * 65536 + a
end

--- The zlib encoding of bytes using stored (uncompressed) deflate blocks.
function M.zlib(bytes)
  local out, pos = { "\x78\x01" }, 1
  repeat
    local chunk = bytes:sub(pos, pos + 65534)
    pos = pos + #chunk
    local final = pos > #bytes and 1 or 0
    out[#out + 1] = string.pack("<BI2I2", final, #chunk, (~#chunk) & 0xffff) .. chunk
  until final == 1
  out[#out + 1] = string.pack(">I4", adler32(bytes))
  return table.concat(out)
end

function M.loose_path(repo, oid)
  return repo:path() .. "objects/" .. oid:sub(1, 2) .. "/" .. oid:sub(3)
end

--- Replaces a loose object's file with bytes (the file is read-only).
function M.overwrite_object(repo, oid, bytes)
  local path = M.loose_path(repo, oid)
  assert(vkit.fs.chmod(path, tonumber("644", 8)))
  t.write(path, bytes)
end

--- Writes a loose object file for oid holding exactly `bytes` (zlib'd).
function M.plant_object(repo, oid, bytes)
  vkit.fs.mkdirs(repo:path() .. "objects/" .. oid:sub(1, 2))
  t.write(M.loose_path(repo, oid), M.zlib(bytes))
end

--- "path kind" lines for everything under dir, to compare before/after.
function M.snapshot(dir)
  local lines = {}
  for _, e in ipairs(assert(vkit.fs.walk(dir))) do lines[#lines + 1] = e.path .. " " .. e.kind end
  return lines
end

--- Output of a shell command (tests may use the shell), raising on failure.
function M.sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read "a"
  local ok, _, code = p:close()
  if not ok then error(("command failed (%s): %s\n%s"):format(tostring(code), cmd, out)) end
  return out
end

M.quote = t.quote

--- Git as the repository's own CLI sees it.
function M.git(repo, args)
  return M.sh("git --git-dir=" .. t.quote(repo:path()) .. " " .. args)
end

return M
