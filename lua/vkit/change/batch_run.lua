--- What the exhaustive methods share (the seed's, vkit.change.exhaustive,
-- and the multi-parameter profile's, vkit.change.multi.exhaustive): what a
-- batch's launch means, the queue that splits a batch whose output reached
-- the cap, the listings of a report and the result a method returns.
-- Their inputs, drivers and judging differ; these rules must not.
local json = require "vkit.json"
local sys = require "vkit.sys"
local toolchain = require "vkit.change.toolchain"
local limits = require("vkit.policy").limits.paired
local cfg = require("vkit.policy").change.exhaustive

local M = {}

--- Records in `report` what the side preparation (vkit.change.sides)
--  established, `setup` when it finished or `partial` when it stopped:
--  the language, each side's admission (kept even when a build then
--  failed), and with a setup the identities, captures, driver and build
--  files, and the observation mode of each side (batch_drivers.mode and
--  its meaning).  Returns whether there is a setup to run.
function M.record_setup(report, setup, partial)
  local known = setup or partial
  report.language = known and known.binding and known.binding.language or json.null
  if known and known.admission and next(known.admission) then report.admission = known.admission end
  if not setup then return false end
  local batch_drivers, sides = require "vkit.change.batch_drivers", require "vkit.change.sides"
  report.runtime_identity = setup.runtime_identity
  report.source_captures = setup.source_captures
  report.drivers, report.builds = sides.files(setup)
  report.semantics = json.object()
  for _, s in ipairs(sides.SIDES) do
    local mode = batch_drivers.mode(setup.binding.language, setup.admission[s].admitted)
    report.semantics[s] = { mode = mode, meaning = batch_drivers.SEMANTICS[mode] }
  end
  return true
end

--- The deadline of one batch launch of `inputs` inputs when `work_left`
--  inputs x launches are still to run (this one included) and
--  `remaining_ms` of the method's deadline is left: `p.slack` times its
--  proportion, at most p.max_fraction of what is left and at least
--  p.floor_ms (policies/signatures.lua batch_deadline), never more than
--  what is left.  Pure.
function M.share_ms(remaining_ms, inputs, work_left, p)
  local proportional = p.slack * remaining_ms * inputs / math.max(inputs, work_left)
  local share = math.max(p.floor_ms, math.min(remaining_ms * p.max_fraction, proportional))
  return math.max(1, math.floor(math.min(remaining_ms, share)))
end

