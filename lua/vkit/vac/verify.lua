--- The structural verifier (SPEC §4): a bundle directory in, the list of
--  named failures out.  Empty means structurally clean, which is not
--  semantic replay.
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local json = require "vkit.json"
local jsonload = require "vkit.vac.jsonload"
local manifest = require "vkit.vac.manifest"
local bundle = require "vkit.vac.bundle"
local profiles = require "vkit.vac.profiles"
local summary = require "vkit.vac.summary"
local text = require "vkit.vac.text"
local Failures = require "vkit.vac.failures"
local policy = require("vkit.policy").vac

local kind = json.kind
local M = {}

-- The artifacts of one bundle, decoded on demand; every failure to read
-- one is named on the bundle's failure list.
local Source = {}
Source.__index = Source

function Source:path(rel) return self.root .. "/" .. rel end

local WANT = {
  object = { object = true, message = "an object" },
  array = { array = true, message = "an array" },
  ["object or array"] = { object = true, array = true, message = "an object or an array" },
}

local function name_load_failure(failures, rel, class, detail)
  if class == "too-deep" or class == "strict" then
    failures:addf("invalid-json", "%s: %s", rel, detail)
  else
    failures:addf("artifact-unparsable", "%s: %s", rel, detail)
  end
end

-- v when it decoded and has the shape `want`; else nil, the failure named.
local function accept(self, rel, want, v, class, detail)
  if v == nil then
    name_load_failure(self.failures, rel, class, detail)
    return nil
  end
  local w = WANT[want]
  if not w[kind(v)] then
    self.failures:addf("artifact-unparsable", "%s: top level must be %s", rel, w.message)
    return nil
  end
  return v
end

function Source:json(rel, want) return accept(self, rel, want, jsonload.file(self:path(rel))) end

--- Source:json, and the keys of its top-level object member in document
--  order (see jsonload.file_ordered): value, keys.
function Source:json_ordered(rel, want, member)
  local v, keys, detail = jsonload.file_ordered(self:path(rel), member)
  if v == nil then return accept(self, rel, want, nil, keys, detail) end -- keys is the failure class
  return accept(self, rel, want, v), keys
end

--- Source:json for a large artifact: the elements of its top-level array
--  member go to consumer (see jsonload.file_streaming); value, count.
function Source:json_stream(rel, want, member, consumer)
  local v, count, detail = jsonload.file_streaming(self:path(rel), member, consumer)
  if v == nil then return accept(self, rel, want, nil, count, detail) end -- count is the failure class
  return accept(self, rel, want, v), count
end

function Source:lines(rel, consumer)
  local ok, class, detail = jsonload.lines(self:path(rel), consumer)
  if not ok then
    name_load_failure(self.failures, rel, class, detail)
    return nil
  end
  return true
end

function Source:bytes(rel)
  local bytes, err = fs.read(self:path(rel), policy.max_artifact_bytes, { nofollow = true })
  if not bytes then self.failures:addf("artifact-unparsable", "%s: %s", rel, err) end
  return bytes
end

function Source:text(rel)
  local bytes = self:bytes(rel)
  if bytes and not utf8.len(bytes) then
    self.failures:addf("artifact-unparsable", "%s: not valid UTF-8", rel)
    return nil
  end
  return bytes
end

function Source:sha256(rel) return (hash.file(self:path(rel))) end


-- Runs every check; recomputed pools feed the summary rule.
local function coherence(root, m, trusted, listed, failures)
  local results = kind(m.results) == "object" and m.results or {}
  local protocol = kind(m.protocol) == "object" and m.protocol or {}
  local version = type(m.vac_version) == "string" and m.vac_version or "0.1"
  local checks = kind(results.checks) == "array" and results.checks or {}
  local source = setmetatable({ root = root, failures = failures }, Source)

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
        elseif not trusted[r] then
          usable = false -- missing or hash-failed: already named
        end
      end
      local pool
      if usable then
        local before = #failures
        pool = profile.recompute {
          check = c, protocol = protocol, version = version, failures = failures, source = source,
        }
        if pool == nil and #failures == before then
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

--- Every named failure of the bundle directory root ({} when clean), and
--  the decoded manifest when there was one.
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
  manifest.todo_failures(m, failures)
  if #failures > 0 then return failures, m end -- a draft is refused wholesale
  manifest.validate(m, failures)
  local trusted, listed = bundle.verify_artifacts(root, m, failures)
  coherence(root, m, trusted, listed, failures)
  return failures, m
end

return M
