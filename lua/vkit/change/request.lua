--- Finite change requests (seed 001).
--
--   {
--     "schema_version": 1,
--     "base": "<full commit id>",        -- must equal the trusted target
--     "candidate": "<full commit id>",   -- must descend from the target
--     "intent": "<accepted revision digest>",
--     "claim": <finite u32 -> u32 contract, see vkit.change.contract; or the
--               multi-parameter profile's, vkit.change.multi.contract>
--   }
-- A request names commits and a claim, nothing else: it cannot choose
-- commands, environments, a target commit or a toolchain.
local json = require "vkit.json"
local S = require "vkit.schema"
local contract = require "vkit.change.contract"

local M = {}

M.schema = S.object {
  schema_version = S.const(1),
  base = S.commit_id,
  candidate = S.commit_id,
  intent = S.sha256,
  claim = S.any_object, -- validated and normalised by vkit.change.contract
}

--- Parses request JSON text (or an already-decoded table):
--  {document, base, candidate, intent, claim (normal form), digest}
--  or nil, message, code.
function M.parse(input)
  local doc = input
  if type(input) == "string" then
    local message, code
    doc, message, code = json.decode(input)
    if doc == nil then return nil, "the request is not valid JSON: " .. message, code end
  end
  local ok, err = S.check(M.schema, doc)
  if not ok then return nil, "request: " .. S.explain(err), "request-invalid" end
  local claim, message, code = contract.normalize(doc.claim, "request claim")
  if not claim then return nil, message, code == "contract-invalid" and "request-invalid" or code end
  local parsed = { document = doc, base = doc.base, candidate = doc.candidate, intent = doc.intent, claim = claim }
  parsed.digest = json.digest(M.to_json(parsed))
  return parsed
end

--- The normalised JSON projection of a parsed request.
function M.to_json(r)
  return { schema_version = 1, base = r.base, candidate = r.candidate, intent = r.intent,
           claim = contract.to_json(r.claim) }
end

return M
