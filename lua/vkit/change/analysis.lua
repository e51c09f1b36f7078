--- run_change_analysis (seed 001): capture target and candidate once, run
-- the paired execution, and assess the retained observations against the
-- accepted standing intent and the target's difference policy.
--
-- Before any observation is used, the retained bytes listed by the paired
-- report are re-hashed and the live execution identity (the declared tools
-- and their runtime dependencies, hashed now) is compared with the one the
-- report recorded.  Only
-- successful, validated process outputs count as returned values;
-- failed-process stdout stays in the retained evidence.
--
-- change-analysis.v1.json: { schema_version, status = observed_conformance
-- | observed_violation | unknown, coverage, findings, paired_report =
-- {path, sha256, status}, intent_digest, requirement, source_proof = false,
-- approval_authority = false }.  Finite observations never establish a
-- universal source result.
local json = require "vkit.json"
local hash = require "vkit.hash"
local assess = require "vkit.change.assess"
local paired = require "vkit.change.paired"
local run_dir = require "vkit.run_dir"

local M = {}

M.REPORT = "change-analysis.v1.json"

-- Re-checks retained bytes (beneath a handle of dir: never through a
-- link a candidate planted) and the live identity of the declared tools.
function M.validate_report(report, dir)
  local rd <close> = assert(run_dir.open(dir))
  for _, r in ipairs(report.retained or {}) do
    local actual = rd:sha256(r.path)
    if actual ~= r.sha256 then
      return nil, ("retained %s changed since the paired execution"):format(r.path)
    end
  end
  -- The live identity: every declared tool and dependency is still the
  -- file that was hashed (its identity, as each launch checked it; the
  -- sandbox denied the launches write access to all of them).
  local identity = report.runtime_identity
  if identity then
    local ids = {}
    for _, f in ipairs(identity.identities or {}) do ids[f.path] = f.identity end
    local function unchanged(path, sha256)
      if ids[path] then return require("vkit.proc").file_identity(path) == ids[path] end
      return hash.file(path) == sha256
    end
    for name, tool in pairs(identity.tools) do
      if not unchanged(tool.path, tool.sha256) then
        return nil, ("the live %s (%s) no longer matches the identity the observations ran under"):format(name, tool.path)
      end
    end
    for _, dep in ipairs(identity.dependencies or {}) do
      if not unchanged(dep.path, dep.sha256) then
        return nil, ("the live runtime dependency %s no longer matches the identity the observations ran under"):format(
          dep.path)
      end
    end
  end
  return true
end

--- Assesses a paired report (already written under dir) for a bound request.
function M.assess_report(bound, report, dir)
  local result
  local valid, why = M.validate_report(report, dir)
  local observations = valid and paired.for_assessment(report) or {}
  local selected = report.selection and report.selection.selected or 0
  local shrink, distinct, seen = 0, 0, {}
  for _, o in ipairs(observations) do
    if o.shrink then shrink = shrink + 1 end
    if not seen[o.input] then seen[o.input], distinct = true, distinct + 1 end
  end
  local domain = require("vkit.change.ranges").count(bound.intent.contract.domain.inputs)
  result = assess.assess(bound.intent.contract, bound.difference_policy.guards, observations,
    { selected = selected + shrink, omitted = domain - distinct })
  if not valid then
    result.status = "unknown"
    result.findings[#result.findings + 1] = { verdict = "undecided", rule = "retained-evidence", message = why }
  elseif report.status == "infrastructure_failure" and result.status ~= "observed_violation" then
    result.status = "unknown"
  end
  local rd <close> = assert(run_dir.open(dir))
  local bytes = assert(rd:read(paired.REPORT, 64 * 1024 * 1024))
  local findings = json.array()
  for i, f in ipairs(result.findings) do findings[i] = f end
  local analysis = {
    schema_version = 1,
    status = result.status,
    coverage = result.coverage,
    findings = findings,
    paired_report = { path = paired.REPORT, sha256 = hash.sha256(bytes), status = report.status, reason = report.reason },
    intent_digest = bound.intent.digest,
    requirement = bound.intent.requirement,
    difference_guards = #bound.difference_policy.guards,
    shrinking = report.shrinking or json.null,
    cuts = report.cuts or json.array(),
    source_proof = false,
    approval_authority = false,
  }
  assert(rd:write_json(M.REPORT, analysis))
  return analysis
end

--- The whole analysis for a bound request that preflight returned:
--  paired execution then assessment (internal: scripts call
--  vkit.change.run_change_analysis).  opts as for vkit.change.paired.run.
function M.run(bound, opts)
  local report = paired.run(bound, opts)
  return M.assess_report(bound, report, opts.dir), report
end

return M
