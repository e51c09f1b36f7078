--- A real certification for the report specs: score(x) over inputs
--  0..4095 whose candidate is wrong at the 96 inputs 4000..4095 (it
--  returns 200 where the accepted intent allows 0..100), certified by
--  `vkit change certify` (auto: finite_paired, then exhaustive).
local vkit = require "vkit"
local t = require "tests.support.run"
local intents = require "tests.support.intents"

local M = {}

M.SOURCE = "src/score.py"
M.BASE = "import math\n\n\ndef score(x):\n    return min(x // 64, 100)\n"
M.CANDIDATE = "import math\n\n\ndef score(x):\n    if x >= 4000:\n        return 200\n    return min(x // 64, 100)\n"
M.CONTRACT = {
  inputs = { { from = 0, to = 4095 } },
  observations = { { from = 0, to = 1000 } },
  requirements = { { inputs = { { from = 0, to = 4095 } }, outputs = { { from = 0, to = 100 } } } },
}

--- {p (intents project), project (its path), run_id, report(format) -> stdout}
function M.violation_run()
  local p = intents.project { artifacts = intents.artifacts_for("python", M.SOURCE, { max_inputs = 6 }),
                              source_path = M.SOURCE, source = M.BASE, contract = M.CONTRACT }
  local ctx = { p = p, project = p.dir .. "/project" }
  ctx.candidate = p.commit({ [M.SOURCE] = M.CANDIDATE }, p.target)
  local summary = intents.certify(p, ctx.candidate)
  ctx.run_id, ctx.outcome = summary.run_id, summary.outcome
  function ctx.report(format, extra)
    local argv = { "run", "report", "--run", ctx.run_id, "--project", ctx.project, "--format", format }
    for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
    local r = t.vkit(argv)
    assert(r.code == 0, r.stderr)
    return r.stdout
  end
  function ctx.finish() intents.finish(p) end
  return ctx
end

return M
