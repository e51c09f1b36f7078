--- modeldrift-board-v1 (SPEC §3.5): the model-drift board's derivation
--  layer re-earned from its stored per-run rows: point coherence, the
--  standings object, the RESULTS.md table (byte for byte), the flip and
--  probe-alarm analysis, narrative coherence, and the input-byte stamps.
--  At vac_version 0.2 standings are derived under the bundle's declared
--  reliability floor.
local json = require "vkit.json"
local number = require "vkit.vac.number"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"
local policy = require("vkit.policy").vac
local sorted_keys = require("vkit.vac.manifest").sorted_keys

local kind, null, array, object = json.kind, json.null, json.array, json.object
-- the globals of the hot loops as upvalues: no _ENV lookup per call
local type, ipairs, pairs, mtype = type, ipairs, pairs, math.type
local eq, show = value.eq, value.show

local M = {
  name = "modeldrift-board-v1",
  refs = { "metrics", "registry", "standings", "flips", "narrative", "results_md", "fingerprint" },
  optional_refs = {},
}

M.ICONS = { regressed = "🔴", improved = "🟢", unchanged = "⚪", baseline = "🔵", ["no-data"] = "⚫" }
local ROW_KEYS = { "id", "label", "when", "acc", "delta", "verdict", "graded", "min_detectable_pts", "below_floor" }
local STAND_KEYS = { "suite_version", "suite_hash", "min_detectable_pts_full_grade" }
local FLIP_LISTS = { "repeat_offenders", "one_offs", "probe_alarms" }

local function is_unit(v) return mtype(v) ~= nil and v >= 0 and v <= 1 end

-- Python's truthiness of a decoded value.
local function truthy(v)
  if v == nil or v == null or v == false or v == 0 or v == "" then return false end
  if type(v) == "table" and next(v) == nil then return false end
  return true
end

local function day(t) return text.prefix(t, 10) end

local function string_list(v)
  if kind(v) ~= "array" then return false end
  for _, x in ipairs(v) do
    if type(x) ~= "string" then return false end
  end
  return true
end

local NONE = setmetatable({}, { __newindex = function() error("NONE is read-only", 2) end })

