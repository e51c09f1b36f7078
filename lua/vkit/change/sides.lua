--- Preparing base and candidate for a native method (finite_paired,
-- exhaustive): the semantic artifacts re-read at the target, the declared
-- tools measured, both sides captured once from their exact commits, a
-- driver generated per side and built where the language needs it.
--
-- The runtime identity is what vkit hashed, never what a document said.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local artifacts = require "vkit.change.artifacts"
local intent = require "vkit.change.intent"
local toolchain = require "vkit.change.toolchain"
local limits = require("vkit.policy").limits.paired
local change_policy = require("vkit.policy").change

local M = {}

M.SIDES = { "base", "candidate" }

local function read_artifacts(repo, bound, runner)
  local parsed = {}
  for _, name in ipairs(intent.ARTIFACTS) do
    local pin = bound.intent.artifacts[name]
    local blob, message = repo:read(bound.target.commit, pin.path, change_policy.caps.artifact_bytes)
    if not blob or hash.sha256(blob.bytes) ~= pin.sha256 then
      return nil, "infrastructure_failure", "source", ("the %s cannot be re-read at the target: %s"):format(name, tostring(message))
    end
    runner:retain("artifacts/" .. name .. ".json", blob.bytes)
    local doc, pmessage = artifacts.parse(name, blob.bytes)
    if not doc then return nil, "unknown", "unsupported-declaration", pmessage end
    parsed[name] = doc
  end
  return parsed
end

