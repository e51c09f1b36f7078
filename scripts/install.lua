-- `make install` and `make uninstall`, run by the vkit just built:
--
--   vkit script scripts/install.lua install PREFIX
--   vkit script scripts/install.lua uninstall PREFIX
--
-- install copies, under PREFIX:
--   bin/vkit                               the executable (csrc/main.c)
--   lib/vkit/vkit_*.so                     the shared modules (vkit.git, vkit.term, vkit.pg)
--   share/vkit/{lua,policies,examples}/    the library, the policies, the examples
--   share/vkit/typescript/<version>/       the pinned TypeScript native compiler
--                                          (found there by the installed vkit)
--   share/man/man1/vkit.1                  the man page (from each command's --help)
--   share/bash-completion/completions/vkit the bash completion (the same source)
--   share/doc/vkit/                        README.md, docs/*.md, the API reference (api/)
-- and records every file it wrote, and every directory it made, in
-- share/vkit/install-manifest.txt.  uninstall removes exactly those files
-- and then those directories if they are empty: nothing else under PREFIX
-- is touched.  A second install first removes what the first recorded.
-- Every removal walks beneath PREFIX without following a link, after the
-- whole manifest has been checked (scripts/install_manifest.lua): an entry
-- that leaves PREFIX or crosses a link refuses the uninstall, named, and
-- nothing is removed.
local vkit = require "vkit"
local fs = vkit.fs

local manifest = dofile(((arg and arg[0] or ""):match "^(.*)/[^/]*$" or ".") .. "/install_manifest.lua")
local MANIFEST = manifest.PATH

local function fail(fmt, ...)
  io.stderr:write("install: ", fmt:format(...), "\n")
  os.exit(1)
end

-- The files to install: {src (absolute), dst (relative to PREFIX)}.
local function plan(root)
  local items = {}
  local function file(src, dst) items[#items + 1] = { src = src, dst = dst } end
  local function tree(src, dst)
    local entries, message = fs.walk(src)
    if not entries then fail("%s: %s", src, message) end
    for _, e in ipairs(entries) do
      if e.kind == "link" or e.kind == "other" then fail("%s/%s is a %s, not a file", src, e.path, e.kind) end
      if e.kind == "file" then file(src .. "/" .. e.path, dst .. "/" .. e.path) end
    end
  end
  file(root .. "/vkit", "bin/vkit")
  for _, name in ipairs(require("vkit.boot").shared) do
    file(("%s/build/lib/vkit_%s.so"):format(root, name), ("lib/vkit/vkit_%s.so"):format(name))
  end
  tree(root .. "/lua", "share/vkit/lua")
  tree(root .. "/policies", "share/vkit/policies")
  tree(root .. "/examples", "share/vkit/examples")
  local typescript = require("vkit.change.host_tools").typescript_package()
  if not (typescript and typescript:sub(1, #root + 1) == root .. "/") then
    fail("the pinned TypeScript compiler is not built (make typescript)")
  end
  tree(typescript, "share/vkit/typescript/" .. typescript:match "[^/]+$")
  file(root .. "/build/man/vkit.1", "share/man/man1/vkit.1")
  file(root .. "/build/completion/vkit", "share/bash-completion/completions/vkit")
  file(root .. "/README.md", "share/doc/vkit/README.md")
  tree(root .. "/docs", "share/doc/vkit")
  tree(root .. "/build/docs/api", "share/doc/vkit/api")
  return items
end

-- Removes what the manifest under prefix lists; the number of files
-- removed (0 when nothing is installed there).  A refusal ends the script.
local function uninstall(prefix)
  local real = fs.realpath(prefix) -- a link at or above PREFIX is the user's own naming of it
  if not real then return 0 end
  local plan, message = manifest.check(real)
  if plan == nil then fail("refusing to uninstall from %s: %s; nothing was removed", prefix, message) end
  if not plan then return 0 end
  local removed
  removed, message = manifest.remove(plan)
  if not removed then fail("uninstall from %s stopped: %s; nothing past it was removed", prefix, message) end
  return removed
end

local function install(prefix, root)
  local items = plan(root)
  uninstall(prefix)
  local made, seen = {}, {}
  local function mkdirs(rel)
    local path = ""
    for part in rel:gmatch "[^/]+" do
      path = path == "" and part or (path .. "/" .. part)
      local st = fs.lstat(prefix .. "/" .. path)
      if not st then
        assert(fs.mkdirs(prefix .. "/" .. path))
        made[#made + 1] = path
      elseif st.kind ~= "dir" then
        fail("%s/%s is in the way: not a directory", prefix, path)
      end
    end
  end
  mkdirs "share/vkit"
  local lines = {}
  for _, item in ipairs(items) do
    if not seen[item.dst] then
      seen[item.dst] = true
      mkdirs(item.dst:match "^(.*)/[^/]*$")
      local target = prefix .. "/" .. item.dst
      local st = fs.lstat(target)
      if st then
        if st.kind == "dir" then fail("%s is a directory", target) end
        assert(os.remove(target))
      end
      local ok, message = fs.copy_file(item.src, target)
      if not ok then fail("%s: %s", item.src, message) end
      lines[#lines + 1] = "f " .. item.dst
    end
  end
  for _, d in ipairs(made) do lines[#lines + 1] = "d " .. d end
  assert(fs.write_atomic(prefix .. "/" .. MANIFEST, table.concat(lines, "\n") .. "\n"))
  print(("installed %d files under %s (listed in %s)"):format(#items, prefix, MANIFEST))
end

local action, prefix = ...
if not (action == "install" or action == "uninstall") or not prefix or prefix == "" then
  io.stderr:write("usage: vkit script scripts/install.lua install|uninstall PREFIX\n")
  os.exit(2)
end
if prefix:sub(1, 1) ~= "/" then prefix = fs.cwd() .. "/" .. prefix end
prefix = prefix:gsub("(.)/+$", "%1")
if action == "install" then
  install(prefix, vkit.root)
else
  print(("removed %d files from %s"):format(uninstall(prefix), prefix))
end
