--- The one combiner: turns the results of the methods that ran into the
-- run's outcome (policies/change.lua `outcomes`).  Pure.
--
-- results = {{method, status, coverage = coverage record, admitted}, ...},
-- in the order the methods ran; admitted: whether the method's candidate
-- source is inside the pure-function profile (rust_exhaustive and
-- rust_kani run only admitted Rust).  opts.trust_candidate_code: the
-- host's --trust-candidate-code.  The rules, first match wins:
--   1. any native method observed a violation     -> observed_violation
--   2. Kani rejected the relational proof         -> proof_rejected
--   3. an all-input native method ran (exhaustive, rust_exhaustive):
--      every such method all_inputs_conform, and
--        the candidate admitted by each           -> all_inputs_conform
--        not admitted, the host trusts it         -> all_inputs_conform_trusted
--        not admitted                             -> unadmitted_conform
--      otherwise                                  -> infrastructure_failure
--                                                    if one failed so, else unknown
--   4. rust_kani verified                         -> verified
--   5. finite_paired observed_conformance         -> samples_conform
--   6. otherwise                                  -> infrastructure_failure
--                                                    if a method failed so, else unknown
-- So conformance on every accepted input needs an all-input method that
-- checked every accepted input, a sampled conformance is never reported
-- with the same word (or exit status) as all-input conformance, and
-- neither is the conformance of a candidate whose observations cannot
-- exclude state, observer tampering or environment detection.
-- The run's coverage is the deciding method's.
local outcomes = require("vkit.policy").change.outcomes

local M = {}

--- {exit, meaning} of an outcome word (policies/change.lua), or nil.
function M.outcome(word)
  for name, info in pairs(outcomes) do
    if name == word then return info end
  end
  return nil
end

local ALL_INPUTS = { exhaustive = true, rust_exhaustive = true }
-- Methods that admit the candidate themselves (the relational profile).
local SELF_ADMITTING = { rust_exhaustive = true, rust_kani = true }

--- Whether a method's candidate was admitted to the pure profile.
function M.admitted(r)
  return SELF_ADMITTING[r.method] == true or r.admitted == true
end

local function most_checked(list)
  local best
  for _, r in ipairs(list) do
    if r.coverage and (not best or r.coverage.checked > best.coverage.checked) then best = r end
  end
  return best and best.coverage or nil
end

local function where(results, pred)
  local out = {}
  for _, r in ipairs(results) do if pred(r) then out[#out + 1] = r end end
  return out
end

local function failed_or_unknown(list)
  for _, r in ipairs(list) do
    if r.status == "infrastructure_failure" then return "infrastructure_failure" end
  end
  return "unknown"
end

--- Returns {outcome, coverage (the deciding method's record, or nil)}.
function M.combine(results, opts)
  local violated = where(results, function(r) return r.status == "observed_violation" end)
  if #violated > 0 then return { outcome = "observed_violation", coverage = most_checked(violated) } end
  local rejected = where(results, function(r) return r.status == "proof_rejected" end)
  if #rejected > 0 then return { outcome = "proof_rejected", coverage = most_checked(rejected) } end
  local all_input = where(results, function(r) return ALL_INPUTS[r.method] end)
  if #all_input > 0 then
    local conform = where(all_input, function(r) return r.status == "all_inputs_conform" end)
    if #conform == #all_input then
      local unadmitted = where(conform, function(r) return not M.admitted(r) end)
      local outcome = #unadmitted == 0 and "all_inputs_conform"
        or (opts and opts.trust_candidate_code) and "all_inputs_conform_trusted" or "unadmitted_conform"
      return { outcome = outcome, coverage = most_checked(conform) }
    end
    return { outcome = failed_or_unknown(all_input), coverage = most_checked(all_input) }
  end
  local verified = where(results, function(r) return r.method == "rust_kani" and r.status == "verified" end)
  if #verified > 0 then return { outcome = "verified", coverage = most_checked(verified) } end
  local sampled = where(results, function(r) return r.method == "finite_paired" and r.status == "observed_conformance" end)
  if #sampled > 0 then return { outcome = "samples_conform", coverage = most_checked(sampled) } end
  return { outcome = failed_or_unknown(results), coverage = most_checked(results) }
end

return M
