--- The codec artifact of the multi-parameter profile (issue 34):
--
--   { "schema_version": 2,
--     "signature": { "params": [ { "name": "x", "type": "i32" }, ... ], "returns": "i32" | [ ... ] },
--     "input": "fixed-le", "output": "fixed-le-records" }
--
-- fixed-le: each input one record of its parameters, little-endian in their
-- types' widths (a bool one byte 0 or 1); fixed-le-records: each answer one
-- fixed-width record, a status byte and the result in its types' widths,
-- then a trailer (vkit.change.signature_records), decoded to the result's
-- canonical tuple text (vkit.change.signature).
-- The seed's codec ({"schema_version":1,"input":"u32-le",...}) stays
-- vkit.change.artifacts'; a codec of schema_version 2 is parsed here.
--
-- The codec and the contract describe one function: a contract's signature
-- must be exactly its codec's, and a seed contract's codec is the seed's.
-- matches() is what preflight asks.
local json = require "vkit.json"
local S = require "vkit.schema"
local mcontract = require "vkit.change.multi.contract"

local M = {}

M.schema = S.object {
  schema_version = S.const(2),
  signature = S.any_object,
  input = S.const "fixed-le",
  output = S.const "fixed-le-records",
}

--- The codec document of a signature's JSON form (what intent init and
--  vkit.change.codec(signature) write).
function M.document(signature_json)
  return { schema_version = 2, signature = signature_json, input = "fixed-le", output = "fixed-le-records" }
end

--- Checks a decoded codec of schema_version 2: the document, or nil,
--  message, "unsupported-declaration".
function M.check(doc)
  local ok, err = S.check(M.schema, doc)
  if not ok then
    return nil, "the codec does not fit the multi-parameter profile: " .. S.explain(err), "unsupported-declaration"
  end
  local sig, message = mcontract.parse_signature(doc.signature, "the codec")
  if not sig then return nil, message, "unsupported-declaration" end
  return doc
end

--- Whether the codec's bytes describe the contract's function: true, or
--  nil, message, "codec-signature-mismatch".  A seed contract needs a codec
--  that is not the multi profile's; a multi contract needs this profile's
--  codec with exactly its signature (the parsed forms compared, so JSON
--  spelling does not matter).
function M.matches(contract, bytes)
  local doc = json.decode(bytes)
  local is_multi_codec = json.kind(doc) == "object" and doc.schema_version == 2
  if contract.profile ~= mcontract.PROFILE then
    if not is_multi_codec then return true end
    return nil, "the codec is the multi-parameter profile's but the contract's signature is u32 -> u32",
      "codec-signature-mismatch"
  end
  if not is_multi_codec or not M.check(doc) then
    return nil, "the contract's signature is " .. json.canonical(contract.signature)
      .. " but the codec is not a multi-parameter codec of it", "codec-signature-mismatch"
  end
  local sig = mcontract.parse_signature(doc.signature, "the codec")
  if json.canonical(mcontract.signature_json(sig)) ~= json.canonical(contract.signature) then
    return nil, ("the contract's signature %s differs from the codec's %s"):format(json.canonical(contract.signature),
      json.canonical(mcontract.signature_json(sig))), "codec-signature-mismatch"
  end
  return true
end

return M
