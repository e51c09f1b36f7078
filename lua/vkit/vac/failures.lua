--- A list of named failures: {name = "sha256-mismatch", detail = "..."}.
--  The name is the stable machine reason (SPEC §4); the detail is for
--  people and may carry issuer text (escaped only when printed).
local value = require "vkit.vac.value"

local Failures = {}
Failures.__index = Failures

function Failures.new() return setmetatable({}, Failures) end

function Failures:add(name, detail)
  self[#self + 1] = { name = name, detail = detail }
end

--- Adds name with a detail built by string.format(fmt, ...).
function Failures:addf(name, fmt, ...)
  self:add(name, fmt:format(...))
end

--- Adds name for every key of `keys` whose declared value differs from the
--  recomputed one: "<prefix><key> declared X, recomputed Y".
function Failures:differ(name, prefix, keys, declared, recomputed)
  for _, k in ipairs(keys) do
    if not value.eq(declared[k], recomputed[k]) then
      self:add(name, ("%s%s declared %s, recomputed %s"):format(prefix, k, value.show(declared[k]),
        value.show(recomputed[k])))
    end
  end
end

function Failures:extend(other)
  for _, f in ipairs(other) do self[#self + 1] = f end
end

--- Drops every failure after the first n.
function Failures:truncate(n)
  for i = #self, n + 1, -1 do self[i] = nil end
end

--- The sorted set of reason names.
function Failures:names()
  local seen, out = {}, {}
  for _, f in ipairs(self) do
    if not seen[f.name] then
      seen[f.name] = true
      out[#out + 1] = f.name
    end
  end
  table.sort(out)
  return out
end

return Failures
