--- Argument placeholders (seed 000): {{python}} {{snapshot}} {{run_dir}}
-- {{request}} {{evidence}} {{receipt}}.  Each expands inside the one argument
-- element that holds it; nothing is split, globbed or otherwise interpreted,
-- because no shell ever sees the vector.
local policy = require("vkit.policy").protocol

local M = {}

local known = {}
for _, name in ipairs(policy.placeholders) do known[name] = true end

--- Names of placeholders used in an argv that are not known, or nil.
function M.unknown(argv)
  for i, element in ipairs(argv) do
    for name in element:gmatch "{{(.-)}}" do
      if not known[name] then return ("argv[%d] uses the unknown placeholder {{%s}}"):format(i, name) end
    end
    local stripped = element:gsub("{{.-}}", "")
    if stripped:find "{{" or stripped:find "}}" then
      return ("argv[%d] has an unbalanced placeholder"):format(i)
    end
  end
  return nil
end

--- Expands every placeholder; values maps name -> string.
function M.expand(argv, values)
  local out = {}
  for i, element in ipairs(argv) do
    out[i] = element:gsub("{{(.-)}}", function(name)
      local v = values[name]
      if v == nil then error(("no value for placeholder {{%s}}"):format(name)) end
      return v
    end)
  end
  return out
end

return M
