--- The finite_paired certification method: paired execution, then change
-- analysis of the retained observations (seed 001).
local analysis = require "vkit.change.analysis"
local coverage = require "vkit.change.coverage"
local sys = require "vkit.sys"

local M = {}

--- opts as for vkit.change.paired.run; returns {status, reason, message,
--  report, coverage, cuts, budget, paired (the paired-execution report)}.
function M.run(bound, opts)
  -- the multi-parameter profile (issue 34) has its own sampled method
  if bound.intent.contract.profile == "multi" then return require("vkit.change.multi.paired").run(bound, opts) end
  local started = sys.monotonic_ms()
  local result, report = analysis.run(bound, opts)
  local c = result.coverage
  local problem = type(report.problems) == "table" and report.problems[1] or nil
  local message = type(report.message) == "string" and report.message or (problem and problem.message) or nil
  local candidate = type(report.admission) == "table" and report.admission.candidate or nil
  return { status = result.status, reason = report.status, message = message, report = analysis.REPORT,
           admitted = candidate and candidate.admitted or false, admission = candidate, sandbox = report.sandbox,
           coverage = coverage.record("finite_paired", c.conforming + c.violations, c.domain, "sampled"),
           cuts = report.cuts, paired = report,
           budget = { max_invocations = report.limits.max_invocations, invocations = report.invocations,
                      deadline_ms = report.limits.deadline_ms, elapsed_ms = sys.monotonic_ms() - started } }
end

return M
