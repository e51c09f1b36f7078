--- certlab-bundle-v1 (SPEC §3.1): verdict counts of an agent-certlab
--  bundle.json, its stamps, and an optional rendered contract.
local json = require "vkit.json"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"

local M = { name = "certlab-bundle-v1", refs = { "artifact" }, optional_refs = { "render" } }

local COUNTS = { "fixed", "policy_ok", "tests_ok" }

--- The contract headline "**N/M seeded defects fixed**": N, M or nil.
function M.headline(s)
  local i = 1
  while true do
    local p = s:find("**", i, true)
    if not p then return nil end
    local fixed, j = text.digits_at(s, p + 2)
    if fixed and s:sub(j, j) == "/" then
      local total, k = text.digits_at(s, j + 1)
      local tail = " seeded defects fixed**"
      if total and s:sub(k, k + #tail - 1) == tail then return fixed, total end
    end
    i = p + 1
  end
end

local function check_render(ctx, rel, s, recomputed)
  local fixed, total = M.headline(s)
  if not fixed then
    ctx.failures:addf("artifact-unparsable", "%s: no 'N/M seeded defects fixed' headline to compare against the verdicts",
      rel)
    return
  end
  for _, pair in ipairs { { "fixed", fixed }, { "verdicts", total } } do
    if pair[2] ~= recomputed[pair[1]] then
      ctx.failures:addf("raw-aggregate-mismatch", "%s: contract shows %s %d, verdicts recompute %d", rel, pair[1],
        pair[2], recomputed[pair[1]])
    end
  end
end

function M.recompute(ctx)
  local check, fails = ctx.check, ctx.failures
  local rel = check.artifact
  local data, verdicts = ctx.source:object_rows(rel, "verdicts")
  if not data then return nil end
  local recomputed = { verdicts = #verdicts }
  for _, k in ipairs(COUNTS) do
    local n = 0
    for _, v in ipairs(verdicts) do
      if v[k] == true then n = n + 1 end
    end
    recomputed[k] = n
  end
  expect.compare(ctx, recomputed, M.name, "counts")

  -- stamps (SPEC §2.3): a hash named by protocol.hashes must be present in
  -- the artifact and equal; deleting it costs what faking it does
  local hashes = expect.hashes(ctx)
  for _, k in ipairs { "taskset_hash", "prompt_hash" } do
    if hashes[k] ~= nil then
      if data[k] == nil then
        fails:addf("stamp-mismatch", "%s: named by protocol.hashes but absent from %s", k, rel)
      elseif not value.eq(hashes[k], data[k]) then
        fails:addf("stamp-mismatch", "%s: protocol %s, artifact %s", k, value.str(hashes[k]), value.str(data[k]))
      end
    end
  end
  local ic = ctx.protocol.issuer_commit
  if text.nonblank(ic) then
    if data.harness_commit == nil then
      fails:addf("stamp-mismatch", "harness_commit: protocol declares issuer_commit but %s carries no harness_commit", rel)
    elseif not value.eq(data.harness_commit, ic) then
      fails:addf("stamp-mismatch", "harness_commit: protocol %s, artifact %s", ic, value.str(data.harness_commit))
    end
  end

  -- the pool: the four counts, plus one count per failure mode the issuer
  -- named (free text, never allowed to shadow a recomputed field)
  local pool = expect.pool(recomputed)
  local modes, order = {}, {}
  for _, v in ipairs(verdicts) do
    local mode = v.failure_mode
    if text.nonblank(mode) then
      if not modes[mode] then order[#order + 1] = mode end
      modes[mode] = (modes[mode] or 0) + 1
    end
  end
  for _, mode in ipairs(order) do
    if recomputed[mode] == nil then
      pool[mode] = pool[mode] or {}
      table.insert(pool[mode], modes[mode])
    end
  end

  local render = check.render
  if text.nonblank(render) then
    local s = ctx.source:text(render)
    if s then check_render(ctx, render, s, recomputed) end
  end
  return pool
end

M.null = json.null
return M
