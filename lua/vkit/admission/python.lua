--- The pure-function profile of Python candidates (issue 29): a captured
-- module whose bound function can only compute its result from its
-- argument, the same way every time, whoever calls it and however often.
--
-- An allow-list over tree-sitter-python's node kinds, operators and names:
-- whatever this file does not name is refused, so a name, a syntax or an
-- attribute nobody thought of is refused too.  What it admits, and why
-- each rule is needed (docs/change.md, "The pure-function profiles"):
--
--   module level   only `def` statements, constant bindings (a number, a
--                  bool, None, or a tuple of them: immutable, so nothing
--                  survives one call to be seen by the next), docstrings,
--                  and `import math` / `from math import NAME` of the
--                  functions below.  Module-level code runs at import, in
--                  the same process as whatever reports the value.
--   functions      plain parameters (annotated `int` or `bool`, or not),
--                  no defaults (a default is one object shared by every
--                  call), no *args/**kwargs, no decorators, no async, no
--                  nested functions, lambdas or classes (closures and
--                  objects hold state); annotations may only name `int`
--                  or `bool` (they are evaluated when `def` runs).
--   statements     assignments to plain local names (and tuples of them),
--                  augmented assignments, `if`/`elif`/`else`, `while`,
--                  `for NAME in range(...)`, `break`, `continue`, `pass`,
--                  `return`; no `global`/`nonlocal` (module state), no
--                  `try`/`with`/`raise`/`assert`/`del`/`import` inside.
--   expressions    numbers, True/False/None, arithmetic, comparisons
--                  (not `is`, `in`: identity and membership reach objects),
--                  `and`/`or`/`not`, conditional expressions, tuples, and
--                  calls to functions of this file, to the builtins
--                  abs bool divmod int max min pow range round sum, and to
--                  math.<ceil comb factorial floor gcd isqrt lcm perm
--                  trunc> with positional arguments only.  No strings
--                  (format methods, f-strings), no attribute but math.X
--                  (attributes reach classes, frames, the interpreter), no
--                  subscripts, collections, comprehensions, walrus.
--   names          every name is a parameter, a local, a module-level
--                  function or constant of this file, or one of the
--                  builtins above; nothing may shadow an allowed builtin or
--                  `math`, and no name may begin and end with `__`.
--
-- opts.signature (issue 34; the signature policy, policies/signatures.lua)
-- admits 1 to max_params parameters, a result annotated `tuple[...]` of
-- int and bool, and returned tuples within the policy's bounds; the body's
-- rules are the same.  Without it, the seed's profile exactly.
--
-- `check(tree, source, opts)` is pure: tree is vkit.ts's export.
local syntax = require "vkit.admission.syntax"

local M = {}

M.language = "python"

M.BUILTINS = { "abs", "bool", "divmod", "int", "max", "min", "pow", "range", "round", "sum" }
M.MODULES = { math = { "ceil", "comb", "factorial", "floor", "gcd", "isqrt", "lcm", "perm", "trunc" } }

M.reasons = syntax.reasons {
  syntax_error = "the source does not parse as Python",
  module_code = "only function definitions, constant bindings, docstrings and allowed imports may stand at module "
    .. "level: module code runs at import, beside the code that reports the value",
  import = "only `import math` and `from math import NAME` of the allowed math functions are admitted",
  constant = "a module-level binding must be a constant (a number, a bool, None or a tuple of them): mutable module "
    .. "state survives from one call to the next",
  rebinding = "a module-level name may be bound only once",
  no_function = "the bound function is not defined at module level",
  signature = "parameters must be plain names, annotated int or bool or not at all: a default is one object shared "
    .. "by every call, *args and **kwargs admit anything",
  annotation = "annotations may only name int or bool: an annotation is evaluated when the function is defined",
  decorator = "decorators run code when the function is defined and replace it",
  class = "classes are not admitted: objects hold state",
  async = "async functions are not admitted",
  nested_function = "nested functions and lambdas are not admitted: a closure holds state",
  global = "`global` and `nonlocal` are not admitted: they write state outside the call",
  statement = "this statement is outside the pure profile",
  expression = "this expression is outside the pure profile (strings, collections, comprehensions, subscripts, "
    .. "walrus and await are not admitted)",
  operator = "`is`, `is not`, `in`, `not in` and `@` are not admitted: they reach objects' identities and methods",
  for_range = "a for loop must bind one plain name to range(...), without else",
  call = "a call must name a function of this file, an allowed builtin or math.<allowed>, with positional arguments "
    .. "only",
  attribute = "attribute access is limited to math.<allowed function>: attributes reach classes, frames and the "
    .. "interpreter",
  name = "a name must be a parameter, a local, a module-level function or constant of this file, or an allowed builtin",
  shadowing = "a binding may not shadow an allowed builtin or module",
  dunder = "names that begin and end with two underscores reach the interpreter's internals",
  assignment = "only plain local names (or tuples of them) may be assigned: attributes and subscripts write into "
    .. "objects",
  characters = "the source may hold no control character but line feeds (and CR LF pairs): a lone carriage return, "
    .. "a tab, a form feed or a vertical tab is read differently by CPython's tokenizer and by the parser that checks it",
  encoding = "a coding declaration may only name UTF-8: CPython decodes the file as the declaration says, the parser "
    .. "that checks it reads UTF-8",
  docstring = "a docstring must be a plain string literal: an f-string runs its interpolations",
}

--- The sentences that differ under opts.signature (issue 34).
M.signature_reasons = syntax.worded(M.reasons, {
  annotation = "annotations may only name int or bool, and a result also tuple[...] of them: an annotation is "
    .. "evaluated when the function is defined",
  expression = "this expression is outside the pure profile (strings, collections, comprehensions, subscripts, "
    .. "walrus and await are not admitted; a returned tuple has as many values as policies/signatures.lua allows)",
})

local refuse, run = syntax.refuser(M.reasons)

local set = syntax.set

local BUILTINS = set(M.BUILTINS)
local TYPES = set { "int", "bool" }
local BINARY = set { "+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^" }
local AUGMENTED = set { "+=", "-=", "*=", "/=", "//=", "%=", "**=", "<<=", ">>=", "&=", "|=", "^=" }
local COMPARE = set { "<", "<=", "==", "!=", ">", ">=" }
local UNARY = set { "-", "+", "~" }

-- Statement and expression kinds refused by name, for a precise reason.
local REFUSED = {
  class_definition = "class", decorated_definition = "decorator", lambda = "nested_function",
  global_statement = "global", nonlocal_statement = "global",
  import_statement = "import", import_from_statement = "import", future_import_statement = "import",
  string = "expression", concatenated_string = "expression", list = "expression", dictionary = "expression",
  set = "expression", list_comprehension = "expression", dictionary_comprehension = "expression",
  set_comprehension = "expression", generator_expression = "expression", subscript = "expression",
  named_expression = "expression", await = "expression", yield = "expression", slice = "expression",
  ellipsis = "expression", list_splat = "expression", dictionary_splat = "expression",
}

local function text(ctx, node) return syntax.text(ctx.source, node) end

local children, named_children, field = syntax.children, syntax.named_children, syntax.field

local function check_name(ctx, node)
  local name = text(ctx, node)
  if name:match "^__.*__$" then refuse("dunder", node, "identifier", name) end
  -- CPython normalises identifiers (NFKC): only ASCII names read the same
  -- to it and to this profile
  if not name:match "^[%a_][%w_]*$" then refuse("name", node, "identifier", "only ASCII names are admitted") end
  return name
end

-- A name bound by the file or a function: never an allowed outside name.
local function check_binding(ctx, node)
  local name = check_name(ctx, node)
  if BUILTINS[name] or M.MODULES[name] then refuse("shadowing", node, "identifier", name) end
  return name
end

local function is_docstring(stmt)
  local kids = named_children(stmt)
  return stmt.kind == "expression_statement" and #kids == 1 and kids[1].kind == "string"
end

-- A docstring is a plain literal: no f-string (or t-string) prefix, no
-- interpolation.
local PLAIN_STRING_PARTS = { string_start = true, string_content = true, string_end = true, escape_sequence = true }
local function check_docstring(ctx, node)
  for _, c in ipairs(node.children) do
    if not PLAIN_STRING_PARTS[c.kind] then refuse("docstring", c, c.kind) end
    if c.kind == "string_start" and text(ctx, c):match "[fFtT]" then refuse("docstring", c, "f-string") end
  end
end

-- What the bytes must be before the tree can stand for what CPython runs.
local function check_characters(source)
  local at = source:find "[\0-\9\11-\31\127]"
  while at do
    local c = source:byte(at)
    if not (c == 13 and source:byte(at + 1) == 10) then
      refuse("characters", at - 1, "source", ("byte 0x%02x"):format(c))
    end
    at = source:find("[\0-\9\11-\31\127]", at + 1)
  end
  -- PEP 263: a coding declaration on line 1, or on line 2 after a comment or blank line 1
  local line1, line2 = source:match "^([^\n]*)\n?([^\n]*)"
  for i, line in ipairs { line1 or "", line2 or "" } do
    local coding = line:match "^[ ]*#.-coding[:=][ ]*([%-%w_.]+)"
    if coding and not coding:lower():match "^utf[-_]?8$" and not coding:lower():match "^utf[-_]?8[-_]" then
      refuse("encoding", i == 1 and 0 or #line1 + 1, "source", coding)
    end
    if i == 1 and not (line:match "^%s*$" or line:match "^%s*#") then break end
  end
end

-- ---------------------------------------------------------------------
-- Module level

-- A constant: number, bool, None, a signed number, a tuple of constants.
local function check_constant(ctx, node)
  local kind = node.kind
  if kind == "integer" or kind == "float" or kind == "true" or kind == "false" or kind == "none" then return end
  if kind == "unary_operator" then
    local op = field(node, "operator")
    if op and (op.kind == "-" or op.kind == "+") then return check_constant(ctx, field(node, "argument")) end
  elseif kind == "parenthesized_expression" then
    return check_constant(ctx, named_children(node)[1])
  elseif kind == "tuple" then
    for _, c in ipairs(named_children(node)) do check_constant(ctx, c) end
    return
  end
  refuse("constant", node, kind)
end

local function check_annotation(ctx, node)
  local kids = named_children(node)
  if node.kind ~= "type" or #kids ~= 1 or kids[1].kind ~= "identifier" or not TYPES[text(ctx, kids[1])] then
    refuse("annotation", node, node.kind, text(ctx, node))
  end
end

local function bind_module(ctx, node, name, what)
  if ctx.module[name] then refuse("rebinding", node, node.kind, name) end
  ctx.module[name] = what
end

local function check_import(ctx, node)
  if node.kind == "import_statement" then
    for _, c in ipairs(named_children(node)) do
      if c.kind ~= "dotted_name" or not M.MODULES[text(ctx, c)] then refuse("import", c, c.kind, text(ctx, c)) end
      bind_module(ctx, c, text(ctx, c), "module")
    end
    return
  end
  -- from math import a, b
  local module = field(node, "module_name")
  local allowed = module and module.kind == "dotted_name" and M.MODULES[text(ctx, module)]
  if not allowed then refuse("import", module or node, node.kind) end
  for _, c in ipairs(named_children(node)) do
    if c.field == "name" then
      if c.kind ~= "dotted_name" or not set(allowed)[text(ctx, c)] then
        refuse("import", c, c.kind, text(ctx, c))   -- aliases and wildcards too
      end
      bind_module(ctx, c, check_name(ctx, c), "function")
    elseif c ~= module then
      refuse("import", c, c.kind)
    end
  end
end

local function check_module_assignment(ctx, stmt, assignment)
  local left, right, ty = field(assignment, "left"), field(assignment, "right"), field(assignment, "type")
  if not left or left.kind ~= "identifier" or not right then refuse("constant", assignment, assignment.kind) end
  if ty then check_annotation(ctx, ty) end
  check_constant(ctx, right)
  bind_module(ctx, left, check_binding(ctx, left), "constant")
end

-- Under opts.signature a result may also be `tuple[A, B, ...]` of int and
-- bool, as many as the policy allows.  `tuple` is evaluated with the
-- annotation, so it must be the builtin: the module may not bind it.
local function check_result_annotation(ctx, node)
  local kids = named_children(node)
  local g = ctx.signature and node.kind == "type" and #kids == 1 and kids[1]
  if not (g and g.kind == "generic_type") then return check_annotation(ctx, node) end
  local parts = named_children(g)
  local head, params = parts[1], parts[2]
  if #parts ~= 2 or head.kind ~= "identifier" or text(ctx, head) ~= "tuple" or ctx.module.tuple
      or params.kind ~= "type_parameter" then
    refuse("annotation", node, node.kind, text(ctx, node))
  end
  local problem = syntax.tuple_problem(ctx.signature, #named_children(params))
  if problem then refuse("annotation", node, node.kind, problem) end
  for _, part in ipairs(children(params)) do
    if part.named then check_annotation(ctx, part)
    elseif part.kind ~= "[" and part.kind ~= "]" and part.kind ~= "," then refuse("annotation", part, part.kind) end
  end
end

-- ---------------------------------------------------------------------
-- Functions

local check_expression, check_block

local function check_parameters(ctx, params, fn)
  for _, p in ipairs(children(params)) do
    if p.named then
      local name_node
      if p.kind == "identifier" then
        name_node = p
      elseif p.kind == "typed_parameter" then
        for _, c in ipairs(named_children(p)) do
          if c.field == "type" then check_annotation(ctx, c)
          elseif c.kind == "identifier" then name_node = c
          else refuse("signature", c, c.kind) end
        end
      else
        refuse("signature", p, p.kind)
      end
      if not name_node then refuse("signature", p, p.kind) end
      local name = check_binding(ctx, name_node)
      fn.params[#fn.params + 1] = name
      fn.locals[name] = true
    elseif p.kind ~= "(" and p.kind ~= ")" and p.kind ~= "," then
      refuse("signature", p, p.kind)
    end
  end
end

-- Every name a function binds (Python's locals are the whole function's).
local function collect_target(ctx, fn, node)
  if node.kind == "identifier" then
    fn.locals[check_binding(ctx, node)] = true
  elseif node.kind == "pattern_list" or node.kind == "tuple_pattern" then
    for _, c in ipairs(named_children(node)) do collect_target(ctx, fn, c) end
  else
    refuse("assignment", node, node.kind)
  end
end

local function collect_locals(ctx, fn, block)
  for _, stmt in ipairs(named_children(block)) do
    if stmt.kind == "expression_statement" then
      for _, e in ipairs(named_children(stmt)) do
        if e.kind == "assignment" or e.kind == "augmented_assignment" then
          collect_target(ctx, fn, field(e, "left"))
        end
      end
    elseif stmt.kind == "for_statement" then
      local left = field(stmt, "left")
      if left then collect_target(ctx, fn, left) end
    end
    for _, c in ipairs(named_children(stmt)) do
      if c.kind == "block" or c.kind == "else_clause" or c.kind == "elif_clause" then collect_locals(ctx, fn, c) end
    end
    if stmt.kind == "block" or stmt.kind == "else_clause" or stmt.kind == "elif_clause" then
      collect_locals(ctx, fn, stmt)
    end
  end
end

local function check_call(ctx, fn, node)
  local callee, args = field(node, "function"), field(node, "arguments")
  if not callee or not args or args.kind ~= "argument_list" then refuse("call", node, node.kind) end
  if callee.kind == "identifier" then
    local name = check_name(ctx, callee)
    if fn.locals[name] then refuse("call", callee, "identifier", name .. " is a local value, not a function") end
    if not (BUILTINS[name] or ctx.module[name] == "function") then refuse("call", callee, "identifier", name) end
  elseif callee.kind == "attribute" then
    check_expression(ctx, fn, callee)
  else
    refuse("call", callee, callee.kind)
  end
  for _, a in ipairs(children(args)) do
    if a.named then
      if a.kind == "keyword_argument" or a.kind == "list_splat" or a.kind == "dictionary_splat" then
        refuse("call", a, a.kind, "positional arguments only")
      end
      check_expression(ctx, fn, a)
    elseif a.kind ~= "(" and a.kind ~= ")" and a.kind ~= "," then
      refuse("call", a, a.kind)
    end
  end
end

local EXPRESSIONS = {}

function EXPRESSIONS.identifier(ctx, fn, node)
  local name = check_name(ctx, node)
  if fn.locals[name] or ctx.module[name] == "constant" or ctx.module[name] == "function" or BUILTINS[name] then return end
  if ctx.module[name] == "module" then refuse("attribute", node, "identifier", name .. " only as " .. name .. ".<function>") end
  refuse("name", node, "identifier", name)
end

function EXPRESSIONS.attribute(ctx, fn, node)
  local object, attribute = field(node, "object"), field(node, "attribute")
  local module = object and object.kind == "identifier" and text(ctx, object)
  if not (module and ctx.module[module] == "module" and attribute and set(M.MODULES[module])[text(ctx, attribute)]) then
    refuse("attribute", node, node.kind, text(ctx, node))
  end
end

for _, k in ipairs { "integer", "float", "true", "false", "none" } do EXPRESSIONS[k] = function() end end

local function check_late(ctx, fn, node) return check_expression(ctx, fn, node) end
EXPRESSIONS.binary_operator = syntax.operator(BINARY, { "left", "right" }, refuse, check_late)
EXPRESSIONS.unary_operator = syntax.operator(UNARY, { "argument" }, refuse, check_late)

function EXPRESSIONS.not_operator(ctx, fn, node)
  check_expression(ctx, fn, field(node, "argument"))
end

function EXPRESSIONS.boolean_operator(ctx, fn, node)
  check_expression(ctx, fn, field(node, "left"))
  check_expression(ctx, fn, field(node, "right"))
end

function EXPRESSIONS.comparison_operator(ctx, fn, node)
  for _, c in ipairs(children(node)) do
    if c.field == "operators" then
      if not COMPARE[c.kind] then refuse("operator", c, c.kind) end
    elseif c.named then
      check_expression(ctx, fn, c)
    else
      refuse("operator", c, c.kind)
    end
  end
end

function EXPRESSIONS.conditional_expression(ctx, fn, node)
  for _, c in ipairs(children(node)) do
    if c.named then check_expression(ctx, fn, c)
    elseif c.kind ~= "if" and c.kind ~= "else" then refuse("expression", c, c.kind) end
  end
end

function EXPRESSIONS.parenthesized_expression(ctx, fn, node)
  for _, c in ipairs(named_children(node)) do check_expression(ctx, fn, c) end
end

function EXPRESSIONS.tuple(ctx, fn, node)
  for _, c in ipairs(named_children(node)) do check_expression(ctx, fn, c) end
end
EXPRESSIONS.expression_list = EXPRESSIONS.tuple

EXPRESSIONS.call = check_call

check_expression = syntax.expression_checker(EXPRESSIONS, REFUSED, refuse)

local STATEMENTS = {}

function STATEMENTS.expression_statement(ctx, fn, stmt, first)
  local kids = named_children(stmt)
  if #kids ~= 1 then refuse("statement", stmt, stmt.kind) end
  local e = kids[1]
  if e.kind == "string" and first then return check_docstring(ctx, e) end
  if e.kind == "assignment" then
    if field(e, "type") then check_annotation(ctx, field(e, "type")) end
    local right = field(e, "right")
    if not right or right.kind == "assignment" then refuse("assignment", e, e.kind, "one target, one value") end
    check_expression(ctx, fn, right)
  elseif e.kind == "augmented_assignment" then
    local op = field(e, "operator")
    if not op or not AUGMENTED[op.kind] then refuse("operator", op or e, op and op.kind or e.kind) end
    if field(e, "left").kind ~= "identifier" then refuse("assignment", field(e, "left"), field(e, "left").kind) end
    check_expression(ctx, fn, field(e, "right"))
  else
    refuse("statement", e, e.kind, "an expression alone computes nothing a pure function keeps")
  end
end

-- Under opts.signature, a returned tuple (`return a, b`, `return (a, b)`)
-- has as many values as the policy allows: more is no result of the
-- profile.
local function check_returned_tuple(ctx, value)
  while value.kind == "parenthesized_expression" and #named_children(value) == 1 do value = named_children(value)[1] end
  if value.kind ~= "tuple" and value.kind ~= "expression_list" then return end
  local problem = syntax.tuple_problem(ctx.signature, #named_children(value))
  if problem then refuse("expression", value, "tuple", problem) end
end

function STATEMENTS.return_statement(ctx, fn, stmt)
  for _, c in ipairs(named_children(stmt)) do
    if ctx.signature then check_returned_tuple(ctx, c) end
    check_expression(ctx, fn, c)
  end
end

function STATEMENTS.if_statement(ctx, fn, stmt)
  for _, c in ipairs(named_children(stmt)) do
    if c.field == "condition" then check_expression(ctx, fn, c)
    elseif c.kind == "block" then check_block(ctx, fn, c)
    elseif c.kind == "elif_clause" then STATEMENTS.if_statement(ctx, fn, c)
    elseif c.kind == "else_clause" then check_block(ctx, fn, field(c, "body") or named_children(c)[1])
    else refuse("statement", c, c.kind) end
  end
end

function STATEMENTS.while_statement(ctx, fn, stmt)
  for _, c in ipairs(named_children(stmt)) do
    if c.field == "condition" then check_expression(ctx, fn, c)
    elseif c.field == "body" then check_block(ctx, fn, c)
    else refuse("statement", c, c.kind, "while ... else") end
  end
end

function STATEMENTS.for_statement(ctx, fn, stmt)
  local left, right, body = field(stmt, "left"), field(stmt, "right"), field(stmt, "body")
  if not left or left.kind ~= "identifier" then refuse("for_range", left or stmt, stmt.kind) end
  local callee = right and right.kind == "call" and field(right, "function")
  if not (callee and callee.kind == "identifier" and text(ctx, callee) == "range") then
    refuse("for_range", right or stmt, right and right.kind or stmt.kind)
  end
  for _, c in ipairs(children(stmt)) do
    if c.kind == "else_clause" or c.kind == "async" then refuse("for_range", c, c.kind) end
  end
  check_expression(ctx, fn, right)
  check_block(ctx, fn, body)
end

for _, k in ipairs { "break_statement", "continue_statement", "pass_statement" } do STATEMENTS[k] = function() end end

function check_block(ctx, fn, block)
  if not block or block.kind ~= "block" then refuse("statement", block or 0, "block") end
  for i, stmt in ipairs(named_children(block)) do
    if stmt.kind == "function_definition" then refuse("nested_function", stmt, stmt.kind) end
    if REFUSED[stmt.kind] then refuse(REFUSED[stmt.kind], stmt, stmt.kind) end
    local check = STATEMENTS[stmt.kind]
    if not check then refuse("statement", stmt, stmt.kind) end
    check(ctx, fn, stmt, i == 1)
  end
end

local function check_function(ctx, node)
  local fn = { params = {}, locals = {}, node = node }
  for _, c in ipairs(children(node)) do
    if c.kind == "async" then refuse("async", c, c.kind) end
  end
  local params, ret, body = field(node, "parameters"), field(node, "return_type"), field(node, "body")
  if field(node, "type_parameters") then refuse("signature", field(node, "type_parameters"), "type_parameters") end
  check_parameters(ctx, params, fn)
  if ret then check_result_annotation(ctx, ret) end
  collect_locals(ctx, fn, body)
  check_block(ctx, fn, body)
  return fn
end

--- Checks an exported tree against the profile.  opts.expected_function:
--  the bound function's name, which must be defined at module level.
--  Returns {admitted = true, function, parameter} or a refusal record.
function M.check(tree, source, opts)
  opts = opts or {}
  local ctx = { source = source, module = {}, signature = opts.signature }
  return run(source, function()
    check_characters(source)
    local broken = syntax.first_error(tree)
    if broken then refuse("syntax_error", broken, broken.missing and ("missing " .. broken.kind) or broken.kind) end
    local functions = {}
    -- Pass 1: what the module binds (functions may call each other, in any order).
    for i, stmt in ipairs(named_children(tree)) do
      if stmt.kind == "function_definition" then
        local name_node = field(stmt, "name")
        bind_module(ctx, name_node, check_binding(ctx, name_node), "function")
        functions[#functions + 1] = stmt
      elseif stmt.kind == "import_statement" or stmt.kind == "import_from_statement" then
        check_import(ctx, stmt)
      elseif stmt.kind == "expression_statement" and is_docstring(stmt) and i == 1 then
        check_docstring(ctx, named_children(stmt)[1])
      elseif stmt.kind == "expression_statement" and #named_children(stmt) == 1
          and named_children(stmt)[1].kind == "assignment" then
        check_module_assignment(ctx, stmt, named_children(stmt)[1])
      elseif REFUSED[stmt.kind] then
        refuse(REFUSED[stmt.kind], stmt, stmt.kind)
      else
        refuse("module_code", stmt, stmt.kind)
      end
    end
    -- Pass 2: each function's body, then the bound one.
    return syntax.bound_function(ctx, functions, opts, { check_function = check_function, refuse = refuse,
      eligible = function() return true end, scope = "module", definition = "function_definition" })
  end, opts.signature and M.signature_reasons)
end

--- Parses and checks one source within the admission limits.
function M.admit(ts, source, limits, opts)
  return syntax.admit(ts, M, source, limits, opts)
end

return M
