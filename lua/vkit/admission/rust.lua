--- The Rust source admission profile (seed 001): which captured files may
-- become modules of a relational harness.
--
-- A file is admitted when it holds exactly one public, non-generic
-- `fn NAME(x: u32) -> u32` built from primitive literals and expressions,
-- immutable typed locals, blocks, `if` and `return`.  Everything else is
-- refused with a stable reason and the 0-based byte offset where it starts.
-- The profile is an allowlist over tree-sitter node kinds: a kind this file
-- does not name is refused as `unsupported_syntax`, so a grammar update can
-- only narrow what is admitted.  Typing and arithmetic safety stay with the
-- compiler (and the engine's overflow checks); the profile only bounds which
-- language features a captured file may use.
--
-- `check(tree, source, opts)` is pure: it takes the plain tree from
-- vkit.ts's `tree:export()` and the source bytes.  `admit(ts, source, limits,
-- opts)` adds the size, UTF-8, parse and node/depth limits around it
-- (vkit.admission.syntax); it runs inside the separate admission process
-- (lua/vkit/commands/ts_admit.lua).
--
-- It is also the pure-function profile of Rust candidates
-- (vkit.admission): a file it admits holds no state (no `static`, no
-- `unsafe`, no interior mutability: no calls at all), reaches nothing
-- outside the function (no paths, no macros, no calls) and cannot loop.
--
-- opts.signature (issue 34; the signature policy, policies/signatures.lua)
-- admits 1 to max_params parameters of the policy's types, a tuple result
-- type and tuple expressions where the value is returned; the body's rules
-- are the same.  The relational (Kani) admission never passes it.
local syntax = require "vkit.admission.syntax"

local M = {}

M.language = "rust"

--- Every refusal the profile can give, with its human sentence.
M.reasons = syntax.reasons {
  syntax_error = "the source does not parse as Rust",
  no_function = "the file defines no function",
  multiple_functions = "the file defines more than one function",
  nested_item = "items nested inside the function are not admitted",
  function_name = "the function does not have the requested name",
  not_public = "the function must be declared `pub`",
  restricted_visibility = "only plain `pub` visibility is admitted",
  function_modifier = "`const`, `async` and `extern` functions are not admitted",
  generic = "generic parameters and where clauses are not admitted",
  signature = "the signature must be exactly `(NAME: u32) -> u32`",
  attribute = "attributes (including `cfg`) are not admitted",
  doc_comment = "doc comments are attributes and are not admitted",
  macro = "macros are not admitted",
  use = "`use` declarations are not admitted",
  extern_crate = "`extern crate` is not admitted",
  module = "modules are not admitted",
  global = "`static` and `const` items are not admitted",
  item = "type, trait and impl items are not admitted",
  unsafe = "`unsafe` is not admitted",
  call = "calls (functions and methods) are not admitted",
  loop = "loops, `break` and `continue` are not admitted",
  closure = "closures are not admitted",
  reference = "references, pointers and dereferences are not admitted",
  mut = "`mut` is not admitted: locals are immutable",
  assignment = "assignments are not admitted: locals are immutable",
  pattern = "only plain identifiers may be bound (no destructuring or `if let`)",
  let_else = "`let ... else` is not admitted",
  untyped_local = "every local needs a type annotation",
  uninitialized_local = "every local needs an initializer",
  unsupported_type = "only integer and bool primitive types are admitted",
  literal = "only integer and bool literals are admitted",
  path = "paths (`a::b`, `self`, `crate`, `super`) are not admitted",
  ["match"] = "`match` is not admitted",
  unsupported_syntax = "this syntax is outside the admitted profile",
}

--- The sentences that differ under opts.signature (issue 34).
M.signature_reasons = syntax.worded(M.reasons, {
  signature = "the signature must be plain parameters of bool or fixed-width integer types (as many as "
    .. "policies/signatures.lua allows) and a result of one such type or a tuple of them",
})

local PRIMITIVE = {}
for _, t in ipairs { "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "bool" } do
  PRIMITIVE[t] = true
end

-- Anonymous tokens (keywords, punctuation, operators) that may appear at all.
local TOKENS = {}
for _, t in ipairs {
  "pub", "fn", "(", ")", "->", "{", "}", ":", ";", "=", ",", "let", "if", "else", "return", "as",
  "true", "false", "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||",
  "==", "!=", "<", "<=", ">", ">=", "!",
} do
  TOKENS[t] = true
end

-- Named kinds refused wherever they appear, by reason.
local REFUSED = {
  attribute_item = "attribute", inner_attribute_item = "attribute", attribute = "attribute",
  macro_invocation = "macro", macro_definition = "macro", macro_rule = "macro",
  use_declaration = "use", extern_crate_declaration = "extern_crate", mod_item = "module",
  static_item = "global", const_item = "global",
  struct_item = "item", enum_item = "item", union_item = "item", trait_item = "item",
  impl_item = "item", type_item = "item", foreign_mod_item = "item", associated_type = "item",
  unsafe_block = "unsafe",
  call_expression = "call", generic_function = "call",
  loop_expression = "loop", while_expression = "loop", for_expression = "loop",
  break_expression = "loop", continue_expression = "loop",
  closure_expression = "closure", closure_parameters = "closure",
  reference_expression = "reference", reference_type = "reference", pointer_type = "reference",
  mutable_specifier = "mut",
  assignment_expression = "assignment", compound_assignment_expr = "assignment",
  let_condition = "pattern", let_chain = "pattern",
  match_expression = "match",
  scoped_identifier = "path", scoped_type_identifier = "path", self = "path", super = "path",
  crate = "path", self_parameter = "signature",
  float_literal = "literal", string_literal = "literal", raw_string_literal = "literal",
  char_literal = "literal",
  type_parameters = "generic", where_clause = "generic",
}

local field = syntax.field

local function text(ctx, node)
  return syntax.text(ctx.source, node)
end

M.position = syntax.position

local refuse, run = syntax.refuser(M.reasons)

local function is_comment(node)
  return node.kind == "line_comment" or node.kind == "block_comment"
end

-- Comments are extras that may appear anywhere; doc comments are attributes.
local function check_comment(node)
  for _, c in ipairs(node.children) do
    if c.kind == "doc_comment" or c.kind == "outer_doc_comment_marker" or c.kind == "inner_doc_comment_marker" then
      refuse("doc_comment", node, node.kind)
    end
  end
end

-- The children of a node other than comments (which are checked and skipped).
local function children(node)
  local out = {}
  for _, c in ipairs(node.children) do
    if is_comment(c) then check_comment(c) else out[#out + 1] = c end
  end
  return out
end

-- Walks a subtree refusing any named kind in REFUSED and any token outside
-- TOKENS; the handlers below call it for children they do not inspect.
local visit

local function check_children(node, ctx)
  for _, c in ipairs(children(node)) do
    visit(c, ctx)
  end
end

local function check_type(node, ctx)
  if REFUSED[node.kind] then refuse(REFUSED[node.kind], node, node.kind) end
  if node.kind ~= "primitive_type" or not PRIMITIVE[text(ctx, node)] then
    refuse("unsupported_type", node, node.kind)
  end
end

local handlers = {}
local check_signature_type, check_result, mark_returns

function handlers.block(node, ctx)
  for _, c in ipairs(children(node)) do
    if c.kind == "label" then refuse("unsupported_syntax", c, "label") end
    if c.kind == "function_item" then refuse("nested_item", c, c.kind) end
    visit(c, ctx)
  end
end

function handlers.let_declaration(node, ctx)
  local typed, valued = false, false
  for _, c in ipairs(children(node)) do
    if REFUSED[c.kind] then
      refuse(REFUSED[c.kind], c, c.kind)
    elseif c.field == "pattern" then
      if c.kind ~= "identifier" then refuse("pattern", c, c.kind) end
    elseif c.field == "type" then
      check_type(c, ctx)
      typed = true
    elseif c.field == "value" then
      visit(c, ctx)
      valued = true
    elseif c.field == "alternative" or c.kind == "else" then
      refuse("let_else", c, c.kind)
    else
      visit(c, ctx)
    end
  end
  if not typed then refuse("untyped_local", node, node.kind) end
  if not valued then refuse("uninitialized_local", node, node.kind) end
end

function handlers.type_cast_expression(node, ctx)
  for _, c in ipairs(children(node)) do
    if c.field == "type" then check_type(c, ctx) else visit(c, ctx) end
  end
end

function handlers.unary_expression(node, ctx)
  local op = children(node)[1]
  if op and op.kind == "*" then refuse("reference", node, "dereference") end
  check_children(node, ctx)
end

-- Kinds admitted as they stand: their children are checked generically.
for _, kind in ipairs {
  "expression_statement", "binary_expression", "parenthesized_expression", "if_expression",
  "else_clause", "return_expression", "integer_literal", "boolean_literal", "identifier",
} do
  handlers[kind] = check_children
end

function visit(node, ctx)
  if node.error or node.missing then refuse("syntax_error", node, node.kind) end
  if is_comment(node) then return check_comment(node) end
  if not node.named then
    if not TOKENS[node.kind] then refuse("unsupported_syntax", node, node.kind) end
    return
  end
  local reason = REFUSED[node.kind]
  if reason then refuse(reason, node, node.kind) end
  local handler = handlers[node.kind]
  if not handler then refuse("unsupported_syntax", node, node.kind) end
  handler(node, ctx)
end

-- ---------------------------------------------------------------------
-- The signature profile (opts.signature, issue 34): 1 to max_params
-- parameters of the policy's types, a result of one of them or a tuple of
-- min_components to max_components, and tuple expressions where a value is
-- returned.  opts.signature is the policy (policies/signatures.lua).

local function is_signature_type(ctx, name)
  for known in pairs(ctx.signature.types) do
    if known == name then return true end
  end
  return false
end

function check_signature_type(node, ctx, what)
  if REFUSED[node.kind] then refuse(REFUSED[node.kind], node, node.kind) end
  if node.kind ~= "primitive_type" or not is_signature_type(ctx, text(ctx, node)) then
    refuse("signature", node, node.kind, ("%s must be bool or a fixed-width integer, not %s"):format(what,
      text(ctx, node)))
  end
end

-- The number of elements of a tuple (type or expression) within the
-- policy's bounds, else refused as `signature`.
local function check_tuple_size(node, ctx, count)
  local problem = syntax.tuple_problem(ctx.signature, count)
  if problem then refuse("signature", node, node.kind, problem) end
end

function check_result(node, ctx)
  if node.kind ~= "tuple_type" then return check_signature_type(node, ctx, "the result") end
  local parts = {}
  for _, c in ipairs(children(node)) do
    if c.named then parts[#parts + 1] = c elseif not TOKENS[c.kind] then refuse("signature", c, c.kind) end
  end
  check_tuple_size(node, ctx, #parts)
  for _, part in ipairs(parts) do check_signature_type(part, ctx, "a component of the result") end
end

-- The expression a block ends with (its value), if any.
local function tail(block)
  local kids = children(block)
  local last = kids[#kids - 1]   -- before the closing brace
  if not last or not last.named then return nil end
  if last.kind == "expression_statement" then
    for _, c in ipairs(last.children) do
      if c.kind == ";" then return nil end
    end
    return last.children[1]
  end
  return last
end

-- Marks the tuple expressions whose value is the function's: the value of
-- a `return`, the body's tail, and the tails of the `if`/`else` branches
-- and parenthesised expressions in those places.  Only these become
-- tuples: a tuple anywhere else has no use in a function of integers.
local function mark_tail(node, ctx)
  if not node then return end
  local kind = node.kind
  if kind == "tuple_expression" then
    ctx.tuples[node] = true
  elseif kind == "block" then
    mark_tail(tail(node), ctx)
  elseif kind == "if_expression" then
    mark_tail(field(node, "consequence"), ctx)
    mark_tail(field(node, "alternative"), ctx)
  elseif kind == "else_clause" or kind == "parenthesized_expression" then
    for _, c in ipairs(children(node)) do
      if c.named then mark_tail(c, ctx) end
    end
  end
end

function mark_returns(body, ctx)
  ctx.tuples = ctx.tuples or {}
  local function walk(node)
    if node.kind == "return_expression" then
      for _, c in ipairs(children(node)) do
        if c.named then mark_tail(c, ctx) end
      end
    end
    for _, c in ipairs(node.children) do walk(c) end
  end
  walk(body)
  mark_tail(body, ctx)
end

-- A tuple expression: only where mark_returns found one, within the
-- policy's size; anywhere else (and always in the seed's profile) it is
-- the unsupported syntax it was.
function handlers.tuple_expression(node, ctx)
  if not (ctx.tuples and ctx.tuples[node]) then refuse("unsupported_syntax", node, node.kind) end
  local count = 0
  for _, c in ipairs(children(node)) do
    if c.named then count = count + 1 end
  end
  check_tuple_size(node, ctx, count)
  check_children(node, ctx)
end

-- One parameter: a plain name and its type, u32 in the seed's profile,
-- a type of the signature policy under opts.signature.
local function check_parameter(param, ctx)
  for _, part in ipairs(children(param)) do
    if REFUSED[part.kind] then refuse(REFUSED[part.kind], part, part.kind) end
    if part.field == "pattern" then
      if part.kind ~= "identifier" then refuse("signature", part, part.kind) end
      ctx.parameters[#ctx.parameters + 1] = text(ctx, part)
    elseif part.field == "type" then
      if ctx.signature then
        check_signature_type(part, ctx, "a parameter")
      elseif part.kind ~= "primitive_type" or text(ctx, part) ~= "u32" then
        refuse("signature", part, part.kind, "the parameter must be u32")
      end
    elseif part.kind ~= ":" then
      refuse("signature", part, part.kind)
    end
  end
end

-- The one function: visibility, modifiers, name, signature, then the body.
local function check_function(fn, ctx)
  local public = false
  for _, c in ipairs(children(fn)) do
    local kind = c.kind
    if kind == "visibility_modifier" then
      if text(ctx, c) ~= "pub" then refuse("restricted_visibility", c, kind) end
      public = true
    elseif kind == "function_modifiers" then
      for _, m in ipairs(c.children) do
        if m.kind == "unsafe" then refuse("unsafe", m, "unsafe") end
      end
      refuse("function_modifier", c, kind)
    elseif c.field == "name" then
      ctx.name = text(ctx, c)
      if not public then refuse("not_public", fn, fn.kind) end
      if ctx.expected_function and ctx.name ~= ctx.expected_function then
        refuse("function_name", c, kind, ("found %q, expected %q"):format(ctx.name, ctx.expected_function))
      end
    elseif c.field == "parameters" then
      local params = {}
      for _, p in ipairs(children(c)) do
        if p.named then
          if REFUSED[p.kind] then refuse(REFUSED[p.kind], p, p.kind) end
          if p.kind ~= "parameter" then refuse("signature", p, p.kind) end
          params[#params + 1] = p
        elseif not TOKENS[p.kind] then
          refuse("signature", p, p.kind)
        end
      end
      local most = ctx.signature and ctx.signature.max_params or 1
      if #params < 1 or #params > most then
        refuse("signature", c, kind, ("%d parameters"):format(#params)
          .. (ctx.signature and (", the signature profile takes 1 to %d"):format(most) or ""))
      end
      ctx.parameters = {}
      for _, param in ipairs(params) do check_parameter(param, ctx) end
      ctx.parameter = ctx.parameters[1]
    elseif c.field == "return_type" then
      if REFUSED[kind] then refuse(REFUSED[kind], c, kind) end
      if ctx.signature then
        check_result(c, ctx)
      elseif kind ~= "primitive_type" or text(ctx, c) ~= "u32" then
        refuse("signature", c, kind, "the result must be u32")
      end
      ctx.returns = true
    elseif c.field == "body" then
      if not public then refuse("not_public", fn, fn.kind) end
      if not ctx.returns then refuse("signature", c, kind, "the result type u32 is missing") end
      if ctx.signature then mark_returns(c, ctx) end
      visit(c, ctx)
    elseif REFUSED[kind] then
      refuse(REFUSED[kind], c, kind)
    elseif c.named or not TOKENS[kind] then
      refuse("unsupported_syntax", c, kind)
    end
  end
end

--- Checks an exported tree (vkit.ts `tree:export()`) against the profile.
-- opts.expected_function: the name the binding declares (optional).
-- Returns {admitted = true, function = name, parameter = name} or
-- {admitted = false, reason, offset, line, column, kind, message}.
function M.check(tree, source, opts)
  opts = opts or {}
  local ctx = { source = source, expected_function = opts.expected_function, signature = opts.signature }
  return run(source, function()
    local broken = syntax.first_error(tree)
    if broken then refuse("syntax_error", broken, broken.missing and ("missing " .. broken.kind) or broken.kind) end
    local functions = 0
    for _, item in ipairs(children(tree)) do
      if item.kind == "function_item" then
        functions = functions + 1
        if functions > 1 then refuse("multiple_functions", item, item.kind) end
        check_function(item, ctx)
      elseif REFUSED[item.kind] then
        refuse(REFUSED[item.kind], item, item.kind)
      else
        refuse("unsupported_syntax", item, item.kind)
      end
    end
    if functions == 0 then refuse("no_function", 0, tree.kind) end
    if ctx.signature then
      return { admitted = true, ["function"] = ctx.name, parameter = ctx.parameter, parameters = ctx.parameters }
    end
    return { admitted = true, ["function"] = ctx.name, parameter = ctx.parameter }
  end, opts.signature and M.signature_reasons)
end

--- A refusal record with its position and sentence.
function M.refusal(source, reason, offset, kind, detail)
  return syntax.refusal(M.reasons, source, reason, offset, kind, detail)
end

--- Parses and checks one source within the limits (policies/limits.lua
-- `admission`): size before parsing, then node count and depth, then
-- syntax errors, then the profile.  `ts` is vkit.ts.  Adds `nodes` and
-- `depth` to the result once the source has been parsed.
function M.admit(ts, source, limits, opts)
  return syntax.admit(ts, M, source, limits, opts)
end

return M
