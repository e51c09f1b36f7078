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
--   inputs = { 0, 1, 2, ... },                  -- accepted finite u32 inputs (nonempty)
--   observations = { 0, 7, ... },               -- the observation universe (nonempty)
--   standing = { { inputs = {...}, outputs = {...} }, ... },  -- standing-intent output requirements
--   guards = { { inputs = {...}, outputs = {...} }, ... },    -- approved difference guards
--   target = "kani" | "native",                 -- optional, default "kani"
-- }
--
-- A requirement says: for these inputs, the output must be one of these
-- outputs.  Every standing requirement applies to the candidate.  An input
-- covered by guards may change, but only to an output every covering guard
-- allows (guards intersect); outside guards the candidate must return the
-- base output, unless the base output violates the standing intent there
-- (an allowed repair; the repaired output must meet it, as everywhere).
--
-- Limits (policies/limits.lua `relational`): at most max_domain inputs, and
-- at most max_domain values in the universe and in each requirement; at most
-- max_guards guards and at most max_guards standing requirements; at most
-- max_harness_bytes of generated source.
local vkit = require "vkit"

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
  invalid_value = "a value is not a u32 integer",
  duplicate_value = "a value is listed twice",
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

local U32_MAX = 0xFFFFFFFF

-- A sorted copy of a u32 set; refuses non-integers, out-of-range values and duplicates.
local function u32_set(list, what, limit)
  if type(list) ~= "table" then problem("invalid_spec", what .. " must be an array") end
  local n = #list
  for k in pairs(list) do
    if math.type(k) ~= "integer" or k < 1 or k > n then problem("invalid_spec", what .. " must be an array") end
  end
  if n > limit then problem("domain_too_large", ("%s has %d values, limit %d"):format(what, n, limit)) end
  local sorted = table.move(list, 1, n, 1, {})
  for i, v in ipairs(sorted) do
    if math.type(v) ~= "integer" or v < 0 or v > U32_MAX then
      problem("invalid_value", ("%s[%d] = %s"):format(what, i, tostring(v)))
    end
  end
  table.sort(sorted)
  for i = 2, n do
    if sorted[i] == sorted[i - 1] then problem("duplicate_value", ("%s lists %d twice"):format(what, sorted[i])) end
  end
  return sorted
end

local function requirements(list, what, limit, max_values, domain)
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
      if k ~= "inputs" and k ~= "outputs" then problem("invalid_spec", ("%s[%d] has field %q"):format(what, i, tostring(k))) end
    end
    local inputs = u32_set(r.inputs, ("%s[%d].inputs"):format(what, i), max_values)
    local outputs = u32_set(r.outputs, ("%s[%d].outputs"):format(what, i), max_values)
    if #inputs == 0 or #outputs == 0 then problem("empty_requirement", ("%s[%d]"):format(what, i)) end
    for _, x in ipairs(inputs) do
      if not domain[x] then problem("requirement_outside_domain", ("%s[%d] names input %d"):format(what, i, x)) end
    end
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

-- `a | b..=c | ...` for a sorted set, wrapped for readability.
local function pattern(sorted, indent)
  local parts, i = {}, 1
  while i <= #sorted do
    local j = i
    while j < #sorted and sorted[j + 1] == sorted[j] + 1 do j = j + 1 end
    parts[#parts + 1] = j > i and (sorted[i] .. "..=" .. sorted[j]) or tostring(sorted[i])
    i = j + 1
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
  local seen, all = {}, {}
  for _, r in ipairs(reqs) do
    for _, x in ipairs(r.inputs) do
      if not seen[x] then seen[x], all[#all + 1] = true, x end
    end
  end
  table.sort(all)
  return all
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
  local inputs = u32_set(spec.inputs, "inputs", limits.max_domain)
  if #inputs == 0 then problem("empty_domain") end
  local observations = u32_set(spec.observations, "observations", limits.max_domain)
  if #observations == 0 then problem("empty_universe") end
  local domain = {}
  for _, x in ipairs(inputs) do domain[x] = true end
  return {
    function_name = name,
    modules = { base = base, candidate = candidate },
    target = target,
    inputs = inputs,
    observations = observations,
    standing = requirements(spec.standing, "standing", limits.max_guards, limits.max_domain, domain),
    guards = requirements(spec.guards, "guards", limits.max_guards, limits.max_domain, domain),
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
      #s.inputs, #s.observations, #s.standing, #s.guards),
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
    out[#out + 1] = ("const VKIT_INPUTS: [u32; %d] = ["):format(#s.inputs)
    for i = 1, #s.inputs, 16 do
      out[#out + 1] = "    " .. table.concat(s.inputs, ", ", i, math.min(i + 15, #s.inputs)) .. ","
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

local function array(list)
  return setmetatable(table.move(list, 1, #list, 1, {}), vkit.json.array_mt)
end

--- The canonical JSON form of a normalised spec (what the digest covers).
local function spec_document(s)
  local function reqs(list)
    local out = vkit.json.array()
    for i, r in ipairs(list) do out[i] = { inputs = array(r.inputs), outputs = array(r.outputs) } end
    return out
  end
  return {
    function_name = s.function_name,
    modules = s.modules,
    target = s.target,
    inputs = array(s.inputs),
    observations = array(s.observations),
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
    counts = { inputs = #s.inputs, observations = #s.observations, standing = #s.standing, guards = #s.guards },
    spec_digest = vkit.json.digest(spec_document(s)),
  }
end

return M
