--- Policies: every limit and rule table lives once, in policies/<name>.lua.
--
-- A policy file is plain data: a Lua chunk returning a table, run with an
-- empty environment so it can compute nothing and reach nothing.  Access is
-- `vkit.policies.limits.output_cap`; a missing policy or a missing key is an
-- error, never a silent nil that would turn into "no limit".
local boot = require "vkit.boot"

local loaded = {}

-- A read-only view: reads of absent names raise (absent indices are nil, so
-- ipairs ends), writes raise, and pairs/ipairs/#
-- see the data underneath.
local function freeze(name, tbl)
  for k, v in pairs(tbl) do
    if type(v) == "table" then tbl[k] = freeze(name .. "." .. tostring(k), v) end
  end
  return setmetatable({}, {
    __index = function(_, key)
      local v = tbl[key]
      if v == nil and type(key) == "string" then error(("policy %s has no entry %q"):format(name, tostring(key)), 2) end
      return v
    end,
    __newindex = function() error("policies are read-only", 2) end,
    __pairs = function() return next, tbl, nil end,
    __len = function() return #tbl end,
  })
end

local function load_policy(name)
  local path = ("%s/policies/%s.lua"):format(boot.root, name)
  -- always the text on disk, never a precompiled chunk: a policy is what
  -- a reviewer reads
  local chunk, err = loadfile(path, "t", {})
  if not chunk then error(("cannot load policy %s: %s"):format(name, err), 3) end
  local tbl = chunk()
  if type(tbl) ~= "table" then error(("policy %s must return a table"):format(name), 3) end
  return freeze(name, tbl)
end

return setmetatable({}, {
  __index = function(_, name)
    if type(name) ~= "string" or not name:match "^[%w_]+$" then
      error(("invalid policy name %q"):format(tostring(name)), 2)
    end
    loaded[name] = loaded[name] or load_policy(name)
    return loaded[name]
  end,
  __newindex = function() error("policies are read-only", 2) end,
})
