local repl = require "vkit.repl"
local pretty = require "vkit.pretty"
local vkit = require "vkit"

describe("repl completion", function()
  local env = { vkit = vkit, value = 1, values = {}, print = print }

  it("completes table fields after a dot", function()
    assert.same({ "vkit.hash" }, repl.complete("vkit.ha", env))
    assert.same({ "vkit.hash.sha256" }, repl.complete("vkit.hash.sha", env))
  end)

  it("completes modules that load on first use (shared objects, Lua packages)", function()
    assert.same({ "vkit.git" }, repl.complete("vkit.gi", env))
    assert.same({ "vkit.vac" }, repl.complete("vkit.va", env))
  end)

  it("completes globals, all candidates sorted", function()
    assert.same({ "value", "values" }, repl.complete("val", env))
  end)

  it("completes methods after a colon through __index", function()
    local h = { hasher = vkit.hash.new() }
    assert.same({}, repl.complete("nothing.he", h))
    local obj = setmetatable({}, { __index = { hexdigest = true, update = true } })
    assert.same({ "o:hexdigest" }, repl.complete("o:hex", { o = obj }))
  end)

  it("returns nothing for a path through a non-table", function()
    assert.same({}, repl.complete("value.x", env))
  end)

  it("completes after an index: [integer] and [\"string\"]", function()
    local r = { attempts = { { record = 1, result = 2 } }, ["a key"] = { chosen = true } }
    assert.same({ "r.attempts[1].record", "r.attempts[1].result" }, repl.complete("r.attempts[1].re", { r = r }))
    assert.same({ 'r["a key"].chosen' }, repl.complete('r["a key"].ch', { r = r }))
    assert.same({ "r['a key'].chosen" }, repl.complete("r['a key'].ch", { r = r }))
    assert.same({}, repl.complete("r.attempts[x].re", { r = r }), "not a plain index")
  end)

  it("never offers metamethods", function()
    local obj = setmetatable({ __private = 1, name = 2 }, { __index = { __gc = true, __close = true, hexdigest = true } })
    assert.same({}, repl.complete("o:__", { o = obj }))
    assert.same({ "o.hexdigest", "o.name" }, repl.complete("o.", { o = obj }))
  end)
end)

describe("repl compile", function()
  it("treats expressions as values, statements as statements", function()
    assert.equal(3, repl.compile("1 + 2")())
    local env = {}
    repl.compile("x = 5", env)()
    assert.equal(5, env.x)
  end)

  it("tells an unfinished chunk from a syntax error", function()
    assert.equal("incomplete", select(3, repl.compile "function f()"))
    assert.equal("syntax", select(3, repl.compile "x = = 1"))
  end)
end)

describe("pretty", function()
  it("prints nested tables with sorted keys on one line when short", function()
    assert.equal('{ 1, 2, a = "x", b = { c = true } }', pretty.format { 1, 2, b = { c = true }, a = "x" })
  end)

  it("breaks long tables over lines", function()
    local out = pretty.format { alpha = ("a"):rep(40), beta = ("b"):rep(40) }
    assert.equal('{\n  alpha = "' .. ("a"):rep(40) .. '",\n  beta = "' .. ("b"):rep(40) .. '"\n}', out)
  end)

  it("marks cycles but prints shared subtables in full", function()
    local shared = { 1 }
    local t = { x = shared, y = shared }
    t.self = t
    local out = pretty.format(t)
    assert.matches("self = <cycle: table: 0x%x+>", out)
    assert.matches("x = { 1 }, y = { 1 }", out)
  end)

  it("shows JSON null and quotes strings", function()
    assert.equal('{ null, "a\\nb" }', pretty.format { vkit.json.null, "a\nb" })
  end)

  it("tells a JSON array from a JSON object and from a Lua table", function()
    local json = vkit.json
    assert.equal("[]", pretty.format(json.array()))
    assert.equal("{}", pretty.format(json.object()))
    assert.equal("[ 1, 2 ]", pretty.format(json.decode "[1, 2]"))
    assert.equal('{ a = [] }', pretty.format(json.decode '{"a": []}'))
    assert.equal("{ 1, 2 }", pretty.format { 1, 2 })
  end)

  it("prints a view through __pretty", function()
    assert.equal("a view", pretty.format(setmetatable({ 1 }, { __pretty = function() return "a view" end })))
  end)

  it("elides beyond max_items", function()
    assert.equal("{ 1, 2, ... (3 more) }", pretty.format({ 1, 2, 3, 4, 5 }, { max_items = 2 }))
  end)
end)