local function outside(list, ids)
  local all_known = true -- the common case, without a table made
  for i = 1, #list do
    if not ids[list[i]] then
      all_known = false
      break
    end
  end
  if all_known then return NONE end
  local out, seen = {}, {}
  for _, t in ipairs(list) do
    if not ids[t] and not seen[t] then
      seen[t] = true
      out[#out + 1] = t
    end
  end
  table.sort(out)
  return out
end

local function show_list(list)
  local parts = {}
  for i, s in ipairs(list) do parts[i] = show(s) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- Per-point coherence; appends failures, true when every point is sound.
local function coherent(ctx, met_rel, series, order, fp, ids, tasks)
  local fails = ctx.failures
  local before = #fails
  -- the point being checked, named only when it fails (most points do not)
  local point_mid, point_i
  local function bad(fmt, ...)
    fails:add("raw-aggregate-mismatch", ("%s: %s[%d]: "):format(met_rel, point_mid, point_i - 1) .. fmt:format(...))
  end
  for _, mid in ipairs(order) do
    local pts = series[mid]
    local prev_t = ""
    local mock = mid:sub(1, 5) == "mock:"
    for i, p in ipairs(pts) do
      point_mid, point_i = mid, i
      local t = p.t
      if type(t) ~= "string" then
        bad("t %s is not a string", show(t))
        goto next_point
      end
      if t < prev_t then bad("t %s precedes %s", show(t), show(prev_t)) end
      prev_t = t
      if not is_unit(p.acc) then bad("%s %s outside [0,1]", "acc", show(p.acc)) end
      if not is_unit(p.reliability) then bad("%s %s outside [0,1]", "reliability", show(p.reliability)) end
      if p.refusal_rate ~= nil and p.refusal_rate ~= null and not is_unit(p.refusal_rate) then
        bad("refusal_rate %s outside [0,1]", show(p.refusal_rate))
      end
      if not (mtype(p.latency_ms) and p.latency_ms >= 0) then bad("latency_ms %s not a number >= 0", show(p.latency_ms)) end
      do
        local runs = p.runs
        if runs == nil then runs = 1 end
        if not (mtype(runs) and runs >= 1) then bad("runs %s < 1", show(runs)) end
        local spread = p.acc_spread
        if spread == nil then spread = 0 end
        if not (mtype(spread) and spread >= 0) then bad("acc_spread %s < 0", show(spread)) end
      end
      do
        local f = p.fails
        if f ~= nil and f ~= null and not string_list(f) then
          bad("fails %s is not a list of task ids", show(f))
          goto next_point
        end
        local fl = (f ~= nil and f ~= null) and f or NONE
        local unknown = outside(fl, ids)
        if #unknown > 0 then bad("fails name tasks outside the suite: %s", show_list(unknown)) end
        local g = p.graded
        if g ~= nil and g ~= null and not (mtype(g) == "integer" and g >= 1 and g <= tasks) then
          bad("graded %s outside 1..%d", show(g), tasks)
        end
        if p.suite ~= nil and p.suite ~= null and p.suite ~= fp.suite_version then
          bad("suite %s is not %s", show(p.suite), show(fp.suite_version))
        end
        if p.suite_hash ~= nil and p.suite_hash ~= null and p.suite_hash ~= fp.suite_hash then
          bad("suite_hash %s is not %s", show(p.suite_hash), show(fp.suite_hash))
        end
        local fr = p.fails_runs
        if fr ~= nil and fr ~= null then
          local ok = kind(fr) == "array"
          if ok then
            for _, sample in ipairs(fr) do
              if not string_list(sample) then ok = false end
            end
          end
          if not ok then
            bad("fails_runs %s is not a list of samples", show(fr))
          else
            local member = false
            for j, sample in ipairs(fr) do
              local u = outside(sample, ids)
              if #u > 0 then bad("fails_runs[%d] names tasks outside the suite: %s", j - 1, show_list(u)) end
              if eq(sample, fl) or (#sample == 0 and #fl == 0) then member = true end
            end
            if not member then bad("fails is not one of its own fails_runs samples") end
          end
        end
        -- the live null control: a moved mock indicts the harness
        if mock and (not eq(p.acc, 1.0) or #fl > 0) then
          bad("the deterministic control moved (acc %s, fails %s)", show(p.acc), show(p.fails))
        end
      end
      ::next_point::
    end
  end
  return #fails == before
end

--- The declared reliability floor (v0.2), or nil with reasons named.
local function reliability_floor(ctx, metrics, md_rel)
  local fails, v = ctx.failures, ctx.check.rel_floor
  if v == nil or v == null then
    fails:add("schema-violation", "rel_floor: a 0.2 modeldrift-board-v1 check MUST declare the reliability floor its "
      .. "standings were derived under")
    return nil
  end
  if not mtype(v) then
    fails:addf("schema-violation", "rel_floor: must be a number, got %s", show(v))
    return nil
  end
  local lo, hi = policy.rel_floor_min, policy.rel_floor_max
  if not (v >= lo and v <= hi) then
    fails:addf("schema-violation", "rel_floor: %s is outside the admissible range [%s, %s]; a floor an issuer can raise "
      .. "without bound is a dial for disqualifying an inconvenient run", number.str(v), number.str(lo), number.str(hi))
    return nil
  end
  if not eq(metrics.rel_floor, v) then
    fails:addf("raw-aggregate-mismatch", "metrics.json: rel_floor declared %s by the check, %s by the metrics the "
      .. "dashboard renders from", number.str(v), show(metrics.rel_floor))
    return nil
  end
  local md = ctx.source:text(md_rel)
  if not md then return nil end
  if not md:find("floor** is " .. number.str(v), 1, true) then
    fails:addf("raw-aggregate-mismatch", "RESULTS.md: does not state the declared reliability floor %s; the published "
      .. "table and the check must not disagree about which runs were scored", number.str(v))
    return nil
  end
  return v + 0.0
end

local function qualifies(p, floor)
  local r = p.reliability
  return floor == nil or r == nil or r == null or r >= floor
end

--- The standings rows of SPEC §3.5, one per registry entry.
function M.standings_rows(series, registry, floor)
  local rows = array {}
  for _, m in ipairs(registry) do
    local raw = series[m.id] or {}
    local pts = {}
    for _, p in ipairs(raw) do
      if qualifies(p, floor) then pts[#pts + 1] = p end
    end
    local acc, delta, graded, when, verdict = null, null, null, null, nil
    if #pts == 0 then
      verdict = "no-data"
    else
      local last = pts[#pts]
      if truthy(last.graded) then graded = math.tointeger(last.graded) or last.graded end
      local t = last.t
      if type(t) == "string" and t ~= "" then when = day(t) end
      acc = last.acc
      if #pts < 2 then
        verdict = "baseline"
      else
        delta = number.round(acc - pts[#pts - 1].acc, 4)
        verdict = delta < -1e-9 and "regressed" or (delta > 1e-9 and "improved" or "unchanged")
      end
    end
    local floor_pts = graded ~= null and 100.0 / graded or nil
    local row = object {
      id = m.id,
      label = truthy(m.label) and m.label or m.id,
      when = when, acc = acc, delta = delta, verdict = verdict, graded = graded,
      min_detectable_pts = floor_pts and number.round(floor_pts, 3) or null,
      below_floor = floor_pts ~= nil and delta ~= null and 1e-9 < math.abs(delta * 100) and math.abs(delta * 100) < floor_pts,
    }
    if floor ~= nil then
      local last_raw = raw[#raw]
      row.latest_observed = last_raw == nil and null or object {
        when = (type(last_raw.t) == "string" and last_raw.t ~= "") and day(last_raw.t) or null,
        acc = last_raw.acc == nil and null or last_raw.acc,
        reliability = last_raw.reliability == nil and null or last_raw.reliability,
        acc_spread = last_raw.acc_spread == nil and null or last_raw.acc_spread,
        qualified = qualifies(last_raw, floor),
      }
    end
    rows[#rows + 1] = row
  end
  return rows
end

--- RESULTS.md under the profile's pinned template, from recomputed rows.
function M.results_md(rows, suite_version, floor)
  local out = {}
  for i, r in ipairs(rows) do
    local label = value.str(r.label)
    if r.acc == null then
      out[i] = ("| %s | — | — | — | ⚫ no runs yet |"):format(label)
    else
      local d = r.delta == null and "—" or ("%+.1f pts"):format(r.delta * 100)
      local floor_pts = r.graded ~= null and 100.0 / r.graded or nil
      local f
      if floor_pts == nil then
        f = "—"
      elseif r.delta ~= null and 1e-9 < math.abs(r.delta * 100) and math.abs(r.delta * 100) < floor_pts then
        f = ("±%.1f ⚠ below floor"):format(floor_pts)
      else
        f = ("±%.1f"):format(floor_pts)
      end
      out[i] = ("| %s | %.1f%% | %s | %s | %s %s |"):format(label, r.acc * 100, d, f, M.ICONS[r.verdict], r.verdict)
    end
  end
  local floor_text = ""
  if floor ~= nil then
    floor_text = ("**Reliability floor** is %s: accuracy from runs below it is not scored, because a rate limit or "
      .. "outage makes a call absent rather than wrong. The disqualified run stays visible as a reliability "
      .. "event.\n\n"):format(number.float_repr(floor))
  end
  return ("# Latest standings — suite `%s`\n\n"):format(suite_version)
    .. "_Auto-generated after each scheduled probe. Live chart: "
    .. "[egnaro9.github.io/model-drift](https://egnaro9.github.io/model-drift/)._\n\n"
    .. "**Min detectable** is the smallest movement a run could show: `100 / graded calls`. Accuracy is scored over "
    .. "graded calls only — a truncated call leaves the denominator rather than counting as wrong — so the floor is "
    .. "not a constant, and a delta beneath it is the denominator moving, not the model.\n\n"
    .. floor_text
    .. "| Model | Accuracy | Δ vs previous | Min detectable | Status |\n"
    .. "| --- | --- | --- | --- | --- |\n"
    .. table.concat(out, "\n") .. "\n"
end

--- The flip / probe-alarm analysis recomputed from the stored fails.
function M.flips(series, order)
  local flips = {}
  local by_day, days = {}, {} -- by_day[day][task]: the entry of that day's task, in days in first-seen order
  local history = 0
  for _, mid in ipairs(order) do
    local pts = series[mid]
    local bearing = {}
    for _, p in ipairs(pts) do
      if p.fails ~= nil then bearing[#bearing + 1] = p end
    end
    if #bearing >= 2 then history = history + 1 end
    if mid:sub(1, 5) ~= "mock:" then
      local counts, latest, tasks = {}, {}, {}
      -- a task in a point's fails and not in the previous point's flipped:
      -- broke (entering the set) or recovered (leaving it).  at[t] is the
      -- last point whose fails hold t, so no set is built per point.
      local function flipped(t, verb, when)
        if not counts[t] then tasks[#tasks + 1] = t end
        counts[t] = (counts[t] or 0) + 1
        latest[t] = verb .. when
      end
      local at, gone = {}, {}
      local prev
      local provider = mid:match "^([^:]*):" or mid
      for i, p in ipairs(bearing) do
        local d = day(type(p.t) == "string" and p.t or "")
        local fails = p.fails ~= null and p.fails or NONE
        local on_day = by_day[d]
        if not on_day then
          on_day = {}
          by_day[d] = on_day
        end
        for j = 1, #fails do
          local t = fails[j]
          local e = on_day[t]
          if not e then
            e = { day = d, task = t, providers = {}, n = 0 }
            on_day[t] = e
            days[#days + 1] = e
          end
          if not e.providers[provider] then
            e.providers[provider] = true
            e.n = e.n + 1
          end
          if at[t] ~= i then -- t's first time in this point
            if prev and at[t] ~= i - 1 then flipped(t, "broke on ", d) end
            at[t] = i
          end
        end
        if prev then
          for j = 1, #prev do
            local t = prev[j]
            if at[t] == i - 1 and gone[t] ~= i then -- in the previous point, not in this one
              gone[t] = i
              flipped(t, "recovered on ", d)
            end
          end
        end
        prev = fails
      end
      for _, t in ipairs(tasks) do
        flips[#flips + 1] = object { model = mid, task = t, flips = counts[t], latest = latest[t] }
      end
    end
  end
  local repeat_offenders, one_offs = array {}, array {}
  -- one_offs keep series order (rows within a model by task); repeat
  -- offenders sort by (-flips, model), ties in the model's own order
  local per_model = {}
  for _, r in ipairs(flips) do
    per_model[r.model] = per_model[r.model] or {}
    table.insert(per_model[r.model], r)
  end
  for _, mid in ipairs(order) do
    local rows = per_model[mid]
    if rows then
      table.sort(rows, function(a, b)
        if a.flips ~= b.flips then return a.flips > b.flips end
        return a.task < b.task
      end)
      for _, r in ipairs(rows) do
        if r.flips > 1 then repeat_offenders[#repeat_offenders + 1] = r else one_offs[#one_offs + 1] = r end
      end
    end
  end
  table.sort(repeat_offenders, function(a, b)
    if a.flips ~= b.flips then return a.flips > b.flips end
    if a.model ~= b.model then return a.model < b.model end
    return a.task < b.task
  end)
  local alarms = array {}
  for _, e in ipairs(days) do
    if e.n >= 3 then
      local providers = array {}
      for prov in pairs(e.providers) do providers[#providers + 1] = prov end
      table.sort(providers)
      alarms[#alarms + 1] = object { day = e.day, task = e.task, providers = providers, n_providers = e.n }
    end
  end
  table.sort(alarms, function(a, b)
    if a.n_providers ~= b.n_providers then return a.n_providers > b.n_providers end
    if a.day ~= b.day then return a.day < b.day end
    return a.task < b.task
  end)
  return {
    repeat_offenders = repeat_offenders, one_offs = one_offs, probe_alarms = alarms,
    models_with_enough_history = history,
  }
end

local function first_row_diff(got, want)
  if kind(got) ~= "array" then return ("declared %s, recomputed a list of %d"):format(show(got), #want) end
  if #got ~= #want then return ("declared %d rows, recomputed %d"):format(#got, #want) end
  for i = 1, #got do
    if not eq(got[i], want[i]) then return ("row %d declared %s, recomputed %s"):format(i - 1, show(got[i]), show(want[i])) end
  end
  return "lists compare unequal but no row differs"
end

local function extra_keys(got, allowed)
  local extra = {}
  for k in pairs(got) do
    if not allowed[k] then extra[#extra + 1] = k end
  end
  table.sort(extra)
  return extra
end

local function set_of(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end

function M.recompute(ctx)
  local check, fails, src = ctx.check, ctx.failures, ctx.source
  local met_rel, reg_rel, stand_rel = check.metrics, check.registry, check.standings
  local flips_rel, narr_rel, md_rel, fp_rel = check.flips, check.narrative, check.results_md, check.fingerprint
  local metrics, order = src:json_ordered(met_rel, "object", "series")
  local registry = src:json(reg_rel, "array")
  local stand = src:json(stand_rel, "object")
  local flips = src:json(flips_rel, "object")
  local narr = src:json(narr_rel, "object")
  local fp = src:json(fp_rel, "object")
  if not (metrics and registry and stand and flips and narr and fp) then return nil end

  local series = metrics.series
  local series_ok = kind(series) == "object"
  if series_ok then
    for _, pts in pairs(series) do
      if not (kind(pts) == "array" and value.all_objects(pts)) then series_ok = false end
    end
  end
  if not series_ok then
    fails:addf("artifact-unparsable", "%s: no series object of point lists", met_rel)
    return nil
  end
  for _, m in ipairs(registry) do
    if not (kind(m) == "object" and text.nonblank(m.id)) then
      fails:addf("artifact-unparsable", "%s: no model registry array with ids", reg_rel)
      return nil
    end
    if truthy(m.label) and type(m.label) == "table" then
      -- vkit renders labels as text; a structured label has no one rendering
      fails:addf("artifact-unparsable", "%s: model %s has a label that is not text", reg_rel, m.id)
      return nil
    end
  end
  local task_ids = fp.task_ids
  local fp_ok = kind(task_ids) == "array" and #task_ids > 0 and text.nonblank(fp.suite_version)
    and text.nonblank(fp.suite_hash)
  if fp_ok then
    for _, t in ipairs(task_ids) do
      if not text.nonblank(t) then fp_ok = false end
    end
  end
  if not fp_ok then
    fails:addf("artifact-unparsable", "%s: suite_version, suite_hash, and task_ids[] required", fp_rel)
    return nil
  end
  if not (kind(stand.rows) == "array" and value.all_objects(stand.rows)) then
    fails:addf("artifact-unparsable", "%s: no rows[] array", stand_rel)
    return nil
  end
  if not (kind(narr.sentences) == "array" and type(narr.html) == "string" and type(narr.text) == "string") then
    fails:addf("artifact-unparsable", "%s: sentences[], html, and text required", narr_rel)
    return nil
  end
  local tasks = #task_ids
  if not eq(fp.tasks, tasks) then
    fails:addf("raw-aggregate-mismatch", "%s: tasks declared %s, recomputed %d (len of task_ids)", fp_rel, show(fp.tasks),
      tasks)
    return nil
  end
  if not coherent(ctx, met_rel, series, order, fp, set_of(task_ids), tasks) then return nil end

  local floor_full = number.round(100.0 / tasks, 3)
  local rel_floor
  if ctx.version == "0.2" then
    rel_floor = reliability_floor(ctx, metrics, md_rel)
    if rel_floor == nil then return nil end
  end
  local want_rows = M.standings_rows(series, registry, rel_floor)
  local want_top = { suite_version = fp.suite_version, suite_hash = fp.suite_hash, min_detectable_pts_full_grade = floor_full }
  fails:differ("raw-aggregate-mismatch", stand_rel .. ": ", STAND_KEYS, stand, want_top)
  local extra = extra_keys(stand, set_of { "suite_version", "suite_hash", "min_detectable_pts_full_grade", "rows" })
  if #extra > 0 then fails:addf("raw-aggregate-mismatch", "%s: unexpected keys %s", stand_rel, show_list(extra)) end
  local got_rows = stand.rows
  local same_ids = #got_rows == #want_rows
  if same_ids then
    for i = 1, #got_rows do
      if not eq(got_rows[i].id, want_rows[i].id) then same_ids = false end
    end
  end
  if not same_ids then
    fails:addf("raw-aggregate-mismatch", "%s: rows do not cover the registry in registry order (declared %d, "
      .. "recomputed %d)", stand_rel, #got_rows, #want_rows)
  else
    local keys = { table.unpack(ROW_KEYS) }
    if rel_floor ~= nil then keys[#keys + 1] = "latest_observed" end
    local allowed = set_of(keys)
    for i, got in ipairs(got_rows) do
      local want = want_rows[i]
      for _, k in ipairs(keys) do
        if not eq(got[k], want[k]) then
          fails:addf("raw-aggregate-mismatch", "%s: %s: %s declared %s, recomputed %s", stand_rel, value.str(want.id), k,
            show(got[k]), show(want[k]))
        end
      end
      local x = extra_keys(got, allowed)
      if #x > 0 then
        fails:addf("raw-aggregate-mismatch", "%s: %s: unexpected keys %s", stand_rel, value.str(want.id), show_list(x))
      end
    end
  end

  local md = src:bytes(md_rel)
  if md ~= M.results_md(want_rows, fp.suite_version, rel_floor) then
    fails:addf("raw-aggregate-mismatch", "%s: does not re-render byte-identically from the recomputed standings rows",
      md_rel)
  end

  local want_flips = M.flips(series, order)
  local mw = want_flips.models_with_enough_history
  if not eq(flips.models_with_enough_history, mw) then
    fails:addf("raw-aggregate-mismatch", "%s: models_with_enough_history declared %s, recomputed %d", flips_rel,
      show(flips.models_with_enough_history), mw)
  end
  for _, k in ipairs(FLIP_LISTS) do
    if not eq(flips[k], want_flips[k]) then
      fails:addf("raw-aggregate-mismatch", "%s: %s does not recompute from the fails vectors: %s", flips_rel, k,
        first_row_diff(flips[k], want_flips[k]))
    end
  end
  extra = extra_keys(flips, set_of { "repeat_offenders", "one_offs", "probe_alarms", "models_with_enough_history" })
  if #extra > 0 then fails:addf("raw-aggregate-mismatch", "%s: unexpected keys %s", flips_rel, show_list(extra)) end

  -- narrative: internal coherence only (regeneration is the replay's job)
  if not eq(narr.claims_fired, #narr.sentences) then
    fails:addf("raw-aggregate-mismatch", "%s: claims_fired declared %s, recomputed %d (one per sentence)", narr_rel,
      show(narr.claims_fired), #narr.sentences)
  end
  if narr.text ~= text.squeeze(text.strip_tags(narr.html)) then
    fails:addf("raw-aggregate-mismatch", "%s: text is not the whitespace-normalized, tag-stripped html", narr_rel)
  end

  -- stamps: the pinned suite and the exact input bytes
  local hashes = expect.hashes(ctx)
  if not eq(hashes.suite_hash, fp.suite_hash) then
    fails:addf("stamp-mismatch", "suite_hash: protocol %s, artifact %s", value.str(hashes.suite_hash),
      value.str(fp.suite_hash))
  end
  for _, kr in ipairs { { "metrics_sha256", met_rel }, { "registry_sha256", reg_rel } } do
    local actual = src:sha256(kr[2])
    if not eq(hashes[kr[1]], actual) then
      fails:addf("stamp-mismatch", "%s: protocol %s, artifact %s", kr[1], value.str(hashes[kr[1]]), actual)
    end
  end

  local verdicts = {}
  for _, r in ipairs(want_rows) do verdicts[r.verdict] = (verdicts[r.verdict] or 0) + 1 end
  local points = 0
  for _, mid in ipairs(order) do points = points + #series[mid] end
  local recomputed = {
    rows = #want_rows, regressed = verdicts.regressed or 0, improved = verdicts.improved or 0,
    unchanged = verdicts.unchanged or 0, baseline = verdicts.baseline or 0, no_data = verdicts["no-data"] or 0,
    series = #order, points = points, tasks = tasks, min_detectable_pts_full_grade = floor_full,
    probe_alarms = #want_flips.probe_alarms, repeat_offenders = #want_flips.repeat_offenders,
    one_offs = #want_flips.one_offs, models_with_enough_history = mw, claims_fired = #narr.sentences,
  }
  expect.compare(ctx, recomputed, M.name)
  return expect.pool(recomputed)
end

return M
