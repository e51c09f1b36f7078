--- Benchmark helpers: wall-clock timing of Lua calls and of commands.
-- Benchmarks may use the shell to run their baselines; vkit itself never does.
local vkit = require "vkit"

local M = {}

--- Best-of-n wall time in seconds of fn().
function M.best(n, fn)
  local best = math.huge
  for _ = 1, n do
    local t0 = vkit.sys.monotonic_ms()
    fn()
    best = math.min(best, (vkit.sys.monotonic_ms() - t0) / 1000)
  end
  return best
end

--- Runs a shell command, raising if it fails.
function M.sh(cmd)
  local ok, _, code = os.execute(cmd)
  if not ok then error(("command failed (%s): %s"):format(tostring(code), cmd)) end
end

function M.quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

function M.have(program)
  return os.execute("command -v " .. program .. " >/dev/null 2>&1") == true
end

--- Builds bench/spawn_time.c, the timer of bench/vac.lua, into dir and
-- returns its path (a child's peak memory counts the timer's own address
-- space before exec: a floor of about 1.2 MiB, nothing beside the
-- reference's hundreds).
function M.spawn_timer(dir)
  local exe = dir .. "/spawn_time"
  M.sh(("gcc -O2 -o %s %s/bench/spawn_time.c"):format(M.quote(exe), M.quote(vkit.root)))
  return exe
end

--- Issue 29's costs.  Admission: best-of-n seconds of the separate
--  admission process on one source of a language.
function M.admission_seconds(language, source, fn, n)
  local process = require "vkit.admission.process"
  local reasons = require("vkit.admission." .. language).reasons
  return M.best(n or 5, function()
    assert(process.run(source, { "--language", language, "--function", fn }, reasons))
  end)
end

--- The sandbox: best-of-n seconds of one launch of exe argv (a runtime
--  doing nothing) with the run role's sandbox of a side and without it;
--  returns with, without.  side = {capture_dir, driver_dir, out_dir,
--  work_dir}; inside_exe: the executable's path in the sandbox's root.
function M.sandbox_seconds(exe, argv, env, side, chain, inside_exe, n)
  local proc = require "vkit.proc"
  local sandbox = require "vkit.change.sandbox"
  local fields = sandbox.spec_fields({ isolated = true }, "run", side, chain)
  fields.isolate.exe = inside_exe or exe
  local function launch(isolated)
    local spec = { exe = exe, argv = argv, env = env, cwd = "/tmp" }
    if isolated then spec.isolate, spec.sandbox = fields.isolate, fields.sandbox end
    local r = proc.run(spec)
    assert(r.status == "exited", r.status .. " " .. tostring(r.message))
  end
  return M.best(n or 15, function() launch(true) end), M.best(n or 15, function() launch(false) end)
end

return M
