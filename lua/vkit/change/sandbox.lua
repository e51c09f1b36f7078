--- The sandbox of every process of change certification: which host paths
-- a role sees, where, and what it may write (policies/change.lua `sandbox`).
--
-- Two roles: "build" (rustc, tsc: reads the side's files, writes its build
-- directory) and "run" (the drivers of every method: reads the side's files
-- and build, writes nothing that outlives it).  Where the machine can
-- isolate a process (vkit.proc.capabilities().isolation), each launch gets
-- namespaces of its own (no network, no view of other processes, its own
-- IPC and host name), a root made only of the system's read-only paths,
-- the toolchain's directories and the side's files, under an unprivileged
-- uid when vkit is root, and a fresh tmpfs as its working directory and
-- /tmp; Landlock restricts its writes to those too.  Where it cannot, the
-- launch runs on the host's paths with Landlock's write rules alone (when
-- the kernel has Landlock), and `plan` says why: the report weakens its
-- claim, never the other way round.
--
-- Inside, every side sees the same paths (layout): the captured module at
-- /project/<its path in the repository>, the driver at /vkit/driver/, the
-- build at /vkit/build/, the working directory /tmp, each a copy made for
-- the launch.  A run cannot tell base from candidate, nor find the store,
-- by where it runs or by what is mounted (/proc/self/mountinfo names only
-- the system's and the toolchain's directories).
--
-- Pure but for `capabilities` and the host's links (read once).
local fs = require "vkit.fs"
local json = require "vkit.json"
local policy = require("vkit.policy").change.sandbox

local M = {}

local function dirname(path) return path:match "^(.*)/[^/]*$" end

