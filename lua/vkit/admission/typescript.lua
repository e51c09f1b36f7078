--- The pure-function profile of TypeScript candidates (issue 29): a
-- captured module whose bound function can only compute its result from
-- its argument, the same way every time, whoever calls it and however often.
--
-- An allow-list over tree-sitter-typescript's node kinds, operators and
-- names: whatever this file does not name is refused.  In JavaScript every
-- value reaches shared, writable objects through its prototype chain
-- (`(0).constructor.constructor("return process")()`), so the profile
-- admits no member access at all except Math.<pure function>, no string,
-- no object or array, and no name from outside the file but `Math`.
-- What it admits, and why (docs/change.md, "The pure-function profiles"):
--
--   module level   function declarations (exported or not) and `const`
--                  bindings of constants (a number, a bool, a signed
--                  number); no imports, no other statements (module code
--                  runs at require, beside the code that reports the
--                  value), no classes, no `let`/`var` (mutable module state).
--   functions      plain parameters annotated `number` or `boolean`, a
--                  return type `number` or `boolean`; no defaults,
--                  optional or rest parameters, no async or generator, no
--                  type parameters, no nested functions or arrows
--                  (closures hold state).
--   statements     `const`/`let` declarations of plain names, assignments,
--                  compound assignments and ++/-- of locals, `if`/`else`,
--                  `while`, `do`/`while`, `for (let ...; ...; ...)`,
--                  `break`, `continue`, `return`, blocks; no `var`, `try`,
--                  `throw`, `switch`, labels, `with`.
--   expressions    numbers, true/false, arithmetic, bitwise, comparison
--                  and logical operators (not `in`, `instanceof`, `typeof`,
--                  `void`, `delete`), `?:`, and calls to functions of this
--                  file or to Math.<abs cbrt ceil clz32 floor fround hypot
--                  imul max min pow round sign sqrt trunc> (never random)
--                  with plain arguments; no `new`, `this`, strings,
--                  templates, objects, arrays, casts, optional chaining.
--   names          every name is a parameter, a local, a function or
--                  constant of this file, or `Math` as the object of an
--                  allowed call; nothing may be bound as `Math`.
--
-- opts.signature (issue 34; the signature policy, policies/signatures.lua)
-- admits 1 to max_params parameters, `bigint` beside number and boolean,
-- tuple result types, an array literal only as a returned tuple, and
-- BigInt(e); the body's rules are the same.  Without it, the seed's
-- profile exactly.
--
-- `check(tree, source, opts)` is pure: tree is vkit.ts's export.
local syntax = require "vkit.admission.syntax"

local M = {}

M.language = "typescript"

M.MATH = { "abs", "cbrt", "ceil", "clz32", "floor", "fround", "hypot", "imul", "max", "min", "pow", "round", "sign",
           "sqrt", "trunc" }

M.reasons = syntax.reasons {
  syntax_error = "the source does not parse as TypeScript",
  module_code = "only function declarations and const bindings of constants may stand at module level: module code "
    .. "runs at require, beside the code that reports the value",
  import = "imports are not admitted: a module reached from the candidate can hold state or do I/O",
  constant = "a module-level binding must be `const` and a constant (a number or a bool): mutable module state "
    .. "survives from one call to the next",
  rebinding = "a module-level name may be bound only once",
  no_function = "the bound function is not declared at module level, exported",
  signature = "parameters must be plain names annotated number or boolean, and the result number or boolean: "
    .. "defaults, optional and rest parameters are refused",
  class = "classes are not admitted: objects hold state",
  async = "async functions and generators are not admitted",
  nested_function = "nested functions and arrow functions are not admitted: a closure holds state",
  statement = "this statement is outside the pure profile",
  expression = "this expression is outside the pure profile (strings, templates, objects, arrays, `new`, `this`, "
    .. "casts and optional chaining are not admitted)",
  operator = "`in`, `instanceof`, `typeof`, `void`, `delete` and the comma operator are not admitted",
  call = "a call must name a function of this file or Math.<allowed>, with plain arguments",
  member = "member access is limited to Math.<allowed function>: every value reaches shared objects through its "
    .. "prototype chain",
  name = "a name must be a parameter, a local, or a function or constant of this file (Math only as Math.<function>)",
  shadowing = "a binding may not be named Math",
  assignment = "only locals may be assigned: module bindings are constants, members write into shared objects",
  declaration = "only `const` and `let` declarations of plain names are admitted (no `var`, no destructuring)",
  directive = "compiler directives in comments (`@ts-nocheck`, `@ts-ignore`, `/// <reference>`) are not admitted: the "
    .. "compiler's checks are part of what admission relies on",
}

