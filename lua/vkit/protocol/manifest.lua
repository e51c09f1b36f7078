--- The accepted external-verifier manifest (seed 000; seed 001's version 2
-- package claims).  Three documents, all read from an exact commit:
--
-- verification/manifest.json — which components exist, each pinned:
--   { "schema_version": 2,
--     "components": { "<name>": { "claim_version": 2,
--                                 "policy":  { "path": P, "sha256": H },
--                                 "package": { "path": P, "sha256": H } } } }
--
-- the component policy (its pinned path) — the approved check entries:
--   { "schema_version": 1, "component": "<name>",
--     "checks": [ {
--        "id": "<check id>",
--        "claim": { "specification": P, "obligations": ["..."],
--                   "assumptions": ["..."], "model_scope": "..." },
--        "assurance": "<requested assurance label>",
--        "evidence": ["<path relative to run_dir/evidence/>", ...],
--        "producer": COMMAND, "checker": COMMAND } ] }
--   COMMAND = { "executable": { "path": "/abs/path", "sha256": H },
--               "argv": ["{{python}}", "script.py", "{{request}}"],
--               "dependencies": [ { "path": A, "sha256": H } ],
--               "trusted_tool_dependencies": [ { "path": A, "sha256": H } ],
--               "deadline_ms": n }
--   A dependency path is absolute (a host file) or a normalised path inside
--   the frozen snapshot (a script from the repository).
--
-- the package (its pinned path) — the exact declared inputs:
--   { "schema_version": 1, "component": "<name>", "inputs": [P, ...] }
--   The specification is always included, listed or not.
--
-- P is a normalised repository-relative POSIX path.  Everything is strict:
-- unknown or missing fields, non-normalised paths, duplicate obligations,
-- artifacts, inputs or check ids, and unknown placeholders are named errors.
local json = require "vkit.json"
local S = require "vkit.schema"
local paths = require "vkit.paths"
local placeholders = require "vkit.protocol.placeholders"
local policy = require("vkit.policy").protocol

local M = {}

local normal_path = S.normal_path
local sizes = policy.schema

-- An absolute path is normal when its remainder is a normal relative path.
local function check_absolute(p)
  if p:sub(1, 1) ~= "/" then return nil, "bad-format", ("%q is not absolute"):format(p) end
  local ok, _, message = paths.check(p:sub(2))
  if not ok then return nil, "bad-format", message end
  return true
end

local absolute_path = S.check_with(S.string(), check_absolute)
local dependency_path = S.check_with(S.string(), function(p)
  if p:sub(1, 1) == "/" then return check_absolute(p) end
  local ok, _, message = paths.check(p)
  if ok then return true end
  return nil, "bad-format", message
end)

local pin = S.object { path = normal_path, sha256 = S.sha256 }
local dependency = S.object { path = dependency_path, sha256 = S.sha256 }
local name = S.string { pattern = "^[%w][%w._-]*$", max = sizes.max_name_bytes,
                        what = "a name of letters, digits, '.', '_' or '-'" }

local command = S.object {
  executable = S.object { path = absolute_path, sha256 = S.sha256 },
  argv = S.array(S.string { max = sizes.max_arg_bytes }, { min = 1, max = sizes.max_argv }),
  dependencies = S.array(dependency, { max = sizes.max_dependencies, unique = true }),
  trusted_tool_dependencies = S.array(dependency, { max = sizes.max_dependencies, unique = true }),
  deadline_ms = S.integer { min = 1, max = policy.caps.max_deadline_ms },
}

M.manifest_schema = S.object {
  schema_version = S.const(2),
  components = S.map(S.object { claim_version = S.integer(), policy = pin, package = pin },
                     { key_pattern = "^[%w][%w._-]*$", key_what = "a component name", max = sizes.max_components }),
}

M.policy_schema = S.object {
  schema_version = S.const(1),
  component = name,
  checks = S.array(S.object {
    id = name,
    claim = S.object {
      specification = normal_path,
      obligations = S.array(S.string { min = 1, max = sizes.max_obligation_bytes },
                            { min = 1, max = sizes.max_obligations, unique = true }),
      assumptions = S.array(S.string { max = sizes.max_text_bytes }, { max = sizes.max_assumptions }),
      model_scope = S.string { max = sizes.max_text_bytes },
    },
    assurance = S.string { min = 1, max = sizes.max_assurance_bytes },
    evidence = S.array(normal_path, { min = 1, max = sizes.max_evidence, unique = true }),
    producer = command,
    checker = command,
  }, { min = 1, max = sizes.max_checks }),
}

