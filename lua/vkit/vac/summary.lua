--- The §2.5 rule: every number in results.summary is re-earned by some
--  check's recomputation (v0.1: bound by leaf key against pools merged by
--  field name, else equal to some recomputed quantity; v0.2: bound by its
--  full path against unmerged `scope.field` pools, no second tier).  A
--  numeral typed as a string is refused outright.
--
-- Stricter than the reference: when some check could not recompute, the
-- reference skips this rule.  vkit still judges every leaf the missing
-- pools could not have re-earned, so a cooked headline is named even
-- beside another failure; only the undecidable leaves are left to the
-- failures already named.
local json = require "vkit.json"
local text = require "vkit.vac.text"
local value = require "vkit.vac.value"
local number = require "vkit.vac.number"
local sorted_keys = require("vkit.vac.manifest").sorted_keys

local kind = json.kind
local M = {}

-- The fields each profile's pool can hold (nil: any name, issuer chosen).
M.FIELDS = {
  ["certlab-bundle-v1"] = nil,
  ["fleet-board-v1"] = { "rows", "suites", "n", "detected", "false_alarms", "detection_rate", "false_alarm_rate",
    "members" },
  ["evalmut-run-v1"] = { "caught", "missed", "flagged", "error", "na", "applied", "results", "score_3", "vacuous",
    "blind", "brittle", "coverage_gap", "operators_exercised", "operators", "score" },
  ["crashkit-battery-v1"] = { "accuracy", "vulnerability_score", "flagged_cases", "n_cases", "truncations",
    "reliability", "cases", "graded", "errors" },
  ["crashkit-variance-v1"] = { "n_tasks", "flaky_cases", "stability", "mean_vulnerability", "worst_case_vulnerability" },
  ["modeldrift-board-v1"] = { "rows", "regressed", "improved", "unchanged", "baseline", "no_data", "series", "points",
    "tasks", "min_detectable_pts_full_grade", "probe_alarms", "repeat_offenders", "one_offs",
    "models_with_enough_history", "claims_fired" },
}

--- The names a check that failed might have put in the pool, as a set,
--  or nil when that is any name at all.
function M.possible_fields(check)
  local profile = check.profile
  if profile == "rows-aggregate-v1" then
    if kind(check.recompute) ~= "object" then return nil end
    local set = {}
    for k in pairs(check.recompute) do set[k] = true end
    return set
  end
  local fields = M.FIELDS[profile]
  if not fields then return nil end
  local set = {}
  for _, f in ipairs(fields) do
    set[f] = true
    for _, level in ipairs { "board", "member", "suite" } do set[level .. "_" .. f] = true end
  end
  return set
end

--- SPEC §2.5.1: a check's scope is its primary reference's file name up
--  to the first ".", when that matches [A-Za-z0-9_-]+.
function M.scope_of(check, primary)
  local ref = check[primary]
  if not text.nonblank(ref) then return nil end
  local name = ""
  for part in ref:gmatch "[^/]+" do
    if part ~= "." then name = part end
  end
  local stem = name:match "^([^.]*)"
  if stem ~= "" and not stem:find "[^A-Za-z0-9_-]" then return stem end
  return nil
end

-- A set of numbers under Python's equality (1 == 1.0 == -0.0 + 1).
local function number_set() return {} end
local function add(set, v) set[value.key(v)] = v end
local function has(set, v) return set[value.key(v)] ~= nil end

local function describe(set)
  local vals = {}
  for _, v in pairs(set) do vals[#vals + 1] = v end
  table.sort(vals)
  if #vals == 1 then return value.show(vals[1]) end
  local parts = {}
  for i, v in ipairs(vals) do parts[i] = value.show(v) end
  return "one of [" .. table.concat(parts, ", ") .. "]"
end

--- Appends the summary failures.  pools: the pools of the checks that
--  recomputed (keys already `scope.field` at v0.2); missing: what the
--  checks that did not recompute might have contributed
--  ({any = true} | {fields = set} at v0.1, {scopes = set} at v0.2).
function M.outruns(summary, pools, version, missing, failures)
  local v2 = version == "0.2"
  local by_field, all = {}, number_set()
  for _, pool in ipairs(pools) do
    for k, vs in pairs(pool) do
      by_field[k] = by_field[k] or number_set()
      for _, v in ipairs(vs) do
        add(by_field[k], v)
        add(all, v)
      end
    end
  end
  local function decidable(k)
    if v2 then
      local scope = k:match "^([^.]*)"
      return not (missing.scopes and missing.scopes[scope])
    end
    if missing.any then return false end
    if missing.fields and missing.fields[k] then return false end
    if by_field[k] then return true end
    -- the loose tier: a missing pool might hold any value
    return not (missing.fields and next(missing.fields))
  end
  local stack = { { summary, "summary", "summary" } }
  while #stack > 0 do
    local node, path, key = table.unpack(table.remove(stack))
    local k = kind(node)
    if k == "object" then
      local keys = sorted_keys(node)
      for i = #keys, 1, -1 do stack[#stack + 1] = { node[keys[i]], path .. "." .. keys[i], keys[i] } end
    elseif k == "array" then
      for i = #node, 1, -1 do stack[#stack + 1] = { node[i], ("%s[%d]"):format(path, i - 1), key } end
    elseif k == "string" then
      if text.is_numeral(node) then
        failures:addf("summary-outruns-checks", "%s: declares %s as a string; a numeric headline must be a JSON number "
          .. "so it can be recomputed", path, value.show(node))
      end
    elseif k == "integer" or k == "number" then
      local field = v2 and path:sub(#"summary." + 1) or key
      if decidable(field) then
        if by_field[field] then
          if not has(by_field[field], node) then
            failures:addf("summary-outruns-checks", "%s: declares %s, recomputation gives %s", path, number.str(node),
              describe(by_field[field]))
          end
        elseif v2 or not has(all, node) then
          failures:addf("summary-outruns-checks", "%s: declares %s, no check recomputes it", path, number.str(node))
        end
      end
    end
  end
end

return M
