--- The structural verifier (SPEC §4): a bundle directory in, the list of
--  named failures out.  Empty means structurally clean, which is not
--  semantic replay.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"
local jsonload = require "vkit.vac.jsonload"
local manifest = require "vkit.vac.manifest"
local bundle = require "vkit.vac.bundle"
local Source = require "vkit.vac.source"
local profiles = require "vkit.vac.profiles"
local summary = require "vkit.vac.summary"
local text = require "vkit.vac.text"
local Failures = require "vkit.vac.failures"
local policy = require("vkit.policy").vac

local kind = json.kind
local M = {}

-- Runs every check; recomputed pools feed the summary rule.
local function coherence(source, m, listed, failures)
  local results = kind(m.results) == "object" and m.results or {}
  local protocol = kind(m.protocol) == "object" and m.protocol or {}
  local version = type(m.vac_version) == "string" and m.vac_version or "0.1"
  local checks = kind(results.checks) == "array" and results.checks or {}

  -- every listed artifact some check names, malformed checks included
  local covered = {}
  for _, c in ipairs(checks) do
    if kind(c) == "object" then
      for _, v in pairs(c) do
        if type(v) == "string" and listed[v] then covered[v] = true end
      end
    end
  end

  local pools, scopes = {}, {}
  local missing = { fields = {}, scopes = {} }
  local function lost(c, profile)
    -- what a check that produced no pool might have contributed
    if version == "0.2" then
      if profile then
        local scope = summary.scope_of(c, profile.refs[1])
        if scope then missing.scopes[scope] = true end
      end
    elseif profile then
      local fields = summary.possible_fields(c)
      if not fields then
        missing.any = true
      else
        for f in pairs(fields) do missing.fields[f] = true end
      end
    end
  end

  for _, c in ipairs(checks) do
    local profile = kind(c) == "object" and profiles.get(c.profile) or nil
    if profile then
      local usable = true
      local refs = { table.unpack(profile.refs) }
      for _, k in ipairs(profile.optional_refs) do
        if c[k] ~= nil then refs[#refs + 1] = k end
      end
      for _, ref_key in ipairs(refs) do
        local r = c[ref_key]
        if not text.nonblank(r) or not listed[r] then
          failures:addf("check-artifact-not-listed", "%s", require("vkit.vac.value").show(r))
          usable = false
        elseif not source.pins[r] or source:mismatched(r) ~= nil then
          usable = false -- missing or hash-failed: named in its place
        end
      end
      local pool
      if usable then
        local before = #failures
        pool = profile.recompute {
          check = c, protocol = protocol, version = version, failures = failures, source = source,
        }
        local read = {}
        for i, ref_key in ipairs(refs) do read[i] = c[ref_key] end
        if not source:settle(read) then
          -- a reference's bytes did not hold their pin: nothing derived from
          -- them counts (sha256-mismatch is named in its place)
          failures:truncate(before)
          pool = nil
        elseif pool == nil and #failures == before then
          failures:addf("artifact-unparsable", "%s: check contributed no recomputation", c.profile)
        end
      end
      if pool == nil then
        lost(c, profile)
      elseif version ~= "0.2" then
        pools[#pools + 1] = pool
      else
        local primary = profile.refs[1]
        local scope = summary.scope_of(c, primary)
        if scope == nil then
          failures:addf("unscopable-check", "%s: %s %s yields no scope; a primary reference must have a filename "
            .. "matching [A-Za-z0-9_-]+ before its first '.'", c.profile, primary,
            require("vkit.vac.value").show(c[primary]))
        elseif scopes[scope] then
          failures:addf("unscopable-check", "scope '%s' is claimed by more than one check; a summary path could not "
            .. "say which one it means", scope)
          missing.scopes[scope] = true
        else
          scopes[scope] = true
          local scoped = {}
          for k, v in pairs(pool) do scoped[scope .. "." .. k] = v end
          pools[#pools + 1] = scoped
        end
      end
    end
  end

  local uncovered = {}
  for p in pairs(listed) do
    if not covered[p] then uncovered[#uncovered + 1] = p end
  end
  if #uncovered > 0 then
    table.sort(uncovered)
    local shown = table.concat(uncovered, ", ", 1, math.min(4, #uncovered))
    local more = #uncovered > 4 and (" (+%d more)"):format(#uncovered - 4) or ""
    failures:addf("evidence-unchecked", "%s%s: listed in evidence but read by no check", shown, more)
  end
  if kind(results.summary) == "object" and #checks > 0 then
    summary.outruns(results.summary, pools, version, missing, failures)
  end
end

--- Every named failure of the bundle directory root ({} when clean), the
--  decoded manifest when there was one, and the sha256 of every file whose
--  bytes were judged (vac.json and each artifact that held its pin).
function M.directory(root)
  local failures = Failures.new()
  local st = fs.lstat(root .. "/vac.json")
  if st and st.kind == "link" then
    failures:add("unsafe-bundle", "vac.json: symlink")
    return failures
  end
  if not st or st.kind ~= "file" then
    failures:add("missing-manifest", "no vac.json in bundle")
    return failures
  end
  local bytes, err = fs.read(root .. "/vac.json", policy.max_artifact_bytes, { nofollow = true })
  if not bytes then
    failures:add("missing-manifest", "vac.json: " .. tostring(err))
    return failures
  end
  local m, _, detail = jsonload.decode(bytes)
  if m == nil then
    failures:add("invalid-json", "vac.json: " .. tostring(detail))
    return failures
  end
  if kind(m) ~= "object" then
    failures:add("invalid-json", "vac.json: top level must be an object")
    return failures
  end
  manifest.todo_failures(m, failures, bytes)
  if #failures > 0 then return failures, m end -- a draft is refused wholesale
  manifest.validate(m, failures)
  local pins, listed, slots = bundle.verify_artifacts(root, m, failures)
  local source = Source.new(root, pins, failures)
  coherence(source, m, listed, failures)
  local rels = {}
  for rel in pairs(pins) do rels[#rels + 1] = rel end
  source:settle(rels) -- what no check read is hashed once, now
  bundle.name_mismatches(pins, slots, source, failures)
  local digests = { ["vac.json"] = hash.sha256(bytes) }
  for rel in pairs(pins) do
    if source:verified(rel) then digests[rel] = pins[rel] end
  end
  return failures, m, digests
end

return M
