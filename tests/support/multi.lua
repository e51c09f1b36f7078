--- Real Git repositories with an accepted intent of the multi-parameter
--  profile (issue 34), for the specs: the documents written directly
--  (authoring them from `vkit change intent init` is later work).
local vkit = require "vkit"
local json = vkit.json
local hash = vkit.hash
local intent = require "vkit.change.intent"
local host_tools = require "vkit.change.host_tools"
local intents = require "tests.support.intents"
local layout = vkit.policies.change.layout

local M = {}

local EXT = { python = "py", rust = "rs", typescript = "ts" }

--- The signature's JSON form: params = {{"x","i32"}, ...}, returns = "i32" | {...}.
function M.signature(params, returns)
  local list = json.array()
  for i, p in ipairs(params) do list[i] = { name = p[1], type = p[2] } end
  return { params = list, returns = type(returns) == "table" and json.array(returns) or returns }
end

--- The codec artifact's bytes for a signature.
function M.codec(sig)
  return json.encode { schema_version = 2, signature = sig, input = "fixed-le", output = "tuple-text-line" } .. "\n"
end

local function requirements_json(list)
  local out = json.array()
  for i, r in ipairs(list or {}) do
    local inputs = json.object()
    for k, v in pairs(r.inputs or {}) do inputs[k] = v end
    out[i] = { inputs = inputs, outputs = json.array(r.outputs) }
  end
  return out
end

--- A project: spec = {language, fn, signature (JSON form), inputs = {name =
--  set text}, observations = {set text per component}, requirements =
--  {{inputs = {name = set}, outputs = {...}}}, guards = {{name, inputs,
--  outputs}}, source, codec_signature (another signature for the codec),
--  shrink_limit (the observation policy's, default 6)}.
--  Returns intents.project's context with path, claim (the contract
--  document) and certify(source, extra) -> summary, process result.
function M.project(spec)
  local path = "src/" .. spec.fn .. "." .. EXT[spec.language]
  local env = assert(host_tools.environment_model { spec.language })
  local artifacts = {
    binding_map = { path = "verification/binding.json", bytes = json.encode { schema_version = 1,
                    language = spec.language, source = path, ["function"] = spec.fn } },
    codec = { path = "verification/codec.json", bytes = M.codec(spec.codec_signature or spec.signature) },
    observation_policy = { path = "verification/observation.json", bytes = json.encode { schema_version = 1,
      repetitions = 2, selection = "spread", max_inputs = 6, shrink_limit = spec.shrink_limit or 6,
      process_deadline_ms = 10000 } },
    environment_model = { path = "verification/environment.json", bytes = json.encode(env, { indent = 2 }) },
  }
  local inputs = json.object()
  for k, v in pairs(spec.inputs) do inputs[k] = v end
  local contract = {
    signature = spec.signature,
    domain = { inputs = inputs, codec_sha256 = hash.sha256(artifacts.codec.bytes),
               observation_policy_sha256 = hash.sha256(artifacts.observation_policy.bytes),
               environment_model_sha256 = hash.sha256(artifacts.environment_model.bytes) },
    observations = json.array(spec.observations),
    requirements = requirements_json(spec.requirements),
  }
  local function revision()
    local files, pins = {}, {}
    for _, name in ipairs(intent.ARTIFACTS) do
      local a = artifacts[name]
      files[a.path] = a.bytes
      pins[name] = { path = a.path, sha256 = hash.sha256(a.bytes) }
    end
    local bytes = json.encode({ schema_version = 1, requirement = { source = "ISSUE-34",
      statement = spec.statement or (spec.fn .. " keeps its accepted behaviour") }, contract = contract,
      artifacts = pins }, { indent = 2 }) .. "\n"
    local parsed = assert(intent.parse_revision(bytes))
    files[intent.revision_path(layout, parsed.digest)] = bytes
    if spec.guards then
      local guards = json.array()
      for i, g in ipairs(spec.guards) do
        local gin = json.object()
        for k, v in pairs(g.inputs) do gin[k] = v end
        guards[i] = { name = g.name, inputs = gin, outputs = json.array(g.outputs) }
      end
      files[("%s/%s.v1.json"):format(layout.differences_dir, parsed.digest)] =
        json.encode({ schema_version = 1, intent = parsed.digest, guards = guards }, { indent = 2 }) .. "\n"
    end
    return files, parsed.digest, parsed
  end
  local p = intents.project { revision = revision, claim = contract, source_path = path, source = spec.source }
  p.path, p.claim = path, contract
  --- Certifies a candidate whose bound source is `source` (vkit change certify --json).
  function p.certify(source, extra)
    local candidate = p.commit({ [path] = source }, p.target)
    return intents.certify(p, candidate, extra)
  end
  return p
end

--- The exhaustive report a summary's run retained (decoded); `rel`: another
--  report of the attempt (default exhaustive/exhaustive-report.v1.json).
function M.report(p, summary, rel)
  local store = require("vkit.store").open(p.dir .. "/project")
  local run = assert(store:get(summary.run_id))
  local dir = require("vkit.report.records").attempt_dir(run)
  rel = rel or "exhaustive/exhaustive-report.v1.json"
  return assert(json.decode(assert(vkit.fs.read(dir .. "/" .. rel, 1 << 28)))), run, store
end

--- The summary's entry for `method`.
function M.method(summary, method)
  for _, m in ipairs(summary.methods) do if m.method == method then return m end end
end

return M
