--- run_kani_relational (seed 001): one Kani 0.68.0 run of a prepared
-- RustRelationalProgram with a host-selected toolchain pin, into a fresh
-- output directory, ending in a report (report.json) with one of the
-- outcomes verified, proof_rejected, unknown, infrastructure_failure.
--
-- Order of work, each step able to end the run:
--   1. the platform: native x86-64 Linux and a pin for the qualified Kani
--      version and target; otherwise (or with no toolchain) `unknown`,
--      reason `unsupported_platform`;
--   2. the pin's closed format, then a streaming scan of every pinned tree
--      and file (before the run);
--   3. the program: harness bytes and hash, module paths, admissions;
--   4. both captures materialised from their captured bytes, the complete
--      inventories and bytes checked, links and special files refused;
--   5. source admission re-run on both module files (separate process);
--   6. the engine: fixed argv, controlled environment, cwd in the output
--      directory, deadline <= 300 s, 1 MiB combined output cap (vkit.proc);
--   7. after a completed run: the toolchain scanned again, the captures and
--      harness re-checked, the export imported (<= 2 MiB) and decoded.
-- Capture, admission and the scans are outside the engine deadline.
-- Cancellation, timeout, capped output, changed artifacts and missing
-- exports never produce `verified`.  Every report records source_proof,
-- native_compiler_correspondence and approval_authority as false.
local vkit = require "vkit.core"
local toolchain = require "vkit.relational.toolchain"
local kani_result = require "vkit.relational.kani_result"
local harness_gen = require "vkit.relational.harness"
local admission = require "vkit.relational.admission"

local M = {}

M.schema = "vkit.kani-relational-report.v1"

M.reasons = {
  unsupported_platform = "the host or toolchain is not the qualified native x86-64 Linux Kani 0.68.0",
  outdir_not_fresh = "the output directory must not exist yet",
  invalid_pin = "the toolchain pin is malformed",
  toolchain_changed = "the pinned toolchain differs from its pin",
  invalid_program = "the prepared program is malformed",
  capture_mismatch = "a materialised capture differs from its captured inventory or bytes",
  admission_changed = "a captured module no longer passes source admission",
  admission_failed = "source admission could not be re-run",
  launcher_unavailable = "the process launcher (vkit.proc) is not available",
  engine_launch_failed = "the engine could not be started",
  engine_crashed = "the engine was killed by a signal",
  timeout = "the engine exceeded its deadline",
  cancelled = "the run was cancelled",
  output_capped = "the engine exceeded its output cap",
  artifacts_changed = "the materialised captures or harness changed during the run",
  export_too_large = "the export document exceeds the import limit",
}

local null = vkit.json.null

local function array(list)
  return setmetatable(list or {}, vkit.json.array_mt)
end

local function dirname(p)
  return p:match "^(.*)/[^/]*$" or "/"
end

-- A capture path: relative, plain components, no . or ..
local function safe_relative(p)
  if type(p) ~= "string" or p == "" or p:sub(1, 1) == "/" or p:find("\0", 1, true) then return false end
  for part in (p .. "/"):gmatch "([^/]*)/" do
    if part == "" or part == "." or part == ".." then return false end
  end
  return true
end

--- The module paths the harness must name for captures materialised by
-- this runner (base/<module>, candidate/<module>).
function M.module_paths(base_module, candidate_module)
  return { base = "base/" .. base_module, candidate = "candidate/" .. candidate_module }
end

