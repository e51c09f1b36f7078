--- The finite_paired method for the multi-parameter profile (issue 34):
-- sampled paired execution, judged by the seed's rules over tuples.
-- vkit.change.method_paired hands a bound request of this profile here.
--
-- As the seed's: both sides captured, admitted (the pure profile with the
-- signature option) and built once (vkit.change.sides); the observation
-- policy selects at most max_inputs inputs, "spread" or "ascending" over
-- the domain's index order (vkit.change.multi.sample), as many as the
-- invocation budget allows after reserving shrink_limit inputs; each
-- selected input runs on each side `repetitions` times, every time in its
-- own fresh process (vkit.change.multi.per_input); repetitions that
-- differ leave the input unstable, never conforming.  Every observed
-- input is judged by vkit.change.multi.assess.  From the first violating
-- input, shrinking moves each parameter toward its smallest accepted
-- value while the input still violates, within shrink_limit inputs.
--
-- Two reports, as the seed's: paired-execution-report.v1.json (what ran:
-- selection, per-input runs, shrinking) and change-analysis.v1.json (the
-- judgement, naming the paired report by hash).  Statuses are the seed's:
-- observed_conformance (sampled: the combiner makes it samples_conform,
-- never a pass), observed_violation (with the shrunk input, every
-- parameter named), unknown.
local json = require "vkit.json"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local hash = require "vkit.hash"
local boot = require "vkit.boot"
local domain = require "vkit.change.domain"
local coverage = require "vkit.change.coverage"
local runner_mod = require "vkit.change.runner"
local sides_mod = require "vkit.change.sides"
local select_mod = require "vkit.change.select"
local massess = require "vkit.change.multi.assess"
local mexhaustive = require "vkit.change.multi.exhaustive"
local sample = require "vkit.change.multi.sample"
local per_input = require "vkit.change.multi.per_input"
local limits = require("vkit.policy").limits.paired

local M = {}

M.REPORT = "change-analysis.v1.json"
M.PAIRED_REPORT = "paired-execution-report.v1.json"

local SIDES = sides_mod.SIDES

function M.runner_identity()
  return { runner = "vkit-paired-multi", vkit_version = boot.version,
           vkit_exe_sha256 = assert(hash.file(boot.exe)),
           code = sides_mod.code_identity { "multi/paired", "multi/per_input", "multi/sample", "multi/assess",
                                            "multi/contract", "multi/legal", "admission", "signature_drivers",
                                            "signature", "domain", "select", "runner", "sides", "toolchain", "artifacts" },
           limits = { max_invocations = limits.max_invocations, output_cap = limits.output_cap,
                      deadline_ms = limits.deadline_ms } }
end

-- Runs and judges one input (an index) on both sides.
local function observe_pair(ctx, x)
  local tuple = domain.at(ctx.d, x)
  local call = mexhaustive.call_text(ctx.fn, ctx.sig, tuple)
  local o = { index = x, call = call }
  for _, s in ipairs(SIDES) do
    o[s] = per_input.observe(ctx.runner, ctx.setup, s, ctx.sig, tuple, call, ctx.policy)
  end
  o.judged = massess.judge(ctx.contract, ctx.guards, tuple, o.base, o.candidate, call)
  return o
end

local function stopped(o)
  return o.base.state == "not-run" or o.candidate.state == "not-run"
end

