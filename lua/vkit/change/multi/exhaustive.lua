--- The exhaustive method for the multi-parameter profile (issue 34): every
-- accepted input of the product domain, run natively on base and
-- candidate, judged by the seed's rules over tuples (vkit.change.multi.assess).
-- vkit.change.exhaustive hands a bound request of this profile here.
--
-- Inputs are their INDEX in the domain's enumeration (0 .. N-1,
-- vkit.change.domain.at: the last parameter fastest), so batches, orders
-- and listings are the seed's over a contiguous range; an index becomes a
-- tuple only to encode a driver's stdin and to name an input in a finding.
-- A result is its canonical text.
--
-- As the seed's method: both sides captured and built once, exactly as
-- for paired execution (vkit.change.sides: pinned tools, closed
-- environment, the sandbox); the batch drivers of
-- vkit.change.signature_drivers read every input before loading the
-- candidate; each batch runs on each side at least twice in fresh
-- processes, ascending and in a run-id-derived order
-- (vkit.change.batches.order); outcomes that differ between passes make an
-- input undecided (unstable), never conforming.
--
-- Limits (policies/signatures.lua): at most exhaustive_inputs inputs (above
-- it the method refuses by name, `exhaustive-cap`, status unknown: nothing
-- is run and nothing is certified); batch_inputs inputs per invocation,
-- fewer when the longest line times the batch would pass the profile's
-- own output_cap less its stderr reserve; the seed's invocation budget and
-- deadline (policies/limits.lua paired).  2^20 inputs are 4 batches, so
-- two sides and two passes are 16 invocations plus two builds.
--
-- Cost at 2^20 inputs: a driver's stdout is binary records, kept as one
-- string per input (vkit.change.signature_records) and compared as
-- strings; stdin records are made per parameter value, not per input
-- (vkit.change.multi.stdin); and each class of inputs (the boxes holding
-- it, the two results) is judged once (vkit.change.multi.verdicts).
--
-- Admission: each side's source is admitted by its language's pure
-- profile with the signature option (vkit.change.admission, {signature =
-- true}).  As in the seed's method (issue 29), a side inside it runs in
-- batch mode; a side outside it in its language's fresh mode
-- (vkit.change.batch_drivers.mode: fork-per-input, fresh-module-per-input,
-- fresh-context-per-input; vkit.change.signature_drivers' fresh drivers),
-- so that its observations are what it does in real use, not what state
-- kept from an earlier call makes it do.  The report's semantics names
-- each side's mode and what its observations are
-- (vkit.change.batch_drivers.SEMANTICS); a candidate outside the profile
-- is still never all_inputs_conform untrusted (unadmitted_conform).
local boot = require "vkit.boot"
local json = require "vkit.json"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local batches = require "vkit.change.batches"
local batch_run = require "vkit.change.batch_run"
local runner_mod = require "vkit.change.runner"
local sides_mod = require "vkit.change.sides"
local coverage = require "vkit.change.coverage"
local runs = require "vkit.change.runs"
local domain = require "vkit.change.domain"
local signature = require "vkit.change.signature"
local signature_drivers = require "vkit.change.signature_drivers"
local records = require "vkit.change.signature_records"
local massess = require "vkit.change.multi.assess"
local verdicts = require "vkit.change.multi.verdicts"
local stdin = require "vkit.change.multi.stdin"
local mcontract = require "vkit.change.multi.contract"
local isolation = require "vkit.change.multi.isolation"
local batch_drivers = require "vkit.change.batch_drivers"
local cfg = require("vkit.policy").change.exhaustive
local policy = require("vkit.policy").signatures

local M = {}

M.REPORT = "exhaustive-report.v1.json"

local SIDES = sides_mod.SIDES

function M.runner_identity()
  return { runner = "vkit-exhaustive-multi", vkit_version = boot.version,
           vkit_exe_sha256 = assert(require("vkit.hash").file(boot.exe)),
           code = sides_mod.code_identity { "multi/exhaustive", "multi/assess", "multi/contract", "multi/legal", "multi/verdicts",
                                            "multi/stdin", "signature_records", "admission",
                                            "signature_drivers", "batch_drivers", "signature", "domain", "batch_run", "batches", "runner", "sides",
                                            "toolchain", "artifacts" } }
end

--- Inputs per invocation for a signature: the policy's batch, fewer when
--  its records and trailer would not fit the output cap less the stderr
--  reserve.
function M.batch_size(sig)
  local fit = (policy.output_cap - policy.stderr_reserve_bytes - records.output_bytes(sig, 0))
    // records.result_bytes(sig)
  return math.max(1, math.min(policy.batch_inputs, fit))
end

--- "x in -5..5, flag in *": the accepted inputs in words.
function M.inputs_text(d)
  local parts = {}
  for i, p in ipairs(d.sig.params) do parts[i] = p.name .. " in " .. domain.set_text(d.sets[i]) end
  return table.concat(parts, ", ")
end

--- "clamp(x=7, lo=3, hi=-2)": an input with every parameter named.
function M.call_text(fn, sig, tuple)
  return fn .. "(" .. mcontract.input_text(sig, tuple) .. ")"
end

--- "clamp(x=0..9, lo=3, hi=-2)": a box with every parameter named.
function M.box_call(fn, sig, box)
  local parts = {}
  for i, p in ipairs(sig.params) do parts[i] = p.name .. "=" .. domain.set_text(box[i]) end
  return fn .. "(" .. table.concat(parts, ", ") .. ")"
end

-- ---------------------------------------------------------------------
-- Running batches.  keys[side][pass][index + 1] = the driver's result
-- record (vkit.change.signature_records), or "~" and why the process
-- returned nothing for the input (never a record: a status byte is 0..3).

-- What a key shows in a report: a result's text, "!raise", "!range", "!crash", or "~why".
local function key_text(sig, key, decode)
  if key == nil or key:sub(1, 1) == "~" then return key end
  local o = decode(key)
  if o.marker then return "!" .. o.marker end
  return signature.result_text(sig, o.value)
end

-- Runs one batch (indexes first .. last) in every pass on both sides.
-- Returns nil when it ran, "split" when an output reached the cap, or the
-- reason to stop.  A key is a driver's result record as bytes
-- (vkit.change.signature_records): equal results are equal strings.
local function run_batch(runner, setup, d, batch, passes, run_id, keys, decode, record, queue)
  local sig, first = d.sig, batch.inputs[1]
  -- inputs x launches still to run after this batch: each launch's share
  -- of the time left (batch_run.share_ms)
  local after = 0
  for _, b in ipairs(queue) do after = after + #b.inputs end
  after = after * passes * #SIDES
  local launches_left = passes * #SIDES
  local recs = {}
  for i, x in ipairs(batch.inputs) do recs[i] = record(x) end
  -- {side, pass, order, keys (a list in `order`) | lost (why)} per launch
  local staged = {}
  local function commit()
    for _, st in ipairs(staged) do
      local into, list = keys[st.side][st.pass], st.keys
      if list and st.pass == 1 then
        -- pass 1 is ascending, and a batch is consecutive indexes (plan, halves)
        table.move(list, 1, #list, first + 1, into)
      elseif list then
        for i, x in ipairs(st.order) do into[x + 1] = list[i] end
      else
        for _, x in ipairs(st.order) do into[x + 1] = st.lost end
      end
    end
  end
  for pass = 1, passes do
    local order = batches.order(batch.inputs, run_id, batch.index, pass)
    local ordered = {}
    for i, x in ipairs(order) do ordered[i] = recs[x - first + 1] end
    local bytes = table.concat(ordered)
    for _, s in ipairs(SIDES) do
      local share = batch_run.share_ms(runner:remaining_ms(), #batch.inputs,
        after + launches_left * #batch.inputs, policy.batch_deadline)
      launches_left = launches_left - 1
      local kind, got = batch_run.launch(runner, setup, s, batch, pass, bytes, commit, share)
      if kind == "stop" then return got end
      if kind == "ran" then
        local list, problem = records.records(sig, got.stdout or "", bytes, decode)
        if not list then return batch_run.protocol(runner, s, batch, problem, "record") end
        staged[#staged + 1] = { side = s, pass = pass, order = order, keys = list }
      else
        staged[#staged + 1] = { side = s, pass = pass, order = order, lost = "~" .. got }
      end
    end
  end
  commit()
  return nil
end

-- The domain's indexes as consecutive ascending batches of `size`.
local function plan(total, size)
  local out = {}
  for start = 0, total - 1, size do
    local inputs = {}
    for x = start, math.min(total, start + size) - 1 do inputs[#inputs + 1] = x end
    out[#out + 1] = { index = #out + 1, inputs = inputs }
  end
  return out
end

-- ---------------------------------------------------------------------
-- From keys to side observations, the shape vkit.change.multi.assess reads.

local function side_observation(sig, by_pass, x, passes, decode)
  local first = by_pass[1][x + 1]
  if first == nil then return { state = "not-run" } end
  for pass = 2, passes do
    local k = by_pass[pass][x + 1]
    if k == nil then return { state = "not-run" } end
    if k ~= first then
      local outputs = json.array()
      for p = 1, passes do outputs[p] = key_text(sig, by_pass[p][x + 1], decode) end
      return { state = "unstable", outputs = outputs }
    end
  end
  if first:sub(1, 1) == "~" then return { state = "failed", why = first:sub(2) } end
  local o = decode(first)
  if o.marker then return { state = "failed", marker = o.marker, why = "!" .. o.marker } end
  return { state = "value", value = signature.result_text(sig, o.value) }
end

-- The key every pass of a side agrees on for input x; nil when an input
-- was not run or its passes differ.
local function stable_key(by_pass, x, passes)
  local first = by_pass[1][x + 1]
  if first == nil then return nil end
  for pass = 2, passes do
    if by_pass[pass][x + 1] ~= first then return nil end
  end
  return first
end

-- Whether a stable key is a failure the report lists: a lost process ("~"),
-- a raise (status byte 1) or a fresh input's crash (3); a `range` is
-- judged, not listed.
local function listed_failure(key)
  local lead = key:byte(1)
  return lead == 126 or lead == 1 or lead == 3
end

-- A report's listing that keeps the first cfg.listed_inputs items and
-- counts the rest: with 2^20 inputs, a wrong candidate must not cost a
-- string per input.
local function listing()
  return { total = 0, items = json.array(), cap = cfg.listed_inputs }
end

local function add(list, make)
  list.total = list.total + 1
  if #list.items < list.cap then list.items[#list.items + 1] = make() end
end

-- The violating inputs ({input = index, rule}, ascending) grouped into
-- boxes per rule (vkit.change.domain.group, exact and disjoint), the first
-- policies/signatures.lua group_inputs of each rule:
-- {total, items = [{call = "f(x=0..9, lo=3, hi=-2)", rule, count, example}],
-- cap, grouped, of}.  example(tuple) is the message of the box's first
-- input (its lowest corner: every input of the box broke the rule).
local function violation_boxes(fn, d, violations, example)
  local by_rule, rules = {}, {}
  for _, v in ipairs(violations) do
    local list = by_rule[v.rule]
    if not list then list = {} by_rule[v.rule] = list rules[#rules + 1] = v.rule end
    if #list < policy.group_inputs then list[#list + 1] = domain.at(d, v.input) end
  end
  local out, grouped = listing(), 0
  for _, rule in ipairs(rules) do
    grouped = grouped + #by_rule[rule]
    for _, box in ipairs(assert(domain.group(d.sig, by_rule[rule]))) do
      add(out, function()
        local count, corner = 1, {}
        for i, set in ipairs(box) do
          count = count * assert(domain.set_size(set, math.maxinteger))
          corner[i] = signature.from_ord(set.type, set.ranges[1][1])
        end
        return { call = M.box_call(fn, d.sig, box), rule = rule, count = count, example = example(corner) }
      end)
    end
  end
  out.grouped, out.of = grouped, #violations
  return out
end

--- Runs the method for a BoundChangeRequest of the multi-parameter profile
--  (vkit.change.exhaustive.run's options and result).
function M.run(bound, opts)
  local started = sys.monotonic_ms()
  -- this profile's own per-invocation output cap (policies/signatures.lua)
  local runner = runner_mod.new(setmetatable({ output_cap = policy.output_cap }, { __index = opts }))
  assert(fs.mkdirs(runner.dir))
  local run_id = opts.run_id or ("library-" .. sys.random_hex(8))
  local c = bound.intent.contract
  local d, sig = c.domain.inputs, c.sig
  local accepted = d.size
  local inputs_words = M.inputs_text(d)
  local report = runner:report(bound)
  report.method, report.profile = "exhaustive", "multi-parameter"
  report.signature, report.inputs = c.signature, inputs_words
  report.inputs_accepted, report.inputs_checked, report.run_id = accepted, 0, run_id
  report.approval_authority, report.native_compiler_correspondence = false, false
  report.runner_identity = M.runner_identity()
  report.semantic_artifacts = bound.policy_blobs.artifacts
  local function finish(status, reason, message)
    return batch_run.finish(runner, report, M.REPORT, started,
      coverage.record("exhaustive", report.inputs_checked, accepted, "all_inputs", inputs_words), status, reason, message)
  end
  if accepted > policy.exhaustive_inputs then
    return finish("unknown", "exhaustive-cap", ("the accepted inputs (%d: %s) are more than the exhaustive cap of %d "
      .. "(policies/signatures.lua exhaustive_inputs): nothing was run"):format(accepted, inputs_words,
      policy.exhaustive_inputs))
  end

  -- batch mode for an admitted side, its language's fresh mode otherwise
  local function driver(language, module, fn, compiled, admitted)
    return signature_drivers.driver(language, sig, language == "typescript" and compiled or module, fn,
      batch_drivers.mode(language, admitted))
  end
  -- each side admitted by its language's pure profile with the signature option
  local setup, status, reason, message, partial = sides_mod.prepare(opts.repo, bound, runner, driver,
    setmetatable({ admission = { signature = true } }, { __index = opts }))
  if not batch_run.record_setup(report, setup, partial) then return finish(status, reason, message) end
  local fn = setup.binding["function"]

  local passes
  passes, report.passes, report.observation_policy = batch_run.passes(setup.observation_policy,
    "every accepted input is run; each batch launch is bounded by its share of the time left of the method's "
    .. "deadline (policies/signatures.lua batch_deadline): a batch past its share is split and re-run, a single "
    .. "input past it is reported as timed out")
  report.batches = { size = M.batch_size(sig), stderr_reserve_bytes = policy.stderr_reserve_bytes,
                     inputs = "indexes in the domain's enumeration (the last parameter fastest)",
                     ran = json.array(), split = json.array() }
  local decode, record = records.decoder(sig), stdin.new(d)
  local keys = { base = {}, candidate = {} }
  for _, s in ipairs(SIDES) do for p = 1, passes do keys[s][p] = {} end end
  local stop = batch_run.run_batches(plan(d.size, report.batches.size), report.batches,
    function(batch, queue) return run_batch(runner, setup, d, batch, passes, run_id, keys, decode, record, queue) end)

  -- Every input judged; findings name every parameter.
  local guards = bound.difference_policy.guards
  -- auto: finite_paired's per-input runs against these batches (vkit.change.multi.isolation)
  local isolated = isolation.check(opts.sampled, bound,
    function(x, s) return side_observation(sig, keys[s], x, passes, decode) end)
  local function judged(x, tuple)
    local o = isolation.mark(isolated, x, { base = side_observation(sig, keys.base, x, passes, decode),
                                            candidate = side_observation(sig, keys.candidate, x, passes, decode) })
    local call = M.call_text(fn, sig, tuple)
    return o, massess.judge(c, guards, tuple, o.base, o.candidate, call), call
  end
  local violations, items, unstable, failed = {}, listing(), listing(), listing()
  local conforming, undecided, candidate_failed = 0, 0, false
  -- both sides stable and no isolation difference: the verdict of the
  -- input's class (vkit.change.multi.verdicts)
  local boxes = {}
  for _, r in ipairs(c.requirements) do boxes[#boxes + 1] = r.box end
  for _, g in ipairs(guards) do boxes[#boxes + 1] = g.box end
  local verdict = verdicts.new(d, boxes)
  local function judge_index(x)
    local _, j = judged(x, domain.at(d, x))
    return j
  end
  local function violation(x, rule, o, j)
    violations[#violations + 1] = { input = x, rule = rule }
    add(items, function()
      if not j then o, j = judged(x, domain.at(d, x)) end
      return { index = x, call = M.call_text(fn, sig, domain.at(d, x)), rule = j.rule,
               base = massess.side_text(sig, o.base), candidate = massess.side_text(sig, o.candidate),
               allowed = j.allowed or json.null, message = j.message }
    end)
  end
  local function fail_item(x, s)
    candidate_failed = candidate_failed or s == "candidate"
    add(failed, function()
      local o, _, call = judged(x, domain.at(d, x))
      return { index = x, input = call, side = s, outcome = o[s].why }
    end)
  end
  for x = 0, accepted - 1 do
    local kb, kc = stable_key(keys.base, x, passes), stable_key(keys.candidate, x, passes)
    if kb and kc and not isolated.marks[x] then
      local j = verdict(x, kb, kc, judge_index)
      if listed_failure(kb) then fail_item(x, "base") end
      if listed_failure(kc) then fail_item(x, "candidate") end
      if j.verdict == "conforms" then
        conforming = conforming + 1
      elseif j.verdict == "violation" then
        violation(x, j.rule)
      else
        undecided = undecided + 1
      end
    else
      local tuple = domain.at(d, x)
      local o, jx, call = judged(x, tuple)
      for _, s in ipairs(SIDES) do
        if o[s].state == "unstable" then
          add(unstable, function() return { index = x, input = call, side = s, outputs = o[s].outputs } end)
        elseif o[s].state == "failed" and o[s].marker ~= "range" then
          fail_item(x, s)
        end
      end
      if jx.verdict == "conforms" then
        conforming = conforming + 1
      elseif jx.verdict == "violation" then
        violation(x, jx.rule, o, jx)
      else
        undecided = undecided + 1
      end
    end
  end
  local checked = conforming + #violations
  report.inputs_checked, report.inputs_conforming, report.inputs_undecided = checked, conforming, undecided
  report.violations = items
  report.violations.smallest = items.items[1] or json.null
  report.violations.boxes = violation_boxes(fn, d, violations, function(tuple)
    local _, j = judged(assert(domain.index(d, tuple)), tuple)
    return j.message
  end)
  -- runs of consecutive indexes breaking one rule (every violation, past the listing's cap)
  report.violations.index_ranges = runs.violation_ranges(violations)
  report.unstable = unstable
  report.failed_inputs = failed
  report.isolation = batch_run.listed(isolated.differences)
  report.isolation.compared = isolated.compared
  report.isolation.sampled_report = opts.sampled and "finite_paired" or json.null

  local retained_ok = runner:check_retained()
  report.os_sandbox = runner:os_sandbox()
  report.sandbox = runner:sandbox_record(setup.plan)
  if not retained_ok then return finish("infrastructure_failure", "retained-artifact-changed") end
  if #violations > 0 then
    return finish("observed_violation", violations[1].rule, ("%d violating input%s; the first: %s"):format(#violations,
      #violations == 1 and "" or "s", items.items[1].message))
  end
  if #runner.problems > 0 then
    return finish(runner.problems[1].status, runner.problems[1].reason, runner.problems[1].message)
  end
  if checked == accepted then return finish("all_inputs_conform", "all-accepted-inputs-checked") end
  -- the listings keep only their first items: the shared rule reads what they counted
  local why = batch_run.reason_for_unchecked(stop, unstable.total > 0 and { unstable.total } or {}, isolated.differences,
    failed.total > 0 and { { side = candidate_failed and "candidate" or "base" } } or {})
  return finish("unknown", why, ("%d of %d accepted inputs checked (%s)"):format(checked, accepted, why))
end

return M
