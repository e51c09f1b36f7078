-- The change guards of seed 001 that a hostile candidate, a changed file
-- or a buggy encoder would test (issue 16 items 9 and 12), each with a spec
-- that fails when its rule is removed.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local support = require "tests.support.paired"
local preflight = require("vkit.change").preflight
local paired = require "vkit.change.paired"
local analysis = require "vkit.change.analysis"

local GOOD = "def score(x):\n    return min(x + x, 100)\n"

describe("preflight refuses a contract domain that does not name the pinned artifacts", function()
  for artifact, field in pairs { codec = "codec_sha256", observation_policy = "observation_policy_sha256",
                                 environment_model = "environment_model_sha256" } do
    it(("(%s)"):format(field), function()
      local p = intents.project()
      local revision_path = ("verification/change-intents/%s.v1.json"):format(p.digest)
      local doc = json.decode(p.files[revision_path])
      doc.contract.domain[field] = ("e"):rep(64)
      local target = p.commit({ [revision_path] = json.encode(doc) })
      local ok, message, code = preflight(p.repo, p.request(target, nil, target), target)
      p.cleanup()
      assert.is_nil(ok)
      assert.equal("domain-artifact-mismatch", code, message)
      assert.matches("artifacts%." .. artifact .. "%.sha256 does not match contract%.domain%." .. field, message)
    end)
  end
end)

describe("drivers read the input before they load the candidate", function()
  -- A candidate whose import reads stdin and answers wrong (999) if it got
  -- any byte: the sandbox leaves it no file to report through, so what it
  -- saw shows in what it returns.
  local SPY = {
    python = "import sys\n_seen = len(sys.stdin.buffer.read())\n"
      .. "def score(x):\n    return min(x + x, 100) if _seen == 0 else 999\n",
    typescript = "declare const require: any;\nconst fs = require('fs');\nlet seen = 0;\n"
      .. "try { seen = fs.readFileSync(0).length; } catch (e) { seen = -1; }\n"
      .. "export function score(x: number): number {\n  return seen === 0 ? Math.min(x + x, 100) : 999;\n}\n",
  }

  for _, language in ipairs { "python", "typescript" } do
    it(("in %s, per input (finite_paired) and per batch (exhaustive): the candidate's import sees no input"):format(language),
      function()
        local p = intents.language_project(language, { max_inputs = 2, shrink_limit = 0, repetitions = 1 })
        local candidate = p.commit({ [intents.SOURCES[language].path] = SPY[language] }, p.target)
        local report = assert(vkit.change.run_paired_execution(p.repo, p.request(candidate), p.target,
          { dir = p.dir .. "/paired" }))
        assert.equal("samples_within_contract", report.status)
        local result = assert(vkit.change.run_exhaustive(p.repo, p.request(candidate), p.target, { dir = p.dir .. "/batch" }))
        p.cleanup()
        if language == "python" then
          -- every input in a fresh module, after the driver read them all
          assert.equal("all_inputs_conform", result.status)
          assert.equal("fresh-module-per-input", result.record.semantics.candidate.mode)
        else
          -- a fresh V8 context per input has no `require`, let alone stdin
          assert.equal("unknown", result.status)
          assert.equal("candidate-failed", result.reason)
          assert.equal("fresh-context-per-input", result.record.semantics.candidate.mode)
        end
      end)
  end
end)

describe("retained evidence", function()
  local p
  after_each(function() if p then p.cleanup() end p = nil end)

  -- Edits a retained file while the method runs (through its progress
  -- callback): the report must not be written as if nothing changed.
  local function tamper_during(method, rel)
    p = intents.language_project("python", { max_inputs = 3, shrink_limit = 0 })
    local candidate = p.commit({ ["src/score.py"] = GOOD }, p.target)
    local dir = p.dir .. "/run"
    local done = false
    local function progress()
      local f = io.open(dir .. "/" .. rel, "rb")
      if f and not done then
        f:close()
        t.write(dir .. "/" .. rel, "edited after it was retained\n")
        done = true
      end
    end
    local run = method == "paired" and vkit.change.run_paired_execution or vkit.change.run_exhaustive
    local r = assert(run(p.repo, p.request(candidate), p.target, { dir = dir, progress = progress }))
    assert.is_true(done, "the file was edited")
    return r.record or r
  end

  it("is re-hashed before the paired report is written", function()
    local r = tamper_during("paired", "invocations/001.stdout")
    assert.equal("infrastructure_failure", r.status)
    assert.equal("retained-artifact-changed", r.reason)
  end)

  it("is re-hashed before the exhaustive report is written", function()
    local r = tamper_during("exhaustive", "invocations/001.stdout")
    assert.equal("infrastructure_failure", r.status)
    assert.equal("retained-artifact-changed", r.reason)
  end)
end)

