--- fleet-board-v1 (SPEC §3.2): reference-fleet aggregate rows recomputed
--  from the paired per-request lines of raw_results.jsonl, streamed.
local json = require "vkit.json"
local number = require "vkit.vac.number"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local expect = require "vkit.vac.expect"
local sorted_keys = require("vkit.vac.manifest").sorted_keys

local kind = json.kind
local M = { name = "fleet-board-v1", refs = { "aggregate", "raw" }, optional_refs = {} }

local FIELDS = { "n", "detected", "false_alarms", "detection_rate", "false_alarm_rate" }

local function rates(t)
  return {
    n = t.n, detected = t.det, false_alarms = t.fa,
    detection_rate = number.round(t.det / t.n, 3),
    false_alarm_rate = number.round(t.fa / t.n, 3),
  }
end

-- Accumulates the raw lines: per (suite, member) group counts, in order of
-- first appearance, and the per-line findings the verdict may need.
local function raw_consumer()
  local c = {}
  function c.begin()
    c.rows, c.nonobject, c.unhashable = 0, false, nil
    c.contradictions = {}
    c.groups, c.order = {}, {}
    c.board = { n = 0, det = 0, fa = 0 }
  end
  -- groups[suite key][member key]: a string is its own key, so the common
  -- line costs no string building; any other scalar is keyed by a table
  -- standing for its Python equality class (1, 1.0 and true are one key)
  local boxes = {}
  local function key_of(v)
    if type(v) == "string" then return v end
    local k = value.key(v)
    if not k then return nil end
    local box = boxes[k]
    if not box then
      box = {}
      boxes[k] = box
    end
    return box
  end
  -- weight: how many identical lines this one stands for (a tally's
  -- combination of values, first seen at line n)
  function c.row(n, line, weight)
    weight = weight or 1
    c.rows = n
    if kind(line) ~= "object" then
      c.nonobject = true
      return
    end
    if c.nonobject or c.unhashable then return end
    local suite, member = line.suite, line.member
    -- the common line: string identifiers of a group already seen index
    -- the groups directly (only a string is its own key there)
    local by_member = c.groups[suite]
    local g = by_member and by_member[member]
    local ks, km
    if not g then
      ks, km = key_of(suite), key_of(member)
      if not ks or not km then
        c.unhashable = n
        return
      end
    end
    local detected, clean = line.detected, line.clean_passed == true
    local paired = line.defective_failed == true and clean
    if detected ~= paired and not value.eq(detected, paired) then
      c.contradictions[#c.contradictions + 1] = { n = n, suite = suite, member = member }
    end
    if not g then
      by_member = c.groups[ks]
      if not by_member then
        by_member = {}
        c.groups[ks] = by_member
      end
      g = by_member[km]
    end
    if not g then
      g = { suite = suite, member = member, suite_key = ks, member_key = km, n = 0, det = 0, fa = 0 }
      by_member[km] = g
      c.order[#c.order + 1] = g
    end
    local det = detected == true and weight or 0
    local fa = clean and 0 or weight
    g.n, g.det, g.fa = g.n + weight, g.det + det, g.fa + fa
    local b = c.board
    b.n, b.det, b.fa = b.n + weight, b.det + det, b.fa + fa
  end
  function c.group(suite, member)
    local ks, km = key_of(suite), key_of(member)
    if not ks or not km then return nil, false end
    local by_member = c.groups[ks]
    return by_member and by_member[km], true, ks, km
  end
  return c
end

local function label(suite, member) return value.str(suite) .. "/" .. value.str(member) end

-- The fields of a raw line the rule reads.
local RAW_FIELDS = { "suite", "member", "detected", "defective_failed", "clean_passed" }

-- The raw lines, read once: tallied in C when every line is a plain object
-- (each distinct combination of the rule's fields fed to the consumer once,
-- weighted), else, or when a line contradicts its pair (every such line is
-- named), streamed one line at a time.  true, or nil when unreadable.
local function read_raw(src, raw_rel, raw)
  local tally = src:tally_lines(raw_rel, RAW_FIELDS)
  if tally then
    raw.begin()
    for _, c in ipairs(tally.combos) do raw.row(c.first, c.row, c.n) end
    raw.rows = tally.rows
    if #raw.contradictions == 0 then return true end
  end
  if src:mismatched(raw_rel) ~= nil then return nil end
  return src:lines(raw_rel, raw)
end

function M.recompute(ctx)
  local check, fails, src = ctx.check, ctx.failures, ctx.source
  local agg_rel, raw_rel = check.aggregate, check.raw
  local agg = src:json(agg_rel, "object")
  local raw = raw_consumer()
  if not read_raw(src, raw_rel, raw) then return nil end
  if not agg then return nil end
  local rows = agg.rows
  if not (value.is_array(rows) and value.all_objects(rows)) then
    fails:addf("artifact-unparsable", "%s: no rows[] array", agg_rel)
    return nil
  end
  if raw.nonobject then
    fails:addf("artifact-unparsable", "%s: every line must be an object", raw_rel)
    return nil
  end
  for _, x in ipairs(raw.contradictions) do
    fails:addf("raw-aggregate-mismatch", "%s: raw line %d detected flag contradicts its own pair",
      label(x.suite, x.member), x.n)
  end
  if raw.unhashable then
    fails:addf("artifact-unparsable", "%s: line %d suite/member must be scalar identifiers", raw_rel, raw.unhashable)
    return nil
  end

  local exp = check.expect
  if kind(exp) == "object" then
    for _, k in ipairs(sorted_keys(exp)) do
      if k ~= "rows" then
        fails:addf("summary-mismatch", "%s: not recomputable under %s", k, M.name)
      elseif not value.eq(exp[k], #rows) then
        fails:addf("summary-mismatch", "rows: declared %s, recomputed %d", value.show(exp[k]), #rows)
      end
    end
  end

  local seen = {}
  for n, row in ipairs(rows) do
    local g, hashable, ks, km = raw.group(row.suite, row.member)
    if not hashable then
      fails:addf("artifact-unparsable", "%s: row %d suite/member must be scalar identifiers", agg_rel, n)
      return nil
    end
    local name = label(row.suite, row.member)
    seen[ks] = seen[ks] or {}
    if seen[ks][km] then
      fails:addf("raw-aggregate-mismatch", "%s: duplicate aggregate row", name)
    else
      seen[ks][km] = true
      if not g then
        fails:addf("raw-aggregate-mismatch", "%s: aggregate row has no raw lines", name)
      else
        fails:differ("raw-aggregate-mismatch", name .. ": ", FIELDS, row, rates(g))
      end
    end
  end
  for _, g in ipairs(raw.order) do
    if not (seen[g.suite_key] and seen[g.suite_key][g.member_key]) then
      fails:addf("raw-aggregate-mismatch", "%s: raw lines with no aggregate row", label(g.suite, g.member))
    end
  end

  -- stamps (SPEC §2.3 / §3.2)
  local ic = ctx.protocol.issuer_commit
  if text.nonblank(ic) then
    if agg.fleet_commit == nil then
      fails:add("stamp-mismatch", "fleet_commit: protocol declares issuer_commit but the aggregate carries no fleet_commit")
    elseif not value.eq(agg.fleet_commit, ic) then
      fails:addf("stamp-mismatch", "fleet_commit: protocol %s, artifact %s", ic, value.str(agg.fleet_commit))
    end
  end
  local hashes = expect.hashes(ctx)
  if hashes.fleet_commit ~= nil then
    if agg.fleet_commit == nil then
      fails:add("stamp-mismatch", "hashes.fleet_commit: named by protocol.hashes but absent from the aggregate")
    elseif not value.eq(hashes.fleet_commit, agg.fleet_commit) then
      fails:addf("stamp-mismatch", "hashes.fleet_commit: protocol %s, artifact %s", value.str(hashes.fleet_commit),
        value.str(agg.fleet_commit))
    end
  end

  -- The pool, from the raw lines only, at three granularities.  At v0.2
  -- each granularity has its own key so a suite-level summary number can
  -- only bind to a suite-level recomputation.
  local v2 = ctx.version == "0.2"
  local pool = {}
  local function put(level, k, v)
    local key = v2 and (level .. "_" .. k) or k
    pool[key] = pool[key] or {}
    table.insert(pool[key], v)
  end
  local suites, suite_order = {}, {}
  for _, g in ipairs(raw.order) do
    local s = suites[g.suite_key]
    if not s then
      s = { n = 0, det = 0, fa = 0, members = 0 }
      suites[g.suite_key] = s
      suite_order[#suite_order + 1] = s
    end
    s.n, s.det, s.fa, s.members = s.n + g.n, s.det + g.det, s.fa + g.fa, s.members + 1
  end
  put("board", "rows", #raw.order)
  put("board", "suites", #suite_order)
  for _, g in ipairs(raw.order) do
    local r = rates(g)
    for _, k in ipairs(FIELDS) do put("member", k, r[k]) end
  end
  for _, s in ipairs(suite_order) do
    local r = rates(s)
    for _, k in ipairs(FIELDS) do put("suite", k, r[k]) end
    put("suite", "members", s.members)
  end
  if raw.board.n > 0 then
    local r = rates(raw.board)
    for _, k in ipairs(FIELDS) do put("board", k, r[k]) end
  end
  return pool
end

return M
