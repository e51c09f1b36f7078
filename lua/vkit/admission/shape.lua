--- Whether a source defines the function an intent binds, with the
-- profile's shape (one u32 in, one u32 out), read from its syntax tree:
-- what `vkit change intent init` checks before it writes anything (issue
-- 33), so that a misspelt name or a two-argument function is refused where
-- it is typed, not found by certification as "0 of N checked".  Pure:
-- takes vkit.ts.  Only what the source states is checked: a Python or
-- TypeScript parameter without a type may still receive a u32.
--
--   check(ts, language, source, fn, path, limits) -> true | nil, code, message
--   codes: no-function, not-exported, wrong-shape, syntax-error
local syntax = require "vkit.admission.syntax"

local M = {}

-- The types a parameter and a result may be declared with, per language.
local TYPES = { python = "int", typescript = "number", rust = "u32" }

local field, named = syntax.field, syntax.named_children

-- Each language: the definition of `fn` at module level as {params, result,
-- exported, start, node}, params a list of {name, type (text or nil),
-- plain}; start is where the definition's line is, node the whole of it
-- (a Python definition with its decorators, a TypeScript declarator).
local FIND = {}

function FIND.python(root, source, fn, each)
  local text = function(n) return syntax.text(source, n) end
  for _, stmt in ipairs(named(root)) do
    local def = stmt
    if stmt.kind == "decorated_definition" then def = field(stmt, "definition") or def end
    if def.kind == "function_definition" and text(field(def, "name")) == fn then
      local params = {}
      for _, p in ipairs(named(field(def, "parameters"))) do
        if p.kind == "identifier" then
          params[#params + 1] = { name = text(p), plain = true, node = p }
        elseif p.kind == "typed_parameter" then
          local ty = field(p, "type")
          params[#params + 1] = { name = text(named(p)[1]), type = text(ty), plain = true, node = p,
                                  type_node = ty }
        else
          params[#params + 1] = { name = text(p), plain = false, node = p }
        end
      end
      local ret = field(def, "return_type")
      local found = { params = params, result = ret and text(ret), result_node = ret, exported = true,
                      start = def.start, node = stmt }
      if not each then return found end
      each(found)
    end
  end
end

function FIND.rust(root, source, fn, each)
  local text = function(n) return syntax.text(source, n) end
  for _, item in ipairs(named(root)) do
    if item.kind == "function_item" and text(field(item, "name")) == fn then
      local params = {}
      for _, p in ipairs(named(field(item, "parameters"))) do
        local ty, pat = field(p, "type"), field(p, "pattern")
        params[#params + 1] = { name = pat and text(pat) or text(p), type = ty and text(ty), node = p, type_node = ty,
                                plain = p.kind == "parameter" and not field(item, "type_parameters") }
      end
      local public = false
      for _, c in ipairs(item.children) do
        if c.kind == "visibility_modifier" then public = text(c) == "pub" end
      end
      local ret = field(item, "return_type")
      local found = { params = params, result = ret and text(ret) or "()", result_node = ret, exported = public,
                      start = item.start, node = item }
      if not each then return found end
      each(found)
    end
  end
end

local function ts_function(node, source, fn)
  local text = function(n) return syntax.text(source, n) end
  local decl, value = node, node
  if node.kind == "lexical_declaration" then
    for _, d in ipairs(named(node)) do
      local name, v = field(d, "name"), field(d, "value")
      if d.kind == "variable_declarator" and name and text(name) == fn and v
         and (v.kind == "arrow_function" or v.kind == "function_expression" or v.kind == "function") then
        decl, value = d, v
      end
    end
    if decl == node then return nil end
  elseif node.kind ~= "function_declaration" or text(field(node, "name")) ~= fn then
    return nil
  end
  local params = {}
  local list = field(value, "parameters")
  for _, p in ipairs(list and named(list) or { field(value, "parameter") }) do
    local ty = field(p, "type")
    params[#params + 1] = { name = text(field(p, "pattern") or p), type = ty and text(ty):gsub("^:%s*", ""),
                            plain = p.kind == "required_parameter" or p.kind == "identifier", node = p,
                            type_node = ty and named(ty)[1] }
  end
  local ret = field(value, "return_type")
  return { params = params, result = (ret and text(ret):gsub("^:%s*", "")), result_node = ret and named(ret)[1],
    exported = false, start = decl.start, node = decl }
end

function FIND.typescript(root, source, fn, each)
  for _, stmt in ipairs(named(root)) do
    local inner, exported = stmt, false
    if stmt.kind == "export_statement" then inner, exported = field(stmt, "declaration"), true end
    local found = inner and ts_function(inner, source, fn)
    if found then
      found.exported = exported
      if not each then return found end
      each(found)
    end
  end
end

--- The definition of `fn` at the top level of source, read from its
--  syntax tree: {params = {{name, type (text or nil), plain, node,
--  type_node}}, result (text or nil), result_node, exported, start, node}, the
--  nodes those of the exported tree; or nil, a code (syntax-error,
--  no-function) and a sentence naming `path`.
function M.find(ts, language, source, fn, limits, path)
  local tree, message = ts.parse(source, { max_bytes = limits.max_source_bytes, language = language })
  if not tree then return nil, "syntax-error", ("%s could not be parsed: %s"):format(path, tostring(message)) end
  local root = tree:export { max_nodes = limits.max_nodes, max_depth = limits.max_depth }
  tree:close()
  if not root then return nil, "syntax-error", ("%s is beyond the parser's node or depth limits"):format(path) end
  local broken = syntax.first_error(root)
  if broken then
    local line = syntax.position(source, broken.start)
    return nil, "syntax-error", ("%s does not parse (line %d)"):format(path, line)
  end
  local def = FIND[language](root, source, fn)
  if not def then return nil, "no-function", ("no function `%s` in %s"):format(fn, path) end
  return def
end

--- Where `fn` is defined at the top level of source, as the syntax tree
--  says (a comment or string that looks like a definition is not one):
--  {line (1-based), start, stop (the definition's bytes are
--  source:sub(start + 1, stop))}, or nil when it is not there or the source
--  does not parse.
function M.definition(ts, language, source, fn, limits)
  if not FIND[language] or type(source) ~= "string" or type(fn) ~= "string" then return nil end
  local def = M.find(ts, language, source, fn, limits, "")
  if not def then return nil end
  return { line = (syntax.position(source, def.start)), start = def.node.start, stop = def.node.stop }
end

--- The 1-based lines of every top-level definition of `fn`, in order (a
--  Python module's later `def` replaces an earlier one when it runs; a
--  Rust item may be compiled out by an attribute): {} when there is none
--  or the source does not parse.  M.definition reads the first.
function M.definition_lines(ts, language, source, fn, limits)
  if not FIND[language] or type(source) ~= "string" or type(fn) ~= "string" then return {} end
  local tree = ts.parse(source, { max_bytes = limits.max_source_bytes, language = language })
  if not tree then return {} end
  local root = tree:export { max_nodes = limits.max_nodes, max_depth = limits.max_depth }
  tree:close()
  if not root or syntax.first_error(root) then return {} end
  local lines = {}
  FIND[language](root, source, fn, function(def) lines[#lines + 1] = (syntax.position(source, def.start)) end)
  return lines
end

--- The 1-based line where `fn` is defined (M.definition), or nil.
function M.definition_line(ts, language, source, fn, limits)
  local def = M.definition(ts, language, source, fn, limits)
  return def and def.line
end

local EXPORTED = { rust = "pub", typescript = "exported" }

--- true, or nil, a code and a sentence naming the file and the function.
function M.check(ts, language, source, fn, path, limits)
  local def, code, message = M.find(ts, language, source, fn, limits, path)
  if not def then return nil, code, message end
  if not def.exported then
    return nil, "not-exported", ("`%s` in %s is not %s: the driver cannot call it"):format(fn, path, EXPORTED[language])
  end
  local want = TYPES[language]
  if #def.params ~= 1 or not def.params[1].plain then
    return nil, "wrong-shape", ("`%s` in %s takes %s; the u32 -> u32 profile calls it with one plain parameter")
      :format(fn, path, #def.params == 1 and ("`" .. def.params[1].name .. "`") or (#def.params .. " parameters"))
  end
  local ty = def.params[1].type
  if ty and ty ~= want then
    return nil, "wrong-shape", ("`%s` in %s declares its parameter `%s` as %s, not %s"):format(fn, path,
      def.params[1].name, ty, want)
  end
  if def.result and def.result ~= want then
    return nil, "wrong-shape", ("`%s` in %s returns %s, not %s"):format(fn, path, def.result, want)
  end
  if language == "rust" and not ty then
    return nil, "wrong-shape", ("`%s` in %s: its parameter has no type"):format(fn, path)
  end
  return true
end

return M
