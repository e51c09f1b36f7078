--- Scaffolding an intent for review (`vkit change intent init`) and
-- building a request against an accepted one (`vkit change request`).
--
-- `intent(spec)` is pure: it returns the files of a proposed intent
-- revision — the binding map, codec, observation policy and environment
-- model, and the revision pinning them — and the acceptance list that would
-- accept it.  It never accepts anything: acceptance is the commit of that
-- list to the trusted target through the project's own review, and only
-- then does preflight bind a request to the revision.
--
--   intent{language, source, function, domain = SET, observations = SET,
--          requirements = {{inputs = SET, outputs = SET}, ...}?,
--          requirement = {source, statement}?, dir = "verification/<function>"?,
--          observation = {repetitions, selection, max_inputs, shrink_limit,
--                         process_deadline_ms}?,
--          environment_model = <document>, accepted = <current list bytes>?}
--          multi = <vkit.change.multi.scaffold.contract's result>?,
--   -> {files = {{path, bytes, role}, ...}, digest, revision_path,
--       accepted = {path, bytes}, notes = {sentences}} | nil, message, code
--
-- SET is an intent-document set: an array of u32 integers and {from, to}
-- ranges; parse_set reads the command line's spelling ("0..99,200").  With
-- `multi` (a function of several parameters, issue 34) the codec is the
-- multi-parameter profile's and the contract carries the signature; domain,
-- observations and requirements are then multi's, and `requirements` only
-- says whether there are any.
local json = require "vkit.json"
local authoring = require "vkit.change.authoring"
local artifacts = require "vkit.change.artifacts"
local intent_mod = require "vkit.change.intent"
local ranges = require "vkit.change.ranges"
local contract = require "vkit.change.contract"
local paths = require "vkit.paths"
local change_policy = require("vkit.policy").change

local M = {}

M.OBSERVATION_DEFAULTS = { repetitions = 2, selection = "spread", max_inputs = 12, shrink_limit = 8,
                           process_deadline_ms = 10000 }

M.EXTENSIONS = { rust = "%.rs$", python = "%.py$", typescript = "%.ts$" }

local U32_MAX = 0xFFFFFFFF

