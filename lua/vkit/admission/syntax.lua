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
  --- Runs check(); returns its result, or the refusal it raised as a
  --  record, worded from `wording` when given (M.worded), else `reasons`.
  local function run(source, check, wording)
    local ok, result = pcall(check)
    if ok then return result end
    if getmetatable(result) ~= Refusal then error(result, 0) end
    return M.refusal(wording or reasons, source, result.reason, result.offset, result.kind, result.detail)
  end
  return refuse, run
end

--- A profile's reasons with some sentences reworded (the same reasons,
--  so a refusal's name never depends on the wording): a profile's
--  signature option says what that option admits.
function M.worded(reasons, sentences)
  local out = {}
  for k, v in pairs(reasons) do out[k] = sentences[k] or v end
  for k in pairs(sentences) do assert(reasons[k], "unknown reason " .. tostring(k)) end
  return out
end

--- The text of a node of an exported tree.
function M.text(source, node)
  return source:sub(node.start + 1, node.stop)
end

--- A set of a list's values ({v = true}).
function M.set(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

--- A node's children other than `comment` nodes (tree-sitter-python's and
--  tree-sitter-typescript's kind; Rust's comments carry doc attributes and
--  are checked by its profile).
function M.children(node)
  local out = {}
  for _, c in ipairs(node.children) do
    if c.kind ~= "comment" then out[#out + 1] = c end
  end
  return out
end

--- The named children among M.children(node).
function M.named_children(node)
  local out = {}
  for _, c in ipairs(M.children(node)) do
    if c.named then out[#out + 1] = c end
  end
  return out
end

--- The child a grammar field names, if any.
function M.field(node, name)
  for _, c in ipairs(node.children) do
    if c.field == name then return c end
  end
end

--- An expression checker over a profile's allow-list: a kind in `refused`
--  is refused with its own reason, a kind without a handler in
--  `expressions` as "expression", a missing node passes (an optional field).
function M.expression_checker(expressions, refused, refuse)
  return function(ctx, fn, node)
    if not node then return end
    if refused[node.kind] then refuse(refused[node.kind], node, node.kind) end
    local check = expressions[node.kind]
    if not check then refuse("expression", node, node.kind) end
    check(ctx, fn, node)
  end
end

--- A handler for an operator node: its `operator` child must be a kind in
--  `allowed` (else refused as "operator"), and each field of `operands` is
--  checked with `check` (a profile's expression checker, called late, so it
--  may be defined after the handler).
function M.operator(allowed, operands, refuse, check)
  return function(ctx, fn, node)
    local op = M.field(node, "operator")
    if not op or not allowed[op.kind] then refuse("operator", op or node, op and op.kind or node.kind) end
    for _, name in ipairs(operands) do check(ctx, fn, M.field(node, name)) end
  end
end

--- The function a profile binds, after checking every function's body:
--  the one named opts.expected_function, or the first when none is named,
--  among those `eligible(name)` accepts.  It must take exactly one
--  parameter (the profile calls it with one u32), or under opts.signature
--  (the signature policy, issue 34) 1 to its max_params, and then its
--  parameters' names are listed too.  Refuses no_function (at `scope`) and
--  signature (at the definition, `definition` its kind).
function M.bound_function(ctx, functions, opts, p)
  local bound
  for _, node in ipairs(functions) do
    local fn = p.check_function(ctx, node)
    local name = M.text(ctx.source, M.field(node, "name"))
    if p.eligible(name) and (name == opts.expected_function or (not opts.expected_function and not bound)) then
      bound = fn
    end
  end
  if not bound then p.refuse("no_function", 0, p.scope, opts.expected_function) end
  local name = M.text(ctx.source, M.field(bound.node, "name"))
  if opts.signature then
    local most = opts.signature.max_params
    if #bound.params < 1 or #bound.params > most then
      p.refuse("signature", bound.node, p.definition, ("%d parameters, the signature profile calls it with 1 to %d")
        :format(#bound.params, most))
    end
    return { admitted = true, ["function"] = name, parameter = bound.params[1], parameters = bound.params }
  end
  if #bound.params ~= 1 then
    p.refuse("signature", bound.node, p.definition, ("%d parameters, the profile calls it with one"):format(
      #bound.params))
  end
  return { admitted = true, ["function"] = name, parameter = bound.params[1] }
end

--- nil when a tuple of `count` values is within the signature policy's
--  bounds (min_components to max_components), else the detail a refusal
--  gives.
function M.tuple_problem(policy, count)
  if count < policy.min_components or count > policy.max_components then
    return ("a tuple of %d; the profile returns %d to %d values"):format(count, policy.min_components,
      policy.max_components)
  end
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

--- A profile's reason table: its own reasons, and the limit reasons it
--  does not word itself.
function M.reasons(own)
  for k, v in pairs(M.LIMIT_REASONS) do
    if own[k] == nil then own[k] = v end
  end
  return own
end

return M
