--- Protocol specs' projects: the example backend with a hostile producer
--  (fixtures/protocol/plant_producer.py) or checker (forge.py) in a named
--  mode, run through `vkit verify` or in process with the sandbox taken out
--  of every launch (as on a kernel without Landlock).
local vkit = require "vkit"
local json = vkit.json
local fs = vkit.fs
local t = require "tests.support.run"
local project = dofile(vkit.root .. "/examples/external/project.lua")
local protocol_run = require "vkit.protocol.run"
local store_mod = require "vkit.store"

local M = { project = project }

local FORGE = assert(fs.read(vkit.root .. "/fixtures/protocol/forge.py", 1 << 20))
local PLANT = assert(fs.read(vkit.root .. "/fixtures/protocol/plant_producer.py", 1 << 20))
local BACKEND = vkit.root .. "/examples/external/verification/backend/"

local function backend_dep(name)
  return { path = "verification/backend/" .. name, sha256 = assert(vkit.hash.file(BACKEND .. name)) }
end

--- A project in dir whose producer is plant_producer.py in opts.producer_mode
--  and whose checker is forge.py in opts.checker_mode (default: the honest
--  ones); opts.arg is their last argument, opts.checker_tools extra trusted
--  tool pins of the checker.
function M.build(dir, opts)
  local files = { ["verification/backend/plant.py"] = PLANT, ["verification/backend/forge.py"] = FORGE }
  local inputs = { "verification/backend/plant.py", "verification/backend/forge.py" }
  local overrides = { files = files, inputs = inputs }
  if opts.producer_mode then
    overrides.producer = {
      argv = { "{{python}}", "-I", "-B", "{{snapshot}}/verification/backend/plant.py", "{{request}}", opts.producer_mode,
               opts.arg or "" },
      dependencies = { { path = "verification/backend/plant.py", sha256 = vkit.hash.sha256(PLANT) },
                       backend_dep "produce.py", backend_dep "smtlib.py" },
    }
  end
  if opts.checker_mode then
    overrides.checker = {
      argv = { "{{python}}", "-I", "-B", "{{snapshot}}/verification/backend/forge.py", "{{request}}", opts.checker_mode,
               opts.arg or "" },
      dependencies = { { path = "verification/backend/forge.py", sha256 = vkit.hash.sha256(FORGE) },
                       backend_dep "check.py", backend_dep "smtlib.py" },
    }
    if opts.checker_tools then
      local tools = project.solver_pins "cvc5"
      for _, pin in ipairs(opts.checker_tools) do tools[#tools + 1] = pin end
      overrides.checker.trusted_tool_dependencies = tools
    end
  end
  return project.build(dir, overrides)
end

--- Through the CLI and the job store, as a user runs it: the run summary,
--  its last attempt's directory and the exit code.
function M.verify(p)
  local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--wait", "60", "--json" }
  local out = json.decode(r.stdout)
  assert(type(out) == "table", r.stderr .. r.stdout)
  local run = out.runs[1]
  local state = store_mod.open(p.path):get(run.run_id)
  return run, ("%s/attempts/%d"):format(state.dir, state.state.attempts), r.code
end

--- In process, with the sandbox taken out of every launch: the result and
--  the attempt directory (dir/attempt).  opts.job_key replaces the job key.
function M.unsandboxed(dir, p, opts)
  opts = opts or {}
  local repo = assert(vkit.git.open(p.path))
  local resolved = assert(protocol_run.resolve(repo, p.head, project.COMPONENT, project.CHECK))
  local attempt = dir .. "/attempt"
  assert(fs.mkdirs(attempt))
  local ctx = {
    attempt_dir = attempt,
    run_process = function(spec)
      spec.sandbox = nil
      return vkit.proc.run(spec)
    end,
  }
  local result = protocol_run.run_check({ project = p.path, component = project.COMPONENT, check_id = project.CHECK,
                                          commit = p.head, job_key = opts.job_key or protocol_run.job_key(resolved) },
    ctx, "r-test/1")
  return result, attempt
end

return M
