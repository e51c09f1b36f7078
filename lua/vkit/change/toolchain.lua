--- Building and launching u32 drivers per language (seed 001's profile).
--
-- Each function returns vkit.proc specs; nothing here launches anything.
-- Tools come from the environment model and are pinned by hash: the
-- executable through vkit.proc's exe pin, everything else read as code
-- (toolchain libraries, the driver, the captured module, compiled output)
-- through its dependency pins, re-hashed immediately before each launch.
local hash = require "vkit.hash"
local drivers = require "vkit.change.drivers"

local M = {}

local function pins(exe_sha256, files)
  local list = {}
  for _, f in ipairs(files) do list[#list + 1] = { path = f.path, sha256 = f.sha256 } end
  return { exe_sha256 = exe_sha256, files = list }
end

local function file_pin(path)
  return { path = path, sha256 = assert(hash.file(path)) }
end

--- The driver file name and source for a side.
--  module_path: the captured module (absolute); compiled_path for TS.
function M.driver(language, module_path, fn, compiled_path)
  if language == "rust" then return "driver.rs", drivers.rust(module_path, fn) end
  if language == "python" then return "driver.py", drivers.python(module_path, fn) end
  return "driver.js", drivers.typescript(compiled_path, fn)
end

--- Where a TypeScript module compiles to inside out_dir.
function M.compiled_path(module_path, out_dir)
  return out_dir .. "/" .. module_path:match "([^/]+)%.ts$" .. ".js"
end

--- The build step of a side: a vkit.proc spec and the file it produces, or
--  nil when the language needs no build.  side = {module_path, driver_path, out_dir}
function M.build_spec(language, chain, side, env)
  local deps = chain.dependencies
  if language == "rust" then
    local rustc = chain.tools.rustc
    local files = { file_pin(side.driver_path), file_pin(side.module_path) }
    for _, d in ipairs(deps) do files[#files + 1] = d end
    return {
      exe = rustc.path,
      argv = { rustc.path, "--edition=2021", "-C", "opt-level=1", "-C", "debuginfo=0", "--crate-type=bin",
               "--crate-name=vkit_driver", "-o", side.out_dir .. "/driver", side.driver_path },
      env = env, cwd = side.out_dir, pins = pins(rustc.sha256, files),
    }, side.out_dir .. "/driver"
  elseif language == "typescript" then
    local tsc = chain.tools.tsc
    local files = { file_pin(side.module_path) }
    for _, d in ipairs(deps) do files[#files + 1] = d end
    return {
      exe = tsc.path,
      argv = { tsc.path, "--target", "es2020", "--module", "commonjs", "--strict", "--noEmitOnError",
               "--skipLibCheck", "--pretty", "false", "--outDir", side.out_dir, side.module_path },
      env = env, cwd = side.out_dir, pins = pins(tsc.sha256, files),
    }, M.compiled_path(side.module_path, side.out_dir)
  end
  return nil
end

--- Whether the language's build pins every toolchain dependency (so
--  vkit.proc hashes them immediately before the build).
function M.pins_dependencies_at_build(language)
  return language == "rust" or language == "typescript"
end

--- The launch of one observation: stdin carries the four input bytes.
--  side.built = {path, sha256} of the build output where there is one.
function M.run_spec(language, chain, side, env, input_bytes)
  local spec = { env = env, cwd = side.work_dir, stdin = input_bytes }
  if language == "rust" then
    spec.exe = side.built.path
    spec.argv = { side.built.path }
    spec.pins = pins(side.built.sha256, {})
  elseif language == "python" then
    local py = chain.tools.python3
    spec.exe = py.path
    spec.argv = { py.path, "-I", "-B", side.driver_path }
    spec.pins = pins(py.sha256, { side.driver_pin, side.module_pin })
  else
    local node = chain.tools.node
    spec.exe = node.path
    spec.argv = { node.path, side.driver_path }
    spec.pins = pins(node.sha256, { side.driver_pin, side.built })
  end
  return spec
end

M.file_pin = file_pin

return M
