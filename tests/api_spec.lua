-- What the public API's own functions add to the internals they face
-- (issue 18 items 1 and 6): vkit.fs.read's default cap, the store handle
-- (submit by kind, list, reports), manifest entries a script writes, and
-- the intent authoring a team scripts against.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"

describe("vkit.fs.read", function()
  it("reads up to the documented default cap without a max_bytes, and refuses one byte more", function()
    local dir, cleanup = t.tempdir()
    local cap = vkit.policies.api.fs_read_max_bytes
    assert.equal(16 * 1024 * 1024, cap)
    local f = assert(io.open(dir .. "/at-cap", "wb"))
    f:write(("x"):rep(cap))
    f:close()
    assert.equal(cap, #assert(vkit.fs.read(dir .. "/at-cap")))
    f = assert(io.open(dir .. "/at-cap", "ab"))
    f:write "y"
    f:close()
    local bytes, _, code = vkit.fs.read(dir .. "/at-cap")
    assert.is_nil(bytes)
    assert.equal("too-large", code)
    -- an explicit cap still wins, and opts pass through with the default cap
    assert.equal(cap + 1, #assert(vkit.fs.read(dir .. "/at-cap", cap + 1)))
    assert(vkit.fs.symlink(dir .. "/at-cap", dir .. "/link"))
    assert.equal("not-a-regular-file", select(3, vkit.fs.read(dir .. "/link", nil, { nofollow = true })))
    cleanup()
  end)
end)

describe("vkit.store", function()
  it("refuses a project that is not a directory, and opens read-only without making .vkit/", function()
    local dir, cleanup = t.tempdir()
    local store, _, code = vkit.store.open(dir .. "/absent")
    assert.is_nil(store)
    assert.equal("ENOENT", code)
    t.write(dir .. "/file", "x")
    assert.equal("not-a-directory", select(3, vkit.store.open(dir .. "/file")))
    store = assert(vkit.store.open(dir, { create = false }))
    assert.is_nil(vkit.fs.lstat(dir .. "/.vkit"))
    assert.same({}, store:list())
    assert.equal(vkit.fs.realpath(dir), store:project())
    cleanup()
  end)

  it("submits only the kinds a script may queue, each validated before anything is queued", function()
    local dir, cleanup = t.tempdir()
    assert(vkit.git.init(dir)):close()
    local store = assert(vkit.store.open(dir))
    local cases = {
      { "probe", {}, "unknown-kind" },
      { "change-certify", { request = "{not json", trusted_target = ("a"):rep(40) }, "invalid-json" },
      { "change-certify", { request = { schema_version = 1 }, trusted_target = ("a"):rep(40) }, "request-invalid" },
      { "change-certify", { request = {}, method = "guess" }, "unknown-method" },
      { "external-check", { component = "nothing" }, "unborn-head" },
      { "external-replay", { run = "r-20260101T000000Z-000000000000" }, "unknown-run" },
    }
    for _, c in ipairs(cases) do
      local id, message, code = store:submit(c[1], c[2])
      assert.is_nil(id, c[1])
      assert.equal(c[3], code, c[1] .. ": " .. tostring(message))
    end
    assert.same({}, store:list())
    assert.has_error(function() store:submit("change-certify", "not a table") end)
    assert.has_error(function() store:wait("r-1", -1) end)
    cleanup()
  end)

  it("lists a run whose records cannot be believed as corrupt, never skipping it", function()
    local dir, cleanup = t.tempdir()
    assert(vkit.git.init(dir)):close()
    local store = assert(vkit.store.open(dir))
    assert(vkit.fs.mkdirs(dir .. "/.vkit/runs/r-20260101T000000Z-0123456789ab"))
    t.write(dir .. "/.vkit/runs/r-20260101T000000Z-0123456789ab/job.json", "{")
    local list = store:list()
    assert.equal(1, #list)
    assert.equal("corrupt", list[1].status)
    assert.equal("job.json", list[1].corrupt.file)
    assert.equal("corrupt-run", select(3, store:get "r-20260101T000000Z-0123456789ab"))
    assert.equal("corrupt-run", select(3, store:reports "r-20260101T000000Z-0123456789ab"))
    cleanup()
  end)
end)

describe("vkit.protocol.manifest_entry", function()
  local PY = "/usr/bin/python3.11"
  local function spec(overrides)
    local s = {
      component = "adder",
      files = { ["spec/a.smt2"] = "(check-sat)\n", ["tools/p.py"] = "print(1)\n", ["tools/c.py"] = "print(2)\n" },
      checks = { {
        id = "laws", claim = { specification = "spec/a.smt2", obligations = { "one" } }, assurance = "rechecked",
        evidence = { "out.txt" },
        producer = { executable = PY, argv = { "{{python}}", "{{snapshot}}/tools/p.py", "{{request}}" },
                     dependencies = { "tools/p.py" }, trusted_tool_dependencies = { "/usr/bin/z3" } },
        checker = { executable = PY, argv = { "{{python}}", "{{snapshot}}/tools/c.py", "{{request}}" },
                    dependencies = { "tools/c.py" } },
      } },
    }
    for k, v in pairs(overrides or {}) do s[k] = v end
    return s
  end

  it("pins every executable and dependency by the bytes given or on the host", function()
    local files = assert(vkit.protocol.manifest_entry(spec()))
    local manifest = json.decode(files["verification/manifest.json"])
    local entry = manifest.components.adder
    assert.equal(vkit.hash.sha256(files["verification/adder.policy.json"]), entry.policy.sha256)
    local policy = json.decode(files[entry.policy.path])
    local producer = policy.checks[1].producer
    assert.same({ path = PY, sha256 = vkit.hash.file(PY) }, producer.executable)
    assert.same({ { path = "tools/p.py", sha256 = vkit.hash.sha256 "print(1)\n" } }, producer.dependencies)
    assert.same({ { path = "/usr/bin/z3", sha256 = vkit.hash.file "/usr/bin/z3" } }, producer.trusted_tool_dependencies)
    assert.equal(vkit.policies.protocol.caps.default_deadline_ms, producer.deadline_ms)  -- none named: the policy's
    assert.same({ "spec/a.smt2", "tools/c.py", "tools/p.py" }, json.decode(files["verification/adder.package.json"]).inputs)
  end)

  it("keeps the other components of an existing manifest", function()
    local first = assert(vkit.protocol.manifest_entry(spec()))
    local s = spec { component = "other", manifest = first["verification/manifest.json"] }
    local files = assert(vkit.protocol.manifest_entry(s))
    local components = json.decode(files["verification/manifest.json"]).components
    assert.same(json.decode(first["verification/manifest.json"]).components.adder, components.adder)
    assert.is_table(components.other)
  end)

  it("refuses what vkit verify would refuse, and a dependency it cannot pin", function()
    local s = spec()
    s.checks[1].producer.dependencies = { "tools/absent.py" }
    assert.equal("dependency-not-in-files", select(3, vkit.protocol.manifest_entry(s)))
    s = spec()
    s.checks[1].checker.argv = { "{{python}}", "{{shell}}" }
    assert.equal("unknown-placeholder", select(3, vkit.protocol.manifest_entry(s)))
    s = spec()
    s.checks[1].evidence = { "out.txt", "out.txt" }
    assert.equal("duplicate-artifact", select(3, vkit.protocol.manifest_entry(s)))
    s = spec()
    s.checks[1].producer.executable = "/nonexistent/python"
    assert.equal("ENOENT", select(3, vkit.protocol.manifest_entry(s)))
  end)
end)

describe("vkit.change authoring", function()
  local function artifacts()
    return {
      binding_map = { path = "v/binding.json", bytes = vkit.change.binding_map { language = "python", source = "s.py",
                                                                                 ["function"] = "f" } },
      codec = { path = "v/codec.json", bytes = vkit.change.codec() },
      observation_policy = { path = "v/observation.json", bytes = vkit.change.observation_policy { max_inputs = 4 } },
      environment_model = { path = "v/environment.json", bytes = '{"schema_version":1,"env":{},"toolchains":{}}\n' },
    }
  end

  it("writes a revision whose digest names its file, and the acceptance list and claim that go with it", function()
    local files, digest, revision = vkit.change.revision {
      requirement = { source = "T-1", statement = "f(x) = x" },
      contract = { inputs = { { from = 0, to = 9 } }, observations = { { from = 0, to = 9 } }, requirements = {} },
      artifacts = artifacts(),
    }
    assert.is_table(files, digest)
    assert.is_string(files[("verification/change-intents/%s.v1.json"):format(digest)])
    assert.equal(4, json.decode(files["v/observation.json"]).max_inputs)
    local path, bytes = vkit.change.accept { digest }
    assert.equal("verification/change-intents/accepted.v1.json", path)
    assert.same({ digest }, json.decode(bytes).accepted)
    local request = json.decode(vkit.change.request(("a"):rep(40), ("b"):rep(40), digest, vkit.change.claim(revision)))
    assert.same({ { from = 0, to = 9 } }, request.claim.domain.inputs)
    assert.equal(revision.contract.domain.codec_sha256, request.claim.domain.codec_sha256)
  end)

  it("returns the refusal of a revision that would not parse, with its code", function()
    local cases = {
      { { inputs = {}, observations = { 1 }, requirements = {} }, "empty-intent-domain" },
      { { inputs = { { from = 0, to = 4096 } }, observations = { 1 }, requirements = {} }, "domain-too-large" },
      { { inputs = { 1 }, observations = { 1 }, requirements = { { inputs = { 1 }, outputs = { 2 } } } },
        "unsatisfiable-intent" },
    }
    for _, c in ipairs(cases) do
      local files, _, code = vkit.change.revision { requirement = { source = "T", statement = "s" }, contract = c[1],
                                                    artifacts = artifacts() }
      assert.is_nil(files)
      assert.equal(c[2], code)
    end
    assert.has_error(function() vkit.change.observation_policy { max_input = 4 } end)
    assert.has_error(function() vkit.change.binding_map { language = "cobol", source = "s", ["function"] = "f" } end)
  end)
end)