--- The sentences that differ under opts.signature (issue 34).
M.signature_reasons = syntax.worded(M.reasons, {
  signature = "parameters must be plain names annotated number, bigint or boolean, and the result one of them or "
    .. "a tuple type of them: defaults, optional and rest parameters are refused",
  expression = "this expression is outside the pure profile (strings, templates, objects, `new`, `this`, casts and "
    .. "optional chaining are not admitted; an array only as a returned tuple)",
  call = "a call must name a function of this file, Math.<allowed> or BigInt, with plain arguments",
})

local refuse, run = syntax.refuser(M.reasons)

local set = syntax.set

local MATH = set(M.MATH)
local TYPES = set { "number", "boolean" }
local BINARY = set { "+", "-", "*", "/", "%", "**", "<", "<=", ">", ">=", "===", "!==", "==", "!=", "&&", "||",
                     "??", "&", "|", "^", "<<", ">>", ">>>" }
local AUGMENTED = set { "+=", "-=", "*=", "/=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", ">>>=", "&&=", "||=",
                        "??=" }
local UNARY = set { "-", "+", "!", "~" }
local RESERVED = set { "Math" }

local REFUSED = {
  import_statement = "import", class_declaration = "class", abstract_class_declaration = "class", class = "class",
  arrow_function = "nested_function", function_expression = "nested_function", ["function"] = "nested_function",
  generator_function_declaration = "async", generator_function = "async",
  string = "expression", template_string = "expression", object = "expression", array = "expression",
  new_expression = "expression", this = "expression", super = "expression", regex = "expression",
  as_expression = "expression", satisfies_expression = "expression", type_assertion = "expression",
  non_null_expression = "expression", subscript_expression = "expression", await_expression = "expression",
  yield_expression = "expression", sequence_expression = "operator", spread_element = "call",
  variable_declaration = "declaration",
}

local function text(ctx, node) return syntax.text(ctx.source, node) end

local children, named_children, field = syntax.children, syntax.named_children, syntax.field

-- An identifier as the engine reads it: plain ASCII only (an escape such
-- as \u004dath names Math to the engine, not to this profile).
local function identifier(ctx, node)
  local name = text(ctx, node)
  if not name:match "^[%a_$][%w_$]*$" then refuse("name", node, node.kind, "only plain ASCII names are admitted") end
  return name
end

local function check_binding(ctx, node)
  if node.kind ~= "identifier" then refuse("declaration", node, node.kind) end
  local name = identifier(ctx, node)
  if RESERVED[name] then refuse("shadowing", node, "identifier", name) end
  return name
end