--- A set from its command-line spelling: comma-separated integers and
--  FROM..TO ranges ("0..99,200").  Returns an intent-document set (a JSON
--  array) or nil, message.
function M.parse_set(text)
  if type(text) ~= "string" or text == "" then return nil, "an empty set" end
  local items = json.array()
  for part in (text .. ","):gmatch "([^,]*)," do
    local a, b = part:match "^(%d+)%.%.(%d+)$"
    local n = part:match "^(%d+)$"
    local lo, hi = tonumber(a or n), tonumber(b or n)
    if not lo or #(a or n) > 10 or (b and #b > 10) then
      return nil, ("%q is not an integer or a FROM..TO range"):format(part)
    end
    if hi > U32_MAX then return nil, ("%q is outside the u32 range"):format(part) end
    if lo > hi then return nil, ("%q is an empty range"):format(part) end
    items[#items + 1] = lo == hi and math.tointeger(lo) or { from = math.tointeger(lo), to = math.tointeger(hi) }
  end
  return items
end

--- A requirement from "INPUTS=OUTPUTS" ("50..99=100"): {inputs, outputs} or nil, message.
function M.parse_requirement(text)
  local inputs_text, outputs_text = tostring(text):match "^([^=]+)=([^=]+)$"
  if not inputs_text then return nil, ("%q is not INPUTS=OUTPUTS (e.g. 50..99=100)"):format(tostring(text)) end
  local inputs, message = M.parse_set(inputs_text)
  if not inputs then return nil, ("%s: inputs: %s"):format(text, message) end
  local outputs
  outputs, message = M.parse_set(outputs_text)
  if not outputs then return nil, ("%s: outputs: %s"):format(text, message) end
  return { inputs = inputs, outputs = outputs }
end

local function encode(doc) return json.encode(doc, { indent = 2 }) .. "\n" end

-- The four artifacts' documents, checked by the parsers paired execution uses.
local function artifact_files(spec, dir)
  local observation = {}
  for k, v in pairs(M.OBSERVATION_DEFAULTS) do observation[k] = v end
  for k, v in pairs(spec.observation or {}) do
    if M.OBSERVATION_DEFAULTS[k] == nil then error(("unknown observation policy setting %q"):format(tostring(k)), 3) end
    observation[k] = v
  end
  local docs = {
    binding_map = { schema_version = 1, language = spec.language, source = spec.source, ["function"] = spec["function"] },
    codec = spec.multi and require("vkit.change.multi.codec").document(spec.multi.signature)
      or { schema_version = 1, input = "u32-le", output = "decimal-u32-line" },
    observation_policy = { schema_version = 1, repetitions = observation.repetitions, selection = observation.selection,
                           max_inputs = observation.max_inputs, shrink_limit = observation.shrink_limit,
                           process_deadline_ms = observation.process_deadline_ms },
    environment_model = spec.environment_model,
  }
  local names = { binding_map = "binding.json", codec = "codec.json", observation_policy = "observation.json",
                  environment_model = "environment.json" }
  local out = {}
  for _, name in ipairs(intent_mod.ARTIFACTS) do
    local bytes = encode(docs[name])
    local ok, message, code = artifacts.parse(name, bytes)
    if not ok then return nil, message, code end
    out[name] = { path = dir .. "/" .. names[name], bytes = bytes }
  end
  return out
end

--- The files of a proposed intent revision (see the module comment).
function M.intent(spec)
  local language = spec.language
  local known = false
  for _, l in ipairs(change_policy.languages) do known = known or l == language end
  if not known then
    return nil, ("unknown language %q (one of %s)"):format(tostring(language), table.concat(change_policy.languages, ", ")),
      "unknown-language"
  end
  local ok, _, message = paths.check(spec.source or "")
  if not ok then return nil, ("the source %s is not a normalised repository path: %s"):format(
    tostring(spec.source), tostring(message)), "invalid-path" end
  if not spec.source:match(M.EXTENSIONS[language]) then
    return nil, ("the %s source %s does not end in %s"):format(language, spec.source,
      M.EXTENSIONS[language]:gsub("%%", ""):gsub("%$", "")), "source-language-mismatch"
  end
  local fn = spec["function"]
  if type(fn) ~= "string" or not fn:match "^[%a_][%w_]*$" then
    return nil, ("the function %q is not an identifier"):format(tostring(fn)), "invalid-function"
  end
  local dir = spec.dir or ("verification/" .. fn)
  ok, _, message = paths.check(dir)
  if not ok then return nil, ("the directory %s is not a normalised repository path: %s"):format(dir, tostring(message)),
    "invalid-path" end
  local files, amessage, acode = artifact_files(spec, dir)
  if not files then return nil, amessage, acode end
  local within = (spec.requirements and #spec.requirements > 0) and ", within the standing requirements" or ""
  local statement, contract_spec
  if spec.multi then
    -- the multi-parameter profile: every parameter named, the domain in its canonical text
    local m, names, inputs = spec.multi, {}, {}
    for i, p in ipairs(m.signature.params) do names[i], inputs[i] = p.name, p.name .. "=" .. m.inputs[p.name] end
    statement = ("%s(%s) in %s, for every input in %s, returns what the accepted base returns%s"):format(fn,
      table.concat(names, ", "), spec.source, table.concat(inputs, ","), within)
    contract_spec = m
  else
    local domain = ranges.normalize(spec.domain)
    if not domain or #domain == 0 then return nil, "the domain is empty", "empty-intent-domain" end
    statement = ("%s(x) in %s, for every x in %d..%d, returns what the accepted base returns%s"):format(fn,
      spec.source, domain[1][1], domain[#domain][2], within)
    contract_spec = { inputs = spec.domain, observations = spec.observations, requirements = spec.requirements or {} }
  end
  local requirement = spec.requirement or { source = ("%s#%s"):format(spec.source, fn), statement = statement }
  local revision_files, digest, rcode = authoring.try_revision {
    requirement = requirement, contract = contract_spec, artifacts = files,
  }
  if not revision_files then return nil, digest, rcode end
  local revision_path = intent_mod.revision_path(change_policy.layout, digest)
  -- The acceptance list that would accept it: the current one plus the digest.
  local accepted = {}
  if spec.accepted then
    local current, lmessage, lcode = intent_mod.parse_accepted(spec.accepted, change_policy.layout.accepted_list)
    if not current then return nil, lmessage, lcode end
    for _, d in ipairs(current.list) do if d ~= digest then accepted[#accepted + 1] = d end end
  end
  accepted[#accepted + 1] = digest
  local out = { digest = digest, revision_path = revision_path, files = {}, notes = {},
                accepted = { path = change_policy.layout.accepted_list, bytes = authoring.accepted(accepted) } }
  for _, name in ipairs(intent_mod.ARTIFACTS) do
    out.files[#out.files + 1] = { path = files[name].path, bytes = files[name].bytes, role = name:gsub("_", " ") }
  end
  out.files[#out.files + 1] = { path = revision_path, bytes = revision_files[revision_path], role = "intent revision" }
  if not spec.requirement then
    out.notes[#out.notes + 1] = ("the requirement citation %q and its statement were generated: review them "
      .. "(--requirement, --statement); they are part of what is accepted"):format(requirement.source)
  end
  if not spec.requirements or #spec.requirements == 0 then
    out.notes[#out.notes + 1] = "no standing requirement (--require): a candidate conforms where it returns what the "
      .. "base returns"
  end
  return out
end

--- A finite request whose claim is the accepted intent's own contract,
--  read from the base commit's Git objects (the strongest claim that binds):
--  bytes, or nil, message, code.  `repo` is an open vkit.git repository.
function M.request(repo, spec)
  for _, field in ipairs { "base", "candidate", "intent" } do
    if type(spec[field]) ~= "string" then error(("request needs %s"):format(field), 2) end
  end
  local path = intent_mod.revision_path(change_policy.layout, spec.intent)
  local blob, message, code = repo:read(spec.base, path, change_policy.caps.document_bytes)
  if not blob then
    return nil, ("the base commit has no intent revision %s: %s"):format(path, message),
      code == "missing-path" and "intent-revision-missing" or code
  end
  local revision
  revision, message, code = intent_mod.parse_revision(blob.bytes, path)
  if not revision then return nil, message, code end
  if revision.digest ~= spec.intent then
    return nil, ("%s has the digest %s, not the %s its name says"):format(path, revision.digest, spec.intent),
      "intent-digest-mismatch"
  end
  return authoring.request(spec.base, spec.candidate, spec.intent, contract.to_document(revision.contract))
end

return M