-- Whether path is dir or beneath it.
local function beneath(path, dir)
  return path == dir or path:sub(1, #dir + 1) == dir .. "/"
end

-- The longest directory that holds every path (nil: only "/").
local function common_dir(paths)
  local dir = dirname(paths[1])
  for i = 2, #paths do
    while dir ~= "" and not beneath(paths[i], dir) do dir = dirname(dir) end
  end
  return dir ~= "" and dir or nil
end

--- The host directories a toolchain needs, read-only: per tool, the
--  directory holding it and the language's dependencies when they share
--  one below "/" (a rustup toolchain, the TypeScript package), else the
--  tool's own directory; those beneath a system path are left to it.
function M.toolchain_dirs(chain)
  local dirs, names = {}, {}
  for name in pairs(chain.tools) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local paths = { chain.tools[name].path }
    for _, d in ipairs(chain.dependencies or {}) do paths[#paths + 1] = d.path end
    dirs[#dirs + 1] = common_dir(paths) or dirname(chain.tools[name].path)
  end
  local out = {}
  table.sort(dirs)
  for _, d in ipairs(dirs) do
    local covered = false
    for _, s in ipairs(policy.system) do covered = covered or beneath(d, s) end
    for _, o in ipairs(out) do covered = covered or beneath(d, o) end
    if not covered then out[#out + 1] = d end
  end
  return out
end

--- Where a side's files are, as its processes see them: module, driver,
--  build (a directory) and cwd.  isolated: the layout; otherwise the host's.
function M.view(isolated, side, source, driver_name)
  if not isolated then
    return { module = side.module_path, driver = side.driver_path, build = side.out_dir, cwd = side.work_dir }
  end
  local l = policy.layout
  return { module = l.project .. "/" .. source, driver = l.driver .. "/" .. driver_name, build = l.build, cwd = l.cwd }
end

-- The host's links among policy.links, read once: {path, link}.
local host_links
local function links()
  if not host_links then
    host_links = {}
    for _, path in ipairs(policy.links) do
      local st = fs.lstat(path)
      if st and st.kind == "link" then host_links[#host_links + 1] = { path = path, link = st.target } end
    end
  end
  return host_links
end

local function basename(path) return path:match "[^/]+$" end

--- The mounts of a role's root.  side = {capture = {inventory}, capture_dir,
--  driver_path, out_dir, built = {path}?}.  The side's own files are
--  copied into the root, never bound: a bind names its host directory in
--  /proc/self/mountinfo, and these live in the store.  Only a build binds
--  (and may write) its build directory; a run gets copies of what it built.
function M.mounts(role, side, chain)
  local l = policy.layout
  local mounts = json.array()
  local function add(m) mounts[#mounts + 1] = m end
  for _, path in ipairs(policy.system) do
    if fs.lstat(path) then add { type = "bind", source = path, target = path, executable = true } end
  end
  for _, ln in ipairs(links()) do add { type = "symlink", target = ln.path, link = ln.link } end
  for _, dev in ipairs(policy.devices) do
    add { type = "bind", source = dev, target = dev, devices = true, writable = dev == "/dev/null" }
  end
  add { type = "proc", target = "/proc" }
  -- /tmp before the toolchain: a toolchain kept under /tmp is bound on top
  add { type = "tmpfs", target = l.cwd, size_bytes = policy.tmp_bytes, mode = tonumber("1777", 8) }
  for _, dir in ipairs(M.toolchain_dirs(chain)) do add { type = "bind", source = dir, target = dir, executable = true } end
  for _, f in ipairs(side.capture.inventory) do
    add { type = "copy", source = side.capture_dir .. "/" .. f.path, target = l.project .. "/" .. f.path }
  end
  add { type = "copy", source = side.driver_path, target = l.driver .. "/" .. basename(side.driver_path) }
  if role == "build" then
    add { type = "bind", source = side.out_dir, target = l.build, writable = true }
  elseif side.built then
    add { type = "copy", source = side.built.path, target = l.build .. "/" .. basename(side.built.path),
          executable = true }
  end
  return mounts
end

--- The vkit.proc fields of a role's launch: {isolate, sandbox} (isolated)
--  or {sandbox} (Landlock's write rules on the host's paths).
function M.spec_fields(plan, role, side, chain)
  local l = policy.layout
  if plan.isolated then
    local write = { l.cwd, "/dev/null" }
    if role == "build" then write[#write + 1] = l.build end
    return {
      isolate = { mounts = M.mounts(role, side, chain), uid = policy.uid, gid = policy.gid, hostname = policy.hostname },
      sandbox = { write = write },
    }
  end
  if not plan.landlock then return {} end
  local write = { side.work_dir, "/tmp", "/dev/null" }
  if role == "build" then write[#write + 1] = side.out_dir end
  return { sandbox = { write = write } }
end

--- The layout as plain data (for a report).
function M.layout()
  local out = {}
  for k, v in pairs(policy.layout) do out[k] = v end
  return out
end

local S_IROTH, S_IXOTH = 4, 1

--- nil when the sandbox's user can read the toolchain (every directory
--  bound and every pinned file readable by others, directories and tools
--  searchable), else the first path it cannot and why.  Only asked when
--  that user is not vkit's own (vkit runs as root and isolates).
function M.unreadable(chain)
  local function check(path, want, what)
    local st = fs.lstat(fs.realpath(path) or path)
    if not st then return ("%s %s does not exist"):format(what, path) end
    if (st.mode & want) ~= want then
      return ("%s %s is not %s by others (mode %o): the sandbox runs it as uid %d"):format(what, path,
        want == S_IROTH and "readable" or want == S_IXOTH and "searchable" or "readable and executable", st.mode,
        policy.uid)
    end
  end
  for _, dir in ipairs(M.toolchain_dirs(chain)) do
    local why = check(dir, S_IXOTH, "the toolchain directory")
    if why then return why end
  end
  for name, tool in pairs(chain.tools) do
    if name ~= "dependencies" then
      local why = check(tool.path, S_IROTH | S_IXOTH, "the tool")
      if why then return why end
    end
  end
  for _, d in ipairs(chain.dependencies or {}) do
    local why = check(d.path, S_IROTH, "the toolchain file")
    if why then return why end
  end
end

--- What this machine allows: {isolated, landlock, reason (when not
--  isolated), namespaces, uid, gid}.  capabilities: vkit.proc.capabilities().
function M.plan(capabilities)
  local plan = { isolated = capabilities.isolation == true, landlock = (capabilities.landlock_abi or 0) > 0 }
  if not plan.isolated then
    plan.reason = ("this machine cannot isolate a process (%s): runs share the host's network, processes and "
      .. "paths%s"):format(capabilities.isolation_reason or "unknown",
      plan.landlock and ", with Landlock limiting their writes" or " and write wherever vkit's user may")
  end
  return plan
end

--- What was applied to one launch, from its vkit.proc result: a record
--  for the report {isolation, sandbox}, and whether it is the full sandbox.
function M.applied(result)
  local iso = result.isolation
  local full = type(iso) == "table" and result.sandbox ~= nil and result.sandbox ~= "none"
  return { isolation = iso or "none", landlock = result.sandbox or "none" }, full
end

return M
