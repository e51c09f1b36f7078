--- The declared signature of a bound function, read from its syntax tree
-- (issue 34), and combined with the types a binding declares.  Pure: takes
-- vkit.ts and the signature policy (policies/signatures.lua: `types`,
-- `max_params`, `min_components`, `max_components`) as arguments, as
-- vkit.admission.shape takes the limits.
--
-- Only Rust fixes every width in the source.  Python's `int` and
-- TypeScript's `number` and `bigint` say what kind of value a parameter
-- holds but not its width, so the binding declares it (`--type NAME=TYPE`,
-- `--returns TYPE`); `resolve` takes those declarations and refuses the
-- ones the source contradicts (a Rust `i32` declared bool, a TypeScript
-- `number` declared u64: a double holds integers exactly only up to 53
-- bits, and the profile takes the widths it holds whole, up to 32).
--
--   read(ts, language, source, fn, limits, policy, path)
--     -> {language, function, params = {{name, type, hint}}, returns}
--        | nil, code, message
--   refusal(ts, language, source, fn, limits, policy, sig, path)
--     -> nil (the declared signature admits the contract's `sig`)
--        | a refusal with reason signature_mismatch
--   resolve(read, declared, policy)
--     -> {signature = {params = {{name, type}}, returns = type | {types}},
--         seed, u32_only} | nil, code, message
--
-- A read slot is {type = a type of the policy or nil where the source does
-- not fix one, hint = the source's own word ("i32", "int", "number",
-- "bigint", "boolean", ...) or nil where there is no annotation}; `returns`
-- is one slot, a list of slots (a tuple), or nil (no annotation).
-- Codes: syntax-error, no-function, parameter-form, unsupported-type,
-- no-params, too-many-params, tuple-length (read); unknown-parameter,
-- unknown-type, type-contradiction, width-required, no-params,
-- too-many-params, tuple-length (resolve).  no-params, too-many-params,
-- tuple-length and unknown-type are vkit.change.signature's names.
local shape = require "vkit.admission.shape"
local syntax = require "vkit.admission.syntax"

local M = {}

local named, field = syntax.named_children, syntax.field

local function fail(code, fmt, ...)
  return nil, code, fmt:format(...)
end

-- Whether `name` is a type of the policy (whose frozen tables raise on an
-- absent key, so the names are walked).
local function is_type(policy, name)
  for known in pairs(policy.types) do
    if known == name then return true end
  end
  return false
end

