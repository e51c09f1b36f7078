-- A candidate that attacks the run directory it runs below (issue 14 item
-- 6, then issue 29): candidate code once ran with the caller's permissions
-- in the method's work directory and could put a link where vkit was about
-- to retain its output.  Now every launch runs in its own root, where the
-- run directory does not exist: a candidate that looks for it by its host
-- path finds nothing, writes nothing outside its private /tmp, and the
-- method's retained files are intact.  (vkit still writes every retained
-- file beneath a directory handle, never through a link: the defence for a
-- machine that cannot isolate, tested for producers and checkers in
-- protocol_hostile_spec.)
local vkit = require "vkit"
local json = vkit.json
local intents = require "tests.support.intents"

describe("a candidate that tampers with its run directory", function()
  local p, outside
  before_each(function() outside = assert(vkit.fs.mkdtemp "/tmp/vkit-outside-") end)
  after_each(function()
    intents.finish(p)
    p = nil
    vkit.fs.remove_tree(outside)
  end)

  it("cannot reach it: the run directory and every host path outside the sandbox do not exist for it", function()
    p = intents.language_project("python", { max_inputs = 4 })
    local runs = p.dir .. "/project/.vkit/runs"
    -- At each call the candidate looks for the runs by their host path and
    -- for the directory outside, and would swap every invocations/ it
    -- finds for a link and write outside.  It records what it saw in its
    -- answer only by failing: it raises when it sees anything.
    local source = ([[
import os
RUNS = %q
OUT = %q
def score(x):
    seen = [p for p in (RUNS, OUT, "/root", "/work", os.path.dirname(RUNS)) if os.path.exists(p)]
    if seen:
        raise RuntimeError("saw " + ", ".join(seen))
    try:
        open(os.path.join(OUT, "escaped"), "w").write("x")
    except OSError:
        pass
    return min(x + x, 100)
]]):format(runs, outside)
    local out = intents.certify(p, p.commit({ [intents.SOURCES.python.path] = source }, p.target),
      { "--method", "finite_paired", "--trust-candidate-code" })
    assert.same({}, vkit.fs.list(outside), "nothing was written outside the run")
    assert.equal("samples_conform", out.outcome, json.encode(out))
    local run = assert(require("vkit.store").open(p.dir .. "/project"):get(out.run_id))
    local report = json.decode(assert(vkit.fs.read(("%s/attempts/1/finite_paired/paired-execution-report.v1.json")
      :format(run.dir), 1 << 24)))
    assert.equal("samples_within_contract", report.status)
    assert.is_true(report.os_sandbox)
    assert.same({}, report.problems)
    assert.is_nil(vkit.fs.lstat(("%s/attempts/1/finite_paired/tampered"):format(run.dir)))
  end)
end)