-- Shrinking from the first violating observation; the observations it
-- makes are appended (shrink = true).  Returns the report's record.
local function shrink(ctx, observations)
  local limit = ctx.policy.shrink_limit
  local record = { limit = limit, tried = json.array(), smallest_violation = json.null }
  local first
  for _, o in ipairs(observations) do
    if o.judged.verdict == "violation" then first = o break end
  end
  if not first then return record, nil end
  record.from = first.call
  local by_index = { [first.index] = first }
  local next_index, tried, smallest = sample.shrinker(ctx.d, first.index, limit)
  local last
  while true do
    local x = next_index(last)
    if not x then break end
    ctx.runner.progress("shrinking: trying " .. x)
    local o = observe_pair(ctx, x)
    o.shrink = true
    observations[#observations + 1] = o
    by_index[x] = o
    record.tried[#record.tried + 1] = o.call
    if stopped(o) then
      local why = o.base.reason or o.candidate.reason
      if why == "budget" or why == "deadline" then
        ctx.runner:cut("shrink_limit", limit, #tried - 1, why == "budget" and "max_invocations" or "deadline_ms",
          why == "budget" and ctx.runner.max_invocations or limits.deadline_ms)
      end
      break
    end
    last = o.judged.verdict == "violation"
  end
  local found = by_index[smallest()]
  record.smallest_violation, record.smallest_index = found.call, found.index
  record.message = found.judged.message
  return record, found
end

local function side_json(side)
  local s = { state = side.state, runs = side.runs or json.array() }
  if side.value ~= nil then s.value = side.value end
  if side.marker then s.marker = side.marker end
  if side.reason then s.reason = side.reason end
  return s
end

-- The analysis: status, reason and findings over every observation, the
-- shrunk violation first (the one a reader should look at).
local function decide(ctx, observations, retained_ok, pstatus, preason, smallest)
  local findings, seen = json.array(), {}
  local counts = { conforming = 0, violations = 0, undecided = 0 }
  for _, o in ipairs(observations) do
    if not seen[o.index] then
      seen[o.index] = true
      local j = o.judged
      local key = j.verdict == "conforms" and "conforming" or j.verdict == "violation" and "violations" or "undecided"
      counts[key] = counts[key] + 1
      if j.verdict ~= "conforms" then
        table.insert(findings, o.index == smallest and 1 or #findings + 1, { index = o.index, input = o.call, verdict = j.verdict, rule = j.rule,
                                    message = j.message, base = massess.side_text(ctx.sig, o.base),
                                    candidate = massess.side_text(ctx.sig, o.candidate),
                                    allowed = j.allowed or json.null })
      end
    end
  end
  local status, reason
  if not retained_ok then status, reason = "unknown", "retained-artifact-changed"
  elseif counts.violations > 0 then status, reason = "observed_violation", "claim-violated"
  elseif pstatus ~= "samples_within_contract" then status, reason = "unknown", preason
  else status, reason = "observed_conformance", "within-contract" end
  return status, reason, findings, counts
end

-- The paired report's own status (the seed's four).
local function paired_status(runner, observations, selected, observed)
  for _, o in ipairs(observations) do
    if o.judged.verdict == "violation" then return "observed_violation", "claim-violated" end
  end
  if #runner.problems > 0 then return runner.problems[1].status, runner.problems[1].reason end
  -- repetitions that differed are named first: the reason a reader must see
  for _, o in ipairs(observations) do
    for _, s in ipairs(SIDES) do
      if o[s].state == "unstable" then return "unknown", "unstable" end
    end
  end
  for _, o in ipairs(observations) do
    for _, s in ipairs(SIDES) do
      local st = o[s].state
      if st ~= "value" and not (st == "failed" and o[s].marker) then
        return "unknown", st == "not-run" and (o[s].reason or "not-run") or st
      end
    end
    if o.judged.verdict ~= "conforms" then return "unknown", "undecided" end
  end
  if selected == 0 then return "unknown", "nothing-selected" end
  if observed < selected then return "unknown", "incomplete" end
  return "samples_within_contract", "within-contract"
end