describe("the input bytes", function()
  local drivers = require "vkit.change.drivers"
  local original = drivers.encode_inputs
  local p
  after_each(function()
    drivers.encode_inputs = original
    if p then p.cleanup() end
    p = nil
  end)

  -- An encoder that gets the last input wrong: nothing may run on those bytes.
  local function break_encoder()
    drivers.encode_inputs = function(inputs)
      local bytes = original(inputs)
      return bytes:sub(1, -2) .. string.char((bytes:byte(-1) + 1) % 256)
    end
  end

  it("are checked against the input before each per-input launch", function()
    p = intents.language_project("python", { max_inputs = 2, shrink_limit = 0 })
    break_encoder()
    local report = assert(vkit.change.run_paired_execution(p.repo, p.request(p.target), p.target, { dir = p.dir .. "/run" }))
    assert.equal("infrastructure_failure", report.status)
    assert.equal("input-encoding", report.reason)
    assert.equal(0, report.invocations)
  end)

  it("are checked against the batch before each batch launch", function()
    p = intents.language_project("python", { max_inputs = 2, shrink_limit = 0 })
    break_encoder()
    local r = assert(vkit.change.run_exhaustive(p.repo, p.request(p.target), p.target, { dir = p.dir .. "/run" }))
    assert.equal("infrastructure_failure", r.status)
    assert.equal("input-encoding", r.reason)
    assert.equal(0, r.record.invocations)
  end)
end)

