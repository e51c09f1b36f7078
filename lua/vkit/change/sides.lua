--- Preparing base and candidate for a native method (finite_paired,
-- exhaustive): the semantic artifacts re-read at the target, the declared
-- tools measured, both sides captured once from their exact commits, a
-- driver generated per side and built where the language needs it.
--
-- The runtime identity is what vkit hashed, never what a document said.
local boot = require "vkit.boot"
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local artifacts = require "vkit.change.artifacts"
local intent = require "vkit.change.intent"
local toolchain = require "vkit.change.toolchain"
local sandbox = require "vkit.change.sandbox"
local admission = require "vkit.change.admission"
local proc = require "vkit.proc"
local sys = require "vkit.sys"
local limits = require("vkit.policy").limits.paired
local change_policy = require("vkit.policy").change
local policy_sandbox = change_policy.sandbox

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

--- Hashes the declared tools and their dependencies now, and records each
--  file's identity (vkit.proc.file_identity) beside its hash: the launches
--  that follow check the identity (an lstat) instead of the bytes.  nil and
--  the first difference from its pin.  cache (optional, one certification's):
--  a measurement whose identities are all unchanged is used again, so the
--  toolchain is hashed once per certification, not once per method.
function M.measure_toolchain(chain, cache)
  local key = hash.sha256(json.canonical { tools = chain.tools, dependencies = chain.dependencies })
  local known = cache and cache[key]
  if known then
    local unchanged = true
    for _, f in ipairs(known.identities) do
      if proc.file_identity(f.path) ~= f.identity then unchanged = false break end
    end
    if unchanged then return known.measured, known.identities end
  end
  local measured, identities = { tools = {}, dependencies = json.array() }, {}
  local function measure(what, path, pinned)
    local identity, imessage = proc.file_identity(path)
    local actual, message = hash.file(path)
    if actual ~= pinned then
      return nil, ("%s %s: pinned sha256 %s, actual %s"):format(what, path, pinned, tostring(actual or message))
    end
    -- the identity read before the bytes: a write while hashing changes it
    if not identity or proc.file_identity(path) ~= identity then
      return nil, ("%s %s changed while it was hashed (%s)"):format(what, path, tostring(imessage or "identity"))
    end
    identities[#identities + 1] = { path = path, identity = identity }
    return actual
  end
  local names = {}
  for name in pairs(chain.tools) do if name ~= "dependencies" then names[#names + 1] = name end end
  table.sort(names)
  for _, name in ipairs(names) do
    local tool = chain.tools[name]
    local actual, message = measure(name, tool.path, tool.sha256)
    if not actual then return nil, message end
    measured.tools[name] = { path = tool.path, sha256 = actual }
  end
  for _, dep in ipairs(chain.dependencies) do
    local actual, message = measure("dependency", dep.path, dep.sha256)
    if not actual then return nil, message end
    measured.dependencies[#measured.dependencies + 1] = { path = dep.path, sha256 = actual }
  end
  if cache then cache[key] = { measured = measured, identities = identities } end
  return measured, identities
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
  return identity, dest
end

-- Captures one side and writes its driver.
-- driver(language, module_path, fn, compiled_path) -> file name, source
local function stage_side(repo, bound, setup, runner, side_name, driver, admit_opts)
  local binding = setup.binding
  local commit = bound[side_name == "base" and "target" or "candidate"].commit
  local capture, capture_dir = capture_side(repo, commit, runner.dir, binding.source, runner, side_name)
  if not capture then return nil, "source", capture_dir end
  local side = { name = side_name, capture = capture, capture_dir = capture_dir,
                 module_path = capture_dir .. "/" .. binding.source,
                 driver_dir = ("%s/drivers/%s"):format(runner.dir, side_name),
                 out_dir = ("%s/build/%s"):format(runner.dir, side_name),
                 work_dir = ("%s/work/%s"):format(runner.dir, side_name) }
  assert(fs.mkdirs(side.out_dir))
  assert(fs.mkdirs(side.work_dir))
  assert(fs.mkdirs(side.driver_dir))
  -- Admission before trust: whether the side's source is inside the pure
  -- profile decides how its inputs are observed and what they establish.
  local max = require("vkit.policy").limits.admission.max_source_bytes
  local source, why = fs.read(side.module_path, max + 1, { nofollow = true })
  -- the multi-parameter profile: the declared signature must admit the contract's
  local contract = bound.intent.contract
  if admit_opts and admit_opts.signature and contract and contract.sig then
    admit_opts = setmetatable({ contract = contract.signature }, { __index = admit_opts })
  end
  side.admission = source and admission.admit(binding.language, binding.source, source, binding["function"], admit_opts)
    or admission.unread(binding.language, binding.source, binding["function"], why)
  -- The driver names the module where the side's processes see it.
  local inside = sandbox.view(setup.plan.isolated, side, binding.source, "")
  local compiled = binding.language == "typescript" and toolchain.compiled_path(inside.module, inside.build) or nil
  local driver_name, driver_source = driver(binding.language, inside.module, binding["function"], compiled,
    side.admission.admitted)
  side.driver_rel = ("drivers/%s/%s"):format(side_name, driver_name)
  side.driver_path = runner:retain(side.driver_rel, driver_source)
  side.view = sandbox.view(setup.plan.isolated, side, binding.source, driver_name)
  side.driver_pin = toolchain.file_pin(side.driver_path)
  side.module_pin = toolchain.file_pin(side.module_path)
  -- The run's fields need what the build made: they come after it.
  side.sandbox = { build = sandbox.spec_fields(setup.plan, "build", side, setup.chain) }
  return side
end

-- The build directory belongs to the sandbox's user while the build
-- writes it (vkit is root, the build is not), and to root again after.
local function own_build_dir(setup, side, building)
  if not (setup.plan.isolated and sys.euid() == 0) then return end
  local ids = building and policy_sandbox or { uid = 0, gid = 0 }
  if not building then
    for _, e in ipairs(fs.walk(side.out_dir) or {}) do assert(fs.chown(side.out_dir .. "/" .. e.path, ids.uid, ids.gid)) end
  end
  assert(fs.chown(side.out_dir, ids.uid, ids.gid))
end

local function build_side(setup, runner, side)
  local binding = setup.binding
  local build, output = toolchain.build_spec(binding.language, setup, side)
  if not build then return side end
  runner.progress(("building %s (%s)"):format(side.name, binding.language))
  own_build_dir(setup, side, true)
  local result, why = runner:launch("build " .. side.name, build, limits.build_deadline_ms, { role = "build" })
  own_build_dir(setup, side, false)
  if not result then return nil, why, "no budget or time left to build" end
  if result.status == "pin-mismatch" then return nil, "pin", result.message end
  if result.status == "launch-failed" then return nil, "launch", result.message end
  if result.status == "cancelled" or result.status == "timeout" then
    return nil, result.status, ("the %s build did not finish (%s)"):format(side.name, result.status)
  end
  if result.status ~= "exited" or result.code ~= 0 then
    return nil, "build", ("the %s build failed (%s %s): %s"):format(side.name, result.status, tostring(result.code),
      (result.stderr or ""):sub(1, 2000))
  end
  local built = fs.lstat(output)
  if not built or built.kind ~= "file" then return nil, "build", "the build produced no " .. output end
  side.built = toolchain.file_pin(output)
  side.built_rel = output:sub(#runner.dir + 2)
  runner:retain_existing(side.built_rel)
  -- Every later launch checks that this output is still what was built.
  setup.identities[#setup.identities + 1] = { path = output, identity = assert(proc.file_identity(output)) }
  return side
end

--- Everything a native method needs before it observes anything.
--  Returns setup = {binding, observation_policy, chain, env, measured,
--  runtime_identity, plan (the sandbox), checked, identities, sides =
--  {base, candidate}, source_captures}, or nil, status, reason, message
--  (status unknown for budget, deadline, cancellation and unsupported
--  declarations; infrastructure_failure otherwise).
--  opts.toolchain_cache: see measure_toolchain; opts.admission: the options
--  vkit.change.admission.admit takes (the multi-parameter profile's
--  {signature = true}).
function M.prepare(repo, bound, runner, driver, opts)
  local parsed, status, reason, message = read_artifacts(repo, bound, runner)
  if not parsed then return nil, status, reason, message end
  local setup = { binding = parsed.binding_map, observation_policy = parsed.observation_policy }
  local chain
  chain, message = artifacts.toolchain(parsed.environment_model, setup.binding.language)
  if not chain then return nil, "unknown", "unsupported-declaration", message, setup end
  -- a declared toolchain root this host keeps elsewhere (the host's choice)
  local relocated
  chain, relocated = require("vkit.change.relocate").chain(chain, opts and opts.toolchain_roots)
  local measured, identities = M.measure_toolchain(chain, opts and opts.toolchain_cache)
  if not measured then return nil, "infrastructure_failure", "pin-mismatch", identities, setup end
  setup.chain, setup.measured, setup.identities = chain, measured, {}
  for i, f in ipairs(identities) do setup.identities[i] = f end
  setup.env = artifacts.env(parsed.environment_model)
  setup.plan = sandbox.plan(proc.capabilities())
  if setup.plan.isolated and sys.euid() == 0 then
    local why = sandbox.unreadable(chain)
    if why then return nil, "infrastructure_failure", "sandbox-unreadable", why, setup end
  end
  setup.runtime_identity = { language = setup.binding.language, tools = measured.tools,
                             dependencies = measured.dependencies, env = setup.env,
                             dependencies_hashed_by = "vkit, once before the first launch; each launch then "
                               .. "checks every file's identity (device, inode, size, mtime, ctime)",
                             identities = json.array(identities) }
  if #relocated > 0 then setup.runtime_identity.toolchain_roots = relocated end
  -- Both sides are captured and their drivers written before anything
  -- runs: every launch, builds included, re-checks both.
  setup.sides, setup.source_captures, setup.checked, setup.admission = {}, json.object(), {}, json.object()
  for _, s in ipairs(M.SIDES) do
    local side, why, detail = stage_side(repo, bound, setup, runner, s, driver, opts and opts.admission)
    if not side then return nil, "infrastructure_failure", why, detail, setup end
    setup.sides[s] = side
    setup.admission[s] = side.admission
    setup.checked[#setup.checked + 1] = side.module_pin
    setup.checked[#setup.checked + 1] = side.driver_pin
    setup.source_captures[s] = { commit = side.capture.commit, tree = side.capture.tree,
                                 inventory_digest = side.capture.inventory_digest, inventory = side.capture.inventory }
  end
  for _, s in ipairs(M.SIDES) do
    local side, why, detail = build_side(setup, runner, setup.sides[s])
    if side then side.sandbox.run = sandbox.spec_fields(setup.plan, "run", side, setup.chain) end
    if not side then
      if why == "budget" or why == "deadline" or why == "cancelled" or why == "timeout" then
        return nil, "unknown", why, detail, setup
      end
      return nil, "infrastructure_failure", why, detail, setup
    end
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
  local code = {}
  for _, name in ipairs(names) do
    code[name] = assert(hash.file(("%s/lua/vkit/change/%s.lua"):format(boot.root, name)))
  end
  return code
end

return M