-- What each source word admits, as a predicate over the policy's types
-- (`t` is policies/signatures.lua's entry).  A Rust type admits itself.
local ADMITS = {
  int = function(name) return name ~= "bool" end,
  number = function(name, t) return name ~= "bool" and t.bytes <= 4 end,   -- exact in a double
  bigint = function(name, t) return name ~= "bool" and t.bytes == 8 end,
  bool = function(name) return name == "bool" end,
  boolean = function(name) return name == "bool" end,
}

-- ---------------------------------------------------------------------
-- Reading one type node per language: a slot, or nil, code, message.

-- The policy's type names, sorted, for messages.
local function names(policy)
  local out = {}
  for name in pairs(policy.types) do out[#out + 1] = name end
  table.sort(out)
  return table.concat(out, " ")
end

local function unsupported(source, node, what, policy)
  return fail("unsupported-type", "%s has the type `%s`, outside the profile (%s)", what, syntax.text(source, node),
    names(policy))
end

local SCALAR = {}

function SCALAR.rust(source, node, what, policy)
  local name = syntax.text(source, node)
  if node.kind ~= "primitive_type" or not is_type(policy, name) then
    return unsupported(source, node, what, policy)
  end
  return { type = name, hint = name }
end

function SCALAR.python(source, node, what, policy)
  local kids = named(node)
  local inner = node.kind == "type" and #kids == 1 and kids[1] or node
  local name = inner.kind == "identifier" and syntax.text(source, inner)
  if name == "int" then return { hint = "int" } end
  if name == "bool" then return { type = "bool", hint = "bool" } end
  return unsupported(source, node, what, policy)
end

function SCALAR.typescript(source, node, what, policy)
  local name = syntax.text(source, node)
  if node.kind == "predefined_type" and name == "number" then return { hint = "number" } end
  if node.kind == "predefined_type" and name == "boolean" then return { type = "bool", hint = "boolean" } end
  if node.kind == "type_identifier" and name == "bigint" then return { hint = "bigint" } end
  return unsupported(source, node, what, policy)
end

-- The component nodes of a tuple type, or nil when the node is not one:
-- Rust `(A, B)`, Python `tuple[A, B]` / `Tuple[A, B]`, TypeScript `[A, B]`.
local TUPLE = {
  rust = function(source, node)
    if node.kind == "tuple_type" then return named(node) end
  end,
  python = function(source, node)
    local kids = named(node)
    local g = node.kind == "type" and #kids == 1 and kids[1]
    if not g or g.kind ~= "generic_type" then return nil end
    local head, params = named(g)[1], named(g)[2]
    local word = head and syntax.text(source, head)
    if (word == "tuple" or word == "Tuple") and params and params.kind == "type_parameter" then return named(params) end
  end,
  typescript = function(source, node)
    if node.kind == "tuple_type" then return named(node) end
  end,
}

local function read_result(language, source, node, policy)
  local parts = TUPLE[language](source, node)
  if not parts then return SCALAR[language](source, node, "the result", policy) end
  local problem = syntax.tuple_problem(policy, #parts)
  if problem then return fail("tuple-length", "the result is %s", problem) end
  local slots = {}
  for i, part in ipairs(parts) do
    local slot, code, message = SCALAR[language](source, part, ("component %d of the result"):format(i), policy)
    if not slot then return nil, code, message end
    slots[i] = slot
  end
  return slots
end

-- Whether a parameter is a plain name with at most a type: no default, no
-- rest, optional or destructured form, no `self`.
local PLAIN = {
  rust = function(p) return p.node.kind == "parameter" and field(p.node, "pattern").kind == "identifier" end,
  python = function(p)
    return p.node.kind == "identifier" or (p.node.kind == "typed_parameter" and named(p.node)[1].kind == "identifier")
  end,
  typescript = function(p)
    return p.node.kind == "required_parameter" and not field(p.node, "value")
      and field(p.node, "pattern").kind == "identifier"
  end,
}

--- The signature `fn` declares in `source`, or nil, a code and a sentence
--  naming `path` (default "the source").
function M.read(ts, language, source, fn, limits, policy, path)
  path = path or "the source"
  local def, code, message = shape.find(ts, language, source, fn, limits, path)
  if not def then return nil, code, message end
  if #def.params == 0 then
    return fail("no-params", "`%s` in %s takes no parameter; the profile calls it with 1 to %d", fn, path,
      policy.max_params)
  end
  if #def.params > policy.max_params then
    return fail("too-many-params", "`%s` in %s takes %d parameters; the profile calls it with 1 to %d", fn, path,
      #def.params, policy.max_params)
  end
  local read = { language = language, ["function"] = fn, params = {} }
  for i, p in ipairs(def.params) do
    if not PLAIN[language](p) then
      return fail("parameter-form", "parameter %d of `%s` in %s (`%s`) is not a plain parameter (no default, rest, "
        .. "optional or destructured form)", i, fn, path, syntax.text(source, p.node))
    end
    local slot = {}
    if p.type_node then
      slot, code, message = SCALAR[language](source, p.type_node, ("parameter `%s`"):format(p.name), policy)
      if not slot then return nil, code, ("`%s` in %s: %s"):format(fn, path, message) end
    end
    slot.name = p.name
    read.params[i] = slot
  end
  if def.result_node then
    read.returns, code, message = read_result(language, source, def.result_node, policy)
    if not read.returns then return nil, code, ("`%s` in %s: %s"):format(fn, path, message) end
  elseif language == "rust" then
    return fail("unsupported-type", "`%s` in %s returns nothing (`()`), outside the profile", fn, path)
  end
  return read
end

-- ---------------------------------------------------------------------
-- Combining what the source says with what the binding declares.

-- Whether the source's slot admits the type `name`.
local function admits(slot, name, policy)
  if slot.type then return slot.type == name end
  if not slot.hint then return true end
  return ADMITS[slot.hint](name, policy.types[name])
end

-- The one type of a slot: declared (checked against the source), fixed by
-- the source, or refused.  `what` names it, `flag` is the option to pass.
local function settle(slot, declared, policy, what, flag)
  if declared ~= nil then
    if not is_type(policy, declared) then
      return fail("unknown-type", "%s is declared %s, not a type of the profile", what, tostring(declared))
    end
    if not admits(slot, declared, policy) then
      return fail("type-contradiction", "%s is declared %s but the source says `%s`", what, declared, slot.hint)
    end
    return declared
  end
  if slot.type then return slot.type end
  return fail("width-required", "%s is %s in the source, which fixes no width: pass %s", what,
    slot.hint and ("`" .. slot.hint .. "`") or "unannotated", flag)
end

-- The one-u32 function of the seed, when nothing is declared: one
-- parameter and a result the source lets be u32 (an unannotated Python
-- function, a TypeScript `number`) are the seed's u32 -> u32, as today.
local function seed_default(read, declared, policy)
  if next(declared.types) ~= nil or declared.returns ~= nil or #read.params ~= 1 then return false end
  local r = read.returns
  return admits(read.params[1], "u32", policy) and (r == nil or (r[1] == nil and admits(r, "u32", policy)))
end

--- Combines a read with the binding's declarations
--  `{types = {NAME = TYPE}, returns = TYPE | {TYPE, ...}}` (both
--  optional).  Returns {signature, seed, u32_only}: the signature in
--  vkit.change.signature's form; seed, whether it is the seed's one
--  u32 -> u32; u32_only, the names of the parameters that take exactly the
--  seed's u32 values.  Or nil, a code and a sentence.
function M.resolve(read, declared, policy)
  declared = { types = declared and declared.types or {}, returns = declared and declared.returns }
  if #read.params == 0 then return fail("no-params", "`%s` takes no parameter", read["function"]) end
  if #read.params > policy.max_params then
    return fail("too-many-params", "`%s` takes %d parameters, at most %d", read["function"], #read.params,
      policy.max_params)
  end
  local names = {}
  for _, p in ipairs(read.params) do names[p.name] = true end
  for name in pairs(declared.types) do
    if not names[name] then
      return fail("unknown-parameter", "--type %s: `%s` has no parameter %s", tostring(name), read["function"],
        tostring(name))
    end
  end
  local seed = seed_default(read, declared, policy)
  local signature, u32_only = { params = {} }, {}
  for i, p in ipairs(read.params) do
    local ty, code, message = settle(p, seed and "u32" or declared.types[p.name], policy,
      ("parameter `%s`"):format(p.name), ("--type %s=TYPE"):format(p.name))
    if not ty then return nil, code, message end
    signature.params[i] = { name = p.name, type = ty }
    if ty == "u32" then u32_only[#u32_only + 1] = p.name end
  end
  local r, want = read.returns, seed and "u32" or declared.returns
  local source_tuple = r ~= nil and r[1] ~= nil
  if not source_tuple and type(want) ~= "table" then
    local ty, code, message = settle(r or {}, want, policy, "the result", "--returns TYPE")
    if not ty then return nil, code, message end
    signature.returns = ty
  else
    -- a tuple on either side: the other side says nothing, or the same count
    if want ~= nil and (type(want) ~= "table" or (r ~= nil and (not source_tuple or #r ~= #want))) then
      return fail("type-contradiction", "the result is declared %s but the source returns %s",
        type(want) == "table" and ("a tuple of " .. #want) or tostring(want),
        source_tuple and ("a tuple of " .. #r) or ("`" .. tostring(r.hint) .. "`"))
    end
    local n = want and #want or #r
    local problem = syntax.tuple_problem(policy, n)
    if problem then return fail("tuple-length", "the result is %s", problem) end
    signature.returns = {}
    for i = 1, n do
      local ty, code, message = settle(source_tuple and r[i] or {}, want and want[i], policy,
        ("component %d of the result"):format(i), "--returns with every component's type")
      if not ty then return nil, code, message end
      signature.returns[i] = ty
    end
  end
  local is_seed = #signature.params == 1 and signature.params[1].type == "u32" and signature.returns == "u32"
  return { signature = signature, seed = is_seed, u32_only = u32_only }
end


--- Whether a read admits the signature `sig` (vkit.change.signature's
--  parsed form: {params = {{name, type}}, returns = {types}, tuple}) that a
--  contract fixes: as many parameters, each slot admitting the type at its
--  position (drivers pass arguments by position: names may differ), and a
--  result the source lets be the declared one (a tuple of as many
--  components, or one value).  A TypeScript `bigint` parameter where the
--  contract says u8 is called with a number and a Python `bool` with an
--  int: what is observed is then a call the source's own types exclude.
--  true, or nil, "signature-mismatch" and a sentence.
function M.matches(read, sig, policy)
  local fn = read["function"]
  if #read.params ~= #sig.params then
    return fail("signature-mismatch", "`%s` takes %d parameter%s but the contract's signature has %d", fn,
      #read.params, #read.params == 1 and "" or "s", #sig.params)
  end
  for i, p in ipairs(sig.params) do
    local slot = read.params[i]
    if not admits(slot, p.type, policy) then
      return fail("signature-mismatch", "parameter %d of `%s` (`%s`) is declared `%s`, which excludes the contract's %s",
        i, fn, slot.name, slot.hint, p.type)
    end
  end
  local r = read.returns
  if r == nil then return true end
  local source_tuple = r[1] ~= nil
  if source_tuple ~= (sig.tuple and true or false) or (source_tuple and #r ~= #sig.returns) then
    return fail("signature-mismatch", "`%s` declares a result of %s but the contract's is %s", fn,
      source_tuple and ("a tuple of " .. #r) or ("`" .. tostring(r.hint) .. "`"),
      sig.tuple and ("a tuple of " .. #sig.returns) or sig.returns[1])
  end
  for i, t in ipairs(sig.returns) do
    local slot = source_tuple and r[i] or r
    if not admits(slot, t, policy) then
      return fail("signature-mismatch", "%s of `%s` is declared `%s`, which excludes the contract's %s",
        source_tuple and ("component %d of the result"):format(i) or "the result", fn, slot.hint, t)
    end
  end
  return true
end

--- The sentence of the refusal reason `signature_mismatch`.
M.MISMATCH = "the function's declared signature must admit the contract's: a side called with values its own "
  .. "declared types exclude is observed in calls its typed callers cannot make"

--- Under a contract's signature `sig`: nil when the source's declared
--  signature admits it (M.read, then M.matches), else a refusal in the
--  shape of the profiles' ({admitted = false, reason =
--  "signature_mismatch", offset, line, column, kind = the read's or
--  match's code, message}), placed at the function's definition (at the
--  source's start when there is none).  Run by the admission process
--  (`vkit ts_admit --contract`), where the source is parsed.
function M.refusal(ts, language, source, fn, limits, policy, sig, path)
  local read, code, message = M.read(ts, language, source, fn, limits, policy, path)
  local ok
  if read then ok, code, message = M.matches(read, sig, policy) end
  if ok then return nil end
  local def = shape.definition(ts, language, source, fn, limits)
  local offset = def and def.start or 0
  local line, column = syntax.position(source, offset)
  return { admitted = false, reason = "signature_mismatch", offset = offset, line = line, column = column,
           kind = code, message = message }
end

return M