--- Hashes the declared tools and (unless `skip_dependencies`) their
--  dependencies now; nil and the first difference from their pins.
function M.measure_toolchain(chain, skip_dependencies)
  local measured = { tools = {}, dependencies = json.array() }
  for name, tool in pairs(chain.tools) do
    if name ~= "dependencies" then
      local actual, message = hash.file(tool.path)
      if actual ~= tool.sha256 then
        return nil, ("%s %s: pinned sha256 %s, actual %s"):format(name, tool.path, tool.sha256, tostring(actual or message))
      end
      measured.tools[name] = { path = tool.path, sha256 = actual }
    end
  end
  for _, dep in ipairs(skip_dependencies and {} or chain.dependencies) do
    local actual, message = hash.file(dep.path)
    if actual ~= dep.sha256 then
      return nil, ("dependency %s: pinned sha256 %s, actual %s"):format(dep.path, dep.sha256, tostring(actual or message))
    end
    measured.dependencies[#measured.dependencies + 1] = { path = dep.path, sha256 = actual }
  end
  return measured
end

local function capture_side(repo, commit, dir, source, runner, side_name)
  assert(fs.mkdirs(dir .. "/captures"))
  local dest = dir .. "/captures/" .. side_name
  local identity, message, code = repo:capture(commit, dest, { source })
  if not identity then
    return nil, ("cannot capture %s at the %s commit: %s (%s)"):format(source, side_name, message, code)
  end
  local ok, vmessage = require("vkit.git").verify_capture(dest, identity)
  if not ok then return nil, "the capture does not verify: " .. vmessage end
  for _, f in ipairs(identity.inventory) do runner:retain_existing(("captures/%s/%s"):format(side_name, f.path)) end
  return identity, dest .. "/" .. source
end

-- driver(language, module_path, fn, compiled_path) -> file name, source
local function prepare_side(repo, bound, setup, runner, side_name, driver)
  local binding, chain, env = setup.binding, setup.chain, setup.env
  local commit = bound[side_name == "base" and "target" or "candidate"].commit
  local capture, module_path = capture_side(repo, commit, runner.dir, binding.source, runner, side_name)
  if not capture then return nil, "source", module_path end
  local side = { name = side_name, capture = capture, module_path = module_path,
                 out_dir = ("%s/build/%s"):format(runner.dir, side_name), work_dir = ("%s/work/%s"):format(runner.dir, side_name) }
  assert(fs.mkdirs(side.out_dir))
  assert(fs.mkdirs(side.work_dir))
  local compiled = binding.language == "typescript" and toolchain.compiled_path(module_path, side.out_dir) or nil
  local driver_name, driver_source = driver(binding.language, module_path, binding["function"], compiled)
  side.driver_rel = ("drivers/%s/%s"):format(side_name, driver_name)
  side.driver_path = runner:retain(side.driver_rel, driver_source)
  side.driver_pin = toolchain.file_pin(side.driver_path)
  side.module_pin = toolchain.file_pin(module_path)
  local build, output = toolchain.build_spec(binding.language, chain, side, env)
  if build then
    runner.progress(("building %s (%s)"):format(side_name, binding.language))
    local result, why = runner:launch("build " .. side_name, build, limits.build_deadline_ms)
    if not result then return nil, why, "no budget or time left to build" end
    if result.status == "pin-mismatch" then return nil, "pin", result.message end
    if result.status == "cancelled" or result.status == "timeout" then
      return nil, result.status, ("the %s build did not finish (%s)"):format(side_name, result.status)
    end
    if result.status ~= "exited" or result.code ~= 0 then
      return nil, "build", ("the %s build failed (%s %s): %s"):format(side_name, result.status, tostring(result.code),
        (result.stderr or ""):sub(1, 2000))
    end
    local built = fs.lstat(output)
    if not built or built.kind ~= "file" then return nil, "build", "the build produced no " .. output end
    side.built = toolchain.file_pin(output)
    side.built_rel = output:sub(#runner.dir + 2)
    runner:retain_existing(side.built_rel)
  end
  return side
end

--- Everything a native method needs before it observes anything.
--  Returns setup = {binding, observation_policy, chain, env, measured,
--  runtime_identity, sides = {base, candidate}, source_captures}, or nil,
--  status, reason, message (status unknown for budget, deadline,
--  cancellation and unsupported declarations; infrastructure_failure
--  otherwise).
function M.prepare(repo, bound, runner, driver)
  local parsed, status, reason, message = read_artifacts(repo, bound, runner)
  if not parsed then return nil, status, reason, message end
  local setup = { binding = parsed.binding_map, observation_policy = parsed.observation_policy }
  local chain
  chain, message = artifacts.toolchain(parsed.environment_model, setup.binding.language)
  if not chain then return nil, "unknown", "unsupported-declaration", message, setup end
  -- Where a build pins every dependency (Rust, TypeScript), vkit.proc
  -- hashes them immediately before the build runs; hashing them here too
  -- would read the same half gigabyte twice.  The identity lists them once
  -- that pin check has passed.
  local built_language = toolchain.pins_dependencies_at_build(setup.binding.language)
  local measured
  measured, message = M.measure_toolchain(chain, built_language)
  if not measured then return nil, "infrastructure_failure", "pin-mismatch", message, setup end
  setup.chain, setup.measured = chain, measured
  setup.env = artifacts.env(parsed.environment_model)
  setup.runtime_identity = { language = setup.binding.language, tools = measured.tools,
                             dependencies = measured.dependencies, env = setup.env,
                             dependencies_hashed_by = built_language and "the build's pin check, immediately before it ran"
                               or "vkit, before the first launch" }
  setup.sides, setup.source_captures = {}, json.object()
  for _, s in ipairs(M.SIDES) do
    local side, why, detail = prepare_side(repo, bound, setup, runner, s, driver)
    if not side then
      if why == "budget" or why == "deadline" or why == "cancelled" or why == "timeout" then
        return nil, "unknown", why, detail, setup
      end
      return nil, "infrastructure_failure", why, detail, setup
    end
    setup.sides[s] = side
    if built_language and #measured.dependencies == 0 then
      for i, dep in ipairs(chain.dependencies) do measured.dependencies[i] = { path = dep.path, sha256 = dep.sha256 } end
    end
    setup.source_captures[s] = { commit = side.capture.commit, tree = side.capture.tree,
                                 inventory_digest = side.capture.inventory_digest, inventory = side.capture.inventory }
  end
  return setup
end

--- The drivers and build outputs of the sides, as a report lists them.
function M.files(setup)
  local drivers, builds = json.array(), json.array()
  for _, s in ipairs(M.SIDES) do
    local side = setup.sides and setup.sides[s]
    if side then
      drivers[#drivers + 1] = { side = s, path = side.driver_rel, sha256 = side.driver_pin.sha256 }
      if side.built then builds[#builds + 1] = { side = s, path = side.built_rel, sha256 = side.built.sha256 } end
    end
  end
  return drivers, builds
end

--- Hashes of the modules that make up a runner, for its identity.
function M.code_identity(names)
  local vkit = require "vkit"
  local code = {}
  for _, name in ipairs(names) do
    code[name] = assert(hash.file(("%s/lua/vkit/change/%s.lua"):format(vkit.root, name)))
  end
  return code
end

return M