-- Block scopes: a name resolves to the innermost declaration that encloses
-- it, as the engine resolves it; one declared in a block that has ended
-- is gone (what remains of the name is a global, which is refused).
local function push(fn) fn.scopes[#fn.scopes + 1] = {} end
local function pop(fn) fn.scopes[#fn.scopes] = nil end
local function declare(ctx, fn, node, kind)
  local name = check_binding(ctx, node)
  local scope = fn.scopes[#fn.scopes]
  if scope[name] then refuse("declaration", node, "identifier", name .. " is declared twice in one block") end
  scope[name] = kind
  return name
end
local function lookup(fn, name)
  for i = #fn.scopes, 1, -1 do
    local kind = fn.scopes[i][name]
    if kind then return kind end
  end
end

-- A type the profile admits: `number` or `boolean`, and under
-- opts.signature `bigint` (the 64-bit types' values: a double holds
-- integers exactly only up to 53 bits).  tsc reads `bigint` as a keyword,
-- so no declaration of the file can give it another meaning.
local function is_scalar(ctx, t)
  return (t.kind == "predefined_type" and TYPES[text(ctx, t)])
    or (ctx.signature ~= nil and t.kind == "type_identifier" and text(ctx, t) == "bigint")
end

-- `: number` or `: boolean` (or `: bigint`), nothing else.
local function check_type(ctx, node, reason)
  local kids = named_children(node)
  if node.kind ~= "type_annotation" or #kids ~= 1 or not is_scalar(ctx, kids[1]) then
    refuse(reason, node, node.kind, text(ctx, node))
  end
end

-- The result's type: a scalar, or under opts.signature a tuple type
-- `[A, B, ...]` of scalars, as many as the policy allows.
local function check_result_type(ctx, node)
  local kids = named_children(node)
  local tuple = ctx.signature and node.kind == "type_annotation" and #kids == 1 and kids[1].kind == "tuple_type"
    and kids[1]
  if not tuple then return check_type(ctx, node, "signature") end
  local parts = {}
  for _, c in ipairs(children(tuple)) do
    if c.named and is_scalar(ctx, c) then parts[#parts + 1] = c
    elseif c.named or (c.kind ~= "[" and c.kind ~= "]" and c.kind ~= ",") then
      refuse("signature", c, c.kind, text(ctx, c))
    end
  end
  local problem = syntax.tuple_problem(ctx.signature, #parts)
  if problem then refuse("signature", tuple, tuple.kind, problem) end
end

-- ---------------------------------------------------------------------
-- Module level

local function check_constant(ctx, node)
  local kind = node.kind
  if kind == "number" or kind == "true" or kind == "false" then return end
  if kind == "unary_expression" then
    local op = field(node, "operator")
    if op and (op.kind == "-" or op.kind == "+") then return check_constant(ctx, field(node, "argument")) end
  elseif kind == "parenthesized_expression" then
    return check_constant(ctx, named_children(node)[1])
  end
  refuse("constant", node, kind)
end

local function bind_module(ctx, node, name, what)
  if ctx.module[name] then refuse("rebinding", node, node.kind, name) end
  ctx.module[name] = what
end

local function check_module_const(ctx, decl)
  local kind = field(decl, "kind")
  if not kind or kind.kind ~= "const" then refuse("constant", decl, decl.kind, "module bindings must be const") end
  for _, d in ipairs(named_children(decl)) do
    if d.kind ~= "variable_declarator" then refuse("constant", d, d.kind) end
    local name, value, ty = field(d, "name"), field(d, "value"), field(d, "type")
    if not name or not value then refuse("constant", d, d.kind) end
    if ty then check_type(ctx, ty, "constant") end
    check_constant(ctx, value)
    bind_module(ctx, name, check_binding(ctx, name), "constant")
  end
end

-- ---------------------------------------------------------------------
-- Functions

local check_expression, check_statement

local function check_parameters(ctx, params, fn)
  for _, p in ipairs(children(params)) do
    if p.named then
      if p.kind ~= "required_parameter" then refuse("signature", p, p.kind) end
      local pattern, ty = field(p, "pattern"), field(p, "type")
      for _, c in ipairs(children(p)) do
        if c ~= pattern and c ~= ty then refuse("signature", c, c.kind) end
      end
      if not pattern or pattern.kind ~= "identifier" then refuse("signature", pattern or p, p.kind) end
      if not ty then refuse("signature", p, p.kind, "the parameter needs a type: number or boolean") end
      check_type(ctx, ty, "signature")
      fn.params[#fn.params + 1] = declare(ctx, fn, pattern, "let")
    elseif p.kind ~= "(" and p.kind ~= ")" and p.kind ~= "," then
      refuse("signature", p, p.kind)
    end
  end
end

-- Under opts.signature, `BigInt(e)` of one argument: the conversion of a
-- number (or bool) to a bigint.  Every value an admitted expression makes
-- is a primitive (no member access, no object, no string), so the
-- conversion runs no code of the candidate's (no valueOf, no toString);
-- a number that is not an integer throws a RangeError, a raise and never a
-- value.  The global is the engine's own: the file may not bind the name
-- (then the call is an ordinary call of that binding, refused or checked
-- as such) and nothing admitted can write a member of it.
local function check_bigint_call(ctx, fn, node, args)
  local given = {}
  for _, a in ipairs(children(args)) do
    if a.named then given[#given + 1] = a
    elseif a.kind ~= "(" and a.kind ~= ")" and a.kind ~= "," then refuse("call", a, a.kind) end
  end
  if #given ~= 1 then refuse("call", node, node.kind, "BigInt takes one argument") end
  check_expression(ctx, fn, given[1])
end

local function check_call(ctx, fn, node)
  local callee, args = field(node, "function"), field(node, "arguments")
  if not callee or not args or args.kind ~= "arguments" then refuse("call", node, node.kind) end
  for _, c in ipairs(children(node)) do
    if c ~= callee and c ~= args then refuse("call", c, c.kind) end   -- type arguments, `?.`
  end
  if callee.kind == "identifier" and ctx.signature and text(ctx, callee) == "BigInt" and not ctx.module.BigInt
      and not lookup(fn, "BigInt") then
    check_bigint_call(ctx, fn, node, args)
    return
  elseif callee.kind == "identifier" then
    local name = identifier(ctx, callee)
    if ctx.module[name] ~= "function" or lookup(fn, name) then refuse("call", callee, "identifier", name) end
  elseif callee.kind == "member_expression" then
    check_expression(ctx, fn, callee)
  else
    refuse("call", callee, callee.kind)
  end
  for _, a in ipairs(children(args)) do
    if a.named then check_expression(ctx, fn, a)
    elseif a.kind ~= "(" and a.kind ~= ")" and a.kind ~= "," then refuse("call", a, a.kind) end
  end
end

local EXPRESSIONS = {}

function EXPRESSIONS.identifier(ctx, fn, node)
  local name = identifier(ctx, node)
  if lookup(fn, name) or ctx.module[name] == "constant" then return end
  if ctx.module[name] == "function" then refuse("name", node, "identifier", name .. " may only be called") end
  refuse("name", node, "identifier", name)
end

function EXPRESSIONS.member_expression(ctx, fn, node)
  local object, property = field(node, "object"), field(node, "property")
  local ok = object and object.kind == "identifier" and text(ctx, object) == "Math" and not lookup(fn, "Math")
    and property and property.kind == "property_identifier" and MATH[text(ctx, property)]
  for _, c in ipairs(children(node)) do
    if c ~= object and c ~= property and c.kind ~= "." then ok = false end   -- `?.`
  end
  if not ok then refuse("member", node, node.kind, text(ctx, node)) end
end

for _, k in ipairs { "number", "true", "false" } do EXPRESSIONS[k] = function() end end

local function check_late(ctx, fn, node) return check_expression(ctx, fn, node) end
EXPRESSIONS.binary_expression = syntax.operator(BINARY, { "left", "right" }, refuse, check_late)
EXPRESSIONS.unary_expression = syntax.operator(UNARY, { "argument" }, refuse, check_late)

function EXPRESSIONS.parenthesized_expression(ctx, fn, node)
  local kids = named_children(node)
  if #kids ~= 1 then refuse("expression", node, node.kind) end
  check_expression(ctx, fn, kids[1])
end

function EXPRESSIONS.ternary_expression(ctx, fn, node)
  for _, c in ipairs(named_children(node)) do check_expression(ctx, fn, c) end
end

EXPRESSIONS.call_expression = check_call

-- An assignment target: a `let` local or a parameter in scope.
local function check_target(ctx, fn, node)
  if not node or node.kind ~= "identifier" then refuse("assignment", node or 0, node and node.kind or "target") end
  local name = identifier(ctx, node)
  local kind = lookup(fn, name)
  if kind ~= "let" then
    refuse("assignment", node, "identifier", name .. (kind and " is a const" or " is not a local in scope"))
  end
end

function EXPRESSIONS.assignment_expression(ctx, fn, node)
  check_target(ctx, fn, field(node, "left"))
  check_expression(ctx, fn, field(node, "right"))
end

function EXPRESSIONS.augmented_assignment_expression(ctx, fn, node)
  local op = field(node, "operator")
  if not op or not AUGMENTED[op.kind] then refuse("operator", op or node, op and op.kind or node.kind) end
  check_target(ctx, fn, field(node, "left"))
  check_expression(ctx, fn, field(node, "right"))
end

function EXPRESSIONS.update_expression(ctx, fn, node)
  check_target(ctx, fn, field(node, "argument"))
end

check_expression = syntax.expression_checker(EXPRESSIONS, REFUSED, refuse)

local STATEMENTS = {}

function STATEMENTS.lexical_declaration(ctx, fn, stmt)
  local kind = field(stmt, "kind")
  kind = kind and kind.kind
  if kind ~= "const" and kind ~= "let" then refuse("declaration", stmt, stmt.kind) end
  for _, d in ipairs(named_children(stmt)) do
    if d.kind ~= "variable_declarator" then refuse("declaration", d, d.kind) end
    local name, value, ty = field(d, "name"), field(d, "value"), field(d, "type")
    if ty then check_type(ctx, ty, "declaration") end
    check_expression(ctx, fn, value)
    declare(ctx, fn, name, kind)
  end
end

local STATEMENT_EXPRESSIONS = set { "assignment_expression", "augmented_assignment_expression", "update_expression" }

function STATEMENTS.expression_statement(ctx, fn, stmt)
  local kids = named_children(stmt)
  if #kids ~= 1 or not STATEMENT_EXPRESSIONS[kids[1].kind] then
    refuse("statement", kids[1] or stmt, (kids[1] or stmt).kind, "an expression alone computes nothing a pure "
      .. "function keeps")
  end
  check_expression(ctx, fn, kids[1])
end

-- Under opts.signature a tuple is returned as an array literal `[a, b]`:
-- only there (an array anywhere else is an object the function could
-- keep using), of plain elements (no spread, no hole), as many as the
-- policy allows.  Its elements are admitted expressions, so none can reach
-- the array's prototype.
local function check_returned_array(ctx, fn, node)
  local count = 0
  for _, c in ipairs(children(node)) do
    if c.named then
      count = count + 1
      check_expression(ctx, fn, c)
    elseif c.kind ~= "[" and c.kind ~= "]" and c.kind ~= "," then
      refuse("expression", c, c.kind)
    end
  end
  -- a hole ([a, , b]) leaves two commas between elements
  local commas = 0
  for _, c in ipairs(children(node)) do
    if c.kind == "," then commas = commas + 1 end
  end
  if commas >= count and count > 0 then refuse("expression", node, "array", "a hole or a trailing comma") end
  local problem = syntax.tuple_problem(ctx.signature, count)
  if problem then refuse("expression", node, "array", problem) end
end

function STATEMENTS.return_statement(ctx, fn, stmt)
  for _, c in ipairs(named_children(stmt)) do
    if ctx.signature and c.kind == "array" then check_returned_array(ctx, fn, c)
    else check_expression(ctx, fn, c) end
  end
end

function STATEMENTS.statement_block(ctx, fn, stmt)
  push(fn)
  for _, c in ipairs(named_children(stmt)) do check_statement(ctx, fn, c) end
  pop(fn)
end

function STATEMENTS.if_statement(ctx, fn, stmt)
  for _, c in ipairs(named_children(stmt)) do
    if c.field == "condition" then check_expression(ctx, fn, c)
    elseif c.kind == "else_clause" then
      for _, e in ipairs(named_children(c)) do check_statement(ctx, fn, e) end
    else check_statement(ctx, fn, c) end
  end
end

function STATEMENTS.while_statement(ctx, fn, stmt)
  check_expression(ctx, fn, field(stmt, "condition"))
  check_statement(ctx, fn, field(stmt, "body"))
end

function STATEMENTS.do_statement(ctx, fn, stmt)
  check_statement(ctx, fn, field(stmt, "body"))
  check_expression(ctx, fn, field(stmt, "condition"))
end

function STATEMENTS.for_statement(ctx, fn, stmt)
  push(fn)   -- the loop's own declarations
  for _, c in ipairs(children(stmt)) do
    if c.field == "initializer" then
      if c.kind == "lexical_declaration" then STATEMENTS.lexical_declaration(ctx, fn, c)
      elseif c.kind == "expression_statement" then STATEMENTS.expression_statement(ctx, fn, c)
      elseif c.kind ~= "empty_statement" then refuse("declaration", c, c.kind) end
    elseif c.field == "condition" or c.field == "increment" then
      if c.named then
        if c.kind == "expression_statement" then
          for _, e in ipairs(named_children(c)) do check_expression(ctx, fn, e) end
        else
          check_expression(ctx, fn, c)
        end
      end
    elseif c.field == "body" then
      check_statement(ctx, fn, c)
    elseif c.named then
      refuse("statement", c, c.kind)
    end
  end
  pop(fn)
end

for _, k in ipairs { "break_statement", "continue_statement", "empty_statement" } do
  STATEMENTS[k] = function(ctx, fn, stmt)
    if field(stmt, "label") then refuse("statement", stmt, stmt.kind, "labels are not admitted") end
  end
end

function check_statement(ctx, fn, stmt)
  if not stmt then return end
  if stmt.kind == "function_declaration" then refuse("nested_function", stmt, stmt.kind) end
  if REFUSED[stmt.kind] then refuse(REFUSED[stmt.kind], stmt, stmt.kind) end
  local check = STATEMENTS[stmt.kind]
  if not check then refuse("statement", stmt, stmt.kind) end
  check(ctx, fn, stmt)
end

local function check_function(ctx, node)
  local fn = { params = {}, scopes = { {} }, node = node }
  for _, c in ipairs(children(node)) do
    if c.kind == "async" or c.kind == "*" then refuse("async", c, c.kind) end
    if c.field == "type_parameters" then refuse("signature", c, c.kind) end
  end
  local params, ret, body = field(node, "parameters"), field(node, "return_type"), field(node, "body")
  check_parameters(ctx, params, fn)
  if not ret then refuse("signature", node, node.kind, "the result needs a type: number or boolean") end
  check_result_type(ctx, ret)
  if not body or body.kind ~= "statement_block" then refuse("signature", node, node.kind, "a body") end
  for _, stmt in ipairs(named_children(body)) do check_statement(ctx, fn, stmt) end
  return fn
end

-- Comments the compiler reads as directives.
local function check_comments(ctx, node)
  if node.kind == "comment" or node.kind == "html_comment" then
    local t = text(ctx, node)
    if t:match "@ts%-" or t:match "^///%s*<" or t:match "@jsx" then refuse("directive", node, node.kind, t:sub(1, 40)) end
  end
  for _, c in ipairs(node.children) do check_comments(ctx, c) end
end

--- Checks an exported tree against the profile.  opts.expected_function:
--  the bound function's name, which must be declared and exported.
--  Returns {admitted = true, function, parameter} or a refusal record.
function M.check(tree, source, opts)
  opts = opts or {}
  local ctx = { source = source, module = {}, signature = opts.signature }
  return run(source, function()
    local broken = syntax.first_error(tree)
    if broken then refuse("syntax_error", broken, broken.missing and ("missing " .. broken.kind) or broken.kind) end
    check_comments(ctx, tree)
    local functions, exported = {}, {}
    local function declare(decl, is_exported)
      if decl.kind == "function_declaration" then
        local name = field(decl, "name")
        bind_module(ctx, name, check_binding(ctx, name), "function")
        functions[#functions + 1] = decl
        if is_exported then exported[text(ctx, name)] = decl end
      elseif decl.kind == "lexical_declaration" then
        check_module_const(ctx, decl)
      elseif REFUSED[decl.kind] then
        refuse(REFUSED[decl.kind], decl, decl.kind)
      else
        refuse("module_code", decl, decl.kind)
      end
    end
    for _, stmt in ipairs(named_children(tree)) do
      if stmt.kind == "export_statement" then
        local decl = field(stmt, "declaration")
        for _, c in ipairs(children(stmt)) do
          if c ~= decl and c.kind ~= "export" then refuse("module_code", c, c.kind, "only `export` of a declaration") end
        end
        if not decl then refuse("module_code", stmt, stmt.kind) end
        declare(decl, true)
      else
        declare(stmt, false)
      end
    end
    -- Only an exported function can be bound.
    return syntax.bound_function(ctx, functions, opts, { check_function = check_function, refuse = refuse,
      eligible = function(name) return exported[name] end, scope = "program", definition = "function_declaration" })
  end, opts.signature and M.signature_reasons)
end

--- Parses and checks one source within the admission limits.
function M.admit(ts, source, limits, opts)
  return syntax.admit(ts, M, source, limits, opts)
end

return M
