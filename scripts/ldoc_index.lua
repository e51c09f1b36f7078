-- An LDoc filter (`ldoc --filter ldoc_index.tsv`): one tab-separated line
-- per documented item, for tests/api_docs_spec.lua to compare with the
-- public tables:  module  type  name  summary  params  returns
-- (params and returns: how many @param and @return/@treturn it has).
local M = {}

local function flat(s)
  return (tostring(s or ""):gsub("[\t\r\n]+", " "))
end

local function count(list)
  local n = 0
  for _ in ipairs(list or {}) do n = n + 1 end
  return n
end

function M.tsv(module_list)
  for mod in module_list:iter() do
    print(table.concat({ mod.name, "module", mod.name, flat(mod.summary), "0", "0" }, "\t"))
    for item in mod.items:iter() do
      print(table.concat({ mod.name, item.type, item.name, flat(item.summary), tostring(count(item.params)),
                           tostring(count(item.ret)) }, "\t"))
    end
  end
end

return M
