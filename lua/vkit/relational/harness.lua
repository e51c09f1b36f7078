--- The relational harness generator (seed 001): pure Lua, plain tables in,
-- Rust source bytes out.
--
-- The generated obligation ranges over the nonempty accepted finite inputs,
-- checks both outputs against the observation universe, requires the
-- candidate's standing intent, intersects approved guards and requires
-- preservation or an allowed repair elsewhere.  Both captured files are
-- included as separate modules through `#[path]` attributes, so their bytes
-- are compiled as they are: never copied into the harness or rewritten.
--
-- generate(spec) -> harness | nil, {reason, message}
--
-- spec = {
--   function_name = "f",                        -- the admitted `pub fn f(x: u32) -> u32`
--   modules = { base = "base/src/lib.rs",       -- module files, relative to the harness
--               candidate = "candidate/src/lib.rs" },
--   inputs = SET,                               -- accepted finite u32 inputs (nonempty)
--   observations = SET,                         -- the observation universe (nonempty)
--   standing = { { inputs = SET, outputs = SET }, ... },  -- standing-intent output requirements
--   guards = { { name = "...", inputs = SET, outputs = SET }, ... },  -- approved difference guards
--   target = "kani" | "native",                 -- optional, default "kani"
-- }
--
-- A SET is either an intent-document set (an array of integers and
-- {from = a, to = b} ranges, any order, overlaps merged) or the canonical
-- range list of vkit.change.ranges ({{lo, hi}, ...}), so a contract's
-- `domain.inputs`, `observations`, `requirements` and a difference policy's
-- `guards` can be passed as they are.
--
-- A requirement says: for these inputs, the output must be one of these
-- outputs.  Every standing requirement applies to the candidate.  An input
-- covered by guards may change, but only to an output every covering guard
-- allows (guards intersect); outside guards the candidate must return the
-- base output, unless the base output violates the standing intent there
-- (an allowed repair; the repaired output must meet it, as everywhere).
-- Requirements may only name accepted inputs.
--
-- Limits (policies/limits.lua `relational`): at most max_domain accepted
-- inputs and max_domain observations; at most max_guards guards and at most
-- max_guards standing requirements; at most max_harness_bytes of generated
-- source (which also bounds how many ranges the requirements may spell).
local vkit = require "vkit.core"
local ranges = require "vkit.change.ranges"

local M = {}

M.schema = "vkit.relational-harness.v1"
M.harness_function = "vkit_relational"
M.module_names = { base = "vkit_base", candidate = "vkit_candidate" }

--- The four generated assertions, in source order.
M.assertions = {
  { id = "base_output_observable", message = "vkit: base output is in the observation universe" },
  { id = "candidate_output_observable", message = "vkit: candidate output is in the observation universe" },
  { id = "candidate_meets_standing_intent", message = "vkit: candidate output meets the standing intent" },
  { id = "preserved_or_allowed_change", message = "vkit: candidate preserves the base output or makes an allowed change" },
}

M.reasons = {
  invalid_spec = "the harness specification is malformed",
  invalid_function_name = "the function name is not a plain Rust identifier",
  invalid_module_path = "a module path is not a safe relative .rs path",
  empty_domain = "the accepted input domain is empty",
  empty_universe = "the observation universe is empty",
  empty_requirement = "a requirement names no inputs or no outputs",
  invalid_value = "a set item is not a u32 integer or a {from, to} range of them",
  requirement_outside_domain = "a requirement names an input outside the accepted domain",
  domain_too_large = "more inputs or observations than the domain limit",
  too_many_guards = "more guard requirements than the limit",
  too_many_requirements = "more standing requirements than the limit",
  harness_too_large = "the generated harness exceeds the size limit",
}

local KEYWORDS = {}
for w in ([[as break const continue crate else enum extern false fn for if impl in let loop match mod
  move mut pub ref return self Self static struct super trait true type unsafe use where while async
  await dyn abstract become box do final macro override priv typeof unsized virtual yield try gen
  union]]):gmatch "%S+" do
  KEYWORDS[w] = true
end

local Problem = {}
local function problem(reason, detail)
  error(setmetatable({ reason = reason, message = M.reasons[reason] .. (detail and (": " .. detail) or "") }, Problem), 0)
