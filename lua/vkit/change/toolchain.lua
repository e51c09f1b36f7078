--- Building and launching u32 drivers per language (seed 001's profile).
--
-- Each function returns vkit.proc specs; nothing here launches anything.
-- Every launch is sandboxed (vkit.change.sandbox: its own namespaces and
-- root, an unprivileged uid when vkit is root) and sees the side's files
-- where the sandbox puts them (side.view); pins name the host's files.
--
-- What every launch re-checks immediately before it starts (vkit.proc's
-- pins, in C): the executable's bytes (hashed at its first instruction);
-- the SHA-256 of every file the certification's outcome rests on and that
-- is small — both sides' captured sources, both drivers, the build outputs
-- this launch reads; and the file identity (device, inode, size, mtime,
-- ctime) of every toolchain file, hashed in full once per certification
-- (vkit.change.sides.measure_toolchain).  Re-hashing a 500 MB Rust
-- toolchain before each of up to 128 launches would cost more than the
-- launches; once the sandbox denies every launched process write access to
-- it, an unchanged identity is enough to say the hashed bytes are still
-- there.
local hash = require "vkit.hash"
local drivers = require "vkit.change.drivers"

local M = {}

local function file_pin(path)
  return { path = path, sha256 = assert(hash.file(path)) }
end
M.file_pin = file_pin

--- The driver file name and source for a side.
--  module_path: the captured module as the driver sees it; compiled_path for TS.
function M.driver(language, module_path, fn, compiled_path)
  if language == "rust" then return "driver.rs", drivers.rust(module_path, fn) end
  if language == "python" then return "driver.py", drivers.python(module_path, fn) end
  return "driver.js", drivers.typescript(compiled_path, fn)
end

--- Where a TypeScript module compiles to inside out_dir.
function M.compiled_path(module_path, out_dir)
  return out_dir .. "/" .. module_path:match "([^/]+)%.ts$" .. ".js"
end

-- The pins of one launch.  setup.checked: the files every launch re-hashes
-- (both sides' captures and drivers); setup.identities: the toolchain's
-- and other build outputs' identities; extra: this launch's own inputs.
local function pins(setup, exe_sha256, extra)
  local files = {}
  for _, f in ipairs(setup.checked) do files[#files + 1] = { path = f.path, sha256 = f.sha256 } end
  for _, f in ipairs(extra or {}) do files[#files + 1] = { path = f.path, sha256 = f.sha256 } end
  local identities = {}
  for _, f in ipairs(setup.identities) do identities[#identities + 1] = { path = f.path, identity = f.identity } end
  return { exe_sha256 = exe_sha256, files = files, identities = identities }
end

-- The role's sandbox fields (shared by a side's launches, never changed)
-- on the spec; an isolated launch execs its executable by its path in the
-- root (inside_exe), so that the path it sees of itself is that one.
local function with_sandbox(spec, fields, inside_exe)
  for k, v in pairs(fields or {}) do spec[k] = v end
  if spec.isolate then
    local isolate = {}
    for k, v in pairs(spec.isolate) do isolate[k] = v end
    isolate.exe = inside_exe
    spec.isolate = isolate
  end
  return spec
end

--- The build step of a side: a vkit.proc spec and the host path of the
--  file it produces, or nil when the language needs no build.
--  side = {view, out_dir, sandbox = {build, run}}
function M.build_spec(language, setup, side)
  local chain, view = setup.chain, side.view
  if language == "rust" then
    local rustc = chain.tools.rustc
    return with_sandbox({
      exe = rustc.path,
      argv = { rustc.path, "--edition=2021", "-C", "opt-level=1", "-C", "debuginfo=0", "-C", "overflow-checks=on",
               "--crate-type=bin",
               "--crate-name=vkit_driver", "-o", view.build .. "/driver", view.driver },
      env = setup.env, cwd = view.cwd, pins = pins(setup, rustc.sha256),
    }, side.sandbox.build, rustc.path), side.out_dir .. "/driver"
  elseif language == "typescript" then
    local tsc = chain.tools.tsc
    return with_sandbox({
      exe = tsc.path,
      argv = { tsc.path, "--target", "es2020", "--module", "commonjs", "--strict", "--noEmitOnError",
               "--skipLibCheck", "--pretty", "false", "--outDir", view.build, view.module },
      env = setup.env, cwd = view.cwd, pins = pins(setup, tsc.sha256),
    }, side.sandbox.build, tsc.path), M.compiled_path(side.module_path, side.out_dir)
  end
  return nil
end

--- The launch of one observation (or one batch): stdin carries the input
--  bytes.  side.built = {path, sha256} of the build output where there is one.
function M.run_spec(language, setup, side, input_bytes)
  local chain, view = setup.chain, side.view
  local spec = { env = setup.env, cwd = view.cwd, stdin = input_bytes }
  if language == "rust" then
    spec.exe = side.built.path
    spec.argv = { view.build .. "/driver" }
    spec.pins = pins(setup, side.built.sha256)
  elseif language == "python" then
    local py = chain.tools.python3
    spec.exe = py.path
    spec.argv = { py.path, "-I", "-B", view.driver }
    spec.pins = pins(setup, py.sha256)
  else
    local node = chain.tools.node
    spec.exe = node.path
    spec.argv = { node.path, view.driver }
    spec.pins = pins(setup, node.sha256, { side.built })
  end
  return with_sandbox(spec, side.sandbox.run, spec.argv[1])
end

return M
