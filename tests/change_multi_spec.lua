-- The multi-parameter profile end to end (issue 34): real Git repositories,
-- real rustc / python3.11 / node, `vkit change certify` with auto (which
-- runs finite_paired, then exhaustive, whose result decides) and the reports.
-- clamp(x: i32 in -50..50, lo: i32 in -10..10, hi: i32 in -10..10) is
-- 101 x 21 x 21 = 44,541 inputs.  Sources are admitted by their language's
-- pure profile with the signature option: a conforming candidate inside it
-- is all_inputs_conform (exit 0); one outside it unadmitted_conform (exit
-- 8), or all_inputs_conform_trusted (exit 0) with --trust-candidate-code.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local multi = require "tests.support.multi"

local CLAMP = multi.signature({ { "x", "i32" }, { "lo", "i32" }, { "hi", "i32" } }, "i32")
local INPUTS = { x = "-50..50", lo = "-10..10", hi = "-10..10" }
local COVERAGE = "checked 44541 of 44541 accepted inputs (exhaustive: x in -50..50, lo in -10..10, hi in -10..10)"

-- clamp in each language: base, good, one, range (tests/support/multi.lua).
local SOURCES = multi.CLAMP_SOURCES

local function clamp_project(language)
  return multi.project { language = language, fn = "clamp", signature = CLAMP, inputs = INPUTS,
                         observations = { "-50..50" }, source = SOURCES[language].base }
end

