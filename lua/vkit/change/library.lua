--- The seed's library API for native methods (seed 001):
--
--   run_paired_execution(project, request, trusted_target, opts) -> report, bound
--   run_change_analysis(project, request, trusted_target, opts)  -> analysis, report, bound
--   run_exhaustive(project, request, trusted_target, opts)        -> result, bound
--
-- A request of the multi-parameter profile (issue 34) runs that profile's
-- sampled method (vkit.change.multi.paired) for the first two.
-- Each takes a request (JSON text or a decoded table) and a separately
-- supplied trusted target, runs its own preflight (captured Git objects
-- only; a refusal returns nil, message, code and runs nothing), and starts
-- its deadline after Git preflight.
--   opts = {dir (a fresh directory, required), deadline_ms (1..300000,
--           default 300000), cancelled (a function; true stops every
--           process tree), progress (a function of one line),
--           max_invocations (<= 128), run_id (exhaustive: seeds the order)}
-- A deadline or budget above the seed's is misuse and raises.  The
-- bound-level functions (vkit.change.paired.run and friends) are internal:
-- they accept only a BoundChangeRequest preflight returned, unchanged.
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local proc = require "vkit.proc"
local preflight = require("vkit.change.preflight").preflight
local limits = require("vkit.policy").limits.paired

local M = {}

local function never() return false end

local function check_options(opts)
  if type(opts) ~= "table" then error("vkit.change: opts must be a table with a fresh dir", 3) end
  if type(opts.dir) ~= "string" or opts.dir:sub(1, 1) ~= "/" then error("vkit.change: opts.dir must be an absolute path", 3) end
  if fs.lstat(opts.dir) then error("vkit.change: opts.dir must not exist yet: " .. opts.dir, 3) end
  local d = opts.deadline_ms
  if d ~= nil and (math.type(d) ~= "integer" or d < 1 or d > limits.deadline_ms) then
    error(("vkit.change: opts.deadline_ms must be an integer from 1 to %d"):format(limits.deadline_ms), 3)
  end
  local n = opts.max_invocations
  if n ~= nil and (math.type(n) ~= "integer" or n < 1 or n > limits.max_invocations) then
    error(("vkit.change: opts.max_invocations must be an integer from 1 to %d"):format(limits.max_invocations), 3)
  end
  for _, f in ipairs { "cancelled", "progress" } do
    if opts[f] ~= nil and type(opts[f]) ~= "function" then error(("vkit.change: opts.%s must be a function"):format(f), 3) end
  end
end

-- Preflight, then the method options with the deadline starting now.
local function bind(project, request, trusted_target, opts)
  local repo = project
  if type(project) == "string" then
    local message, code
    repo, message, code = require("vkit.git").open(project)
    if not repo then return nil, message, code end
  end
  local bound, message, code = preflight(repo, request, trusted_target)
  if not bound then return nil, message, code end
  local cancelled = opts.cancelled or never
  return bound, {
    repo = repo, dir = opts.dir, progress = opts.progress, run_id = opts.run_id, max_invocations = opts.max_invocations,
    ctx = { cancelled = cancelled, run_process = function(spec) return proc.run_cancellable(spec, cancelled) end },
    deadline_at = sys.monotonic_ms() + (opts.deadline_ms or limits.deadline_ms),
  }
end

function M.run_paired_execution(project, request, trusted_target, opts)
  check_options(opts)
  local bound, method_opts, code = bind(project, request, trusted_target, opts)
  if not bound then return nil, method_opts, code end
  -- the multi-parameter profile (issue 34): its sampled method's paired report
  if bound.intent.contract.profile == "multi" then
    return require("vkit.change.multi.paired").run(bound, method_opts).paired, bound
  end
  return require("vkit.change.paired").run(bound, method_opts), bound
end

function M.run_change_analysis(project, request, trusted_target, opts)
  check_options(opts)
  local bound, method_opts, code = bind(project, request, trusted_target, opts)
  if not bound then return nil, method_opts, code end
  if bound.intent.contract.profile == "multi" then
    local result = require("vkit.change.multi.paired").run(bound, method_opts)
    return result.analysis, result.paired, bound
  end
  local analysis, report = require("vkit.change.analysis").run(bound, method_opts)
  return analysis, report, bound
end

--- opts.sampled: a paired-execution report of the same request to
--  cross-check against (what certification passes from finite_paired).
function M.run_exhaustive(project, request, trusted_target, opts)
  check_options(opts)
  local bound, method_opts, code = bind(project, request, trusted_target, opts)
  if not bound then return nil, method_opts, code end
  method_opts.sampled = opts.sampled
  return require("vkit.change.exhaustive").run(bound, method_opts), bound
end

return M
