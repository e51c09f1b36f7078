--- Running paired execution and change analysis directly in a spec.
local vkit = require "vkit"
local proc = require "vkit.proc"
local analysis = require "vkit.change.analysis"
local preflight = require("vkit.change").preflight

local M = {}

function M.ctx()
  local never = function() return false end
  return { cancelled = never, run_process = function(spec) return proc.run_cancellable(spec, never) end }
end

--- Which side a launch of a native method is for, from the capture its
--  sandbox mounts ("base" or "candidate"; nil for a launch of neither).
function M.side_of(spec)
  for _, m in ipairs(spec.isolate and spec.isolate.mounts or {}) do
    local side = m.source and m.source:match "/captures/(%a+)/"
    if side then return side end
  end
end

--- Preflights `candidate` in project p and runs the analysis; returns
--  analysis, paired report, the run dir.
--  ctx: a method context of the spec's own (default M.ctx()).
function M.analyse(p, candidate, claim, ctx)
  local bound = assert(preflight(p.repo, p.request(candidate, claim), p.target))
  local dir = p.dir .. "/run-" .. candidate:sub(1, 8) .. "-" .. vkit.sys.random_hex(3)
  local result, report = analysis.run(bound, { repo = p.repo, dir = dir, ctx = ctx or M.ctx(),
                                               deadline_at = vkit.sys.monotonic_ms() + 300000 })
  return result, report, dir
end

return M
