-- The one combiner (method results -> the run's outcome), the exit status
-- each outcome gets, and the coverage sentences every surface shows.
local vkit = require "vkit"
local combine = require("vkit.change.combine").combine
local coverage = require "vkit.change.coverage"
local exit = require "vkit.cli.exit"
local outcomes = vkit.policies.change.outcomes

local function r(method, status, checked, accepted, admitted)
  local scope = ({ finite_paired = "sampled", rust_kani = "model" })[method] or "all_inputs"
  return { method = method, status = status, coverage = coverage.record(method, checked or 0, accepted or 2048, scope),
           admitted = admitted ~= false }
end

local function exit_of(outcome)
  return exit.change_exit { state = { status = "done", outcome = outcome } }
end

describe("the combiner", function()
  it("reports conformance on every accepted input only when the exhaustive method checked every one", function()
    local c = combine { r("finite_paired", "observed_conformance", 12), r("exhaustive", "all_inputs_conform", 2048) }
    assert.equal("all_inputs_conform", c.outcome)
    assert.equal("checked 2048 of 2048 accepted inputs (exhaustive)", c.coverage.statement)
    assert.equal(0, exit_of(c.outcome))
  end)

  it("gives a candidate outside the pure profile its own outcome and exit status, unless the host trusts it", function()
    local results = { r("finite_paired", "observed_conformance", 12, 2048, false),
                      r("exhaustive", "all_inputs_conform", 2048, 2048, false) }
    local c = combine(results)
    assert.equal("unadmitted_conform", c.outcome)
    assert.equal(8, exit_of(c.outcome))
    assert.equal("checked 2048 of 2048 accepted inputs (exhaustive)", c.coverage.statement)
    assert.equal("unadmitted_conform", combine(results, { trust_candidate_code = false }).outcome)
    local trusted = combine(results, { trust_candidate_code = true })
    assert.equal("all_inputs_conform_trusted", trusted.outcome)
    assert.equal(0, exit_of(trusted.outcome))
    -- admission decides only conformance: a violation stays a violation, unknown stays unknown
    assert.equal("observed_violation", combine { r("exhaustive", "observed_violation", 2048, 2048, false) }.outcome)
    assert.equal("unknown", combine { r("exhaustive", "unknown", 40, 2048, false) }.outcome)
    assert.equal("samples_conform", combine { r("finite_paired", "observed_conformance", 12, 2048, false) }.outcome)
    -- the relational methods admit their candidate themselves
    local native = { method = "rust_exhaustive", status = "all_inputs_conform",
                     coverage = coverage.record("rust_exhaustive", 2048, 2048, "all_inputs") }
    assert.equal("all_inputs_conform", combine({ native }).outcome)
  end)

  it("never gives a sampled-only conformance the all-input outcome word or exit status", function()
    local c = combine { r("finite_paired", "observed_conformance", 12) }
    assert.equal("samples_conform", c.outcome)
    assert.equal("checked 12 of 2048 accepted inputs (finite_paired)", c.coverage.statement)
    assert.are_not.equal(exit_of "all_inputs_conform", exit_of(c.outcome))
    assert.equal(5, exit_of(c.outcome))
  end)

  it("lets any observed violation win, whatever else the methods said", function()
    local c = combine { r("finite_paired", "observed_conformance", 12), r("exhaustive", "observed_violation", 2048) }
    assert.equal("observed_violation", c.outcome)
    assert.equal("exhaustive", c.coverage.method)
    assert.equal("observed_violation",
      combine({ r("finite_paired", "observed_violation", 12), r("exhaustive", "unknown", 40) }).outcome)
    assert.equal("observed_violation",
      combine({ r("finite_paired", "observed_violation", 12), r("exhaustive", "all_inputs_conform", 2048) }).outcome)
    assert.equal(1, exit_of "observed_violation")
  end)

  it("is unknown, never conformance, when the exhaustive method could not check every input", function()
    local c = combine { r("finite_paired", "observed_conformance", 12), r("exhaustive", "unknown", 1000) }
    assert.equal("unknown", c.outcome)
    assert.equal("checked 1000 of 2048 accepted inputs (exhaustive)", c.coverage.statement)
    assert.equal("infrastructure_failure",
      combine({ r("finite_paired", "observed_conformance", 12), r("exhaustive", "infrastructure_failure") }).outcome)
    assert.equal(1, exit_of "unknown")
    assert.equal(3, exit_of "infrastructure_failure")
  end)

  it("does not let an unsupported Kani run block an all-input conformance, and lets a Kani rejection win", function()
    local results = { r("finite_paired", "observed_conformance", 12), r("exhaustive", "all_inputs_conform", 2048),
                      r("rust_kani", "unknown") }
    assert.equal("all_inputs_conform", combine(results).outcome)
    results[3] = r("rust_kani", "proof_rejected")
    assert.equal("proof_rejected", combine(results).outcome)
    assert.equal(1, exit_of "proof_rejected")
  end)

  it("reads rust_kani and rust_exhaustive alone in their own terms", function()
    assert.equal("verified", combine({ r("rust_kani", "verified", 2048) }).outcome)
    assert.equal("unknown", combine({ r("rust_kani", "unknown") }).outcome)
    assert.equal("all_inputs_conform", combine({ r("rust_exhaustive", "all_inputs_conform", 2048) }).outcome)
    assert.equal("observed_violation", combine({ r("rust_exhaustive", "observed_violation", 78) }).outcome)
  end)

  it("gives every outcome an exit status and a meaning, and 0 to nothing that checked less than every input", function()
    for word, o in pairs(outcomes) do
      assert.is_string(o.meaning, word)
      assert.equal(o.exit, exit_of(word), word)
      if o.exit == 0 then assert.matches("every accepted input", o.meaning, word) end
    end
    assert.equal(1, exit_of "a word nobody defined")
    assert.equal(4, exit.change_exit { state = { status = "running" } })
    assert.equal(3, exit.change_exit { state = { status = "failed" } })
  end)
end)

describe("coverage sentences", function()
  it("say how many accepted inputs each method checked, and which settings a limit cut", function()
    assert.equal("checked 12 of 2048 accepted inputs (finite_paired)",
      coverage.record("finite_paired", 12, 2048, "sampled").statement)
    assert.equal("max_inputs 301 cut to 56 by the 128-invocation budget", coverage.cut_sentence {
      setting = "max_inputs", requested = 301, applied = 56, limit = "max_invocations", limit_value = 128 })
    assert.equal("process_deadline_ms 10000 cut to 2500 by the 300-second deadline", coverage.cut_sentence {
      setting = "process_deadline_ms", requested = 10000, applied = 2500, limit = "deadline_ms", limit_value = 300000 })
    local lines = coverage.lines { methods = {
      { method = "finite_paired", result = "observed_conformance", coverage = coverage.record("finite_paired", 12, 2048),
        cuts = { { setting = "max_inputs", requested = 301, applied = 56, limit = "max_invocations", limit_value = 128 } } },
      { method = "exhaustive", result = "all_inputs_conform", coverage = coverage.record("exhaustive", 2048, 2048) },
    } }
    assert.same({ "finite_paired observed_conformance: checked 12 of 2048 accepted inputs (finite_paired)",
                  "  max_inputs 301 cut to 56 by the 128-invocation budget",
                  "exhaustive all_inputs_conform: checked 2048 of 2048 accepted inputs (exhaustive)" }, lines)
    assert.same({}, coverage.lines(nil))
  end)
end)
