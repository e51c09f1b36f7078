--- Directed graphs: the strongly connected components, for the scripts
-- that hold the code's layering (scripts/require-graph.lua for the Lua
-- packages, scripts/c-call-graph.lua for the C files).
local M = {}

--- The strongly connected components of more than one node (Tarjan's
--  algorithm): each a sorted list of nodes, the lists in the order of
--  their first node.  nodes: every node, in the order to visit them;
--  successors(v): v's successors, in a fixed order (so the answer is the
--  same on every run).
function M.components(nodes, successors)
  local index, low, on_stack, stack, counter, found = {}, {}, {}, {}, 0, {}
  local function visit(v)
    counter = counter + 1
    index[v], low[v] = counter, counter
    stack[#stack + 1], on_stack[v] = v, true
    for _, w in ipairs(successors(v)) do
      if not index[w] then
        visit(w)
        low[v] = math.min(low[v], low[w])
      elseif on_stack[w] then
        low[v] = math.min(low[v], index[w])
      end
    end
    if low[v] == index[v] then
      local component = {}
      repeat
        local w = table.remove(stack)
        on_stack[w] = nil
        component[#component + 1] = w
      until w == v
      if #component > 1 then
        table.sort(component)
        found[#found + 1] = component
      end
    end
  end
  for _, v in ipairs(nodes) do
    if not index[v] then visit(v) end
  end
  table.sort(found, function(a, b) return a[1] < b[1] end)
  return found
end

return M