--- Launches one pass of a batch on one side with stdin `bytes` (retained
--  as a file).  Returns what the launch means:
--    "ran", result   the driver exited 0: parse result.stdout
--    "lost", why     no input of the run returned (a whole-process failure,
--                    a single input's output reached the cap, or a single
--                    input ran past its share of the deadline: "timeout")
--    "stop", reason  return `reason` from the batch: "split" when the
--                    output reached the cap and the batch has more than one
--                    input, "split-deadline" when it ran past its share
--                    (share_ms) of the time left; else stop the method
--                    (budget, deadline, cancelled, a pin, launch or
--                    protocol failure).  commit() is called first where
--                    what earlier launches of the batch observed still
--                    counts.
--  share_ms: nil (the seed's: a launch may take all the time left) or
--  this launch's share (M.share_ms).
function M.launch(runner, setup, side, batch, pass, bytes, commit, share_ms)
  local first, last = batch.inputs[1], batch.inputs[#batch.inputs]
  runner.progress(("exhaustive: batch %s (%d inputs, %d..%d) pass %d %s"):format(batch.index, #batch.inputs,
    first, last, pass, side))
  local spec = toolchain.run_spec(setup.binding.language, setup, setup.sides[side], bytes)
  -- a launch cut at its share is split or lost whatever it would still
  -- write: SIGKILL at once rather than wait a grace from the time left
  if share_ms then spec.grace_ms = 0 end
  local remaining = math.max(1, runner:remaining_ms())
  local deadline = share_ms and math.min(share_ms, remaining) or remaining
  local result, why = runner:launch(("batch %s pass %d %s"):format(batch.index, pass, side), spec,
    deadline, { stdin_file = true })
  if not result then commit() return "stop", why end
  local st = result.status
  if st == "pin-mismatch" or st == "launch-failed" then
    runner:problem("infrastructure_failure", st, result.message or st)
    return "stop", st
  end
  if st == "cancelled" then commit() return "stop", "cancelled" end
  -- past its share, with time left for the halves: split, or lose the one input
  if st == "timeout" and deadline < remaining then
    if #batch.inputs > 1 then return "stop", "split-deadline" end
    return "lost", "timeout"
  end
  if st == "timeout" then commit() return "stop", "deadline" end
  if st == "output-capped" then
    if #batch.inputs > 1 then return "stop", "split" end
    return "lost", "output-capped"
  end
  if st == "exited" and result.code == 0 then return "ran", result end
  if st == "exited" and (result.code == 3 or result.code == 5 or result.code == 6) then
    runner:problem("infrastructure_failure", "protocol",
      ("the %s batch driver reported a protocol failure (exit %d)"):format(side, result.code))
    return "stop", "protocol"
  end
  -- The whole process failed (the module raised on import, a crash): no
  -- input of this run returned.
  return "lost", ("process %s %s"):format(st, tostring(result.code or result.signal or ""))
end

--- Records that a batch's output is not one `unit` per input (a problem):
--  "line" for the seed's drivers (its reports keep their words), "record"
--  for the multi-parameter ones.
function M.protocol(runner, side, batch, problem, unit)
  runner:problem("infrastructure_failure", "protocol",
    ("the %s batch driver's output for batch %s is not one %s per input: %s"):format(side, batch.index,
      unit or "line", problem))
  return "protocol"
end

--- Runs the queued batches with run_one(batch, queue) -> nil | "split" |
--  "split-deadline" | reason, splitting a batch in two
--  (vkit.change.batches.halves) when asked; `queue` holds the batches
--  still to run after this one.  Returns the stop reason (nil when every
--  batch ran); record = {planned, ran, split} as the report lists them (a
--  split past a deadline share says so: why = "deadline-share").
function M.run_batches(queue, record, run_one)
  local halves = require("vkit.change.batches").halves
  record.planned = #queue
  while #queue > 0 do
    local batch = table.remove(queue, 1)
    local why = run_one(batch, queue)
    if why == "split" or why == "split-deadline" then
      local a, b = halves(batch)
      table.insert(queue, 1, b)
      table.insert(queue, 1, a)
      record.split[#record.split + 1] = { index = batch.index, inputs = #batch.inputs,
                                          why = why == "split-deadline" and "deadline-share" or nil }
    else
      record.ran[#record.ran + 1] = { index = batch.index, first = batch.inputs[1], last = batch.inputs[#batch.inputs],
                                      inputs = #batch.inputs }
      if why then return why end
    end
  end
  return nil
end

--- How many passes each side runs (at least the policy's minimum, more
--  when the observation policy asks) and what the report says of them and
--  of the observation policy: passes, passes record, policy record.
--  note: what bounds a batch, when not the seed's words.
function M.passes(observation_policy, note)
  local passes = math.max(cfg.min_passes, observation_policy.repetitions)
  local record = { count = passes, orders = json.array { "ascending" } }
  for p = 2, passes do record.orders[p] = ("run-id permutation %d"):format(p) end
  return passes, record, {
    repetitions = observation_policy.repetitions,
    not_applied = json.array { "selection", "max_inputs", "shrink_limit", "process_deadline_ms" },
    note = note or "every accepted input is run; each batch is bounded by the time left of the method's deadline",
  }
end

--- {total, items (the first policies/change.lua exhaustive.listed_inputs), cap}
function M.listed(items)
  local out = json.array()
  for i = 1, math.min(#items, cfg.listed_inputs) do out[i] = items[i] end
  return { total = #items, items = out, cap = cfg.listed_inputs }
end

--- Why not every input was checked, first cause first.
function M.reason_for_unchecked(stop, unstable, isolation, failed)
  if stop then return stop end
  if #unstable > 0 then return "unstable" end
  if #isolation > 0 then return "isolation-difference" end
  for _, f in ipairs(failed) do if f.side == "candidate" then return "candidate-failed" end end
  if #failed > 0 then return "base-failed" end
  return "undecided"
end

--- Writes the method's report with its outcome and coverage (a
--  vkit.change.coverage record) and returns the method's result.
function M.finish(runner, report, name, started, coverage, status, reason, message)
  report.status, report.reason, report.message = status, reason, message or json.null
  report.coverage = coverage
  runner:write_report(report, name)
  local candidate = report.admission and report.admission.candidate
  return { status = status, reason = reason, message = message, report = name, coverage = report.coverage,
           cuts = runner.cuts, admitted = candidate and candidate.admitted or false, admission = candidate,
           sandbox = report.sandbox,
           budget = { max_invocations = runner.max_invocations, invocations = runner.invocations,
                      deadline_ms = limits.deadline_ms, elapsed_ms = sys.monotonic_ms() - started },
           record = report }
end

return M
