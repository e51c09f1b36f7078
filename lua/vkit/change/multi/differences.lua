--- The target's difference policy for an intent of the multi-parameter
-- profile (issue 34): the seed's document (vkit.change.differences) with
-- a guard's inputs a box and its outputs one set per result component, as
-- in the contract (vkit.change.multi.contract):
--
--   { "schema_version": 1, "intent": "<digest>",
--     "guards": [ { "name": "...", "inputs": { "x": SET, ... }, "outputs": [ SET, ... ] } ] }
--
-- A guard approves, for the accepted inputs in its box, any candidate
-- result allowed by its outputs (still subject to the standing intent);
-- overlapping guards intersect.  A box may reach past the accepted inputs
-- (an omitted parameter is its whole type), as a requirement's may.
local json = require "vkit.json"
local S = require "vkit.schema"
local mcontract = require "vkit.change.multi.contract"
local policy = require("vkit.policy").signatures

local M = {}

local set_text = S.string { min = 1, max = policy.max_set_text, what = "a set's text" }

M.schema = S.object {
  schema_version = S.const(1),
  intent = S.sha256,
  guards = S.array(S.object {
    name = S.one_line(200),
    inputs = S.map(set_text, { key_pattern = "^[%a_][%w_]*$", key_what = "a parameter name", max = policy.max_params }),
    outputs = S.array(set_text, { min = 1, max = policy.max_components }),
  }, { max = policy.max_guards }),
}

local function invalid(message)
  return nil, "difference policy: " .. message, "difference-policy-invalid"
end

--- Parses policy bytes for the intent `digest` whose accepted inputs are
--  the domain `d` (vkit.change.domain): {guards = {{name, box, outputs}}},
--  or nil, message, "difference-policy-invalid" (or the JSON reader's code).
function M.parse(bytes, digest, d)
  local doc, message, code = json.decode(bytes)
  if doc == nil then return nil, "difference policy is not valid JSON: " .. message, code end
  local ok, err = S.check(M.schema, doc)
  if not ok then return invalid(S.explain(err)) end
  if doc.intent ~= digest then return invalid("it names another intent revision") end
  local guards = {}
  for i, g in ipairs(doc.guards) do
    local what = ("guard %d (%s)"):format(i, g.name)
    local box, bmessage = mcontract.parse_box(d.sig, g.inputs, what .. " inputs")
    if not box then return invalid(bmessage) end
    local outputs, omessage = mcontract.parse_outputs(d.sig, g.outputs, what)
    if not outputs then return invalid(omessage) end
    guards[i] = { name = g.name, box = box, outputs = outputs }
  end
  return { guards = guards }
end

--- The JSON form of a parsed guard (what a bound request's fingerprint reads).
function M.guard_json(sig, g)
  return { name = g.name, inputs = mcontract.box_json(sig, g.box), outputs = mcontract.outputs_json(g.outputs) }
end

return M
