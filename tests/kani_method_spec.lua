-- The rust_kani method under `vkit change certify` (issue 16 items 1, 2, 3
-- and 7): Kani's own engine deadline, the run's cancellation reaching the
-- engine's process tree, auto's closed-format pin check, and rust_exhaustive
-- speaking for itself.  Kani cannot be installed here: a real Kani-shaped
-- installation (tests/kani_support.lua) has a compiled launcher that runs a
-- shell script in the engine's place, and nothing it does can verify.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local kani_support = require "tests.kani_support"
local toolchain = require "vkit.relational.toolchain"
local certify = require "vkit.certify"
local change_runs = require "vkit.runs.change"

local SOURCES = intents.SOURCES.rust

-- A closed-format pin of an installation whose launcher runs `script`.
local function pin_file(dir, script)
  local desc = kani_support.install(dir .. "/kani-install", { launcher_script = script })
  local path = dir .. "/pin.json"
  t.write(path, json.encode(assert(toolchain.capture(desc))))
  return path
end

local function attempt_file(p, run_id, rel)
  local run = assert(require("vkit.store").open(p.dir .. "/project"):get(run_id))
  local bytes = vkit.fs.read(("%s/attempts/%d/%s"):format(run.dir, run.state.attempts, rel), 1 << 24)
  return bytes and json.decode(bytes)
end

describe("the rust_kani method", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  it("is added by auto for a closed-format pin, and gets its own engine deadline whatever the other methods used", function()
    p = intents.language_project("rust", { max_inputs = 4, shrink_limit = 0 })
    local pin = pin_file(p.dir, "echo 'VERIFICATION:- SUCCESSFUL'; exit 0")
    local out, r = intents.certify(p, p.commit({ [SOURCES.path] = SOURCES.good }, p.target), { "--kani-toolchain", pin })
    assert.is_table(out, r.stderr)
    assert.same({ "finite_paired", "exhaustive", "rust_kani" },
      { out.methods[1].method, out.methods[2].method, out.methods[3].method })
    -- the engine left no export: never verified, and it does not undo the exhaustive result
    assert.same({ "infrastructure_failure", "missing_export" }, { out.methods[3].result, out.methods[3].reason })
    assert.equal("checked 0 of 100 accepted inputs (rust_kani)", out.methods[3].coverage.statement)
    assert.equal("all_inputs_conform", out.outcome)
    -- each method's own budget, reported; Kani's deadline is the full 300 s for the engine alone
    local limits = vkit.policies.limits
    assert.equal(limits.paired.deadline_ms, out.methods[1].budget.deadline_ms)
    assert.equal(limits.paired.deadline_ms, out.methods[2].budget.deadline_ms)
    assert.equal(limits.kani.max_deadline_ms, out.methods[3].budget.engine_deadline_ms)
    local kani = attempt_file(p, out.run_id, "rust_kani/kani-method.v1.json")
    assert.equal(limits.kani.max_deadline_ms, kani.kani.invocation.deadline_ms)
    assert.is_true(out.methods[1].budget.elapsed_ms + out.methods[2].budget.elapsed_ms > 0)
  end)

  it("gets its full deadline even when called with no time left of another method's budget", function()
    p = intents.language_project("rust")
    local dir = p.dir .. "/direct"
    local pin = json.decode(vkit.fs.read(pin_file(p.dir, "exit 0"), 1 << 24))
    local bound = assert(vkit.change.preflight(p.repo, p.request(p.target), p.target))
    assert(vkit.fs.mkdirs(dir))
    local result = require("vkit.relational.kani_method").run(bound, {
      repo = p.repo, dir = dir, ctx = require("tests.support.paired").ctx(), kani_toolchain = pin,
      deadline_at = vkit.sys.monotonic_ms() - 1 })   -- what a sampling method would have left
    assert.equal(vkit.policies.limits.kani.max_deadline_ms, result.budget.engine_deadline_ms)
    local record = json.decode(vkit.fs.read(dir .. "/kani-method.v1.json", 1 << 24))
    assert.equal(vkit.policies.limits.kani.max_deadline_ms, record.kani.invocation.deadline_ms)
  end)

  it("is stopped, with its whole process tree, when the certify run is cancelled, and never verifies", function()
    p = intents.language_project("rust")
    local marks = p.dir .. "/marks"
    assert(vkit.fs.mkdirs(marks))
    local pin = pin_file(p.dir, ("echo $$ > %s/engine.pid; sleep 300 & echo $! > %s/child.pid; wait"):format(marks, marks))
    t.write(p.dir .. "/request.json", p.request(p.target))
    local project = p.dir .. "/project"
    local r = t.vkit { "change", "certify", "--project", project, "--request", p.dir .. "/request.json",
                       "--trusted-target", p.target, "--method", "rust_kani", "--kani-toolchain", pin, "--json" }
    local id = assert(json.decode(r.stdout), r.stderr).run_id
    -- wait for the engine (preparation, admission and the toolchain scan come first)
    local function pid(name)
      local text = vkit.fs.read(marks .. "/" .. name, 64)
      return text and math.tointeger(tonumber((text:match "^(%d+)\n"))) or nil
    end
    local waited = 0
    while not (pid "engine.pid" and pid "child.pid") and waited < 120 do
      vkit.sys.sleep(0.1)
      waited = waited + 0.1
    end
    local engine, child = assert(pid "engine.pid", "the engine never started"), assert(pid "child.pid")
    assert.is_true(vkit.sys.alive(engine) and vkit.sys.alive(child))
    local cancelled_at = vkit.sys.monotonic_ms()
    assert.equal(0, t.vkit({ "run", "cancel", "--run", id, "--project", project }).code)
    local done = json.decode(t.vkit({ "run", "wait", "--run", id, "--project", project, "--wait", "60", "--json" }).stdout)
    -- well within the 300 s the engine would otherwise have had
    assert.is_true(vkit.sys.monotonic_ms() - cancelled_at < 60000)
    assert.equal("cancelled", done.status)
    assert.is_false(vkit.sys.alive(engine))
    assert.is_false(vkit.sys.alive(child))
    local kani = attempt_file(p, id, "rust_kani/kani-method.v1.json")
    if kani then
      assert.same({ "unknown", "cancelled" }, { kani.status, kani.reason })
    end
    assert.are_not.equal("verified", done.outcome)
  end)
end)

