--- A check's `expect` block: every declared number names a recomputed
--  field and equals its recomputed value (`summary-mismatch`).
local json = require "vkit.json"
local value = require "vkit.vac.value"
local manifest_keys = require("vkit.vac.manifest").sorted_keys

local M = {}

--- Compares check.expect against recomputed ({field = value}).  When the
--  block is absent or empty, names a schema-violation and returns false.
function M.compare(ctx, recomputed, profile, noun)
  local expect = ctx.check.expect
  if json.kind(expect) ~= "object" or next(expect) == nil then
    ctx.failures:addf("schema-violation", "results.checks[%s].expect: declared %s required", profile,
      noun or "numbers")
    return false
  end
  for _, k in ipairs(manifest_keys(expect)) do
    if recomputed[k] == nil then
      ctx.failures:addf("summary-mismatch", "%s: not recomputable under %s", k, profile)
    elseif not value.eq(expect[k], recomputed[k]) then
      ctx.failures:addf("summary-mismatch", "%s: declared %s, recomputed %s", k, value.show(expect[k]),
        value.show(recomputed[k]))
    end
  end
  return true
end

--- The §2.5 pool of a profile whose every recomputed field is one value.
function M.pool(recomputed)
  local pool = {}
  for k, v in pairs(recomputed) do pool[k] = { v } end
  return pool
end

--- protocol.hashes when it is an object, else an empty table.
function M.hashes(ctx)
  local h = ctx.protocol.hashes
  if json.kind(h) == "object" then return h end
  return {}
end

return M
