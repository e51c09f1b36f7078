--- The four semantic artifacts an intent pins (seed 001), as the paired
-- execution profile reads them.  Preflight only checks their bytes; this
-- module gives them meaning.
--
-- binding map:        { "schema_version": 1, "language": "rust"|"python"|"typescript",
--                       "source": "<repo path of the module>", "function": "<name>" }
-- codec:              { "schema_version": 1, "input": "u32-le", "output": "decimal-u32-line" }
--                     (schema_version 2: the multi-parameter profile's, vkit.change.multi.codec)
-- observation policy: { "schema_version": 1, "repetitions": 2, "selection": "spread"|"ascending",
--                       "max_inputs": n, "shrink_limit": n, "process_deadline_ms": n }
-- environment model:  { "schema_version": 1, "env": { "NAME": "value", ... },
--                       "toolchains": { "<language>": { "<tool>": { "path", "sha256" },
--                                                       "dependencies": [ { "path", "sha256" } ] } } }
-- The environment model is the target's native environment declaration:
-- the tools it names are pinned by hash and re-hashed before each launch,
-- and `env` is the complete, closed set of environment variables.
local json = require "vkit.json"
local S = require "vkit.schema"
local policy = require("vkit.policy").change

local M = {}

local normal_path = S.normal_path
local absolute = S.string { pattern = "^/[^%z]+$", max = 4096, what = "an absolute path" }
local tool = S.object { path = absolute, sha256 = S.sha256 }

M.TOOLS = {
  rust = { "rustc" },
  python = { "python3" },
  typescript = { "tsc", "node" },
}

M.schemas = {
  binding_map = S.object {
    schema_version = S.const(1),
    language = S.enum(policy.languages),
    source = normal_path,
    ["function"] = S.string { pattern = "^[%a_][%w_]*$", max = 128, what = "an identifier" },
  },
  codec = S.object { schema_version = S.const(1), input = S.const "u32-le", output = S.const "decimal-u32-line" },
  observation_policy = S.object {
    schema_version = S.const(1),
    repetitions = S.integer { min = 1, max = 8 },
    selection = S.enum { "spread", "ascending" },
    max_inputs = S.integer { min = 1, max = 4096 },
    shrink_limit = S.integer { min = 0, max = 64 },
    process_deadline_ms = S.integer { min = 100, max = 300000 },
  },
  environment_model = S.object {
    schema_version = S.const(1),
    env = S.map(S.string { max = 4096 }, { key_pattern = "^[%a_][%w_]*$", key_what = "an environment variable name", max = 64 }),
    toolchains = S.map(S.map(S.either(tool, S.array(tool, { max = 4096 })), { max = 16 }),
                       { key_pattern = "^[%a]+$", max = 8 }),
  },
}

--- Parses one artifact's bytes; name is binding_map, codec,
--  observation_policy or environment_model.
function M.parse(name, bytes)
  local doc, message, code = json.decode(bytes)
  if doc == nil then return nil, ("the %s is not valid JSON: %s"):format(name:gsub("_", " "), message), code end
  -- a codec of schema_version 2 is the multi-parameter profile's (issue 34)
  if name == "codec" and json.kind(doc) == "object" and doc.schema_version == 2 then
    return require("vkit.change.multi.codec").check(doc)
  end
  local ok, err = S.check(M.schemas[name], doc)
  if not ok then
    return nil, ("the %s does not fit the paired-execution profile: %s"):format(name:gsub("_", " "), S.explain(err)),
      "unsupported-declaration"
  end
  return doc
end

--- The tools of one language from the environment model:
--  { <tool> = {path, sha256}, dependencies = {...} } or nil, message, code.
function M.toolchain(environment, language)
  local chain = environment.toolchains[language]
  if not chain then
    return nil, ("the environment model declares no %s toolchain"):format(language), "unsupported-declaration"
  end
  for _, name in ipairs(M.TOOLS[language]) do
    if json.kind(chain[name]) ~= "object" then
      return nil, ("the %s toolchain declares no %s"):format(language, name), "unsupported-declaration"
    end
  end
  return { tools = chain, dependencies = json.kind(chain.dependencies) == "array" and chain.dependencies or json.array() }
end

--- The closed environment: a plain {NAME = value} table (vkit.proc's shape).
function M.env(environment)
  local out = {}
  for k, v in pairs(environment.env) do out[k] = v end
  return out
end

return M