describe("a Kani toolchain pin", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  it("that is not in the closed format is refused up front, for auto as for rust_kani (exit 2)", function()
    p = intents.language_project("rust", { max_inputs = 2 })
    t.write(p.dir .. "/junk.json", '{"launcher": "/bin/true", "kani_version": "0.68.0"}')
    for _, method in ipairs { "auto", "rust_kani" } do
      local _, r = intents.certify(p, p.target, { "--method", method, "--kani-toolchain", p.dir .. "/junk.json" })
      assert.equal(2, r.code, method)
      assert.matches("not a closed%-format pin", r.stderr)
    end
    assert.same({}, require("vkit.store").open(p.dir .. "/project"):list(), "no run was queued")
    -- the MCP tool submits through the same check
    local store = require("vkit.store").open(p.dir .. "/project")
    local id, message = change_runs.submit(store, { request = json.decode(p.request(p.target)), trusted_target = p.target,
                                                   kani_toolchain = json.decode '{"launcher": "/bin/true"}' })
    assert.is_nil(id)
    assert.matches("not a closed%-format pin", message)
  end)

  it("decides auto's plan only in its closed format (the library's second line)", function()
    local dir, cleanup = t.tempdir()
    local closed = json.decode(vkit.fs.read(pin_file(dir, "exit 0"), 1 << 24))
    cleanup()
    local junk = json.decode '{"launcher": "/bin/true"}'
    assert.same({ "finite_paired", "exhaustive", "rust_kani" }, certify.plan("auto", "rust", closed))
    assert.same({ "finite_paired", "exhaustive" }, certify.plan("auto", "rust", junk))
    assert.same({ "finite_paired", "exhaustive" }, certify.plan("auto", "rust", nil))
    assert.same({ "finite_paired", "exhaustive" }, certify.plan("auto", "python", closed))
    assert.equal("invalid_pin", select(2, certify.plan("rust_kani", "rust", junk)))
    assert.equal("missing_toolchain_pin", select(2, certify.plan("rust_kani", "rust", nil)))
    assert.same({ "rust_kani" }, certify.plan("rust_kani", "rust", closed))
  end)
end)

describe("rust_exhaustive", function()
  local p
  after_each(function()
    intents.finish(p)
    p = nil
  end)

  it("is vkit's own method and its summary never borrows the sampled method's sentence", function()
    local methods = require "vkit.change.methods"
    assert.is_false(methods.LIST.rust_exhaustive.seed)
    assert.is_nil(methods.LIST.rust_exhaustive.not_established:find("sampled", 1, true))
    p = intents.language_project("rust", { max_inputs = 2 })
    t.write(p.dir .. "/request.json", p.request(p.commit({ [SOURCES.path] = SOURCES.good }, p.target)))
    local r = intents.certify_cli(p, p.dir .. "/request.json", { "--method", "rust_exhaustive" })
    assert.equal(0, r.code, r.stderr .. r.stdout)
    assert.matches("not established:\n  rust_exhaustive: rust_exhaustive %(vkit's own method, not part of seed 001%)", r.stdout)
    assert.is_nil(r.stdout:find("sampled", 1, true), r.stdout)
    assert.is_nil(r.stdout:find("finite_paired", 1, true), r.stdout)
  end)
end)
