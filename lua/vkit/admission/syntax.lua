--- What every admission profile shares: positions, refusal records, and
-- the limits around a parse (policies/limits.lua `admission`: the source's
-- size before parsing, UTF-8, then the tree's node count and depth).
-- Pure; `admit` takes vkit.ts as an argument.
local M = {}

--- 1-based line and column (in bytes) of a 0-based byte offset.
function M.position(source, offset)
  local line, last = 1, 0
  for i in source:sub(1, offset):gmatch "()\n" do
    line, last = line + 1, i
  end
  return line, offset - last + 1
end

--- A refusal record with its position and sentence.  reasons: the
--  profile's {reason = sentence} table.
function M.refusal(reasons, source, reason, offset, kind, detail)
  assert(reasons[reason], "unknown reason " .. tostring(reason))
  local line, column = M.position(source, offset)
  local message = ("%s (%s at byte %d, line %d, column %d%s)"):format(reasons[reason], kind or reason,
    offset, line, column, detail and ("; " .. detail) or "")
  return { admitted = false, reason = reason, offset = offset, line = line, column = column,
    kind = kind or reason, message = message }
end

--- A refuser for one profile: refuse(reason, node_or_offset, kind, detail)
--  raises a refusal that `run` turns into a record.
function M.refuser(reasons)
  local Refusal = {}
  local function refuse(reason, node_or_offset, kind, detail)
    assert(reasons[reason], "unknown reason " .. tostring(reason))
    local offset = type(node_or_offset) == "table" and node_or_offset.start or node_or_offset
    error(setmetatable({ reason = reason, offset = offset, kind = kind, detail = detail }, Refusal), 0)
  end
  --- Runs check(); returns its result, or the refusal it raised as a record.
  local function run(source, check)
    local ok, result = pcall(check)
    if ok then return result end
    if getmetatable(result) ~= Refusal then error(result, 0) end
    return M.refusal(reasons, source, result.reason, result.offset, result.kind, result.detail)
  end
  return refuse, run
end

--- The text of a node of an exported tree.
function M.text(source, node)
  return source:sub(node.start + 1, node.stop)
end

--- A node's child in the field `name`, if any.
function M.field(node, name)
  for _, c in ipairs(node.children) do
    if c.field == name then return c end
  end
end

--- A node's named children other than comments.
function M.named_children(node)
  local out = {}
  for _, c in ipairs(node.children) do
    if c.named and c.kind ~= "comment" then out[#out + 1] = c end
  end
  return out
end

--- The first ERROR or MISSING node in preorder, if any.
function M.first_error(node)
  if node.error or node.missing then return node end
  for _, c in ipairs(node.children) do
    local found = M.first_error(c)
    if found then return found end
  end
  return nil
end

-- The first byte of s that is not part of valid UTF-8, 0-based, or nil.
local function invalid_utf8_at(s)
  local ok, pos = utf8.len(s)
  if ok then return nil end
  return pos - 1
end

--- Parses and checks one source within the limits, in this order: size
--  (before parsing), UTF-8, node count, depth, then profile.check(tree,
--  source, opts).  `ts` is vkit.ts; profile = {language, reasons, check}
--  (its reasons include too_large, invalid_utf8, too_many_nodes, too_deep).
--  Adds `nodes` and `depth` once the source has been parsed.
function M.admit(ts, profile, source, limits, opts)
  local reasons = profile.reasons
  if #source > limits.max_source_bytes then
    return M.refusal(reasons, source, "too_large", limits.max_source_bytes, "source",
      ("%d bytes, limit %d"):format(#source, limits.max_source_bytes))
  end
  local bad = invalid_utf8_at(source)
  if bad then return M.refusal(reasons, source, "invalid_utf8", bad, "source") end
  local tree, message, code = ts.parse(source, { max_bytes = limits.max_source_bytes, language = profile.language })
  if not tree then error(("tree-sitter parse failed: %s (%s)"):format(message, code), 0) end
  local stats = tree:stats { max_nodes = limits.max_nodes, max_depth = limits.max_depth }
  local result
  if stats.nodes > limits.max_nodes then
    result = M.refusal(reasons, source, "too_many_nodes", stats.nodes_exceeded_at, "source",
      ("%d nodes, limit %d"):format(stats.nodes, limits.max_nodes))
  elseif stats.depth > limits.max_depth then
    result = M.refusal(reasons, source, "too_deep", stats.depth_exceeded_at, "source",
      ("depth %d, limit %d"):format(stats.depth, limits.max_depth))
  else
    local plain = assert(tree:export { max_nodes = limits.max_nodes, max_depth = limits.max_depth })
    result = profile.check(plain, source, opts)
  end
  tree:close()
  result.nodes, result.depth = stats.nodes, stats.depth
  return result
end

--- The reasons every profile has (the limits around the parse).
M.LIMIT_REASONS = {
  too_large = "the source is larger than the admission limit",
  invalid_utf8 = "the source is not valid UTF-8",
  too_many_nodes = "the syntax tree has more nodes than the admission limit",
  too_deep = "the syntax tree is nested deeper than the admission limit",
  syntax_error = "the source does not parse",
}

return M
