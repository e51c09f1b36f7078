--- The frozen crashkit severity table (SPEC §3.4, §3.6): a label outside
--  it is refused, never weighed 0.
local value = require "vkit.vac.value"
local policy = require("vkit.policy").vac

local M = {}

-- a plain copy: policy tables raise on an absent key, and absent labels
-- are exactly what this module must answer about
M.WEIGHTS = {}
for label, w in pairs(policy.severity_weights) do M.WEIGHTS[label] = w end

function M.weight(label)
  if type(label) ~= "string" then return nil end
  return M.WEIGHTS[label]
end

--- The distinct labels of `labels` (an array, possibly with holes marked by
--  n) outside the table, sorted as the reference names them (null last).
function M.unknown(labels, n)
  local seen, seen_structured, out = {}, {}, {}
  for i = 1, n do
    local s = labels[i]
    if M.weight(s) == nil then
      -- a scalar by its equality class, a list or object by its canonical
      -- text (kept apart: a string may spell a list's text)
      local set, key = seen, value.key(s)
      if key == nil then set, key = seen_structured, value.canonical(s) end
      if not set[key] then
        set[key] = true
        out[#out + 1] = s == nil and value.null or s
      end
    end
  end
  table.sort(out, function(a, b)
    local an, bn = a == value.null, b == value.null
    if an ~= bn then return bn end
    return value.str(a) < value.str(b)
  end)
  return out
end

--- "'Critical', None" for a failure detail (at most four labels).
function M.describe(unknown)
  local shown = {}
  for i = 1, math.min(4, #unknown) do shown[i] = value.show(unknown[i]) end
  return table.concat(shown, ", ")
end

M.TABLE = table.concat(policy.severity_order, "/")

--- Names the labels outside the table as artifact-unparsable; true when
--  there were any (the check then recomputes nothing).
function M.refuse_unknown(failures, rel, labels, n)
  local unknown = M.unknown(labels, n)
  if #unknown == 0 then return false end
  failures:addf("artifact-unparsable", "%s: severity %s outside the profile's frozen table (%s)", rel,
    M.describe(unknown), M.TABLE)
  return true
end
return M
