--- What `vkit change intent init` writes for the multi-parameter profile
-- (issue 34), from the command line's spelling: pure, no file is read.
--
--   contract(sig, {domains = {"x=-50..50", ...}, observations = "SET; SET",
--                  requires = {"x=0..9,flag=true -> 0..5", ...}}, cap)
--     -> {signature, inputs = {name = set text}, observations = {text, ...},
--         requirements = {{inputs = {name = text}, outputs = {text, ...}}},
--         size} | nil, message, code
--
-- `sig` is a signature in vkit.change.signature's parsed form (the one
-- vkit.admission.signature.resolve settles from the source and --type /
-- --returns).  Every set is vkit.change.domain's text syntax and comes out
-- in its canonical text, so two spellings of one intent are one digest.
-- The accepted inputs are refused above `cap` (the exhaustive method's,
-- policies/signatures.lua): an intent no method could check is not
-- proposed.  Codes: domain-syntax, unknown-parameter, duplicate-domain,
-- missing-domain, set-invalid, exhaustive-cap, observations-invalid,
-- require-invalid.
local domain = require "vkit.change.domain"
local mcontract = require "vkit.change.multi.contract"

local M = {}

local function fail(code, fmt, ...)
  return nil, fmt:format(...), code
end

-- One set per parameter, by position, from `NAME=SET` texts.
local function parameter_sets(sig, texts)
  local position, sets = {}, {}
  for i, p in ipairs(sig.params) do position[p.name] = i end
  for _, text in ipairs(texts) do
    local name, set_text = text:match "^%s*([%a_][%w_]*)%s*=(.*)$"
    if not name then return fail("domain-syntax", "--domain %s: expected NAME=SET (e.g. x=-50..50)", text) end
    local i = position[name]
    if not i then
      return fail("unknown-parameter", "--domain %s: the function has no parameter %s (its parameters: %s)", text,
        name, M.names(sig))
    end
    if sets[i] then return fail("duplicate-domain", "--domain %s: parameter %s already has a domain", text, name) end
    local set, message = domain.parse_set(sig.params[i].type, set_text)
    if not set then
      return fail("set-invalid", "--domain %s: %s (parameter %s is %s)", text, message, name, sig.params[i].type)
    end
    sets[i] = set
  end
  for i, p in ipairs(sig.params) do
    if not sets[i] then
      return fail("missing-domain", "parameter %s has no domain: pass --domain %s=SET (a set of %s, e.g. %s)", p.name,
        p.name, p.type, p.type == "bool" and "*" or "0..9")
    end
  end
  return sets
end

--- The parameters' names, joined for a message.
function M.names(sig)
  local out = {}
  for i, p in ipairs(sig.params) do out[i] = p.name end
  return table.concat(out, ", ")
end

-- The number of accepted inputs, or nil when it passes `limit` (computed
-- without overflow: domain.set_size stops at its cap).
local function product_size(sets, limit)
  local size = 1
  for _, set in ipairs(sets) do
    local n = domain.set_size(set, limit)
    if not n or n > limit // size then return nil end
    size = size * n
  end
  return size
end

-- "101 x 21 x 21 = 44,541"-style text of the product, for the cap refusal.
local function product_text(sets)
  local parts, exact = {}, 1.0
  for i, set in ipairs(sets) do
    local n = domain.set_size(set, math.maxinteger) or math.huge
    parts[i] = n == math.huge and "2^64" or tostring(n)
    exact = exact * n
  end
  local total = exact < 2 ^ 63 and ("%d"):format(math.tointeger(exact) or exact) or ("%.3g"):format(exact)
  return table.concat(parts, " x ") .. " = " .. total
end

--- The contract's parts (see the module comment).
function M.contract(sig, opts, cap)
  local sets, message, code = parameter_sets(sig, opts.domains or {})
  if not sets then return nil, message, code end
  local size = product_size(sets, cap)
  if not size then
    return fail("exhaustive-cap", "the accepted inputs are %s, more than the exhaustive method's cap of %d "
      .. "(policies/signatures.lua exhaustive_inputs): narrow a --domain", product_text(sets), cap)
  end
  local observations, omessage = domain.parse_outputs(sig, opts.observations or "")
  if not observations then
    return fail("observations-invalid", "--observations %s: %s (one set per result component, joined by `;`)",
      tostring(opts.observations), omessage)
  end
  local inputs = {}
  for i, p in ipairs(sig.params) do inputs[p.name] = domain.set_text(sets[i]) end
  local requirements = {}
  for _, text in ipairs(opts.requires or {}) do
    local r, rmessage = domain.parse_requirement(sig, text)
    if not r then return fail("require-invalid", "--require %s: %s", text, rmessage) end
    requirements[#requirements + 1] = { inputs = mcontract.box_json(sig, r.box),
                                        outputs = mcontract.outputs_json(r.outputs) }
  end
  return { signature = mcontract.signature_json(sig), inputs = inputs, requirements = requirements, size = size,
           observations = mcontract.outputs_json(observations) }
end

-- The binding's declarations from --type NAME=TYPE (repeatable) and
-- --returns TYPE or T1,T2,... (a tuple): vkit.admission.signature's
-- `declared`, or nil, message, code.
function M.declared(types, returns)
  local out = { types = {} }
  for _, text in ipairs(types or {}) do
    local name, ty = text:match "^%s*([%a_][%w_]*)%s*=%s*([%w_]+)%s*$"
    if not name then return fail("type-syntax", "--type %s: expected NAME=TYPE (e.g. x=i32)", text) end
    if out.types[name] then return fail("duplicate-type", "--type %s: parameter %s is already declared", text, name) end
    out.types[name] = ty
  end
  if returns then
    local list = {}
    for part in (returns .. ","):gmatch "([^,]*)," do list[#list + 1] = part:match "^%s*(.-)%s*$" end
    out.returns = #list == 1 and list[1] or list
  end
  return out
end

--- From the source to the contract's parts: reads `fn`'s declared
--  signature (vkit.admission.signature), settles it with --type / --returns,
--  and builds the contract (M.contract).  `o` = {ts, language, source
--  (bytes), path, function, types, returns, domains, observations,
--  requires}.  Returns the contract's parts with `sig` (parsed), or nil,
--  message, code (the signature's codes: width-required, type-contradiction,
--  unknown-parameter, unknown-type, ...; then M.contract's).
function M.from_source(o)
  local signatures = require("vkit.policy").signatures
  local declared, message, code = M.declared(o.types, o.returns)
  if not declared then return nil, message, code end
  local admission_signature = require "vkit.admission.signature"
  local read
  read, code, message = admission_signature.read(o.ts, o.language, o.source, o["function"],
    require("vkit.policy").limits.admission, signatures, o.path)
  if not read then return nil, message, code end
  local resolved
  resolved, code, message = admission_signature.resolve(read, declared, signatures)
  if not resolved then return nil, message, code end
  local sig
  sig, message, code = require("vkit.change.signature").parse(resolved.signature)
  if not sig then return nil, message, code end
  local parts
  parts, message, code = M.contract(sig, o, signatures.exhaustive_inputs)
  if not parts then return nil, message, code end
  parts.sig = sig
  return parts
end

return M
