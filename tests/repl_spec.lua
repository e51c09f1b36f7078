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

  it("elides beyond max_items", function()
    assert.equal("{ 1, 2, ... (3 more) }", pretty.format({ 1, 2, 3, 4, 5 }, { max_items = 2 }))
  end)
end)

describe("the interactive REPL, through a real pseudo-terminal", function()
  it("completes with Tab, cancels a line with Ctrl-C, exits on Ctrl-D and keeps its history", function()
    local t = require "tests.support.run"
    local home, cleanup = t.tempdir()
    local out = io.popen(("/usr/bin/python3 %s/tests/support/pty_repl.py %s %s"):format(
      t.quote(vkit.root), t.quote(vkit.exe), t.quote(home))):read "a"
    local history = vkit.fs.read(home .. "/.vkit_history", 1 << 16)
    cleanup()
    assert.matches("> vkit%.hash%.sha256%('abc'%)", out)                 -- the Tab completion reached the line
    assert.matches('"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"', out)
    assert.matches("\n42\r?\n", out)                                       -- the line after Ctrl-C ran alone
    assert.is_nil(out:find("abandoned42", 1, true))
    assert.matches("EXIT 0", out)
    assert.equal("vkit.hash.sha256('abc')\n1 + 41\n", history)            -- the cancelled line is not history
  end)
end)