M.package_schema = S.object {
  schema_version = S.const(1),
  component = name,
  inputs = S.array(normal_path, { max = sizes.max_inputs, unique = true }),
}

local function refuse(code, fmt, ...)
  return nil, fmt:format(...), code
end

local function decode(bytes, what)
  local doc, message, code = json.decode(bytes)
  if doc == nil then return refuse(code, "%s is not valid JSON: %s", what, message) end
  return doc
end

--- Parses manifest bytes: {components = {name = {claim_version, policy, package}}}.
function M.parse_manifest(bytes, what)
  what = what or policy.layout.manifest
  local doc, message, code = decode(bytes, what)
  if not doc then return nil, message, code end
  if json.kind(doc) == "object" and doc.schema_version ~= 2 then
    return refuse("unsupported-claim-version", "%s has schema_version %s: public verification accepts only version 2 "
      .. "package claims with exact component-policy and package SHA-256 pins", what, tostring(doc.schema_version))
  end
  local ok, err = S.check(M.manifest_schema, doc)
  if not ok then return refuse("manifest-invalid", "%s: %s", what, S.explain(err)) end
  return doc
end

--- The pins of one component, refusing anything but a version 2 claim.
function M.component(manifest, component)
  local entry = manifest.components[component]
  if not entry then return refuse("unknown-component", "the manifest has no component %q", tostring(component)) end
  if entry.claim_version ~= policy.claim_version then
    return refuse("unsupported-claim-version", "component %s declares claim_version %s: only version %d package "
      .. "claims with exact component-policy and package SHA-256 pins are accepted", component,
      tostring(entry.claim_version), policy.claim_version)
  end
  return entry
end

local function check_command(check, role)
  local problem = placeholders.unknown(check[role].argv)
  if problem then return refuse("unknown-placeholder", "check %s %s: %s", check.id, role, problem) end
  return true
end

--- Parses a component policy: {component, checks = {...}, by_id = {...}}.
function M.parse_policy(bytes, component, what)
  what = what or "component policy"
  local doc, message, code = decode(bytes, what)
  if not doc then return nil, message, code end
  local ok, err = S.check(M.policy_schema, doc)
  if not ok then
    local reason = err.code == "duplicate-item" and err.path:match "evidence" and "duplicate-artifact"
      or err.code == "duplicate-item" and err.path:match "obligations" and "duplicate-obligation"
      or "manifest-invalid"
    return refuse(reason, "%s: %s", what, S.explain(err))
  end
  if doc.component ~= component then
    return refuse("manifest-invalid", "%s describes component %s, not %s", what, doc.component, component)
  end
  local by_id = {}
  for _, check in ipairs(doc.checks) do
    if by_id[check.id] then return refuse("duplicate-check", "%s lists check %s twice", what, check.id) end
    by_id[check.id] = check
    for _, role in ipairs { "producer", "checker" } do
      ok, message, code = check_command(check, role)
      if not ok then return nil, message, code end
    end
  end
  return { component = doc.component, checks = doc.checks, by_id = by_id }
end

--- Parses a package: {inputs = sorted paths}.
function M.parse_package(bytes, component, what)
  what = what or "package"
  local doc, message, code = decode(bytes, what)
  if not doc then return nil, message, code end
  local ok, err = S.check(M.package_schema, doc)
  if not ok then
    return refuse(err.code == "duplicate-item" and "duplicate-input" or "manifest-invalid", "%s: %s", what, S.explain(err))
  end
  if doc.component ~= component then
    return refuse("manifest-invalid", "%s describes component %s, not %s", what, doc.component, component)
  end
  return { inputs = doc.inputs }
end

--- The declared inputs of a check: the package's inputs plus the
--  specification, sorted and unique.
function M.inputs(package, check)
  local set, list = {}, {}
  for _, p in ipairs(package.inputs) do set[p] = true end
  set[check.claim.specification] = true
  for p in pairs(set) do list[#list + 1] = p end
  table.sort(list)
  return list
end

--- The check digest: the digest of the approved manifest entry.
function M.check_digest(check)
  return json.digest(check)
end

return M