--- Runs the method for a BoundChangeRequest of the multi-parameter profile
--  (vkit.change.method_paired.run's options and result, with `analysis`:
--  the change-analysis document as written).
function M.run(bound, opts)
  local started = sys.monotonic_ms()
  local runner = runner_mod.new(opts)
  assert(fs.mkdirs(runner.dir))
  local c = bound.intent.contract
  local d = c.domain.inputs
  local words = mexhaustive.inputs_text(d)
  local report = runner:report(bound)
  report.method, report.profile, report.signature, report.inputs = "finite_paired", "multi-parameter", c.signature, words
  report.runner_identity = M.runner_identity()
  report.semantic_artifacts = bound.policy_blobs.artifacts
  local ctx = { runner = runner, d = d, sig = c.sig, contract = c, guards = bound.difference_policy.guards }
  local observations, selected = {}, {}

  local function finish(pstatus, preason, message)
    -- retained hashes are checked before the report is written
    local retained_ok = runner:check_retained()
    if not retained_ok then pstatus, preason = "infrastructure_failure", "retained-artifact-changed" end
    report.status, report.reason, report.message = pstatus, preason, message or json.null
    runner:write_report(report, M.PAIRED_REPORT)
    local status, reason, findings, counts = decide(ctx, observations, retained_ok, pstatus, preason,
      type(report.shrinking) == "table" and report.shrinking.smallest_index or nil)
    local rd <close> = assert(require("vkit.run_dir").open(runner.dir))
    local bytes = assert(rd:read(M.PAIRED_REPORT, 64 * 1024 * 1024))
    local cov = coverage.record("finite_paired", counts.conforming + counts.violations, d.size, "sampled", words)
    local shrinking = report.shrinking or json.null
    local analysis = {
      schema_version = 1, status = status, reason = reason, profile = "multi-parameter", coverage = cov,
      findings = findings, inputs_undecided = counts.undecided,
      paired_report = { path = M.PAIRED_REPORT, sha256 = hash.sha256(bytes), status = pstatus, reason = preason },
      intent_digest = bound.intent.digest, requirement = bound.intent.requirement,
      difference_guards = #ctx.guards, shrinking = shrinking, cuts = runner.cuts,
      source_proof = false, approval_authority = false,
    }
    if status == "observed_violation" then
      message = ("%d violating input%s sampled; shrunk to %s"):format(counts.violations,
        counts.violations == 1 and "" or "s", tostring(shrinking ~= json.null and shrinking.message))
      analysis.message = message
    elseif not message and runner.problems[1] then
      message = runner.problems[1].message
    end
    assert(rd:write_json(M.REPORT, analysis))
    local candidate = type(report.admission) == "table" and report.admission.candidate or nil
    return { status = status, reason = reason, message = message, report = M.REPORT, paired = report, analysis = analysis,
             admitted = candidate and candidate.admitted or false, admission = candidate, sandbox = report.sandbox,
             coverage = cov, cuts = runner.cuts,
             budget = { max_invocations = runner.max_invocations, invocations = runner.invocations,
                        deadline_ms = limits.deadline_ms, elapsed_ms = sys.monotonic_ms() - started } }
  end

  local setup, status, reason, message, partial = sides_mod.prepare(opts.repo, bound, runner, per_input.driver(c.sig),
    setmetatable({ admission = { signature = true } }, { __index = opts }))
  local known = setup or partial
  report.language = known and known.binding and known.binding.language or json.null
  if known and known.admission and next(known.admission) then report.admission = known.admission end
  if not setup then return finish(status, reason, message) end
  ctx.setup, ctx.fn, ctx.policy = setup, setup.binding["function"], setup.observation_policy
  report.runtime_identity = setup.runtime_identity
  report.source_captures = setup.source_captures
  report.semantics = { mode = "process-per-input", meaning = "process-per-input: each input and repetition in its "
    .. "own process (the batch driver given one input), which loads the module and calls it once" }

  local policy = ctx.policy
  local n, cut = select_mod.affordable(runner.max_invocations - runner.invocations, policy, d.size)
  if cut then runner:cut("max_inputs", policy.max_inputs, cut, "max_invocations", runner.max_invocations) end
  local omitted
  selected, omitted = sample.select(d, policy.selection, n)
  local listed = json.array()
  for i, x in ipairs(selected) do
    listed[i] = { index = x, input = mexhaustive.call_text(ctx.fn, ctx.sig, domain.at(d, x)) }
  end
  report.selection = { domain = d.size, selected = #selected, omitted = omitted, how = policy.selection,
                       repetitions = policy.repetitions, inputs = listed,
                       order = "indexes in the domain's enumeration (the last parameter fastest)" }
  for i, x in ipairs(selected) do
    runner.progress(("input %d of %d: index %d"):format(i, #selected, x))
    local o = observe_pair(ctx, x)
    observations[#observations + 1] = o
    if stopped(o) then break end
  end
  local observed = #observations
  report.shrinking = shrink(ctx, observations)

  local obs_json = json.array()
  for i, o in ipairs(observations) do
    obs_json[i] = { input = o.index, call = o.call, shrink = o.shrink or false, base = side_json(o.base),
                    candidate = side_json(o.candidate), verdict = o.judged.verdict, rule = o.judged.rule or json.null }
  end
  report.observations = obs_json
  report.observed = observed
  report.os_sandbox = runner:os_sandbox()
  report.sandbox = runner:sandbox_record(setup.plan)
  return finish(paired_status(runner, observations, #selected, observed))
end

return M
