--- Writing an external-verifier manifest entry (seed 000): the component
-- policy, the package and the manifest pins, with every executable and
-- dependency pinned by SHA-256.  Returns bytes; the caller commits them
-- through its own review.  What it writes is parsed back by the same
-- parsers `vkit verify` uses, so an entry it returns is one vkit accepts.
--
--   entry{component, checks = {{id, claim, assurance, evidence, producer, checker}},
--         files = {[path] = bytes}, inputs = {paths}?, manifest = bytes?}
--   -> {[path] = bytes} (the policy, the package and verification/manifest.json)
--      | nil, message, code
--
-- A command is {executable, argv, dependencies?, trusted_tool_dependencies?,
-- deadline_ms?}: the executable an absolute host path (hashed now) or a
-- {path, sha256} pin taken as given; a dependency a repository path
-- (hashed from `files`), an absolute host path (hashed now) or a pin.
local json = require "vkit.json"
local hash = require "vkit.hash"
local manifest = require "vkit.protocol.manifest"
local identity = require "vkit.protocol.identity"
local layout = require("vkit.policy").protocol.layout

local M = {}

M.DEFAULT_DEADLINE_MS = require("vkit.policy").protocol.caps.default_deadline_ms

local function pin_of(item, files, what)
  if type(item) == "table" then return { path = item.path, sha256 = item.sha256 } end
  if type(item) ~= "string" then error(("%s must be a path or a {path, sha256} pin"):format(what), 5) end
  if item:sub(1, 1) == "/" then
    local sha, message, code = hash.file(item)
    if not sha then return nil, ("%s %s cannot be pinned: %s"):format(what, item, message), code end
    return { path = item, sha256 = sha }
  end
  local bytes = files[item]
  if type(bytes) ~= "string" then
    return nil, ("%s %s is not among the repository files given"):format(what, item), "dependency-not-in-files"
  end
  return { path = item, sha256 = hash.sha256(bytes) }
end

local function command(spec, files, role)
  if type(spec) ~= "table" then error(role .. " must be a table", 3) end
  local pins, message, code = identity.pin_command(spec, role, function(item, what) return pin_of(item, files, what) end)
  if not pins then return nil, message, code end
  pins.argv = json.array(spec.argv)
  pins.deadline_ms = spec.deadline_ms or M.DEFAULT_DEADLINE_MS
  return pins
end

local function encode(doc) return json.encode(doc, { indent = 2 }) .. "\n" end

function M.entry(spec)
  if type(spec) ~= "table" or type(spec.component) ~= "string" then error("entry needs {component, checks, files}", 2) end
  local files = spec.files or {}
  local checks = json.array()
  for i, c in ipairs(spec.checks or {}) do
    local producer, message, code = command(c.producer, files, "producer")
    if not producer then return nil, message, code end
    local checker
    checker, message, code = command(c.checker, files, "checker")
    if not checker then return nil, message, code end
    checks[i] = {
      id = c.id,
      claim = { specification = c.claim.specification, obligations = json.array(c.claim.obligations),
                assumptions = json.array(c.claim.assumptions or {}), model_scope = c.claim.model_scope or "" },
      assurance = c.assurance, evidence = json.array(c.evidence), producer = producer, checker = checker,
    }
  end
  local inputs = spec.inputs
  if not inputs then
    inputs = {}
    for path in pairs(files) do inputs[#inputs + 1] = path end
    table.sort(inputs)
  end
  local policy_path = ("verification/%s.policy.json"):format(spec.component)
  local package_path = ("verification/%s.package.json"):format(spec.component)
  local out = {
    [policy_path] = encode { schema_version = 1, component = spec.component, checks = checks },
    [package_path] = encode { schema_version = 1, component = spec.component, inputs = json.array(inputs) },
  }
  local ok, message, code = manifest.parse_policy(out[policy_path], spec.component, policy_path)
  if not ok then return nil, message, code end
  ok, message, code = manifest.parse_package(out[package_path], spec.component, package_path)
  if not ok then return nil, message, code end
  -- Other components of an existing manifest are kept as they are.
  local components = json.object()
  if spec.manifest then
    local existing
    existing, message, code = manifest.parse_manifest(spec.manifest)
    if not existing then return nil, message, code end
    for name, entry in pairs(existing.components) do components[name] = entry end
  end
  components[spec.component] = {
    claim_version = 2,
    policy = { path = policy_path, sha256 = hash.sha256(out[policy_path]) },
    package = { path = package_path, sha256 = hash.sha256(out[package_path]) },
  }
  out[layout.manifest] = encode { schema_version = 2, components = components }
  return out
end

return M
