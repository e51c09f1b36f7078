--- crashkit-variance-v1 (SPEC §3.6): an N-run variance report whose
--  per-task flags and stability/vulnerability metrics are recomputed from
--  its own run counts.
local json = require "vkit.json"
local number = require "vkit.vac.number"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"
local severity = require "vkit.vac.severity"

local M = { name = "crashkit-variance-v1", refs = { "artifact" }, optional_refs = {} }

local METRICS = { "n_tasks", "flaky_cases", "stability", "mean_vulnerability", "worst_case_vulnerability" }
-- the per-task counts each row must give as integers
local COUNTS = { "runs", "passes" }

function M.recompute(ctx)
  local check, fails = ctx.check, ctx.failures
  local art = check.artifact
  local data, rows = ctx.source:object_rows(art, "per_task", { nonempty = true })
  if not data then return nil end
  for i, r in ipairs(rows) do
    for _, k in ipairs(COUNTS) do
      if math.type(r[k]) ~= "integer" then
        fails:addf("artifact-unparsable", "%s: row %d: %s must be an integer", art, i - 1, k)
        return nil
      end
    end
    if not (r.passes >= 0 and r.passes <= r.runs) or r.runs <= 0 then
      fails:addf("artifact-unparsable", "%s: row %d: passes %d outside 0..runs %d", art, i - 1, r.passes, r.runs)
      return nil
    end
  end
  local labels = {}
  for i, r in ipairs(rows) do labels[i] = r.severity end
  if severity.refuse_unknown(fails, art, labels, #rows) then return nil end

  -- each row's flags must follow from its own counts
  for i, r in ipairs(rows) do
    local expected = {
      { "pass_rate", number.round(r.passes / r.runs, 4) },
      { "flaky", 0 < r.passes and r.passes < r.runs },
      { "ever_failed", r.passes < r.runs },
    }
    for _, kv in ipairs(expected) do
      local k, want = kv[1], kv[2]
      local got = r[k]
      if k == "pass_rate" and math.type(got) then got = number.round(got, 4) end
      if not value.eq(got, want) then
        fails:addf("raw-aggregate-mismatch", "%s: row %d: %s declared %s, recomputed %s", art, i - 1, k,
          value.show(r[k]), value.show(want))
      end
    end
  end

  local n, flaky, total_w, mean_v, ever_w = #rows, 0, 0, 0, 0
  for _, r in ipairs(rows) do
    local w = severity.weight(r.severity)
    if r.passes < r.runs and r.passes > 0 then flaky = flaky + 1 end
    total_w = total_w + w
    mean_v = mean_v + w * (r.runs - r.passes) / r.runs
    if r.passes < r.runs then ever_w = ever_w + w end
  end
  local recomputed = {
    n_tasks = n + 0.0,
    flaky_cases = flaky + 0.0,
    stability = number.round((n - flaky) / n, 4),
    mean_vulnerability = total_w > 0 and number.round(mean_v / total_w, 4) or 0.0,
    worst_case_vulnerability = total_w > 0 and number.round(ever_w / total_w, 4) or 0.0,
  }
  local metrics = data.metrics
  if json.kind(metrics) ~= "object" then
    fails:addf("artifact-unparsable", "%s: no metrics object", art)
    return nil
  end
  fails:differ("raw-aggregate-mismatch", art .. ": metrics.", METRICS, metrics, recomputed)
  for _, r in ipairs(rows) do
    if not value.eq(r.runs, data.n) then
      fails:addf("raw-aggregate-mismatch", "%s: n declared %s, rows do not all carry that many runs", art,
        value.show(data.n))
      break
    end
  end
  return expect.pool(recomputed)
end

return M