describe("the interactive REPL, through a real pseudo-terminal", function()
  local json = vkit.json
  local t = require "tests.support.run"

  -- Runs the pty driver with `steps` ({send=}, {expect= a Python regex},
  -- {kill=}); returns the transcript and the history file.
  local function session(steps, home, extra)
    local argv = { "/usr/bin/python3.11", vkit.root .. "/tests/support/pty_repl.py", vkit.exe, home, json.encode(steps) }
    for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
    local r = vkit.proc.run { exe = "/usr/bin/python3.11", argv = argv, deadline_ms = 600000, env = { PATH = "/usr/bin:/bin" },
                              output_cap = 1 << 22 }
    assert.equal(0, r.code, r.stderr)
    assert.is_nil(r.stdout:find("\nTIMEOUT ", 1, true), r.stdout)
    return r.stdout, vkit.fs.read(home .. "/.vkit_history", 1 << 16)
  end

  local PROMPT = { expect = "> $" }

  it("completes with Tab, cancels a line with Ctrl-C, exits on Ctrl-D and keeps its history", function()
    local home, cleanup = t.tempdir()
    local out, history = session({
      PROMPT,
      { send = "vkit.ha\t" }, { expect = [[vkit\.hash]] },                 -- Tab completes to vkit.hash
      { send = ".sha256('abc')\r" }, { expect = "ba7816bf[0-9a-f]+" }, PROMPT,
      { send = "this line is abandoned" }, { expect = "abandoned" },
      { send = "\3" }, PROMPT,                                            -- Ctrl-C cancels the line
      { send = "1 + 41\r" }, { expect = "\n42\r?\n" }, PROMPT,
      { send = "\4" },                                                    -- Ctrl-D exits
    }, home)
    cleanup()
    assert.matches("> vkit%.hash%.sha256%('abc'%)", out)
    assert.is_nil(out:find("abandoned42", 1, true))
    assert.matches("EXIT 0", out)
    assert.equal("vkit.hash.sha256('abc')\n1 + 41\n", history)          -- the cancelled line is not history
  end)

  it("appends each line to the history as it is entered: a killed session keeps it", function()
    local home, cleanup = t.tempdir()
    local out, history = session({
      PROMPT, { send = "x = 1\r" }, PROMPT, { send = "x + 1\r" }, { expect = "\n2\r?\n" }, PROMPT,
      { kill = 9 },
    }, home)
    cleanup()
    assert.matches("SIGNAL 9", out)
    assert.equal("x = 1\nx + 1\n", history)
  end)

  it("interrupts a chunk blocked in C with Ctrl-C: a sleep (and so a store wait), a running process tree", function()
    local home, cleanup = t.tempdir()
    local marker = home .. "/child.pid"
    local started = vkit.sys.monotonic_ms()
    local out = session({
      PROMPT, { send = "vkit.sys.sleep(600)\r" }, { expect = [[sleep\(600\)\r?\n]] },
      { send = "\3" }, { expect = "interrupted!" }, PROMPT,
      { send = ("r = vkit.proc.run { exe = '/bin/sh', argv = { 'sh', '-c', 'echo $$ > %s.tmp; mv %s.tmp %s; "
          .. "exec sleep 600' }, deadline_ms = 900000 }\r"):format(marker, marker, marker) },
      { wait_file = marker }, { send = "\3" }, { expect = "interrupted!" }, PROMPT,
      { send = "\4" },
    }, home)
    local child = t.slurp(marker):match "%d+"
    cleanup()
    assert.matches("EXIT 0", out)
    assert.is_true(vkit.sys.monotonic_ms() - started < 300000, "well before the 600 s sleeps")
    local stat = io.open("/proc/" .. child .. "/stat")
    local state = stat and stat:read("a"):match "^%d+ %b() (%a)"
    if stat then stat:close() end
    assert.is_true(state == nil or state == "Z", "the run's process was killed")
  end)

  it("completes after an index and prints an error object that is a table", function()
    local home, cleanup = t.tempdir()
    local out = session({
      PROMPT, { send = "r = { attempts = { { record = 7 } } }\r" }, PROMPT,
      { send = "r.attempts[1].rec\t" }, { expect = "record" }, { send = "\r" }, { expect = "\n7\r?\n" }, PROMPT,
      { send = "error({ reason = 'named', n = 3 })\r" }, { expect = [[error object: \{ n = 3, reason = "named" \}]] },
      PROMPT, { send = "\4" },
    }, home)
    cleanup()
    assert.matches("EXIT 0", out)
  end)
end)
