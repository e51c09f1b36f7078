--- crashkit-battery-v1 (SPEC §3.4): battery metrics of an eval_run.json
--  recomputed from its per-case rows under the frozen severity weights.
local json = require "vkit.json"
local number = require "vkit.vac.number"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"
local severity = require "vkit.vac.severity"
local sorted_keys = require("vkit.vac.manifest").sorted_keys

local kind = json.kind
local M = { name = "crashkit-battery-v1", refs = { "artifact" }, optional_refs = {} }

local ALIASES = { "faithfulness", "precision@k", "recall@k", "citation_rate" }
local METRICS = { "vulnerability_score", "flagged_cases", "n_cases", "truncations", "reliability" }

function M.recompute(ctx)
  local check, fails = ctx.check, ctx.failures
  local art = check.artifact
  local data = ctx.source:json(art, "object")
  if not data then return nil end
  local cases, metrics, per_kind = data.cases, data.metrics, data.per_kind
  if not (value.is_array(cases) and value.all_objects(cases)) then
    fails:addf("artifact-unparsable", "%s: no cases[] array", art)
    return nil
  end
  if kind(metrics) ~= "object" then
    fails:addf("artifact-unparsable", "%s: no metrics object", art)
    return nil
  end
  if kind(per_kind) ~= "object" then
    fails:addf("artifact-unparsable", "%s: no per_kind object", art)
    return nil
  end
  for n, c in ipairs(cases) do
    if not (type(c.passed) == "boolean" and type(c.truncated) == "boolean" and type(c.flagged) == "boolean"
          and text.nonblank(c.kind)) then
      fails:addf("artifact-unparsable", "%s: case %d lacks the explicit passed/truncated/flagged booleans + kind "
        .. "(crashkit-battery-v1 refuses note-parsing)", art, n)
      return nil
    end
  end
  local n_cases, truncs, errors, flagged, graded, passed_graded = #cases, 0, 0, 0, 0, 0
  local labels = {}
  for n, c in ipairs(cases) do
    if c.flagged ~= (not c.passed and not c.truncated) then
      fails:addf("raw-aggregate-mismatch", "%s: case %d flagged flag contradicts its own passed/truncated pair", art, n)
    end
    if c.truncated then
      truncs = truncs + 1
    else
      graded = graded + 1
      labels[graded] = c.severity
      if c.passed then passed_graded = passed_graded + 1 end
    end
    if c.grader == "error" then errors = errors + 1 end
    if c.flagged then flagged = flagged + 1 end
  end
  local accuracy = graded > 0 and number.round(passed_graded / graded, 4) or 0.0
  if severity.refuse_unknown(fails, art, labels, graded) then return nil end
  local total_w, failed_w = 0, 0
  local kinds, kind_order = {}, {}
  for _, c in ipairs(cases) do
    if not c.truncated then
      local w = severity.weight(c.severity)
      total_w = total_w + w
      if not c.passed then failed_w = failed_w + w end
      local k = kinds[c.kind]
      if not k then
        k = { total = 0, passed = 0 }
        kinds[c.kind] = k
        kind_order[#kind_order + 1] = c.kind
      end
      k.total = k.total + 1
      if c.passed then k.passed = k.passed + 1 end
    end
  end
  local recomputed = {
    accuracy = accuracy,
    vulnerability_score = total_w > 0 and number.round(failed_w / total_w, 4) or 0.0,
    flagged_cases = flagged + 0.0, n_cases = n_cases + 0.0, truncations = truncs + 0.0,
    reliability = n_cases > 0 and number.round((n_cases - errors - truncs) / n_cases, 4) or 0.0,
    cases = n_cases, graded = graded, errors = errors,
  }
  for _, k in ipairs(ALIASES) do
    if not value.eq(metrics[k], accuracy) then
      fails:addf("raw-aggregate-mismatch", "%s: metrics.%s declared %s, recomputed %s", art, k, value.show(metrics[k]),
        value.show(accuracy))
    end
  end
  for _, k in ipairs(METRICS) do
    if not value.eq(metrics[k], recomputed[k]) then
      fails:addf("raw-aggregate-mismatch", "%s: metrics.%s declared %s, recomputed %s", art, k, value.show(metrics[k]),
        value.show(recomputed[k]))
    end
  end
  local want = {}
  for _, k in ipairs(kind_order) do want[k] = number.round(kinds[k].passed / kinds[k].total, 4) end
  local union = {}
  for k in pairs(per_kind) do union[k] = true end
  for k in pairs(want) do union[k] = true end
  for _, k in ipairs(sorted_keys(union)) do
    if not value.eq(per_kind[k], want[k]) then
      fails:addf("raw-aggregate-mismatch", "%s: per_kind[%s] declared %s, recomputed %s", art, value.show(k),
        value.show(per_kind[k]), value.show(want[k]))
    end
  end

  -- stamp: the frozen battery's fingerprint, named by the check
  local key, hashes = check.battery_hash_key, expect.hashes(ctx)
  if not text.nonblank(key) then
    fails:add("schema-violation", "results.checks[crashkit-battery-v1].battery_hash_key: name of the protocol.hashes "
      .. "entry pinning this artifact's battery required")
  elseif hashes[key] == nil then
    fails:addf("stamp-mismatch", "%s: named by the check but absent from protocol.hashes", key)
  elseif not value.eq(hashes[key], data.git_sha) then
    fails:addf("stamp-mismatch", "%s: protocol %s, artifact %s", key, value.str(hashes[key]), value.str(data.git_sha))
  end
  expect.compare(ctx, recomputed, M.name)
  return expect.pool(recomputed)
end

return M
