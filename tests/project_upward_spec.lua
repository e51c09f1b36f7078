-- Issue 33: every command that opens a project's job store finds the
-- project upward from the directory it is given (default the current one),
-- as git finds the repository: `vkit verify`, `vkit repl --project`, `vkit
-- run`.  A real Git repository (examples/external/project.lua) with a
-- subdirectory; the runs land in, and are read from, the top's store.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local project = dofile(vkit.root .. "/examples/external/project.lua")

describe("the project, found upward from a subdirectory", function()
  local dir, cleanup, p
  before_each(function()
    dir, cleanup = t.tempdir()
    p = project.build(dir)
    assert(vkit.fs.mkdirs(p.path .. "/src/deeper"))
  end)
  after_each(function()
    t.kill_workers(p.path)
    cleanup()
  end)

  it("vkit verify queues into the top's store, run list and the REPL read it from below", function()
    local deeper = p.path .. "/src/deeper"
    local r = t.vkit({ "verify", project.COMPONENT, "--wait", "0", "--json" }, nil, { cd = deeper })
    local out = json.decode(r.stdout)
    assert.is_table(out, r.stderr .. r.stdout)
    local id = out.runs[1].run_id
    assert.matches("^r%-", id)
    assert.is_truthy(vkit.fs.lstat(p.path .. "/.vkit/runs/" .. id), "the run is in the top's store")
    assert.is_nil(vkit.fs.lstat(deeper .. "/.vkit"), "no store was made in the subdirectory")
    assert.is_nil(vkit.fs.lstat(p.path .. "/src/.vkit"))

    -- --project names a subdirectory: the same project
    r = t.vkit { "verify", project.COMPONENT, "--project", p.path .. "/src", "--wait", "0", "--json" }
    local second = json.decode(r.stdout)
    assert.is_table(second, r.stderr .. r.stdout)
    assert.is_truthy(vkit.fs.lstat(p.path .. "/.vkit/runs/" .. second.runs[1].run_id))

    r = t.vkit({ "run", "list" }, nil, { cd = deeper })
    assert.equal(0, r.code, r.stderr)
    assert.matches(id, r.stdout, 1, true)
    r = t.vkit({ "repl", "--project", "." }, "#runs()\nrun(" .. json.encode(id) .. ").id\n", { cd = deeper })
    assert.equal(0, r.code, r.stderr)
    assert.equal("2\n" .. json.encode(id) .. "\n", r.stdout)
    r = t.vkit({ "repl", "--project", "src/deeper" }, "store.project\n", { cd = p.path })
    assert.equal(json.encode(vkit.fs.realpath(p.path)) .. "\n", r.stdout)
  end)

  it("outside any Git repository verify still refuses (exit 7), and the REPL reads the directory itself", function()
    local plain = dir .. "/plain/sub"
    assert(vkit.fs.mkdirs(plain))
    local r = t.vkit({ "verify", project.COMPONENT, "--wait", "0" }, nil, { cd = plain })
    assert.equal(7, r.code, r.stderr)
    assert.matches("not a Git repository", r.stderr, 1, true)
    r = t.vkit({ "repl", "--project", "." }, "store.project\n", { cd = plain })
    assert.equal(json.encode(vkit.fs.realpath(plain)) .. "\n", r.stdout)
  end)
end)