end

-- A u32 set as canonical ranges {{lo, hi}, ...} (vkit.change.ranges).  Accepts
-- an intent-document set (integers and {from, to} objects, any order,
-- overlaps merged) or a canonical range list ({lo, hi} pairs).
local function u32_set(list, what)
  if type(list) ~= "table" then problem("invalid_spec", what .. " must be an array") end
  if next(list) == nil then return {} end
  local n = #list
  for k in pairs(list) do
    if math.type(k) ~= "integer" or k < 1 or k > n then problem("invalid_spec", what .. " must be an array") end
  end
  local items = vkit.json.array()
  for i, item in ipairs(list) do
    if type(item) == "table" and #item == 2 and item.from == nil then
      item = setmetatable({ from = item[1], to = item[2] }, vkit.json.object_mt)
    end
    items[i] = item
  end
  local set, message = ranges.normalize(items)
  if not set then problem("invalid_value", ("%s: %s"):format(what, message)) end
  return set
end

local function requirements(list, what, limit, domain)
  if list == nil then return {} end
  if type(list) ~= "table" then problem("invalid_spec", what .. " must be an array") end
  if #list > limit then
    problem(what == "guards" and "too_many_guards" or "too_many_requirements",
      ("%d %s, limit %d"):format(#list, what, limit))
  end
  local out = {}
  for i, r in ipairs(list) do
    if type(r) ~= "table" then problem("invalid_spec", ("%s[%d] must be an object"):format(what, i)) end
    for k in pairs(r) do
      if k ~= "inputs" and k ~= "outputs" and k ~= "name" then
        problem("invalid_spec", ("%s[%d] has field %q"):format(what, i, tostring(k)))
      end
    end
    local inputs = u32_set(r.inputs, ("%s[%d].inputs"):format(what, i))
    local outputs = u32_set(r.outputs, ("%s[%d].outputs"):format(what, i))
    if #inputs == 0 or #outputs == 0 then problem("empty_requirement", ("%s[%d]"):format(what, i)) end
    local outside = ranges.first_missing(inputs, domain)
    if outside then problem("requirement_outside_domain", ("%s[%d] names input %d"):format(what, i, outside)) end
    out[i] = { inputs = inputs, outputs = outputs }
  end
  return out
end

local function module_path(p, which)
  if type(p) ~= "string" or p == "" or p:sub(1, 1) == "/" or not p:match "%.rs$" then
    problem("invalid_module_path", ("%s: %q"):format(which, tostring(p)))
  end
  for part in (p .. "/"):gmatch "([^/]*)/" do
    if part == "" or part == "." or part == ".." or not part:match "^[%w_][%w_.%-]*$" then
      problem("invalid_module_path", ("%s: %q"):format(which, p))
    end
  end
  return p
end

-- `a | b..=c | ...` for a set of ranges, wrapped for readability.
local function pattern(set, indent)
  local parts = {}
  for i, r in ipairs(set) do
    parts[i] = r[1] == r[2] and tostring(r[1]) or (r[1] .. "..=" .. r[2])
  end
  local lines, line = {}, {}
  for k, p in ipairs(parts) do
    line[#line + 1] = p
    if #line == 12 and k < #parts then
      lines[#lines + 1] = table.concat(line, " | ")
      line = {}
    end
  end
  lines[#lines + 1] = table.concat(line, " | ")
  return table.concat(lines, "\n" .. indent .. "| ")
end

local function union(reqs)
  local items = vkit.json.array()
  for _, r in ipairs(reqs) do
    for _, span in ipairs(r.inputs) do
      items[#items + 1] = setmetatable({ from = span[1], to = span[2] }, vkit.json.object_mt)
    end
  end
  if #items == 0 then return {} end
  return assert(ranges.normalize(items))
end

--- Validates and normalises a spec (sorted sets); raises a Problem.
local function normalise(spec)
  if type(spec) ~= "table" then problem("invalid_spec", "the spec must be a table") end
  local limits = vkit.policies.limits.relational
  local name = spec.function_name
  if type(name) ~= "string" or not name:match "^[%a_][%w_]*$" or name == "_" or KEYWORDS[name] then
    problem("invalid_function_name", tostring(name))
  end
  if type(spec.modules) ~= "table" then problem("invalid_spec", "modules must be a table") end
  local base = module_path(spec.modules.base, "base")
  local candidate = module_path(spec.modules.candidate, "candidate")
  if base == candidate then problem("invalid_module_path", "base and candidate are the same file") end
  local target = spec.target or "kani"
  if target ~= "kani" and target ~= "native" then problem("invalid_spec", "target must be kani or native") end
  local inputs = u32_set(spec.inputs, "inputs")
  if #inputs == 0 then problem("empty_domain") end
  local observations = u32_set(spec.observations, "observations")
  if #observations == 0 then problem("empty_universe") end
  for what, set in pairs { inputs = inputs, observations = observations } do
    local n = ranges.count(set)
    if n > limits.max_domain then
      problem("domain_too_large", ("%s has %d values, limit %d"):format(what, n, limits.max_domain))
    end
  end
  return {
    function_name = name,
    modules = { base = base, candidate = candidate },
    target = target,
    inputs = inputs,
    observations = observations,
    standing = requirements(spec.standing, "standing", limits.max_guards, inputs),
    guards = requirements(spec.guards, "guards", limits.max_guards, inputs),
  }
end

-- A predicate fn over (x, y) true unless some requirement covering x excludes y.
local function requirement_fn(out, name, reqs)
  out[#out + 1] = ("fn %s(x: u32, y: u32) -> bool {"):format(name)
  if #reqs == 0 then out[#out + 1] = "    let _ = (x, y);" end
  for _, r in ipairs(reqs) do
    out[#out + 1] = ("    if matches!(x, %s)"):format(pattern(r.inputs, "        "))
    out[#out + 1] = ("        && !matches!(y, %s)"):format(pattern(r.outputs, "            "))
    out[#out + 1] = "    {"
    out[#out + 1] = "        return false;"
    out[#out + 1] = "    }"
  end
  out[#out + 1] = "    true"
  out[#out + 1] = "}"
  out[#out + 1] = ""
end

local function set_fn(out, name, sorted)
  out[#out + 1] = ("fn %s(v: u32) -> bool {"):format(name)
  if #sorted == 0 then
    out[#out + 1] = "    let _ = v;"
    out[#out + 1] = "    false"
  else
    out[#out + 1] = ("    matches!(v, %s)"):format(pattern(sorted, "        "))
  end
  out[#out + 1] = "}"
  out[#out + 1] = ""
end

local CONDITIONS = {
  "vkit_observable(base)",
  "vkit_observable(candidate)",
  "vkit_standing(x, candidate)",
  "if vkit_guarded(x) { vkit_guard_allows(x, candidate) } else { candidate == base || !vkit_standing(x, base) }",
}

-- Lines of generated source; an entry holding newlines becomes several
-- lines, so #lines is always the current line number.
local function Lines()
  return setmetatable({}, {
    __newindex = function(t, _, text)
      for line in (text .. "\n"):gmatch "([^\n]*)\n" do rawset(t, #t + 1, line) end
    end,
  })
end

local function render(s)
  local out = Lines()
  for _, line in ipairs {
    "// Generated by vkit (" .. M.schema .. "): the relational obligation between two",
    "// captured Rust modules.  Do not edit; regenerate from the accepted intent.",
    ("// inputs: %d, observations: %d, standing requirements: %d, guards: %d"):format(
      ranges.count(s.inputs), ranges.count(s.observations), #s.standing, #s.guards),
    "",
    ("#[path = \"%s\"]"):format(s.modules.base),
    ("mod %s;"):format(M.module_names.base),
    ("#[path = \"%s\"]"):format(s.modules.candidate),
    ("mod %s;"):format(M.module_names.candidate),
    "",
  } do
    out[#out + 1] = line
  end
  set_fn(out, "vkit_accepted", s.inputs)
  set_fn(out, "vkit_observable", s.observations)
  requirement_fn(out, "vkit_standing", s.standing)
  set_fn(out, "vkit_guarded", union(s.guards))
  requirement_fn(out, "vkit_guard_allows", s.guards)
  local call = ("    let base: u32 = %s::%s(x);"):format(M.module_names.base, s.function_name)
  local call_candidate = ("    let candidate: u32 = %s::%s(x);"):format(M.module_names.candidate, s.function_name)
  local locations = {}
  if s.target == "kani" then
    out[#out + 1] = "#[kani::proof]"
    out[#out + 1] = ("fn %s() {"):format(M.harness_function)
    out[#out + 1] = "    let x: u32 = kani::any();"
    out[#out + 1] = "    kani::assume(vkit_accepted(x));"
    out[#out + 1] = call
    out[#out + 1] = call_candidate
    for i, a in ipairs(M.assertions) do
      out[#out + 1] = ("    kani::assert(%s, \"%s\");"):format(CONDITIONS[i], a.message)
      locations[i] = { id = a.id, message = a.message, line = #out, column = 5 }
    end
    out[#out + 1] = "}"
  else
    -- Native: every accepted input, in order; the first broken assertion
    -- prints its input and id and exits 1.
    local values = {}
    for v in ranges.values(s.inputs) do values[#values + 1] = v end
    out[#out + 1] = ("const VKIT_INPUTS: [u32; %d] = ["):format(#values)
    for i = 1, #values, 16 do
      out[#out + 1] = "    " .. table.concat(values, ", ", i, math.min(i + 15, #values)) .. ","
    end
    out[#out + 1] = "];"
    out[#out + 1] = ""
    out[#out + 1] = "fn main() {"
    out[#out + 1] = "    for &x in VKIT_INPUTS.iter() {"
    out[#out + 1] = "        assert!(vkit_accepted(x));"
    out[#out + 1] = "    " .. call
    out[#out + 1] = "    " .. call_candidate
    for i, a in ipairs(M.assertions) do
      out[#out + 1] = ("        if !(%s) {"):format(CONDITIONS[i])
      locations[i] = { id = a.id, message = a.message, line = #out, column = 9 }
      out[#out + 1] = ("            println!(\"violation {} {} {} {}\", \"%s\", x, base, candidate);"):format(a.id)
      out[#out + 1] = "            std::process::exit(1);"
      out[#out + 1] = "        }"
    end
    out[#out + 1] = "    }"
    out[#out + 1] = "    println!(\"checked {}\", VKIT_INPUTS.len());"
    out[#out + 1] = "}"
  end
  return table.concat(out, "\n") .. "\n", locations
end

--- The canonical JSON form of a normalised spec (what the digest covers).
local function spec_document(s)
  local function reqs(list)
    local out = vkit.json.array()
    for i, r in ipairs(list) do out[i] = { inputs = ranges.to_json(r.inputs), outputs = ranges.to_json(r.outputs) } end
    return out
  end
  return {
    function_name = s.function_name,
    modules = s.modules,
    target = s.target,
    inputs = ranges.to_json(s.inputs),
    observations = ranges.to_json(s.observations),
    standing = reqs(s.standing),
    guards = reqs(s.guards),
  }
end

function M.generate(spec)
  local ok, s = pcall(normalise, spec)
  if not ok then
    if getmetatable(s) == Problem then return nil, { reason = s.reason, message = s.message } end
    error(s, 0)
  end
  local bytes, locations = render(s)
  local limit = vkit.policies.limits.relational.max_harness_bytes
  if #bytes > limit then
    return nil, { reason = "harness_too_large",
      message = M.reasons.harness_too_large .. (": %d bytes, limit %d"):format(#bytes, limit) }
  end
  return {
    schema = M.schema,
    target = s.target,
    bytes = bytes,
    sha256 = vkit.hash.sha256(bytes),
    size = #bytes,
    harness_function = M.harness_function,
    function_name = s.function_name,
    modules = {
      base = { path = s.modules.base, module = M.module_names.base },
      candidate = { path = s.modules.candidate, module = M.module_names.candidate },
    },
    assertions = locations,
    counts = { inputs = ranges.count(s.inputs), observations = ranges.count(s.observations),
      standing = #s.standing, guards = #s.guards },
    spec_digest = vkit.json.digest(spec_document(s)),
  }
end

return M
