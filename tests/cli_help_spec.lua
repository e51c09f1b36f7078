-- The command-line surface a person or a CI script meets (issue 17): help
-- at every level, usage errors that create nothing, read-only commands
-- that never make a store, and exit codes a CI can gate on.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local support = require "tests.support.protocol"
local store_mod = require "vkit.store"

local COMMANDS = {
  script = {}, repl = {}, version = {}, verify = {}, mcp = {}, ts_admit = {},
  run = { "list", "show", "wait", "cancel", "replay", "report", "worker" },
  change = { "certify" },
  vac = { "verify", "draft", "registry", "conformance" },
}

describe("the command line", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  local function no_store(path)
    assert.is_nil(vkit.fs.lstat((path or dir) .. "/.vkit"), "no .vkit/ store was created")
  end

  it("answers --help and -h at every level with that command's synopsis, options and exit codes", function()
    for name, actions in pairs(COMMANDS) do
      local levels = { { name } }
      for _, action in ipairs(actions) do levels[#levels + 1] = { name, action } end
      for _, level in ipairs(levels) do
        for _, flag in ipairs { "--help", "-h" } do
          local argv = { table.unpack(level) }
          argv[#argv + 1] = flag
          local r = t.vkit(argv)
          local what = table.concat(argv, " ")
          assert.equal(0, r.code, what)
          assert.equal("", r.stderr, what)
          assert.matches("^%s*usage: vkit " .. table.concat(level, " "):gsub("_", "_"), r.stdout, nil, what)
          if level[2] ~= "worker" and name ~= "ts_admit" then
            assert.matches("exit codes", r.stdout, 1, true)
          end
        end
      end
    end
    local top = t.vkit { "--help" }
    assert.matches("7  the project is not a Git repository", top.stdout, 1, true)
  end)

  it("finds --help after other arguments, and never points a usage error at the command that failed", function()
    local r = t.vkit { "run", "show", "--run", "x", "--help" }
    assert.equal(0, r.code)
    assert.matches("^usage: vkit run show", r.stdout)
    for _, argv in ipairs {
      { "run", "show", "--bogus" }, { "run", "wait", "--run", "x", "--wait", "61", "--project", dir },
      { "change", "certify", "--project", dir }, { "verify" }, { "version", "extra" }, { "run", "frob" },
    } do
      local failed = t.vkit(argv)
      assert.equal(2, failed.code, table.concat(argv, " "))
      local suggested = failed.stderr:match "See '(vkit [^']+)'"
      assert.truthy(suggested, failed.stderr)
      local words = {}
      for w in suggested:gmatch "%S+" do words[#words + 1] = w end
      table.remove(words, 1)
      local help = t.vkit(words)
      assert.equal(0, help.code, suggested .. " must work")
      assert.matches("^usage: ", help.stdout)
    end
  end)

  describe("usage errors", function()
    local target = ("a"):rep(40)
    local function certify(extra)
      local argv = { "change", "certify", "--project", dir, "--request", dir .. "/request.json", "--trusted-target", target }
      for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
      return t.vkit(argv)
    end

    it("are exit 2, before any durable run: nothing is queued, no store is made", function()
      assert(vkit.git.init(dir))
      t.write(dir .. "/request.json", '{"schema_version": 1}')
      for _, case in ipairs {
        -- revisions are resolved by the command line; one naming no commit
        -- is a usage error (tests/change_revisions_spec.lua)
        { { "--trusted-target", "main" }, "--trusted-target main: no such revision in" },
        { { "--trusted-target", ("a"):rep(39) }, "no such revision" },
        { { "--trusted-target", ("A"):rep(40) }, "no such revision" },
        { { "--wait", "61" }, "between 0 and 60" },
        { { "--wait", "0x10" }, "decimal number" },
        { { "--method", "guess" }, "unknown method" },
      } do
        local argv = { "change", "certify", "--project", dir, "--request", dir .. "/request.json" }
        local has_target = false
        for _, a in ipairs(case[1]) do has_target = has_target or a == "--trusted-target" end
        if not has_target then
          argv[#argv + 1] = "--trusted-target"
          argv[#argv + 1] = target
        end
        for _, a in ipairs(case[1]) do argv[#argv + 1] = a end
        local r = t.vkit(argv)
        assert.equal(2, r.code, table.concat(case[1], " ") .. ": " .. r.stderr)
        assert.matches(case[2], r.stderr, 1, true)
        no_store()
      end
      t.write(dir .. "/request.json", '{"a": 1,}')
      local r = certify()
      assert.equal(2, r.code)
      assert.matches("not valid JSON", r.stderr, 1, true)
      t.write(dir .. "/request.json", '{"a": 1, "a": 2}')
      assert.equal(2, certify().code, "a duplicate key is not strict JSON")
      no_store()
    end)

    it("name a project that is not a Git repository with its own exit code", function()
      t.write(dir .. "/request.json", "{}")
      local r = certify()
      assert.equal(7, r.code)
      assert.matches("^vkit: the project .* is not a Git repository", r.stderr)
      assert.equal(7, t.vkit({ "verify", "bvadd", "--project", dir }).code)
      assert.equal(7, t.vkit({ "verify", "bvadd", "--project", dir .. "/none" }).code)
      no_store()
    end)
  end)

  describe("read-only commands", function()
    it("never create a store, and say when it is empty", function()
      assert(vkit.git.init(dir))
      local listed = t.vkit { "run", "list", "--project", dir }
      assert.equal(0, listed.code)
      assert.equal(("no runs in %s\n"):format(vkit.fs.realpath(dir)), listed.stdout)
      assert.equal("[]\n", t.vkit({ "run", "list", "--project", dir, "--json" }).stdout)
      for _, action in ipairs { "show", "wait", "report" } do
        local r = t.vkit { "run", action, "--run", "r-20260101T000000Z-abcdefabcdef", "--project", dir }
        assert.equal(6, r.code, action)
        assert.matches("^vkit: no run r%-20260101T000000Z%-abcdefabcdef", r.stderr)
      end
      assert.equal(0, t.vkit({ "repl", "--project", dir }, "1 + 1\n").code)
      assert.equal(0, t.vkit({ "verify", "--help" }).code)
      no_store()
    end)
  end)

  describe("vkit run wait", function()
    local function wait(path, id)
      return t.vkit { "run", "wait", "--run", id, "--wait", "60", "--project", path }
    end

    it("exits as vkit verify would: 0 PASS, 1 BLOCKED", function()
      local p = support.build(dir, {})
      local passed = support.verify(p)
      assert.equal(0, wait(p.path, passed.run_id).code)
      local shown = t.vkit { "run", "show", "--run", passed.run_id, "--project", p.path }
      assert.matches("^PASS  " .. passed.run_id:gsub("%-", "%%-"), shown.stdout)
      assert.matches("PASS means:", shown.stdout, 1, true)
      -- colour only on a terminal, never with NO_COLOR or --json
      local show = { "run", "show", "--run", passed.run_id, "--project", p.path }
      assert.matches("\27%[32mPASS\27%[0m  " .. passed.run_id:gsub("%-", "%%-"), t.on_pty("", show))
      assert.is_nil(t.on_pty("NO_COLOR=1 ", show):find("\27", 1, true))
      table.insert(show, "--json")
      assert.is_nil(t.on_pty("", show):find("\27", 1, true))
      assert.is_nil(shown.stdout:find("\27", 1, true), "no colour on a pipe")
      t.kill_workers(dir)
      cleanup(); dir, cleanup = t.tempdir()
      local blocked = support.verify(support.build(dir, { checker_mode = "no-receipt" }))
      local r = wait(dir .. "/project", blocked.run_id)
      assert.equal(1, r.code)
      assert.matches("receipt%-missing: the checker exited 0 but wrote no receipt", r.stdout)
      assert.is_nil(r.stdout:find("PASS means", 1, true), "the PASS paragraph only with a PASS")
    end)

    it("exits 3 for a failed run, 1 for a cancelled one, 4 while pending, 6 for no such run", function()
      local store = store_mod.open(dir)
      -- One run at a time: runs queued in the same second run in no set order.
      local slow = store:submit("probe", { ms = 60000 })
      store:ensure_worker()
      local deadline = vkit.sys.monotonic_ms() + 60000
      while store:get(slow).state.status ~= "running" and vkit.sys.monotonic_ms() < deadline do vkit.sys.sleep(0.05) end
      assert.equal(4, t.vkit({ "run", "wait", "--run", slow, "--wait", "0", "--project", dir }).code)
      store:cancel(slow)
      assert.equal(1, wait(dir, slow).code, "cancelled while running")
      local cancelled = store:submit("probe", { ms = 60000 })
      store:cancel(cancelled)
      assert.equal(1, wait(dir, cancelled).code, "cancelled before it ran")
      local failing = store:submit("probe", { ms = 0, fail = "on purpose" })
      store:ensure_worker()
      assert.equal(3, wait(dir, failing).code)
      assert.equal(6, wait(dir, "r-20260101T000000Z-abcdefabcdef").code)
      local as_json = json.decode(t.vkit({ "run", "wait", "--run", failing, "--project", dir, "--json" }).stdout)
      assert.equal("failed", as_json.status)
    end)
  end)
end)
