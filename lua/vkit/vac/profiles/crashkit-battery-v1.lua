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

-- The per-case work, fed one case at a time as eval_run.json streams
-- (a battery can hold far more cases than are worth holding at once).  It
-- keeps what the three passes of the rule need, so the verdict reads the
-- same as over an array: a case that is not an object refuses the array,
-- else the first case lacking its booleans is named, else every case whose
-- flag contradicts its pair.
local function case_reader()
  local r = { fields = { "passed", "truncated", "flagged", "kind", "severity", "grader" } }
  local weights, nonblank = severity.WEIGHTS, {} -- kinds already seen to be non-blank strings
  -- the tallies live in upvalues (the reader runs once per case); result()
  -- hands them over
  local not_object, lacking, contradicts
  local truncs, errors, flagged_n, graded, passed_graded
  local odd_labels, n_odd, total_w, failed_w, kinds, kind_order
  function r.begin()
    not_object, lacking, contradicts = false, nil, {}
    truncs, errors, flagged_n, graded, passed_graded = 0, 0, 0, 0, 0
    odd_labels, n_odd = {}, 0 -- severities outside the table, by graded case
    total_w, failed_w, kinds, kind_order = 0, 0, {}, {}
  end
  -- weight: how many identical cases this one stands for (a tally's
  -- combination of values, first seen at case n)
  function r.element(n, c, weight)
    weight = weight or 1
    if kind(c) ~= "object" then
      not_object = true
      return
    end
    if lacking or not_object then return end
    local passed, truncated, flagged, k = c.passed, c.truncated, c.flagged, c.kind
    if not ((passed == true or passed == false) and (truncated == true or truncated == false)
          and (flagged == true or flagged == false) and k ~= nil) then
      lacking = n
      return
    end
    if not nonblank[k] then
      if not text.nonblank(k) then
        lacking = n
        return
      end
      nonblank[k] = true
    end
    if flagged ~= (not passed and not truncated) then contradicts[#contradicts + 1] = n end
    if truncated then
      truncs = truncs + weight
    else
      graded = graded + weight
      local label = c.severity
      local w = weights[label] -- the table's keys are strings: severity.weight(label)
      if w == nil then
        n_odd = n_odd + 1
        odd_labels[n_odd] = label
      else
        total_w = total_w + w * weight
        if not passed then failed_w = failed_w + w * weight end
      end
      local tally = kinds[k]
      if not tally then
        tally = { total = 0, passed = 0 }
        kinds[k] = tally
        kind_order[#kind_order + 1] = k
      end
      tally.total = tally.total + weight
      if passed then
        passed_graded = passed_graded + weight
        tally.passed = tally.passed + weight
      end
    end
    if c.grader == "error" then errors = errors + weight end
    if flagged then flagged_n = flagged_n + weight end
  end
  function r.result()
    return {
      not_object = not_object, lacking = lacking, contradicts = contradicts, truncs = truncs, errors = errors,
      flagged = flagged_n, graded = graded, passed_graded = passed_graded, odd_labels = odd_labels, n_odd = n_odd,
      total_w = total_w, failed_w = failed_w, kinds = kinds, kind_order = kind_order,
    }
  end
  return r
end

-- The cases, read once: tallied in C when every case is a plain object
-- (each distinct combination of the rule's fields fed to the reader once,
-- weighted), else, or when some case breaks the rule case by case (named
-- by its number), streamed one case at a time.  data, n_cases, result or nil.
local function read_cases(src, art, reader)
  local data, tally = src:tally_stream(art, "cases", reader.fields)
  if tally then
    reader.begin()
    for _, c in ipairs(tally.combos) do reader.element(c.first, c.row, c.n) end
    local r = reader.result()
    if not r.lacking and #r.contradicts == 0 and r.n_odd == 0 then return data, tally.rows, r end
  end
  if src:mismatched(art) ~= nil then return nil end
  local n_cases
  data, n_cases = src:json_stream(art, "object", "cases", reader)
  if not data then return nil end
  return data, n_cases, reader.result()
end

function M.recompute(ctx)
  local check, fails = ctx.check, ctx.failures
  local art = check.artifact
  local data, n_cases, r = read_cases(ctx.source, art, case_reader())
  if not data then return nil end
  local metrics, per_kind = data.metrics, data.per_kind
  if n_cases == nil or r.not_object then
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
  if r.lacking then
    fails:addf("artifact-unparsable", "%s: case %d lacks the explicit passed/truncated/flagged booleans + kind "
      .. "(crashkit-battery-v1 refuses note-parsing)", art, r.lacking)
    return nil
  end
  for _, n in ipairs(r.contradicts) do
    fails:addf("raw-aggregate-mismatch", "%s: case %d flagged flag contradicts its own passed/truncated pair", art, n)
  end
  local truncs, errors, flagged, graded, passed_graded = r.truncs, r.errors, r.flagged, r.graded, r.passed_graded
  local accuracy = graded > 0 and number.round(passed_graded / graded, 4) or 0.0
  if severity.refuse_unknown(fails, art, r.odd_labels, r.n_odd) then return nil end
  local total_w, failed_w, kinds, kind_order = r.total_w, r.failed_w, r.kinds, r.kind_order
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
  fails:differ("raw-aggregate-mismatch", art .. ": metrics.", METRICS, metrics, recomputed)
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
