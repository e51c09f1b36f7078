--- The target's difference policy (seed 001):
-- verification/change-intents/differences/<intent-digest>.v1.json
--
--   { "schema_version": 1, "intent": "<digest>",
--     "guards": [ { "name": "...", "inputs": SET, "outputs": SET }, ... ] }
--
-- A guard approves, for its inputs, a difference from the base: the
-- candidate may return any of the guard's outputs (still subject to the
-- standing intent).  An absent policy means no approved guards.
local json = require "vkit.json"
local S = require "vkit.schema"
local ranges = require "vkit.change.ranges"
local limits = require("vkit.policy").limits

local M = {}

local set = S.array(S.either(S.u32, S.object { from = S.u32, to = S.u32 }), { max = 65536 })

M.schema = S.object {
  schema_version = S.const(1),
  intent = S.sha256,
  guards = S.array(S.object { name = S.one_line(200), inputs = set, outputs = set },
                   { max = limits.relational.max_guards }),
}

--- Parses policy bytes for the intent `digest` whose domain is `domain`
--  (ranges): {guards = {{name, inputs, outputs}, ...}} or nil, message, code.
function M.parse(bytes, digest, domain)
  -- an intent of the multi-parameter profile: its domain is a product (issue 34)
  if domain.sig then return require("vkit.change.multi.differences").parse(bytes, digest, domain) end
  local doc, message, code = json.decode(bytes)
  if doc == nil then return nil, "difference policy is not valid JSON: " .. message, code end
  local ok, err = S.check(M.schema, doc)
  if not ok then return nil, "difference policy: " .. S.explain(err), "difference-policy-invalid" end
  if doc.intent ~= digest then
    return nil, "difference policy names another intent revision", "difference-policy-invalid"
  end
  local guards = {}
  for i, g in ipairs(doc.guards) do
    local inputs, outputs = assert(ranges.normalize(g.inputs)), assert(ranges.normalize(g.outputs))
    local outside = ranges.first_missing(inputs, domain)
    if outside then
      return nil, ("difference policy guard %d (%s) names input %d outside the intent's domain"):format(i, g.name, outside),
        "difference-policy-invalid"
    end
    guards[i] = { name = g.name, inputs = inputs, outputs = outputs }
  end
  return { guards = guards }
end

--- The empty policy (no approved guards).
function M.none()
  return { guards = {} }
end

return M
