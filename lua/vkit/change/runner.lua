--- A certification method's run bookkeeping (seed 001's runner limits):
-- the invocation budget, the deadline, the retained files and their
-- hashes, every launch's record, problems, and the observation-policy
-- settings a limit cut.
--
-- Each method (finite_paired, exhaustive) owns one runner, so each has its
-- own budget: at most policies/limits.lua paired.max_invocations process
-- invocations including builds, paired.output_cap bytes of combined output
-- per invocation, and a deadline (at most paired.deadline_ms after the
-- method starts, which is after Git preflight).  A caller may lower the
-- budget or the deadline, never raise them.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local sys = require "vkit.sys"
local run_dir_mod = require "vkit.run_dir"
local sandbox = require "vkit.change.sandbox"
local limits = require("vkit.policy").limits.paired

local M = {}

local Runner = {}
Runner.__index = Runner

--- opts = {dir, ctx = {run_process, cancelled}, deadline_at (monotonic ms),
--  progress, max_invocations (<= the policy's), output_cap (a profile's
--  own per-invocation cap from policies/, e.g. signatures.output_cap;
--  default the seed's paired.output_cap)}
function M.new(opts)
  assert(type(opts.deadline_at) == "number", "a runner needs a deadline (deadline_at)")
  local max = math.min(opts.max_invocations or limits.max_invocations, limits.max_invocations)
  return setmetatable({
    dir = opts.dir,
    ctx = opts.ctx,
    -- Never later than the policy's deadline from now.
    deadline_at = math.min(opts.deadline_at, sys.monotonic_ms() + limits.deadline_ms),
    progress = opts.progress or function() end,
    max_invocations = max,
    output_cap = opts.output_cap or limits.output_cap,
    invocations = 0,
    records = json.array(),
    retained = {},      -- relative path -> sha256
    problems = {},      -- {status, reason, message}
    sandboxes = {},     -- per launch: {role, record, full}
    cuts = json.array(),
    cut_settings = {},
  }, Runner)
end

--- The method directory's handle (vkit.run_dir): candidate code runs
--  beneath it and can plant links there, so vkit writes and re-reads every
--  retained file through the handle, never following one.
function Runner:handle()
  if not self.rd then
    assert(fs.mkdirs(self.dir))
    self.rd = assert(run_dir_mod.open(self.dir))
  end
  return self.rd
end

function Runner:retain(rel, bytes)
  assert(self:handle():write(rel, bytes))
  self.retained[rel] = hash.sha256(bytes)
  return self.dir .. "/" .. rel
end

function Runner:retain_existing(rel)
  self.retained[rel] = assert(self:handle():sha256(rel))
end

function Runner:problem(status, reason, message)
  self.problems[#self.problems + 1] = { status = status, reason = reason, message = message }
end

function Runner:remaining_ms()
  return self.deadline_at - sys.monotonic_ms()
end

--- Records, once per setting, that a limit cut an observation-policy
--  setting: {setting, requested, applied, limit, limit_value}.
function Runner:cut(setting, requested, applied, limit, limit_value)
  if self.cut_settings[setting] then return end
  self.cut_settings[setting] = true
  self.cuts[#self.cuts + 1] = { setting = setting, requested = requested, applied = applied, limit = limit,
                                limit_value = limit_value }
end

-- Text fit for JSON: valid UTF-8 up to 4 KiB is kept; anything else is
-- described by size and hash (the raw bytes are retained in a file).
local function text(s)
  if #s <= 4096 and utf8.len(s) then return s end
  return { bytes = #s, sha256 = hash.sha256(s) }
end

local function hex(s)
  return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
end

--- Launches one process within the budget and the deadline.  Returns the
--  vkit.proc result, or nil and "budget", "deadline" or "cancelled".
--  how = {setting = name of the observation-policy setting deadline_ms
--  comes from (a cut is recorded when the deadline shortens it),
--  stdin_file = true to retain stdin as a file instead of hex,
--  role = "build" | "run" (default), for the sandbox record}.
function Runner:launch(label, spec, deadline_ms, how)
  how = how or {}
  if self.invocations >= self.max_invocations then return nil, "budget" end
  local remaining = self:remaining_ms()
  if remaining <= 0 then return nil, "deadline" end
  if self.ctx.cancelled() then return nil, "cancelled" end
  if how.setting and deadline_ms > remaining then
    self:cut(how.setting, deadline_ms, remaining, "deadline_ms", limits.deadline_ms)
  end
  self.invocations = self.invocations + 1
  spec.deadline_ms = math.max(1, math.min(deadline_ms, remaining))
  spec.output_cap = self.output_cap
  local n = self.invocations
  local base = ("invocations/%03d"):format(n)
  local stdin = json.null
  if spec.stdin and how.stdin_file then
    self:retain(base .. ".stdin", spec.stdin)
    stdin = { path = base .. ".stdin", bytes = #spec.stdin, sha256 = self.retained[base .. ".stdin"] }
  end
  local result = self.ctx.run_process(spec)
  self:retain(base .. ".stdout", result.stdout or "")
  self:retain(base .. ".stderr", result.stderr or "")
  if result.status ~= "launch-failed" and result.status ~= "pin-mismatch" then
    local applied, full = sandbox.applied(result)
    self.sandboxes[#self.sandboxes + 1] = { role = how.role or "run", applied = applied, full = full }
  end
  local record = {
    n = n, label = label, argv = spec.argv, status = result.status, code = result.code or json.null,
    signal = result.signal or json.null, wall_ms = result.wall_ms or json.null,
    stdout = text(result.stdout or ""), stderr = text(result.stderr or ""),
    exe_sha256 = result.exe_sha256 or json.null, error = result.error or json.null,
    isolation = result.isolation or "none", landlock = result.sandbox or "none",
  }
  if how.stdin_file then record.stdin = stdin
  else record.stdin_hex = spec.stdin and hex(spec.stdin) or json.null end
  self.records[#self.records + 1] = record
  return result
end

--- Re-hashes every retained file through the handle; records a problem
--  for each change, and for anything planted in vkit's way or a method
--  directory moved behind its handle (run-dir-tampered).  Returns true
--  when nothing changed.
function Runner:check_retained()
  local ok = true
  local rd = self:handle()
  for rel, digest in pairs(self.retained) do
    if rd:sha256(rel) ~= digest then
      ok = false
      self:problem("infrastructure_failure", "retained-artifact-changed", rel .. " changed after it was retained")
    end
  end
  rd:audit "the method's processes had run"
  for _, t in ipairs(rd:tampering()) do
    ok = false
    self:problem("infrastructure_failure", "run-dir-tampered", ("%s in the method directory: %s (%s)"):format(t.path,
      t.kind, tostring(t.error or t.moved_to)))
  end
  return ok
end

--- True only if the full sandbox (namespaces, a private root, Landlock)
--  was really applied to every launch that ran.
function Runner:os_sandbox()
  if #self.sandboxes == 0 then return false end
  for _, sb in ipairs(self.sandboxes) do if not sb.full then return false end end
  return true
end

--- What the report says of the sandbox: the plan (why it is weaker, if it
--  is), and per role what was applied to its launches (the first launch's
--  record, and whether every launch of the role had the full sandbox).
function Runner:sandbox_record(plan)
  local roles = json.object()
  for _, sb in ipairs(self.sandboxes) do
    local r = roles[sb.role]
    if not r then
      r = { applied = sb.applied, launches = 0, full = true }
      roles[sb.role] = r
    end
    r.launches = r.launches + 1
    r.full = r.full and sb.full
  end
  return { isolated = plan and plan.isolated or false, reason = plan and plan.reason or json.null,
           layout = plan and plan.isolated and sandbox.layout() or json.null,
           roles = roles, os_sandbox = self:os_sandbox() }
end

--- The retained files as a sorted [{path, sha256}] list.
function Runner:retained_list()
  local names = {}
  for rel in pairs(self.retained) do names[#names + 1] = rel end
  table.sort(names)
  local out = json.array()
  for i, rel in ipairs(names) do out[i] = { path = rel, sha256 = self.retained[rel] } end
  return out
end

--- The limits as a report records them.
function Runner:limits()
  return { max_invocations = self.max_invocations, output_cap = self.output_cap, deadline_ms = limits.deadline_ms }
end

--- The fields every native method report starts with.
function Runner:report(bound)
  return {
    schema_version = 1,
    binding = { request_digest = bound.request.digest, intent_digest = bound.intent.digest, preflight_digest = bound.digest,
                target = bound.target, candidate = bound.candidate },
    limits = self:limits(),
    source_proof = false,
    dependency_closure_checked = false,
    os_sandbox = false,
  }
end

--- Completes a report with the run's bookkeeping and writes it to dir/name.
function Runner:write_report(report, name)
  report.invocations = self.invocations
  report.invocation_records = self.records
  report.problems = #self.problems > 0 and self.problems or json.array()
  report.cuts = self.cuts
  report.retained = self:retained_list()
  assert(self:handle():write_json(name, report))
  return report
end

return M
