--- evalmut-run-v1 (SPEC §3.3): the tally, score and hole classes of an
--  `evalmut run --json --all` payload recomputed from its per-mutation
--  rows; optionally bound to the operator catalog, the fixture corpus
--  manifest and a rendered report.
local json = require "vkit.json"
local number = require "vkit.vac.number"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"

local kind = json.kind
local M = { name = "evalmut-run-v1", refs = { "artifact" }, optional_refs = { "catalog", "fixtures", "render" } }

local OUTCOMES = { "caught", "missed", "flagged", "error", "na" }
-- the fields a row must share with its operator's catalog entry
local CATALOG_FIELDS = { "family", "polarity", "op_type" }
-- hole class -> the rows it is defined over (outcome, op_type or any)
local HOLES = {
  { "vacuous", "missed", "sanity" }, { "blind", "missed", "kill" }, { "error", "error" },
  { "brittle", "flagged" }, { "coverage_gap", "missed", "diagnostic" },
}
local FIXTURES_MANIFEST_VERSION = 1

-- The render headline "mutation score S% (C caught / A applied; N n/a)".
function M.headline(s)
  local i = 1
  local function spaces(j)
    local start = j
    while j <= #s do
      local cp = utf8.codepoint(s, j)
      if not text.is_space(cp) then break end
      j = j + #utf8.char(cp)
    end
    return j > start and j or nil
  end
  local function literal(j, lit)
    if s:sub(j, j + #lit - 1) == lit then return j + #lit end
    return nil
  end
  while true do
    local p = s:find("mutation score", i, true)
    if not p then return nil end
    local j = spaces(p + 14)
    if j then
      -- [\d.]+ then "%"
      local start, digits = j, {}
      while j <= #s do
        local cp = utf8.codepoint(s, j)
        local d = text.digit_value(cp)
        if d then digits[#digits + 1] = tostring(d)
        elseif cp == 0x2E then digits[#digits + 1] = "."
        else break end
        j = j + #utf8.char(cp)
      end
      local caught, applied, na
      if j > start and s:sub(j, j) == "%" then
        j = spaces(j + 1)
        j = j and literal(j, "(")
        if j then caught, j = text.digits_at(s, j) end
        j = caught and literal(j, " caught / ")
        if j then applied, j = text.digits_at(s, j) end
        j = applied and literal(j, " applied; ")
        if j then na, j = text.digits_at(s, j) end
        j = na and literal(j, " n/a)")
        if j then return table.concat(digits), caught, applied, na end
      end
    end
    i = p + 1
  end
end

local function check_render(ctx, rel, s, want)
  local pct, caught, applied, na = M.headline(s)
  local score = pct and pct:match "^%d+%.?%d*$" and tonumber(pct) or (pct and pct:match "^%.%d+$" and tonumber(pct))
  if not pct or not score then
    ctx.failures:addf("artifact-unparsable", "%s: no 'mutation score' headline to compare against the payload", rel)
    return
  end
  local got = { applied = applied, caught = caught, na = na, score_3 = number.round(score / 100, 3) }
  for _, k in ipairs { "applied", "caught", "na", "score_3" } do
    if not value.eq(got[k], want[k]) then
      ctx.failures:addf("raw-aggregate-mismatch", "%s: render shows %s %s, payload recomputes %s", rel, k,
        value.show(got[k]), value.show(want[k]))
    end
  end
end

local function check_fixtures(ctx, rel, art, rows)
  local fails = ctx.failures
  local fx = ctx.source:json(rel, "object")
  if not fx then return end
  if not value.eq(fx.manifest_version, FIXTURES_MANIFEST_VERSION) then
    fails:addf("unknown-profile", "%s: manifest_version %s, this check reads %d", rel, value.show(fx.manifest_version),
      FIXTURES_MANIFEST_VERSION)
  end
  local cases = fx.cases
  if not (value.is_array(cases) and value.all_objects(cases)) then
    fails:addf("artifact-unparsable", "%s: no cases[] array", rel)
    return
  end
  local names, distinct = {}, 0
  for _, c in ipairs(cases) do
    if text.nonblank(c.name) and not names[c.name] then
      names[c.name] = true
      distinct = distinct + 1
    end
  end
  if distinct ~= #cases then
    fails:addf("artifact-unparsable", "%s: every case must carry a unique non-empty name", rel)
  end
  if not value.eq(fx.case_count, #cases) then
    fails:addf("raw-aggregate-mismatch", "%s: case_count declares %s, recomputed %d", rel, value.show(fx.case_count),
      #cases)
  end
  local stray, seen = {}, {}
  for _, r in ipairs(rows) do
    local n = r.case_name
    if text.nonblank(n) and not names[n] and not seen[n] then
      seen[n] = true
      stray[#stray + 1] = n
    end
  end
  if #stray > 0 then
    table.sort(stray)
    local shown = table.concat(stray, ", ", 1, math.min(4, #stray))
    local more = #stray > 4 and (" (+%d more)"):format(#stray - 4) or ""
    fails:addf("raw-aggregate-mismatch", "%s: rows cite case(s) absent from %s: %s%s", art, rel, shown, more)
  end
end

local function check_catalog(ctx, rel, art, rows, recomputed)
  local fails = ctx.failures
  local cat = ctx.source:json(rel, "array")
  if not cat then return end
  if not value.all_objects(cat) then
    fails:addf("artifact-unparsable", "%s: no operator array", rel)
    return
  end
  local ok, by_id, ids = true, {}, 0
  for i, o in ipairs(cat) do
    if not (text.nonblank(o.id) and text.nonblank(o.real_origin)) then
      fails:addf("artifact-unparsable", "%s: catalog entry %d lacks a non-empty id/real_origin (the battery must be "
        .. "mined, not asserted)", rel, i)
      ok = false
    end
    if text.nonblank(o.id) then
      if not by_id[o.id] then ids = ids + 1 end
      by_id[o.id] = o
    end
  end
  if ok and ids ~= #cat then
    fails:addf("artifact-unparsable", "%s: duplicate operator ids", rel)
    ok = false
  end
  if not ok then return end
  for n, r in ipairs(rows) do
    local id = r.operator_id
    local op = type(id) == "string" and by_id[id] or nil
    if not op then
      fails:addf("raw-aggregate-mismatch", "%s: row %d operator %s is not in the catalog", art, n, value.show(id))
    else
      for _, k in ipairs(CATALOG_FIELDS) do
        local got, want = r[k], op[k]
        if got ~= want and not value.eq(got, want) then
          fails:addf("raw-aggregate-mismatch", "%s: row %d %s %s contradicts the catalog's %s", art, n, k,
            value.show(r[k]), value.show(op[k]))
        end
      end
    end
  end
  recomputed.operators = #cat
end

-- Multiset equality of two row lists, by canonical text.
local function same_rows(got, want)
  if #got ~= #want then return false end
  local count = {}
  for _, r in ipairs(want) do
    local c = value.canonical(r)
    count[c] = (count[c] or 0) + 1
  end
  for _, r in ipairs(got) do
    local c = value.canonical(r)
    if not count[c] or count[c] == 0 then return false end
    count[c] = count[c] - 1
  end
  return true
end

function M.recompute(ctx)
  local check, fails = ctx.check, ctx.failures
  local art = check.artifact
  local data, rows = ctx.source:object_rows(art, "results",
    { hint = " (evalmut-run-v1 requires the --json --all payload)" })
  if not data then return nil end
  local tally, holes = data.tally, data.holes
  if kind(tally) ~= "object" then
    fails:addf("artifact-unparsable", "%s: no tally object", art)
    return nil
  end
  if kind(holes) ~= "object" then
    fails:addf("artifact-unparsable", "%s: no holes object", art)
    return nil
  end
  local operators, n_operators = {}, 0
  for n, r in ipairs(rows) do
    local key = value.key(r.operator_id)
    if not key then
      fails:addf("artifact-unparsable", "%s: row %d operator_id must be a scalar identifier", art, n)
      return nil
    end
    if not operators[key] then
      operators[key] = true
      n_operators = n_operators + 1
    end
    if (r.outcome == "missed" and r.polarity ~= "defect") or (r.outcome == "flagged" and r.polarity ~= "equivalent") then
      fails:addf("raw-aggregate-mismatch", "%s: row %d outcome %s contradicts its polarity %s", art, n,
        value.show(r.outcome), value.show(r.polarity))
    end
  end
  local counts = {}
  for _, k in ipairs(OUTCOMES) do counts[k] = 0 end
  for _, r in ipairs(rows) do
    if type(r.outcome) == "string" and counts[r.outcome] then counts[r.outcome] = counts[r.outcome] + 1 end
  end
  for _, k in ipairs(OUTCOMES) do
    if not value.eq(tally[k], counts[k]) then
      fails:addf("raw-aggregate-mismatch", "%s: tally.%s declared %s, recomputed %d", art, k, value.show(tally[k]),
        counts[k])
    end
  end
  local applied = counts.caught + counts.missed + counts.flagged
  if applied == 0 then
    -- no perfect-by-default: a run that applied nothing measured nothing
    fails:addf("artifact-unparsable", "%s: applied == 0, so this run has no score (a payload that applied no "
      .. "mutation has measured nothing)", art)
    return nil
  end
  local score = counts.caught / applied
  if not value.eq(data.score, score) then
    fails:addf("raw-aggregate-mismatch", "%s: score declared %s, recomputed %s", art, value.show(data.score),
      value.show(score))
  end
  local hole_counts = {}
  for _, h in ipairs(HOLES) do
    local cls, outcome, op_type = h[1], h[2], h[3]
    local want = {}
    for _, r in ipairs(rows) do
      if r.outcome == outcome and (op_type == nil or r.op_type == op_type) then want[#want + 1] = r end
    end
    hole_counts[cls] = #want
    local got = {}
    if kind(holes[cls]) == "array" then
      for _, r in ipairs(holes[cls]) do
        if kind(r) == "object" then got[#got + 1] = r end
      end
    end
    if not same_rows(got, want) then
      fails:addf("raw-aggregate-mismatch", "%s: holes.%s does not recompute from the rows (declared %d, recomputed %d)",
        art, cls, #got, #want)
    end
  end
  local recomputed = {
    applied = applied, results = #rows, score_3 = number.round(score, 3),
    vacuous = hole_counts.vacuous, blind = hole_counts.blind, brittle = hole_counts.brittle,
    coverage_gap = hole_counts.coverage_gap, operators_exercised = n_operators,
  }
  for _, k in ipairs(OUTCOMES) do recomputed[k] = counts[k] end

  if text.nonblank(check.fixtures) then check_fixtures(ctx, check.fixtures, art, rows) end
  if text.nonblank(check.catalog) then check_catalog(ctx, check.catalog, art, rows, recomputed) end
  if text.nonblank(check.render) then
    local s = ctx.source:text(check.render)
    if s then check_render(ctx, check.render, s, recomputed) end
  end
  expect.compare(ctx, recomputed, M.name, "counts")
  local pool = expect.pool(recomputed)
  pool.score = { score }
  return pool
end

return M
