-- Naming a run on the command line and in the REPL's run(name) (issue 33
-- item 1; the MCP tools in tests/mcp_server_spec.lua): the whole id, a
-- unique prefix of the id or of its hex tail, or `latest`; positionally
-- or with --run.  An ambiguous name is a usage error that lists the
-- candidates, an unknown one is exit 6, and `latest` refuses to guess
-- between runs queued in the same second.  The runs are real queued runs
-- of a real file store, with chosen ids (vkit.store.common.new_id) so that
-- no outcome depends on the clock.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local common = require "vkit.store.common"

describe("run names", function()
  local dir, cleanup, project
  local real_new_id = common.new_id

  -- Queues probe runs with the given ids, oldest first.
  local function queue(ids)
    local store = require("vkit.store").open(project, { create = true })
    for _, id in ipairs(ids) do
      common.new_id = function() return id end
      assert.equal(id, store:submit("probe", { project = project }))
    end
    common.new_id = real_new_id
    store:close()
  end

  local function shown(argv)
    local r = t.vkit(argv)
    return r, r.code == 0 and json.decode(r.stdout).run_id or nil
  end

  before_each(function()
    dir, cleanup = t.tempdir()
    project = dir .. "/project"
    assert(vkit.git.init(project)):close()
    vkit.fs.mkdirs(project .. "/src/deeper")
  end)
  after_each(function()
    common.new_id = real_new_id
    t.kill_workers(project)
    cleanup()
  end)

  local A = "r-20260101T000000Z-3f2a00000001"
  local B = "r-20260101T000001Z-3f2b00000002"
  local C = "r-20260101T000002Z-7c0000000003"

  it("accepts the whole id, a unique prefix of it or of its tail, and latest, positionally or with --run", function()
    queue { A, B, C }
    for _, case in ipairs {
      { { "run", "show", A }, A },
      { { "run", "show", "--run", B }, B },
      { { "run", "show", "3f2a" }, A },
      { { "run", "show", "7c" }, C },
      { { "run", "show", "r-20260101T000001" }, B },
      { { "run", "show", "latest" }, C },
      { { "run", "show", "--run", "latest" }, C },
    } do
      local argv = case[1]
      for _, extra in ipairs { "--project", project, "--json" } do argv[#argv + 1] = extra end
      local r, id = shown(argv)
      assert.equal(0, r.code, table.concat(argv, " ") .. ": " .. r.stderr)
      assert.equal(case[2], id, table.concat(argv, " "))
    end
    -- every action that takes a run takes its names
    local r = t.vkit { "run", "cancel", "3f2b", "--project", project, "--json" }
    assert.equal(0, r.code, r.stderr)
    assert.equal(B, json.decode(r.stdout).run_id)
    assert.equal("cancelled", json.decode(r.stdout).status)
    r = t.vkit { "run", "wait", "3f2b", "--project", project, "--timeout", "90s", "--json" }
    assert.equal(B, json.decode(r.stdout).run_id)
    r = t.vkit { "run", "report", "3f2b", "--project", project, "--format", "json" }
    assert.equal(0, r.code, r.stderr)
  end)

  it("finds the store from a subdirectory of the work tree, as git finds the repository", function()
    queue { A }
    local r, id = shown { "run", "show", "latest", "--json" }
    assert.equal(6, r.code, "outside the project there is no such run")
    assert.is_nil(id)
    r = t.vkit({ "run", "show", "latest", "--json" }, nil, { cd = project .. "/src/deeper" })
    assert.equal(0, r.code, r.stderr)
    assert.equal(A, json.decode(r.stdout).run_id)
    r = t.vkit({ "run", "list" }, nil, { cd = project .. "/src/deeper" })
    assert.equal(0, r.code, r.stderr)
    assert.matches(A, r.stdout, 1, true)
    r = t.vkit({ "run", "list", "--project", "." }, nil, { cd = project .. "/src" })
    assert.matches(A, r.stdout, 1, true)
  end)

  it("refuses an ambiguous name, listing the candidates, and names an unknown one", function()
    queue { A, B, C }
    local r = t.vkit { "run", "show", "3f", "--project", project }
    assert.equal(2, r.code)
    assert.matches("3f is ambiguous: 2 runs start so (" .. B .. ", " .. A .. ")", r.stderr, 1, true)
    r = t.vkit { "run", "show", "r-2026", "--project", project }
    assert.equal(2, r.code)
    assert.matches("3 runs", r.stderr, 1, true)
    r = t.vkit { "run", "show", "9e", "--project", project }
    assert.equal(6, r.code)
    assert.matches("no run 9e in", r.stderr, 1, true)
    r = t.vkit { "run", "show", "3f2a", "--run", "3f2a", "--project", project }
    assert.equal(2, r.code)
    assert.matches("name the run once", r.stderr, 1, true)
    r = t.vkit { "run", "list", "3f2a", "--project", project }
    assert.equal(2, r.code)
  end)

  it("names runs the same way in the REPL's run(name), and refuses an ambiguous or unknown name", function()
    queue { A, B, C }
    local function repl(chunk)
      return t.vkit({ "repl", "--project", project }, chunk .. "\n")
    end
    for _, case in ipairs { { A, A }, { "3f2a", A }, { "7c", C }, { "r-20260101T000001", B }, { "latest", C } } do
      local r = repl(("run(%q).id"):format(case[1]))
      assert.equal(0, r.code, case[1] .. ": " .. r.stderr)
      assert.equal(json.encode(case[2]) .. "\n", r.stdout, case[1])
    end
    local r = repl 'run("3f")'
    assert.equal(1, r.code)
    assert.equal("", r.stdout)
    assert.matches("3f is ambiguous: 2 runs start so (" .. B .. ", " .. A .. "); type more of the id (ambiguous-run)",
      r.stderr, 1, true)
    r = repl 'x = run("9e")'
    assert.equal(1, r.code)
    assert.matches("no run 9e in file store ", r.stderr, 1, true)
    assert.matches("(unknown-run)", r.stderr, 1, true)
  end)

  it("orders new ids by the millisecond they were queued in", function()
    local common_ids = {}
    for i = 1, 50 do common_ids[i] = common.new_id() end
    for i = 2, 50 do
      assert.truthy(common_ids[i]:match "^r%-%d+T%d+Z%-%x+$")
      assert.equal(#common_ids[1], #common_ids[i])
      assert.truthy(common_ids[i - 1]:sub(1, 22) <= common_ids[i]:sub(1, 22), common_ids[i - 1] .. " " .. common_ids[i])
    end
  end)

  it("refuses latest between runs queued in the same millisecond, and in an empty store", function()
    local r = t.vkit { "run", "show", "latest", "--project", project }
    assert.equal(6, r.code)
    assert.matches("latest: there are no runs", r.stderr, 1, true)
    local D = "r-20260101T000002Z-0d0000000004" -- the same second as C, an earlier millisecond
    local E = "r-20260101T000002Z-7c0ffff00005" -- the same millisecond as C
    queue { A, D, C }
    local _, id = shown { "run", "show", "latest", "--project", project, "--json" }
    assert.equal(C, id)
    queue { E }
    r = t.vkit { "run", "show", "latest", "--project", project }
    assert.equal(2, r.code)
    assert.matches("latest is ambiguous: 2 runs were queued in the same millisecond (" .. E .. ", " .. C .. ")",
      r.stderr, 1, true)
  end)

  it("run wait takes --timeout beyond --wait's 60 s, bounded by policies/store.lua", function()
    queue { A }
    local r = t.vkit { "run", "wait", "latest", "--wait", "300", "--project", project }
    assert.equal(2, r.code)
    for _, bad in ipairs { "7h", "10x", "-1", "m" } do
      r = t.vkit { "run", "wait", "latest", "--timeout", bad, "--project", project }
      assert.equal(2, r.code, bad)
      assert.matches("--timeout", r.stderr, 1, true)
    end
    assert.matches("at most 6h", t.vkit({ "run", "wait", "latest", "--timeout", "7h", "--project", project }).stderr,
      1, true)
    r = t.vkit { "run", "wait", "latest", "--timeout", "1m", "--wait", "5", "--project", project }
    assert.equal(2, r.code)
    r = t.vkit { "run", "show", "latest", "--timeout", "1m", "--project", project }
    assert.equal(2, r.code, "--timeout belongs to run wait and run replay")
    -- a cancelled run is terminal at once: the long timeout is not waited out
    assert.equal(0, t.vkit({ "run", "cancel", "latest", "--project", project }).code)
    r = t.vkit { "run", "wait", "latest", "--timeout", "6h", "--project", project, "--json" }
    assert.equal(1, r.code, r.stderr)
    assert.equal("cancelled", json.decode(r.stdout).status)
  end)
end)

describe("vkit.runs.named with a hostile name", function()
  local named = require "vkit.runs.named"
  local store = { list = function() return { "r-20261206T172530Z-3f2a00000002", "r-20261206T172530Z-3f2a00000001" } end,
                  describe = function() return "/p/.vkit" end }

  it("repeats a name that matched nothing cut and with its controls shown, never raw", function()
    local id, why, code = named.resolve(store, ("x"):rep(1024 * 1024))
    assert.is_nil(id)
    assert.equal("unknown-run", code)
    assert.truthy(#why < 200, #why)
    assert.equal("no run " .. ("x"):rep(64) .. "… in /p/.vkit", why)
    _, why = named.resolve(store, "\27]0;pwned\7\n::error::x")
    assert.is_nil(why:find("[\0-\31]"), why)
    assert.matches("\\x1b]0;pwned\\x07\\x0a::error::x", why, 1, true)
    -- a long name is not cut through a character
    _, why = named.resolve(store, ("x"):rep(63) .. "é" .. ("y"):rep(10))
    assert.truthy(utf8.len(why), why)
    assert.matches(("x"):rep(63) .. "…", why, 1, true)
    -- an ambiguous name is shown the same way
    _, why, code = named.resolve(store, "3f2a")
    assert.equal("ambiguous-run", code)
    -- path characters are only ever compared with the store's ids
    id, why, code = named.resolve(store, "../3f2a")
    assert.is_nil(id)
    assert.equal("unknown-run", code)
  end)
end)
