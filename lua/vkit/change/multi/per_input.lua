--- One side's per-input observation for the multi-parameter profile's
-- sampled method (issue 34): the input run `repetitions` times, each time
-- in its own fresh process.
--
-- The process is the profile's batch driver (vkit.change.signature_drivers)
-- given exactly ONE input: it reads that input, loads the module, calls
-- the function once and exits, which is the seed's per-input isolation
-- (a process per input and repetition) with no second driver to keep in
-- step with the batch protocol.  A run's key is the batch method's: the
-- result's canonical text, "!raise" or "!range" — or nil when the process
-- returned nothing comparable (a crash, the module raising on import).
--
-- Repetitions that agree give {state = "value", value} or {state =
-- "failed", marker}; keys that differ, or some runs keyless, give
-- "unstable"; no key at all "failed".  A launch the budget, the deadline
-- or cancellation refused is "not-run"; a timeout "timeout"; a protocol or
-- pin failure is a runner problem (infrastructure_failure).
local json = require "vkit.json"
local signature = require "vkit.change.signature"
local signature_drivers = require "vkit.change.signature_drivers"
local toolchain = require "vkit.change.toolchain"

local M = {}

--- The driver for sides.prepare: the profile's batch driver, run per input.
function M.driver(sig)
  return function(language, module, fn, compiled)
    return signature_drivers.driver(language, sig, language == "typescript" and compiled or module, fn)
  end
end

-- The key of a launch that exited 0 with `stdout`, or nil and a problem.
local function key_of(sig, tuple, stdout)
  local parsed, problem = signature_drivers.parse(sig, stdout, { tuple })
  if not parsed then return nil, problem end
  local o = parsed[1]
  return o.marker and ("!" .. o.marker) or signature.result_text(sig, o.value)
end

-- What agreeing keys mean for the judge.
local function state_of(key)
  if key:sub(1, 1) == "!" then return { state = "failed", marker = key:sub(2) } end
  return { state = "value", value = key }
end

--- Observes `side` (a setup.sides entry, named `name`) on `tuple` (labelled
--  `text`).  Returns the observation with its runs ({invocation, status,
--  code, key}).
function M.observe(runner, setup, name, sig, tuple, text, policy)
  local bytes = signature_drivers.encode_inputs(sig, { tuple })
  local runs = json.array()
  local function stop(o) o.runs = runs return o end
  for r = 1, policy.repetitions do
    local spec = toolchain.run_spec(setup.binding.language, setup, setup.sides[name], bytes)
    local result, why = runner:launch(("run %s input %s rep %d"):format(name, text, r), spec,
      policy.process_deadline_ms, { setting = "process_deadline_ms" })
    if not result then return stop { state = "not-run", reason = why } end
    local st, key, problem = result.status, nil, nil
    if st == "exited" and result.code == 0 then key, problem = key_of(sig, tuple, result.stdout or "") end
    runs[#runs + 1] = { invocation = runner.invocations, status = st, code = result.code or json.null,
                        key = key or json.null }
    if st == "pin-mismatch" or st == "launch-failed" then
      runner:problem("infrastructure_failure", st, result.message or st)
      return stop { state = "failed", reason = st }
    end
    if st == "cancelled" then return stop { state = "not-run", reason = "cancelled" } end
    if st == "timeout" then return stop { state = "timeout" } end
    if problem or (st == "exited" and (result.code == 3 or result.code == 5 or result.code == 6)) then
      runner:problem("infrastructure_failure", "protocol", ("the %s driver for input %s: %s"):format(name, text,
        problem or ("a protocol failure (exit %d)"):format(result.code)))
      return stop { state = "protocol-error" }
    end
  end
  local first, same, any = runs[1].key, true, false
  for _, run in ipairs(runs) do
    if run.key ~= first then same = false end
    if run.key ~= json.null then any = true end
  end
  if same and first ~= json.null then return stop(state_of(first)) end
  return stop { state = any and "unstable" or "failed" }
end

return M