--- The fixed command line and controlled environment for one run.
function M.invocation(pin, outdir, deadline_ms)
  local q = vkit.policies.relational.kani
  local limits = vkit.policies.limits.kani
  local argv = { pin.launcher, q.harness_file }
  for _, a in ipairs(q.fixed_args) do argv[#argv + 1] = a end
  argv[#argv + 1] = "--export-json"
  argv[#argv + 1] = outdir .. "/records/" .. q.export_file
  argv[#argv + 1] = "--target-dir"
  argv[#argv + 1] = outdir .. "/target"
  local env = {
    HOME = pin.home,
    PATH = table.concat({ pin.trees.cargo_bin.root, pin.trees.rust.root .. "/bin", "/usr/bin", "/bin" }, ":"),
    CARGO_HOME = dirname(pin.trees.cargo_bin.root),
    RUSTUP_HOME = pin.rustup.home,
    RUSTUP_TOOLCHAIN = pin.rust_toolchain,
    KANI_HOME = dirname(pin.trees.kani.root),
    TMPDIR = outdir .. "/tmp",
    LANG = "C.UTF-8",
    LC_ALL = "C.UTF-8",
    RUST_BACKTRACE = "0",
    NO_COLOR = "1",
  }
  return {
    exe = pin.launcher,
    argv = argv,
    env = env,
    cwd = outdir .. "/work",
    deadline_ms = deadline_ms,
    output_cap = limits.output_cap,
    max_result_bytes = limits.max_result_bytes,
  }
end

--- The deadline for a run: the caller's, never above the policy's 300 s.
function M.deadline(opts)
  local max = vkit.policies.limits.kani.max_deadline_ms
  local d = opts and opts.deadline_ms or max
  assert(math.type(d) == "integer" and d > 0, "deadline_ms must be a positive integer")
  return math.min(d, max)
end

--- Maps a vkit.proc result to nil (a completed run) or outcome, reason.
function M.process_outcome(result)
  local s = result.status
  if s == "exited" then return nil end
  if s == "timeout" then return "unknown", "timeout" end
  if s == "cancelled" then return "unknown", "cancelled" end
  if s == "output-capped" then return "unknown", "output_capped" end
  if s == "signaled" then return "infrastructure_failure", "engine_crashed" end
  return "infrastructure_failure", "engine_launch_failed"
end

--- Platform qualification: nil when qualified, else the detail.
function M.platform_problem(pin, uname)
  local q = vkit.policies.relational.kani
  uname = uname or vkit.sys.uname()
  if not uname or uname.sysname ~= q.host_sysname or uname.machine ~= q.host_machine then
    return ("host %s/%s"):format(uname and uname.sysname or "?", uname and uname.machine or "?")
  end
  if type(pin) ~= "table" then return "no Kani toolchain pin was supplied" end
  if pin.platform ~= q.qualified_target then return ("pin platform %s"):format(tostring(pin.platform)) end
  if pin.kani_version ~= q.qualified_version then return ("pin Kani version %s"):format(tostring(pin.kani_version)) end
  return nil
end

-- Checks the program's shape; returns nil or the problem.
function M.program_problem(program)
  if type(program) ~= "table" then return "the program must be a table" end
  local h = program.harness
  if type(h) ~= "table" or type(h.bytes) ~= "string" then return "no harness bytes" end
  if h.target ~= "kani" then return "the harness was not generated for Kani" end
  if vkit.hash.sha256(h.bytes) ~= h.sha256 then return "the harness bytes differ from their hash" end
  if #h.bytes > vkit.policies.limits.relational.max_harness_bytes then return "the harness exceeds its size limit" end
  if h.harness_function ~= harness_gen.harness_function or type(h.assertions) ~= "table" or #h.assertions ~= #harness_gen.assertions then
    return "the harness does not carry the generated assertion inventory"
  end
  if type(program.captures) ~= "table" or type(program.admissions) ~= "table" then return "no captures or admissions" end
  local modules = {}
  for _, side in ipairs { "base", "candidate" } do
    local c = program.captures[side]
    if type(c) ~= "table" or type(c.files) ~= "table" or #c.files == 0 then return side .. " capture has no files" end
    if not safe_relative(c.module) then return side .. " module path is not a safe relative path" end
    local seen, module_file = {}, nil
    for i, f in ipairs(c.files) do
      if type(f) ~= "table" or not safe_relative(f.path) or type(f.bytes) ~= "string" then
        return ("%s capture file %d is malformed"):format(side, i)
      end
      if seen[f.path] then return ("%s capture lists %s twice"):format(side, f.path) end
      seen[f.path] = true
      if vkit.hash.sha256(f.bytes) ~= f.sha256 then return ("%s capture %s differs from its hash"):format(side, f.path) end
      if f.path == c.module then module_file = f end
    end
    if not module_file then return side .. " module is not among the captured files" end
    local a = program.admissions[side]
    if type(a) ~= "table" or a.outcome ~= "admitted" or type(a.source) ~= "table" or a.source.sha256 ~= module_file.sha256 then
      return side .. " module was not admitted with these bytes"
    end
    modules[side] = c.module
  end
  local expected = M.module_paths(modules.base, modules.candidate)
  if type(h.modules) ~= "table" or type(h.modules.base) ~= "table" or type(h.modules.candidate) ~= "table"
    or h.modules.base.path ~= expected.base or h.modules.candidate.path ~= expected.candidate then
    return "the harness does not name the materialised module paths"
  end
  return nil
end

-- Writes one capture under dir and checks the complete inventory and bytes.
local function materialise(capture, dir)
  assert(vkit.fs.mkdirs(dir))
  for _, f in ipairs(capture.files) do
    local path = dir .. "/" .. f.path
    local ok, err = vkit.fs.mkdirs(dirname(path))
    if not ok then return err end
    ok, err = vkit.fs.write_atomic(path, f.bytes, 420)
    if not ok then return err end
  end
  return nil
end

--- Checks that dir holds exactly the capture's files with their captured
-- bytes: no extra or missing file, no link, no special file.  nil or why not.
function M.capture_problem(capture, dir)
  local expected = {}
  for _, f in ipairs(capture.files) do expected[f.path] = f end
  local walked, err = vkit.fs.walk(dir)
  if not walked then return err end
  local found = 0
  for _, e in ipairs(walked) do
    if e.kind == "link" then return ("%s is a link"):format(e.path) end
    if e.kind == "other" then return ("%s is a special file"):format(e.path) end
    if e.kind == "file" then
      local f = expected[e.path]
      if not f then return ("%s is not part of the capture"):format(e.path) end
      local sha = vkit.hash.file(dir .. "/" .. e.path)
      if sha ~= f.sha256 then return ("%s differs from its captured bytes"):format(e.path) end
      found = found + 1
    end
  end
  local total = 0
  for _ in pairs(expected) do total = total + 1 end
  if found ~= total then return ("%d of %d captured files are present"):format(found, total) end
  return nil
end

local function write_record(outdir, rel, value, artifacts, media_type)
  local bytes = type(value) == "string" and value or (vkit.json.encode(value, { indent = 2 }) .. "\n")
  assert(vkit.fs.write_atomic(outdir .. "/" .. rel, bytes, 420))
  artifacts[#artifacts + 1] = { path = rel, sha256 = vkit.hash.sha256(bytes), media_type = media_type or "application/json" }
end

local function retain_file(outdir, rel, artifacts, media_type)
  local sha = vkit.hash.file(outdir .. "/" .. rel)
  if sha then artifacts[#artifacts + 1] = { path = rel, sha256 = sha, media_type = media_type } end
end

--- Runs Kani on a prepared program.  opts: deadline_ms (<= 300 000),
-- cancel (a vkit.proc cancellation handle), run_process (a job's launcher,
-- which stops the engine's tree when the run is cancelled), uname (tests).
-- Returns the report (also written to OUTDIR/report.json when the output
-- directory could be created).
function M.run_kani_relational(program, pin, outdir, opts)
  opts = opts or {}
  local deadline = M.deadline(opts)
  local report = {
    schema = M.schema,
    method = "rust_kani",
    source_proof = false,
    native_compiler_correspondence = false,
    approval_authority = false,
    concrete_counterexample = false,
    engine = null, invocation = null, process = null, result = null,
    artifacts = array {},
  }
  local written = false
  local function finish(outcome, reason, detail, message)
    report.outcome, report.reason = outcome, reason
    report.message = message or ((M.reasons[reason] or kani_result.reasons[reason]) .. (detail and (": " .. detail) or ""))
    if written then
      table.sort(report.artifacts, function(a, b) return a.path < b.path end)
      assert(vkit.fs.write_atomic(outdir .. "/report.json", vkit.json.encode(report, { indent = 2 }) .. "\n", 420))
    end
    return report
  end

  local problem = M.platform_problem(pin, opts.uname)
  if problem then return finish("unknown", "unsupported_platform", problem) end
  local ok
  ok, problem = toolchain.check(pin)
  if not ok then return finish("infrastructure_failure", "invalid_pin", problem) end
  report.engine = {
    name = "kani", version = pin.kani_version, platform = pin.platform,
    rust_toolchain = pin.rust_toolchain, toolchain_digest = toolchain.digest(pin),
  }

  if type(outdir) ~= "string" or outdir:sub(1, 1) ~= "/" or vkit.fs.lstat(outdir) then
    return finish("infrastructure_failure", "outdir_not_fresh", tostring(outdir))
  end
  assert(vkit.fs.mkdirs(outdir))
  for _, d in ipairs { "work", "records", "tmp", "target" } do assert(vkit.fs.mkdirs(outdir .. "/" .. d)) end
  written = true
  write_record(outdir, "records/toolchain-pin.json", pin, report.artifacts)

  local pre = toolchain.validate(pin)
  write_record(outdir, "records/toolchain-before.json", pre, report.artifacts)
  if pre.missing then return finish("unknown", "unsupported_platform", "a pinned toolchain path is missing") end
  if not pre.ok then return finish("infrastructure_failure", "toolchain_changed", "before the run") end

  problem = M.program_problem(program)
  if problem then return finish("infrastructure_failure", "invalid_program", problem) end
  local h = program.harness
  report.harness = { sha256 = h.sha256, size = #h.bytes, ["function"] = h.harness_function, assertions = h.assertions,
    file = vkit.policies.relational.kani.harness_file }
  report.captures = {}
  for _, side in ipairs { "base", "candidate" } do
    local c = program.captures[side]
    local files = array {}
    for _, f in ipairs(c.files) do files[#files + 1] = { path = f.path, sha256 = f.sha256, mode = f.mode or null } end
    report.captures[side] = { commit = c.commit or null, module = c.module, files = files }
    problem = materialise(c, outdir .. "/work/" .. side) or M.capture_problem(c, outdir .. "/work/" .. side)
    if problem then return finish("infrastructure_failure", "capture_mismatch", side .. ": " .. problem) end
  end
  local q = vkit.policies.relational.kani
  write_record(outdir, "work/" .. q.harness_file, h.bytes, report.artifacts, "text/x-rust")

  for _, side in ipairs { "base", "candidate" } do
    local c = program.captures[side]
    local source = assert(vkit.fs.read(outdir .. "/work/" .. side .. "/" .. c.module, vkit.policies.limits.admission.max_source_bytes + 1, { nofollow = true }))
    local record = admission.admit(source, { expected_function = h.function_name })
    write_record(outdir, "records/admission-" .. side .. ".json", record, report.artifacts)
    if record.outcome == "failed" then
      return finish("infrastructure_failure", "admission_failed", side .. ": " .. record.failure.message)
    elseif record.outcome ~= "admitted" then
      return finish("infrastructure_failure", "admission_changed", side .. ": " .. record.rejection.message)
    end
  end

  local inv = M.invocation(pin, outdir, deadline)
  report.invocation = inv
  write_record(outdir, "records/invocation.json", inv, report.artifacts)
  local loaded, proc = pcall(require, "vkit.proc")
  if not loaded or type(proc) ~= "table" or type(proc.run) ~= "function" then
    return finish("infrastructure_failure", "launcher_unavailable")
  end
  -- A job's run_process stops the whole tree when the run is cancelled.
  local run = opts.run_process or proc.run
  local result = run {
    exe = inv.exe, argv = inv.argv, env = inv.env, cwd = inv.cwd,
    deadline_ms = inv.deadline_ms, output_cap = inv.output_cap, cancel = opts.cancel,
  }
  report.process = { status = result.status, code = result.code or null, signal = result.signal or null,
    wall_ms = result.wall_ms or null }
  write_record(outdir, "records/stdout.txt", result.stdout or "", report.artifacts, "text/plain")
  write_record(outdir, "records/stderr.txt", result.stderr or "", report.artifacts, "text/plain")
  local outcome, reason = M.process_outcome(result)
  if outcome then return finish(outcome, reason, result.message or result.error) end

  local post = toolchain.validate(pin)
  write_record(outdir, "records/toolchain-after.json", post, report.artifacts)
  if not post.ok then return finish("infrastructure_failure", "toolchain_changed", "after the run") end
  for _, side in ipairs { "base", "candidate" } do
    problem = M.capture_problem(program.captures[side], outdir .. "/work/" .. side)
    if problem then return finish("infrastructure_failure", "artifacts_changed", side .. ": " .. problem) end
  end
  if vkit.hash.file(outdir .. "/work/" .. q.harness_file) ~= h.sha256 then
    return finish("infrastructure_failure", "artifacts_changed", "the harness file")
  end

  local export_path = outdir .. "/records/" .. q.export_file
  local export, err, code = vkit.fs.read(export_path, inv.max_result_bytes, { nofollow = true })
  if export == nil and code == "too-large" then return finish("infrastructure_failure", "export_too_large", err) end
  if export ~= nil then retain_file(outdir, "records/" .. q.export_file, report.artifacts, "application/json") end
  local decoded = kani_result.decode {
    export = export,
    stdout = result.stdout or "",
    exit_code = result.code,
    harness = {
      file = q.harness_file, path = outdir .. "/work/" .. q.harness_file,
      ["function"] = h.harness_function, assertions = h.assertions,
    },
  }
  report.result = {
    assertions = decoded.assertions and array(decoded.assertions) or null,
    properties = decoded.properties or null,
    failed = decoded.failed and array(decoded.failed) or null,
  }
  return finish(decoded.outcome, decoded.reason, nil, decoded.message)
end

return M
