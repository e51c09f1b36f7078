-- Rules of seeds 000 and 001 that were implemented but guarded by no spec
-- (issue 30 item 8), each with a spec that fails when its rule is removed:
--
--   seed 000  replay runs the checker, not the producer;
--   seed 001  no finite request can create a source-verification job or
--             receipt; preflight, the sampled report and witnesses carry no
--             approval field; relational preparation runs no verifier and
--             binds no toolchain; --wait defaults to zero; rust_kani on an
--             unsupported host is blocked without falling back to sampling.
--
-- Each runs what it is about: real Git projects, the real job store and
-- worker, real producers, checkers, interpreters and the admission process.
local vkit = require "vkit"
local json = vkit.json
local fs = vkit.fs
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local store_mod = require "vkit.store"

-- The attempt directory of a run's last attempt.
local function attempt_dir(project, run_id)
  local run = assert(store_mod.open(project):get(run_id))
  return ("%s/attempts/%d"):format(run.dir, run.state.attempts), run
end

-- Every path under dir (files, directories, links), sorted.
local function tree(dir)
  local out = {}
  for _, e in ipairs(assert(fs.walk(dir))) do out[#out + 1] = e.path end
  table.sort(out)
  return out
end

-- Every key anywhere in a decoded JSON value (or a Lua table), with its path.
local function keys(value, prefix, out)
  out = out or {}
  if type(value) == "table" then
    for k, v in pairs(value) do
      local path = (prefix and prefix .. "." or "") .. tostring(k)
      if type(k) == "string" then out[#out + 1] = path end
      keys(v, path, out)
    end
  end
  return out
end

-- The keys that would grant or report an approval, a gate or a verdict
-- (seed 001: preflight grants no approvals; the sampled report grants "no
-- approval or source-proof verdict"; a witness grants no "approval,
-- source-proof result or gate verdict").
local function approval_keys(value)
  local found = {}
  for _, path in ipairs(keys(value)) do
    local last = path:match "([^.]+)$":lower()
    if last:find "approv" or last:find "gate" or last:find "verdict" then found[#found + 1] = path end
  end
  table.sort(found)
  return found
end

-- `vkit run wait` until a run is over (a loaded machine may need longer
-- than one command's 60 s); returns its JSON summary.
local function settled(project, run)
  for _ = 1, 20 do
    if store_mod.TERMINAL[run.status] then return run end
    local r = t.vkit { "run", "wait", "--run", run.run_id, "--project", project, "--wait", "60", "--json" }
    run = assert(json.decode(r.stdout), r.stderr)
    run = run.runs and run.runs[1] or run
  end
  return run
end

describe("seed 000: replay", function()
  local project = dofile(vkit.root .. "/examples/external/project.lua")
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    t.kill_workers(dir .. "/project")
    cleanup()
  end)

  -- A producer that leaves a marker in its run's producer/ directory (the
  -- one place beside evidence/ it may write), then runs the example
  -- producer.  If it cannot leave the marker it fails, so a producer run
  -- where it has no producer/ directory shows too.
  local MARKED = [[
import json, os, runpy, sys
request = json.load(open(sys.argv[1]))
try:
    with open(os.path.join(request["paths"]["run_dir"], "producer", "PRODUCER-RAN"), "a") as f:
        f.write(request["run_id"] + "\n")
except OSError as e:
    print("no marker: %s" % e, file=sys.stderr)
    sys.exit(9)
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "produce.py"), run_name="__main__")
]]

  it("runs the currently pinned checker on the retained evidence, and never the producer", function()
    local p = project.build(dir, {
      files = { ["verification/backend/marked.py"] = MARKED }, inputs = { "verification/backend/marked.py" },
      producer = { argv = { "{{python}}", "-I", "-B", "{{snapshot}}/verification/backend/marked.py", "{{request}}" },
                   dependencies = { "verification/backend/marked.py", "verification/backend/produce.py",
                                    "verification/backend/smtlib.py" } },
    })
    local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--wait", "60", "--json" }
    local first = settled(p.path, assert(json.decode(r.stdout), r.stderr).runs[1])
    assert.equal("PASS", first.outcome, r.stdout)
    -- the marker works: the first run's producer left it, once
    local first_dir = attempt_dir(p.path, first.run_id)
    assert.equal(first.summary.run_id .. "\n", t.slurp(first_dir .. "/producer/PRODUCER-RAN"))

    r = t.vkit { "run", "replay", "--run", first.run_id, "--project", p.path, "--wait", "60", "--json" }
    local replay = settled(p.path, assert(json.decode(r.stdout), r.stderr).runs[1])
    local replay_dir = attempt_dir(p.path, replay.run_id)
    -- no producer ran: no marker, no producer request, log or directory ...
    assert.is_nil(fs.lstat(replay_dir .. "/producer/PRODUCER-RAN"), "the producer ran in the replay")
    for _, path in ipairs(tree(replay_dir)) do
      assert.is_nil(path:find("PRODUCER-RAN", 1, true), path)
      assert.is_nil(path:match "^producer", path)
      assert.is_nil(path:match "^logs/producer", path)
    end
    assert.equal(first.summary.run_id .. "\n", t.slurp(first_dir .. "/producer/PRODUCER-RAN"))
    -- ... the checker ran, on a copy of the retained evidence, and accepted it
    assert.equal("PASS", replay.outcome, r.stdout)
    assert.equal(first.run_id, replay.summary.replay_of)
    assert.equal("file", fs.lstat(replay_dir .. "/checker/receipt.json").kind)
    assert.equal(first.summary.evidence_digest, replay.summary.evidence_digest)
  end)
end)

describe("seed 001: no finite request", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  -- The store's runs, by kind.
  local function kinds(project)
    local out = {}
    local store = store_mod.open(project)
    for _, id in ipairs(store:list()) do out[#out + 1] = assert(store:get(id)).job.kind end
    table.sort(out)
    return out
  end

  it("can create a source-verification job or receipt", function()
    p = intents.language_project("python", { max_inputs = 2, shrink_limit = 0, repetitions = 1 })
    local project = p.dir .. "/project"
    local candidate = p.commit({ ["src/score.py"] = intents.SOURCES.python.good }, p.target)
    local request_text = p.request(candidate)
    local request_path = p.dir .. "/request.json"
    t.write(request_path, request_text)
    -- a verification manifest at HEAD whose component is the finite request itself
    local head = p.commit({ ["src/score.py"] = intents.SOURCES.python.good, ["verification/manifest.json"] =
      json.encode { schema_version = 2, components = { score = json.decode(request_text) } } }, candidate)
    assert(p.repo:set_ref("refs/heads/main", head))

    -- 1. `vkit verify` takes no request, and a request is no component claim
    local r = t.vkit { "verify", "score", "--project", project, "--request", request_path }
    assert.equal(2, r.code, r.stderr)
    assert.matches("unknown option %-%-request", r.stderr)
    r = t.vkit { "verify", "score", "--project", project, "--trusted-target", p.target }
    assert.equal(2, r.code, r.stderr)
    r = t.vkit { "verify", "score", "--project", project, "--json" }
    assert.equal(1, r.code, r.stdout .. r.stderr)
    assert.matches("components%.score%.claim_version: required field is missing", r.stdout .. r.stderr)
    r = t.vkit { "verify", request_path, "--project", project }
    assert.are_not.equal(0, r.code)
    assert.same({}, kinds(project), "no run was queued")

    -- 2. nor does the API's external-check submission, or the MCP verify tool
    local api = assert(vkit.store.open(project))
    assert.is_false((pcall(api.submit, api, "external-check",
      { request = json.decode(request_text), trusted_target = p.target })))
    assert.is_nil((api:submit("external-check", { component = "score" })))
    local mcp = require "tests.support.mcp"
    local s, sent = mcp.ready(project)
    s:receive(mcp.request(2, "tools/call", { name = "verify",
      arguments = { request = json.decode(request_text), trusted_target_oid = p.target } }))
    local reply = sent[#sent]
    assert.is_true(reply.error ~= nil or (reply.result and reply.result.isError == true), json.encode(reply))
    s:receive(mcp.request(3, "tools/call", { name = "verify", arguments = { component = "score" } }))
    reply = sent[#sent]
    assert.is_true(reply.error ~= nil or (reply.result and reply.result.isError == true), json.encode(reply))
    assert.same({}, kinds(project), "no run was queued")

    -- 3. what the request can create: a shadow certification, with no receipt
    local out, cr = intents.certify(p, candidate, { "--method", "finite_paired" })
    assert.is_table(out, cr.stderr)
    assert.equal(5, cr.code, cr.stdout)
    assert.is_false(out.source_proof)
    assert.is_false(out.approval_authority)
    assert.same({ "change-certify" }, kinds(project))
    local adir = attempt_dir(project, out.run_id)
    for _, path in ipairs(tree(adir)) do
      assert.is_nil(path:match "receipt", path)
      assert.is_nil(path:match "^checker", path)
    end

    -- 4. and that certification cannot be replayed into a checker run
    r = t.vkit { "run", "replay", "--run", out.run_id, "--project", project, "--json" }
    assert.equal(2, r.code, r.stdout .. r.stderr)
    assert.matches("only external%-check runs can be replayed", r.stderr .. r.stdout)
    local id, _, code = vkit.protocol.replay(api, out.run_id)
    assert.is_nil(id)
    assert.equal("not-replayable", code)
    assert.same({ "change-certify" }, kinds(project), "no replay was queued")
  end)
end)

describe("seed 001: no approval field", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  it("in preflight's projection, whether it is returned or retained", function()
    p = intents.project()
    local candidate = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x, 100)\n" }, p.target)
    local bound = assert(vkit.change.preflight(p.repo, p.request(candidate), p.target))
    local projection = require("vkit.change.bound").to_json(bound)
    assert.equal("request_preflight", projection.scope)
    assert.is_false(projection.candidate_behavior_checked)
    assert.same({}, approval_keys(projection))
    assert.same({}, approval_keys(bound))
    -- as the certification retains it (preflight.json)
    local out = intents.certify(p, candidate, { "--method", "finite_paired" })
    local adir = attempt_dir(p.dir .. "/project", out.run_id)
    local retained = json.decode(t.slurp(adir .. "/preflight.json"))
    assert.same(projection, retained)
    assert.same({}, approval_keys(retained))
  end)

  it("in the sampled report, returned and retained", function()
    p = intents.language_project("python", { max_inputs = 2, shrink_limit = 0, repetitions = 1 })
    local candidate = p.commit({ ["src/score.py"] = intents.SOURCES.python.good }, p.target)
    local report = assert(vkit.change.run_paired_execution(p.repo, p.request(candidate), p.target,
      { dir = p.dir .. "/paired" }))
    assert.equal("samples_within_contract", report.status)
    assert.is_false(report.source_proof)
    assert.same({}, approval_keys(report))
    local retained = json.decode(t.slurp(p.dir .. "/paired/paired-execution-report.v1.json"))
    assert.same({}, approval_keys(retained))
    assert.is_false(retained.source_proof)
  end)

  it("in a witness: one that carries an approval, a gate or a verdict is refused", function()
    local witness = require "vkit.change.witness"
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/model.txt", "model\n")
    local h = function(c) return c:rep(64) end
    local w = {
      schema_version = 1, kind = "unknown", reason = "the engine ran out of its bound",
      binding = { request_digest = h "1", intent_digest = h "2", claim_digest = h "3",
                  target = { commit = ("a"):rep(40), tree = ("b"):rep(40) },
                  candidate = { commit = ("c"):rep(40), tree = ("d"):rep(40) },
                  codec_sha256 = h "4", observation_policy_sha256 = h "5", environment_model_sha256 = h "6",
                  runner_identity = h "7", runtime_identity = h "8" },
      engine = json.null, counterexample = json.null, native_playback = json.null,
      artifacts = json.array { { role = "model", path = "model.txt", sha256 = vkit.hash.file(dir .. "/model.txt"),
                                 media_type = "text/plain" } },
    }
    local bytes = assert(witness.serialize(w))
    local imported = assert(witness.import(bytes, dir, w.binding))
    assert.same({}, approval_keys(imported))
    for _, field in ipairs { "approval", "approved", "approval_authority", "gate_verdict", "verdict" } do
      for _, value in ipairs { true, false, "approved" } do
        local forged = json.decode(bytes)
        forged[field] = value
        local ok, message, code = witness.serialize(forged)
        assert.is_nil(ok, field)
        assert.equal("witness-invalid", code, message)
        ok, message, code = witness.import(json.encode(forged), dir, w.binding)
        assert.is_nil(ok, field)
        assert.equal("witness-invalid", code, message)
      end
    end
    cleanup()
  end)
end)

describe("seed 001: relational preparation", function()
  local p
  after_each(function()
    if p then p.cleanup() end
    p = nil
  end)

  it("runs no verifier and binds no toolchain: only the admission process runs, and the native tools are never read", function()
    local prepare = require "vkit.relational.prepare"
    local s = intents.SOURCES.rust
    local artifacts = intents.artifacts_for("rust", s.path)
    -- the target's native environment declaration names tools that do not
    -- exist: preparation neither validates nor invokes them
    artifacts.environment_model = { path = "verification/environment.json", bytes = json.encode {
      schema_version = 1, env = { LC_ALL = "C" },
      toolchains = { rust = { rustc = { path = "/nonexistent/vkit-spec-toolchain/bin/rustc", sha256 = ("0"):rep(64) },
                              dependencies = json.array() } } } }
    p = intents.project { artifacts = artifacts, source_path = s.path, source = s.base }
    local candidate = p.commit({ [s.path] = s.good }, p.target)

    local launches, restore = {}, {}
    local function record(tbl, name, label)
      local original = tbl[name]
      if type(original) ~= "function" then return end
      restore[#restore + 1] = function() tbl[name] = original end
      tbl[name] = function(spec, ...)
        local argv = type(spec) == "table" and spec.argv and table.concat(spec.argv, " ") or tostring(spec)
        launches[#launches + 1] = label .. " " .. argv
        return original(spec, ...)
      end
    end
    -- the launch primitive under vkit.proc.run and vkit.proc.spawn, and every other way out
    record(require "vkit.process", "spawn", "vkit.process.spawn")
    record(require "vkit.sys", "spawn_detached", "vkit.sys.spawn_detached")
    record(os, "execute", "os.execute")
    record(io, "popen", "io.popen")
    local ok, program, message = pcall(prepare.prepare_rust_relational, p.repo, p.request(candidate), p.target)
    for i = #restore, 1, -1 do restore[i]() end
    assert(ok, program)
    assert.is_table(program, message)

    -- the two admissions (base and candidate), vkit's own separate process; nothing else
    local admission = "vkit.process.spawn " .. vkit.exe .. " ts_admit --function score"
    assert.same({ admission, admission }, launches)
    -- no proof, no approval, no toolchain or engine in what it returns (its
    -- one approval word is the seed's disclaimer, always false)
    assert.is_false(program.source_proof)
    assert.is_false(program.approval_authority)
    assert.is_false(prepare.to_json(program).approval_authority)
    for _, value in ipairs { program, prepare.to_json(program) } do
      for _, path in ipairs(keys(value)) do
        local last = path:match "([^.]+)$":lower()
        for _, word in ipairs { "toolchain", "engine", "kani", "rustc", "cargo", "verified", "verdict", "proof_result" } do
          assert.is_nil(last:find(word, 1, true), path)
        end
      end
    end
    -- the environment model is bound only as the intent's blob
    assert.equal("verification/environment.json", prepare.to_json(program).policy.artifacts.environment_model.path)
  end)
end)

describe("seed 001: --wait", function()
  local p, lock
  after_each(function()
    if lock then lock:unlock() end
    lock = nil
    intents.finish(p)
    p = nil
  end)

  -- A project whose job store no worker may serve while the spec runs: the
  -- spec holds the lock an on-demand worker scans under, so a queued run
  -- stays queued (nothing here depends on how fast a run would finish).
  local function idle_project()
    p = intents.project()
    local project = p.dir .. "/project"
    assert(store_mod.open(project))
    lock = assert(fs.lock(project .. "/.vkit/worker.lock"))
    t.write(p.dir .. "/request.json", p.request(p.target))
    return project
  end

  -- Runs fn with `field` of `module` replaced by a recorder of its argument
  -- at `index`; returns what was recorded and fn's results.
  local function recording(module, field, index, fn)
    local original, seen = module[field], {}
    module[field] = function(...)
      seen[#seen + 1] = select(index, ...)
      return original(...)
    end
    local real_print = _G.print
    _G.print = function() end
    local ok, a, b = pcall(fn)
    _G.print = real_print
    module[field] = original
    assert(ok, a)
    return seen, a, b
  end

  it("defaults to zero for vkit change certify", function()
    local project = idle_project()
    local change_runs = require "vkit.runs.change"
    local command = require "vkit.commands.change"
    local argv = { "certify", "--project", project, "--request", p.dir .. "/request.json", "--trusted-target", p.target,
                   "--json" }
    local seen, code = recording(change_runs, "wait", 3, function() return command.run(argv) end)
    assert.same({ 0 }, seen)
    assert.equal(4, code)   -- returned at once, the run still queued
    -- an explicit --wait is what it waits
    argv[#argv + 1] = "--wait"
    argv[#argv + 1] = "0.05"
    seen = recording(change_runs, "wait", 3, function() return command.run(argv) end)
    assert.same({ 0.05 }, seen)
    local store = store_mod.open(project)
    local ids = store:list()
    assert.equal(2, #ids)
    for _, id in ipairs(ids) do assert.equal("queued", assert(store:get(id)).state.status) end
  end)

  it("defaults to zero for the change_certify MCP tool, and says so", function()
    local project = idle_project()
    local mcp = require "tests.support.mcp"
    local runs = require "vkit.mcp.runs"
    local s, sent = mcp.ready(project)
    s:receive(mcp.request(2, "tools/list"))
    local advertised
    for _, tool in ipairs(sent[#sent].result.tools) do
      if tool.name == "change_certify" then advertised = tool.inputSchema.properties.wait.default end
    end
    assert.equal(0, advertised)
    local seen, result = recording(runs, "answer", 3, function()
      return mcp.call(s, sent, 3, "change_certify", { request = json.decode(p.request(p.target)),
                                                     trusted_target_oid = p.target })
    end)
    assert.same({ 0 }, seen)
    assert.equal("queued", result.structuredContent.status)
  end)

  -- Seed 000's `vkit verify` takes the same option: whatever passes it on,
  -- the store is asked to wait 0 seconds unless --wait says otherwise.
  it("defaults to zero for vkit verify", function()
    p = intents.project()
    local ext = dofile(vkit.root .. "/examples/external/project.lua")
    local built = ext.build(p.dir .. "/external")
    assert(store_mod.open(built.path))
    lock = assert(fs.lock(built.path .. "/.vkit/worker.lock"))
    local Store = require("vkit.store.common").Store
    local command = require "vkit.commands.verify"
    local seen, code = recording(Store, "wait", 3, function()
      return command.run { ext.COMPONENT, "--project", built.path, "--json" }
    end)
    assert.same({ 0 }, seen)
    assert.equal(4, code)   -- returned at once, the run still queued
    seen = recording(Store, "wait", 3, function()
      return command.run { ext.COMPONENT, "--project", built.path, "--json", "--wait", "0.05" }
    end)
    assert.same({ 0.05 }, seen)
  end)
end)

describe("seed 001: rust_kani on an unsupported host", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  -- `vkit ARGS...` as a 32-bit x86 host reports itself (setarch's
  -- personality: uname says i686), for the command and the worker it
  -- starts; returns {code, stdout, stderr}.
  local function on_i686(argv)
    local out = p.dir .. "/i686"
    local parts = { t.env_prefix() .. "setarch i686 " .. t.quote(vkit.exe) }
    for _, a in ipairs(argv) do parts[#parts + 1] = t.quote(a) end
    local _, _, code = os.execute(("%s < /dev/null > %s.out 2> %s.err"):format(table.concat(parts, " "), t.quote(out),
      t.quote(out)))
    return { code = code, stdout = t.slurp(out .. ".out"), stderr = t.slurp(out .. ".err") }
  end

  it("is a blocked run that runs no method, never a fallback to sampling", function()
    local probe = os.execute "setarch i686 true 2>/dev/null"
    if not probe then
      pending "setarch cannot give this machine an i686 personality"
      return
    end
    local kani_support = require "tests.kani_support"
    local toolchain = require "vkit.relational.toolchain"
    p = intents.language_project("rust", { max_inputs = 2, shrink_limit = 0, repetitions = 1 })
    local project = p.dir .. "/project"
    local pin = p.dir .. "/pin.json"
    t.write(pin, json.encode(assert(toolchain.capture(kani_support.install(p.dir .. "/kani-install")))))
    local candidate = p.commit({ [intents.SOURCES.rust.path] = intents.SOURCES.rust.good }, p.target)
    t.write(p.dir .. "/request.json", p.request(candidate))
    local uname = on_i686 { "version", "--json" }
    assert.equal(0, uname.code, uname.stderr)
    local r = on_i686 { "change", "certify", "--project", project, "--request", p.dir .. "/request.json",
                        "--trusted-target", p.target, "--method", "rust_kani", "--kani-toolchain", pin,
                        "--wait", "60", "--json" }
    local out = assert(json.decode(r.stdout), r.stderr)
    for _ = 1, 20 do
      if r.code ~= 4 then break end
      r = on_i686 { "run", "wait", "--run", out.run_id, "--project", project, "--wait", "60", "--json" }
      out = assert(json.decode(r.stdout), r.stderr)
    end
    assert.equal(1, r.code, r.stdout)
    assert.equal("blocked", out.outcome)
    assert.same({ stage = "method", reason = "unsupported_platform",
                  message = "rust_kani runs only on native x86-64 Linux" }, out.blocked)
    assert.same({}, out.methods)
    assert.is_false(out.source_proof)
    -- nothing ran: no method directory, no report, in the run's attempt
    local adir = attempt_dir(project, out.run_id)
    for _, path in ipairs(tree(adir)) do
      for _, method in ipairs { "finite_paired", "exhaustive", "rust_exhaustive", "rust_kani" } do
        assert.is_nil(path:find(method, 1, true), path)
      end
    end
    local summary = json.decode(t.slurp(adir .. "/certification.v1.json"))
    assert.equal("blocked", summary.outcome)
    assert.same({}, summary.methods)
  end)
end)