describe("change analysis re-validates the live execution identity before using any observation", function()
  local p, dir, cleanup
  after_each(function()
    if p then p.cleanup() end
    if cleanup then cleanup() end
    p, cleanup = nil, nil
  end)

  -- Python from a copy the spec may change, with a pinned runtime dependency.
  local function project()
    dir, cleanup = t.tempdir()
    -- the sandbox runs the copy as an unprivileged user: it must be able to
    -- read it (vkit refuses with sandbox-unreadable otherwise)
    assert(vkit.fs.chmod(dir, tonumber("755", 8)))
    local python = dir .. "/python3"
    assert(vkit.fs.copy_file("/usr/bin/python3.11", python, 493))
    local dep = dir .. "/runtime-dependency.py"
    t.write(dep, "# read by the runtime\n")
    local artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 2, shrink_limit = 0 })
    local env = json.decode(artifacts.environment_model.bytes)
    env.toolchains.python = { python3 = { path = python, sha256 = vkit.hash.file(python) },
                              dependencies = json.array { { path = dep, sha256 = vkit.hash.file(dep) } } }
    artifacts.environment_model.bytes = json.encode(env)
    p = intents.project { artifacts = artifacts }
    return python, dep
  end

  local function analyse_after(change)
    local bound = assert(preflight(p.repo, p.request(p.target), p.target))
    local run_dir = p.dir .. "/run"
    local report = paired.run(bound, { repo = p.repo, dir = run_dir, ctx = support.ctx(),
                                       deadline_at = vkit.sys.monotonic_ms() + 300000 })
    assert.equal("samples_within_contract", report.status)
    assert.equal(1, #report.runtime_identity.dependencies)
    change()
    return analysis.assess_report(bound, report, run_dir)
  end

  it("including each runtime dependency", function()
    local _, dep = project()
    local result = analyse_after(function() t.write(dep, "# changed after the observations\n") end)
    assert.equal("unknown", result.status)
    assert.equal("retained-evidence", result.findings[#result.findings].rule)
    assert.matches("runtime dependency " .. dep:gsub("%p", "%%%0"), result.findings[#result.findings].message)
  end)

  it("including the interpreter", function()
    local python = project()
    local result = analyse_after(function()
      local f = assert(io.open(python, "ab"))
      f:write "\0"
      f:close()
    end)
    assert.equal("unknown", result.status)
    assert.matches("the live python3", result.findings[#result.findings].message)
  end)

  it("and refuses up front a toolchain the sandbox's user could not read, naming it", function()
    local python = project()
    assert(vkit.fs.chmod(dir, tonumber("700", 8)))
    local bound = assert(preflight(p.repo, p.request(p.target), p.target))
    local report = paired.run(bound, { repo = p.repo, dir = p.dir .. "/run", ctx = support.ctx(),
                                       deadline_at = vkit.sys.monotonic_ms() + 300000 })
    assert.equal("infrastructure_failure", report.status)
    assert.equal("sandbox-unreadable", report.reason)
    assert.matches(dir, report.message, 1, true)
    assert.matches("not searchable by others", report.message, 1, true)
    assert.equal(0, report.invocations)
    assert.truthy(python)
  end)

  it("and uses the observations when nothing changed", function()
    project()
    assert.equal("observed_conformance", analyse_after(function() end).status)
  end)
end)

describe("preflight is read-only and executes nothing", function()
  -- Records every launch and every write primitive while preflight runs.
  local function watched(fn)
    local calls = {}
    local restore = {}
    local function wrap(tbl, name, label)
      local original = tbl[name]
      if type(original) ~= "function" then return end
      restore[#restore + 1] = function() tbl[name] = original end
      tbl[name] = function(...)
        calls[#calls + 1] = label
        return original(...)
      end
    end
    local proc = require "vkit.proc"
    local process = require "vkit.process"
    for _, n in ipairs { "run", "spawn" } do wrap(proc, n, "vkit.proc." .. n) end
    for _, n in ipairs { "spawn" } do wrap(process, n, "vkit.process." .. n) end
    -- the modules vkit's own code calls (vkit.fs and vkit.sys are their public faces)
    wrap(require "vkit.sys", "spawn_detached", "vkit.sys.spawn_detached")
    for _, n in ipairs { "execute", "remove", "rename", "tmpname" } do wrap(os, n, "os." .. n) end
    wrap(io, "popen", "io.popen")
    for _, n in ipairs { "write_atomic", "copy_file", "mkdirs", "mkdtemp", "remove_tree", "symlink", "chmod", "mkfifo", "lock" } do
      wrap(require "vkit.fs", n, "vkit.fs." .. n)
    end
    local open = io.open
    restore[#restore + 1] = function() io.open = open end
    io.open = function(path, mode)
      if mode and mode:match "[wa+]" then calls[#calls + 1] = "io.open " .. mode end
      return open(path, mode)
    end
    local ok, a, b, c = pcall(fn)
    for i = #restore, 1, -1 do restore[i]() end
    assert(ok, a)
    return calls, a, b, c
  end

  -- Every file under a directory with its hash and modification time.
  local function snapshot(root)
    local out = {}
    for _, e in ipairs(assert(vkit.fs.walk(root))) do
      local st = vkit.fs.lstat(root .. "/" .. e.path)
      out[e.path] = e.kind .. " " .. tostring(st.mtime) .. " " .. tostring(st.size) .. " "
        .. (e.kind == "file" and vkit.hash.file(root .. "/" .. e.path) or "")
    end
    return out
  end

  it("whether it binds or refuses, and whatever the candidate holds", function()
    local p = intents.project()
    local repo_mt = getmetatable(p.repo).__index
    local candidate = p.commit({ ["src/score.py"] = "import os\nos.system('touch /tmp/pwned')\ndef score(x):\n    return 0\n",
                                 ["setup.py"] = "raise SystemExit('executed')\n" }, p.target)
    local requests = { p.request(candidate), p.request(candidate, nil, candidate) } -- binds; base-not-target
    local before = snapshot(p.dir)
    for i, request in ipairs(requests) do
      local calls, bound, _, code = watched(function()
        local writes = {}
        for _, n in ipairs { "write_tree", "write_tree_raw", "write_object", "write_blob", "commit_tree", "set_ref",
                             "set_remote", "capture" } do
          local original = repo_mt[n]
          writes[n] = original
          repo_mt[n] = function(...) error("preflight called repo:" .. n) end
        end
        local ok, b, m, c = pcall(preflight, p.repo, request, p.target)
        for n, original in pairs(writes) do repo_mt[n] = original end
        assert(ok, b)
        return b, m, c
      end)
      assert.same({}, calls, "request " .. i)
      if i == 1 then assert.is_table(bound) else assert.equal("base-not-target", code) end
    end
    assert.same(before, snapshot(p.dir))
    p.cleanup()
  end)
end)
