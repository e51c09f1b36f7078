-- A candidate that attacks the run directory it runs below (issue 14 item
-- 6): candidate code runs with the caller's permissions in the method's
-- work directory, so it can put a link where vkit is about to retain its
-- output.  vkit writes every retained file beneath a directory handle,
-- never through such a link: nothing lands outside the run, the link is
-- kept aside, and the method cannot report conformance.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"

describe("a candidate that tampers with its run directory", function()
  local p, outside
  before_each(function() outside = assert(vkit.fs.mkdtemp "/tmp/vkit-outside-") end)
  after_each(function()
    intents.finish(p)
    p = nil
    vkit.fs.remove_tree(outside)
  end)

  it("cannot redirect vkit's retained output through a link: never conformance, the paired report run-dir-tampered",
    function()
      p = intents.language_project("python", { max_inputs = 4 })
      -- At its first call the candidate swaps the method's invocations/
      -- directory for a link to a directory outside the run.
      local source = ([[
import os
OUT = %q
def score(x):
    method_dir = os.path.abspath(os.path.join(os.getcwd(), "..", ".."))
    invocations = os.path.join(method_dir, "invocations")
    if os.path.isdir(invocations) and not os.path.islink(invocations):
        os.rename(invocations, invocations + ".moved")
        os.symlink(OUT, invocations)
    return min(x + x, 100)
]]):format(outside)
      local out = intents.certify(p, p.commit({ [intents.SOURCES.python.path] = source }, p.target),
        { "--method", "finite_paired" })
      assert.same({}, vkit.fs.list(outside), "nothing was written outside the run")
      -- the analysis of a paired report that failed its retained checks is unknown
      assert.equal("unknown", out.outcome)
      assert.equal("unknown", out.methods[1].result)
      local run = assert(require("vkit.store").open(p.dir .. "/project"):get(out.run_id))
      local report = json.decode(assert(vkit.fs.read(("%s/attempts/1/finite_paired/paired-execution-report.v1.json")
        :format(run.dir), 1 << 24)))
      assert.equal("infrastructure_failure", report.status)
      local reasons = {}
      for _, problem in ipairs(report.problems) do reasons[problem.reason] = true end
      assert.is_true(reasons["run-dir-tampered"], json.encode(report.problems))
      local kept = vkit.fs.list(("%s/attempts/1/finite_paired/tampered"):format(run.dir))
      assert.is_truthy(kept and #kept >= 1, "the planted link is kept in tampered/")
    end)
end)