for _, language in ipairs { "python", "typescript", "rust" } do
  describe("clamp in " .. language, function()
    local p
    setup(function() p = clamp_project(language) end)
    teardown(function() intents.finish(p) end)

    it("names the one input where the candidate differs, every parameter and both sides (exit 1)", function()
      local summary, r = p.certify(SOURCES[language].one)
      assert.equal(1, r.code)
      assert.equal("observed_violation", summary.outcome)
      local m = multi.method(summary, "exhaustive")
      assert.same({ "exhaustive", "observed_violation", "unapproved-difference" }, { m.method, m.result, m.reason })
      assert.equal(COVERAGE, summary.coverage.statement)
      assert.matches("^1 violating input; the first: clamp%(x=7, lo=3, hi=%-2%): base 3, candidate %-2", m.message)
      local report = multi.report(p, summary)
      assert.equal(1, report.violations.total)
      assert.same({ call = "clamp(x=7, lo=3, hi=-2)", count = 1, rule = "unapproved-difference",
                    example = "clamp(x=7, lo=3, hi=-2): base 3, candidate -2, and no guard approves the difference" },
        report.violations.boxes.items[1])
      assert.equal(44541, report.inputs_checked)
      assert.equal(2, report.passes.count)
      assert.equal(2 * 2, #report.batches.ran * 2 * 2)  -- one batch: two sides, two passes
    end)

    it("checks every input of an admitted conforming refactor: all_inputs_conform (exit 0)", function()
      local summary, r = p.certify(SOURCES[language].good)
      assert.equal(0, r.code)
      assert.equal("all_inputs_conform", summary.outcome)
      assert.equal(COVERAGE, summary.coverage.statement)
      assert.is_true(summary.candidate_admission.admitted)
      assert.equal("pure-" .. language .. "-signature", summary.candidate_admission.profile)
      local report = multi.report(p, summary)
      assert.equal("batch", report.semantics.candidate.mode)
      assert.equal(0, report.violations.total)
    end)

    if SOURCES[language].range then
      it("finds a value outside the declared type by name (range), never a pass", function()
        local summary, r = p.certify(SOURCES[language].range)
        assert.equal(1, r.code)
        assert.equal("observed_violation", summary.outcome)
        assert.equal("range", multi.method(summary, "exhaustive").reason)
        assert.matches("clamp%(x=0, lo=0, hi=0%): base 0, candidate !range", multi.method(summary, "exhaustive").message)
        -- the driver's text-first cause line reaches the summary's causes,
        -- the first input with its parameters named
        local found
        for _, c in ipairs(summary.causes) do
          if c.method == "exhaustive" and c.side == "candidate" then found = c end
        end
        assert.is_table(found, json.encode(summary.causes))
        assert.same({ "x=0, lo=0, hi=0", 1, "inputs" }, { found.first, found.count, found.unit })
        assert.equal(language == "python" and "returned a bool, not an i32" or "returned -0, not an i32", found.text)
      end)
    end
  end)
end

describe("a candidate whose answers depend on the order of calls", function()
  -- its fifth call is off by one: a different input in each pass's order.
  -- Outside the pure profile it runs in fresh-module-per-input mode, which
  -- executes its module anew per input but does not reset state kept in
  -- another module (here sys): such state still moves answers between
  -- passes (batch_drivers.SEMANTICS names what is not reset)
  local ORDERED = "import sys\ndef clamp(x, lo, hi):\n    sys.seen = getattr(sys, 'seen', 0) + 1\n"
    .. "    return max(lo, min(x, hi)) + (1 if sys.seen == 5 else 0)\n"

  it("leaves those inputs unstable: unknown, never a pass, even trusted", function()
    local p = clamp_project("python")
    finally(function() intents.finish(p) end)
    local summary, r = p.certify(ORDERED, { "--trust-candidate-code" })
    assert.equal(1, r.code)
    assert.equal("unknown", summary.outcome)
    assert.equal("unstable", multi.method(summary, "exhaustive").reason)
    local report = multi.report(p, summary)
    assert.equal("fresh-module-per-input", report.semantics.candidate.mode)
    -- the ascending pass's fifth input, and the permuted pass's (the run id's order: almost surely another)
    local named = {}
    for _, u in ipairs(report.unstable.items) do named[u.input] = true end
    assert.is_true(named["clamp(x=-50, lo=-10, hi=-6)"])
    assert.is_true(report.unstable.total == 1 or report.unstable.total == 2)
    assert.equal(44541 - report.unstable.total, report.inputs_checked)
  end)
end)

describe("a conforming candidate outside the pure profile", function()
  -- a module global, state the profile excludes: every call after the
  -- first is off by one, so in batch mode every input but a batch's first
  -- would differ; in fresh mode (a fresh module per input) every input is
  -- a first call, as in real use, and conforms
  local STATEFUL = "calls = []\ndef clamp(x, lo, hi):\n    calls.append(x)\n"
    .. "    return max(lo, min(x, hi)) + (len(calls) - 1)\n"

  it("is observed in fresh mode: unadmitted_conform (exit 8), all_inputs_conform_trusted (exit 0) only with "
    .. "--trust-candidate-code", function()
    local p = clamp_project("python")
    finally(function() intents.finish(p) end)
    local summary, r = p.certify(STATEFUL)
    assert.equal(8, r.code)
    assert.equal("unadmitted_conform", summary.outcome)
    assert.equal(COVERAGE, summary.coverage.statement)
    assert.is_false(summary.candidate_admission.admitted)
    local said = table.concat(summary.not_established, "\n")
    assert.falsy(said:find("batch mode", 1, true))
    local report = multi.report(p, summary)
    local batch_drivers = require "vkit.change.batch_drivers"
    assert.same({ mode = "fresh-module-per-input", meaning = batch_drivers.SEMANTICS["fresh-module-per-input"] },
      report.semantics.candidate)
    assert.same({ mode = "batch", meaning = batch_drivers.SEMANTICS.batch }, report.semantics.base)
    assert.equal(44541, report.inputs_conforming)
    summary, r = p.certify(STATEFUL, { "--trust-candidate-code" })
    assert.equal(0, r.code)
    assert.equal("all_inputs_conform_trusted", summary.outcome)
    assert.matches("trust%-candidate%-code", table.concat(summary.not_established, "\n"))
  end)
end)

-- The same in Rust (a static counter, fork-per-input: one process per
-- input forked after the inputs are read) and TypeScript (a module-level
-- counter, fresh-context-per-input: the compiled module evaluated afresh
-- in a new V8 context per input), inside the sandbox.
for language, source in pairs {
  rust = "use std::sync::atomic::{AtomicI32, Ordering};\nstatic CALLS: AtomicI32 = AtomicI32::new(0);\n"
    .. "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    let n = CALLS.fetch_add(1, Ordering::SeqCst);\n"
    .. "    lo.max(x.min(hi)) + n\n}\n",
  typescript = "let calls = 0;\nexport function clamp(x: number, lo: number, hi: number): number {\n"
    .. "  calls++;\n  return Math.max(lo, Math.min(x, hi)) + calls - 1;\n}\n",
} do
  describe("a stateful conforming " .. language .. " candidate outside the pure profile", function()
    it("is observed in its fresh mode, every input a first call: unadmitted_conform (exit 8)", function()
      local p = clamp_project(language)
      finally(function() intents.finish(p) end)
      local summary, r = p.certify(source)
      assert.equal(8, r.code)
      assert.equal("unadmitted_conform", summary.outcome)
      assert.equal(COVERAGE, summary.coverage.statement)
      local report = multi.report(p, summary)
      local mode = require("vkit.change.batch_drivers").mode(language, false)
      assert.equal(mode, report.semantics.candidate.mode)
      assert.equal(44541, report.inputs_conforming)
    end)
  end)
end

-- Attack (issue 34 review): the drivers call by position with the
-- contract's values, whatever the source declares.  A candidate declaring
-- `x: bool` is called with ints and conforms, but its typed callers cannot
-- make those calls: it is not admitted (admission-signature-mismatch), so
-- never all_inputs_conform.
describe("a conforming candidate whose declared types exclude the contract's", function()
  it("is refused by admission (admission-signature-mismatch): unadmitted_conform (exit 8), never exit 0 untrusted", function()
    local p = clamp_project("python")
    finally(function() intents.finish(p) end)
    local summary, r = p.certify("def clamp(x: bool, lo: int, hi: int) -> int:\n    return max(lo, min(x, hi))\n")
    assert.equal(8, r.code)
    assert.equal("unadmitted_conform", summary.outcome)
    assert.is_false(summary.candidate_admission.admitted)
    assert.equal("admission-signature-mismatch", summary.candidate_admission.rule)
    assert.matches("parameter 1 of `clamp` (`x`) is declared `bool`, which excludes the contract's i32",
      summary.candidate_admission.message, 1, true)
  end)
end)

-- checked_div(a: u8, b: u8) -> (bool, u8): (false, 0) when b is 0, else
-- (true, a // b); a standing requirement over the box b=0.
local DIV = multi.signature({ { "a", "u8" }, { "b", "u8" } }, { "bool", "u8" })
local DIV_BASE = "def checked_div(a, b):\n    if b == 0:\n        return (False, 0)\n    return (True, a // b)\n"

local function div_project(guards)
  return multi.project { language = "python", fn = "checked_div", signature = DIV, inputs = { a = "*", b = "*" },
                         observations = { "*", "*" }, requirements = { { inputs = { b = "0" }, outputs = { "false", "0" } } },
                         guards = guards, source = DIV_BASE }
end

describe("a tuple-returning function", function()
  local p
  setup(function() p = div_project() end)
  teardown(function() intents.finish(p) end)

  it("judges a requirement over a box, groups violations into boxes, finds a wrong tuple length", function()
    local summary, r = p.certify("def checked_div(a, b):\n"
      .. "    if b == 0:\n        return (a == 5, 0)\n"                        -- (True, 0) at a=5: the requirement
      .. "    if b == 1 and 10 <= a <= 19:\n        return (True, 0)\n"        -- a box of unapproved differences
      .. "    if a == 1 and b == 2:\n        return (True, 0, 0)\n"            -- a 3-tuple: outside the type
      .. "    return (True, a // b)\n")
    assert.equal(1, r.code)
    assert.equal("observed_violation", summary.outcome)
    assert.equal("checked 65536 of 65536 accepted inputs (exhaustive: a in *, b in *)", summary.coverage.statement)
    local report = multi.report(p, summary)
    assert.equal(12, report.violations.total)
    local boxes = {}
    for _, b in ipairs(report.violations.boxes.items) do boxes[b.call] = b end
    assert.equal(3, report.violations.boxes.total)
    assert.equal("standing-requirement", boxes["checked_div(a=5, b=0)"].rule)
    assert.equal("checked_div(a=5, b=0): base (false, 0), candidate (true, 0), which the accepted intent does not allow "
      .. "(allowed: false; 0)", boxes["checked_div(a=5, b=0)"].example)
    assert.same({ "unapproved-difference", 10 }, { boxes["checked_div(a=10..19, b=1)"].rule,
      boxes["checked_div(a=10..19, b=1)"].count })
    assert.equal("checked_div(a=10, b=1): base (true, 10), candidate (true, 0), and no guard approves the difference",
      boxes["checked_div(a=10..19, b=1)"].example)
    assert.equal("range", boxes["checked_div(a=1, b=2)"].rule)

    -- every front shows the boxes with every parameter named
    local project = p.dir .. "/project"
    local show = t.vkit { "run", "show", "--run", summary.run_id, "--project", project }
    assert.matches("checked_div%(a=10%.%.19, b=1%) %(10 inputs%)", show.stdout)
    for _, format in ipairs { "text", "md", "html", "json", "sarif" } do
      local out = t.vkit { "run", "report", "--run", summary.run_id, "--project", project, "--format", format }
      assert.equal(0, out.code, format .. ": " .. out.stderr)
      local said = out.stdout:gsub("\\", "")  -- Markdown escapes _ and *
      assert.truthy(said:find("checked_div(a=10..19, b=1)", 1, true), format)
      assert.truthy(said:find("checked_div(a=5, b=0)", 1, true), format)
      assert.truthy(said:find("a in *, b in *", 1, true) or format == "sarif", format)
    end
  end)
end)

describe("a guard over a box in the difference policy", function()
  local p
  setup(function()
    p = div_project { { name = "G-1", inputs = { a = "0..100", b = "1" }, outputs = { "true", "0..100" } } }
  end)
  teardown(function() intents.finish(p) end)

  -- inside its box a guard's outputs bind even a candidate that preserves the
  -- base (the seed's rule): the box is a=0..100 where the base is in 0..100
  it("approves differences inside its box and outputs, and no others", function()
    local approved = "def checked_div(a, b):\n"
      .. "    if b == 1 and 10 <= a <= 19:\n        return (True, 0)\n"
      .. "    if b == 0:\n        return (False, 0)\n    return (True, a // b)\n"
    local summary, r = p.certify(approved)
    assert.equal(0, r.code)
    assert.equal("all_inputs_conform", summary.outcome)
    summary, r = p.certify((approved:gsub("    if b == 0", "    if b == 1 and a == 50:\n        return (True, 101)\n    if b == 0")))
    assert.equal(1, r.code)
    local report = multi.report(p, summary)
    assert.equal(1, report.violations.total)
    assert.equal("guard", report.violations.items[1].rule)
    assert.equal("checked_div(a=50, b=1): base (true, 50), candidate (true, 101), outside the outputs approved by guard G-1",
      report.violations.items[1].message)
  end)
end)

describe("the exhaustive cap", function()
  it("refuses a domain of 2^20 + 1 inputs by name; the run is never a pass", function()
    local p = multi.project { language = "python", fn = "f", signature = multi.signature({ { "x", "u32" } }, "u32"),
                              inputs = { x = "0..1048576" }, observations = { "*" },
                              source = "def f(x):\n    return x\n" }
    finally(function() intents.finish(p) end)
    local summary, r = p.certify("def f(x):\n    return x\n", { "--trust-candidate-code" })
    assert.are_not.equal(0, r.code)
    assert.equal("unknown", summary.outcome)
    assert.equal("exhaustive-cap", multi.method(summary, "exhaustive").reason)
    assert.matches("more than the exhaustive cap of 1048576", multi.method(summary, "exhaustive").message)
    assert.equal("checked 0 of 1048577 accepted inputs (exhaustive: x in 0..1048576)", summary.coverage.statement)
  end)

  it("blocks a contract whose codec describes another signature (codec-signature-mismatch)", function()
    local p = multi.project { language = "python", fn = "clamp", signature = CLAMP, inputs = INPUTS,
      observations = { "-50..50" }, source = SOURCES.python.base,
      codec_signature = multi.signature({ { "x", "i32" }, { "lo", "i32" }, { "hi", "i64" } }, "i32") }
    finally(function() intents.finish(p) end)
    local summary, r = p.certify(SOURCES.python.good)
    assert.are_not.equal(0, r.code)
    assert.equal("blocked", summary.outcome)
    assert.equal("codec-signature-mismatch", summary.blocked.reason)
  end)

  it("blocks the other methods for this profile by name", function()
    local p = clamp_project("python")
    finally(function() intents.finish(p) end)
    local summary = p.certify(SOURCES.python.good, { "--method", "rust_exhaustive" })
    assert.equal("blocked", summary.outcome)
    assert.equal("unsupported_profile", summary.blocked.reason)
  end)
end)

-- wrap(a: u64, b: i64) -> (bool, u64): 64-bit values travel as text, never
-- as JSON or float numbers; u64's largest value is named exactly.
local WRAP = multi.signature({ { "a", "u64" }, { "b", "i64" } }, { "bool", "u64" })
local WRAP_SOURCES = {
  rust = { base = "pub fn wrap(a: u64, b: i64) -> (bool, u64) {\n    let (v, o) = a.overflowing_add(b as u64);\n    (o, v)\n}\n",
           bad = "pub fn wrap(a: u64, b: i64) -> (bool, u64) {\n    if a == 18446744073709551615 && b == 3 {\n"
             .. "        return (true, 1);\n    }\n    let (v, o) = a.overflowing_add(b as u64);\n    (o, v)\n}\n" },
  typescript = {
    base = "export function wrap(a: bigint, b: bigint): [boolean, bigint] {\n  const s = a + BigInt.asUintN(64, b);\n"
      .. "  return [s > 18446744073709551615n, BigInt.asUintN(64, s)];\n}\n",
    bad = "export function wrap(a: bigint, b: bigint): [boolean, bigint] {\n"
      .. "  if (a === 18446744073709551615n && b === 3n) return [true, 1n];\n  const s = a + BigInt.asUintN(64, b);\n"
      .. "  return [s > 18446744073709551615n, BigInt.asUintN(64, s)];\n}\n" },
}

for _, language in ipairs { "typescript", "rust" } do
  describe("a 64-bit tuple function in " .. language, function()
    it("names the one differing input at u64's largest value", function()
      local p = multi.project { language = language, fn = "wrap", signature = WRAP,
        inputs = { a = "0..255|18446744073709551615", b = "-3..3" }, observations = { "*", "*" },
        source = WRAP_SOURCES[language].base }
      finally(function() intents.finish(p) end)
      local summary, r = p.certify(WRAP_SOURCES[language].bad)
      assert.equal(1, r.code)
      assert.equal("checked 1799 of 1799 accepted inputs (exhaustive: a in 0..255|18446744073709551615, b in -3..3)",
        summary.coverage.statement)
      assert.equal("1 violating input; the first: wrap(a=18446744073709551615, b=3): base (true, 2), candidate (true, 1), "
        .. "and no guard approves the difference", multi.method(summary, "exhaustive").message)
    end)
  end)
end

describe("the one command (vkit change certify --base --candidate)", function()
  it("finds the multi-parameter intent and names the differing input (exit 1)", function()
    local p = clamp_project("python")
    finally(function() intents.finish(p) end)
    local candidate = p.commit({ [p.path] = SOURCES.python.one }, p.target)
    local r = t.vkit { "change", "certify", "--project", p.dir .. "/project", "--base", p.target, "--candidate", candidate,
                       "--timeout", "5m" }
    assert.equal(1, r.code, r.stderr)
    assert.truthy(r.stdout:find("clamp(x=7, lo=3, hi=-2): base 3, candidate -2", 1, true))
    assert.truthy(r.stdout:find(COVERAGE, 1, true))
  end)
end)

describe("a candidate that writes to stdout", function()
  it("breaks the drivers' records: a named protocol failure, never an observation", function()
    local p = clamp_project("python")
    finally(function() intents.finish(p) end)
    local summary = p.certify("print('clamp 3')\n" .. SOURCES.python.base)
    assert.equal("infrastructure_failure", summary.outcome)
    local m  -- auto runs finite_paired first (its per-input runs fail alike), then exhaustive
    for _, each in ipairs(summary.methods) do
      assert.equal("protocol", each.reason, each.method)
      if each.method == "exhaustive" then m = each end
    end
    assert.same({ "exhaustive", "infrastructure_failure", "protocol" }, { m.method, m.result, m.reason })
    assert.matches("the candidate batch driver's output for batch 1 is not one record per input: %d+ bytes where "
      .. "44541 inputs need %d+", m.message)
  end)
end)
