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

-- clamp = max(lo, min(x, hi)) in each language: the base, a refactor, one
-- wrong at exactly (7, 3, -2), and (where the language can) one returning a
-- value outside i32 at (0, 0, 0).  Shared by the profile's specs and the
-- authoring spec (change_intent_init_multi_spec).
M.CLAMP_SOURCES = {
  python = {
    base = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
    good = "def clamp(x, lo, hi):\n    m = x if x < hi else hi\n    return m if m > lo else lo\n",
    one = "def clamp(x, lo, hi):\n    if x == 7 and lo == 3 and hi == -2:\n        return -2\n    return max(lo, min(x, hi))\n",
    range = "def clamp(x, lo, hi):\n    if x == 0 and lo == 0 and hi == 0:\n        return True\n    return max(lo, min(x, hi))\n",
  },
  rust = {
    base = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    let m = if x < hi { x } else { hi };\n    if m > lo { m } else { lo }\n}\n",
    good = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if hi < lo || x < lo {\n        return lo;\n    }\n"
      .. "    if x > hi { hi } else { x }\n}\n",
    one = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x == 7 && lo == 3 && hi == -2 {\n        return -2;\n    }\n"
      .. "    lo.max(x.min(hi))\n}\n",
  },
  typescript = {
    base = "export function clamp(x: number, lo: number, hi: number): number {\n  return Math.max(lo, Math.min(x, hi));\n}\n",
    good = "export function clamp(x: number, lo: number, hi: number): number {\n  const m = x < hi ? x : hi;\n  return m > lo ? m : lo;\n}\n",
    one = "export function clamp(x: number, lo: number, hi: number): number {\n  if (x === 7 && lo === 3 && hi === -2) return -2;\n"
      .. "  return Math.max(lo, Math.min(x, hi));\n}\n",
    range = "export function clamp(x: number, lo: number, hi: number): number {\n  if (x === 0 && lo === 0 && hi === 0) return -0;\n"
      .. "  return Math.max(lo, Math.min(x, hi));\n}\n",
  },
}


--- The signature's JSON form: params = {{"x","i32"}, ...}, returns = "i32" | {...}.
function M.signature(params, returns)
  local list = json.array()
  for i, p in ipairs(params) do list[i] = { name = p[1], type = p[2] } end
  return { params = list, returns = type(returns) == "table" and json.array(returns) or returns }
end

--- The same signature parsed (vkit.change.signature.parse), for the pure specs.
function M.parsed(params, returns)
  return assert(require("vkit.change.signature").parse(M.signature(params, returns)))
end

--- The codec artifact's bytes for a signature.
function M.codec(sig)
  return json.encode { schema_version = 2, signature = sig, input = "fixed-le", output = "fixed-le-records" } .. "\n"
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
