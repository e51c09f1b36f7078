-- The packages of lua/vkit depend on each other in one direction
-- (docs/architecture.md): scripts/require-graph.lua draws the require graph
-- and names every cycle, every library module that reaches for the command
-- line and every module outside it that writes to standard output.  These
-- specs hold the tree to it, and plant each fault in a copy of the tree to
-- show the graph would catch it.
local assert = require "luassert"
local t = require "tests.support.run"
local vkit = require "vkit"

_G.VKIT_REQUIRE_GRAPH_LIBRARY = true
local graph_tool = dofile(vkit.root .. "/scripts/require-graph.lua")

-- A copy of lua/ and policies/ to plant faults in.
local function tree_copy()
  local dir, cleanup = t.tempdir()
  assert(os.execute(("cp -R %s/lua %s/policies %s/"):format(t.quote(vkit.root), t.quote(vkit.root), t.quote(dir))))
  return dir, cleanup
end

-- Inserts text after the first line of a module of the copied tree.
local function plant(root, rel, text)
  local path = root .. "/lua/vkit/" .. rel
  local bytes = t.slurp(path)
  local first = bytes:find("\n", 1, true)
  t.write(path, bytes:sub(1, first) .. text .. "\n" .. bytes:sub(first + 1))
end

local function problems(root)
  return table.concat(graph_tool.problems(graph_tool.read(root)), "\n")
end

-- The problems of a copy of the tree with one line planted in one module.
local function problems_with(rel, line)
  local root, cleanup = tree_copy()
  plant(root, rel, line)
  local found = problems(root)
  cleanup()
  return found
end

describe("the require graph of lua/vkit", function()
  it("has no cycle, no library module requiring the command line, none printing", function()
    assert.equal("", problems(vkit.root))
  end)

  it("is what the script says when run: exit 0 and the package graph", function()
    local r = t.vkit { "script", vkit.root .. "/scripts/require-graph.lua" }
    assert.equal(0, r.code, r.stderr)
    assert.equal("", r.stderr)
    assert.matches("\nstore %->", "\n" .. r.stdout)
    -- the one direction: the store serves certification and reports, never the other way round
    local edges = graph_tool.packages(graph_tool.read(vkit.root))
    assert.is_nil(edges.change.store)
    assert.is_nil(edges.store.report)
    assert.is_nil(edges.store.runs)
    assert.is_nil(edges.relational.certify)
    assert.is_nil(edges.protocol.store)
  end)

  it("fails on a package cycle put back, even through a require hidden inside a function", function()
    local root, cleanup = tree_copy()
    finally(cleanup)
    plant(root, "store/common.lua", 'local function later() return require("vkit.report") end')
    local found = problems(root)
    assert.matches("package cycle: ", found, 1, true)
    assert.matches("report", found:match("package cycle: [^\n]*"), 1, true)
    local r = t.vkit { "script", vkit.root .. "/scripts/require-graph.lua", root }
    assert.equal(1, r.code)
    assert.matches("package cycle", r.stderr, 1, true)
  end)

  it("fails on a module cycle inside one package", function()
    local root, cleanup = tree_copy()
    finally(cleanup)
    plant(root, "change/ranges.lua", 'local request = require "vkit.change.request"')
    plant(root, "change/request.lua", 'local ranges = require "vkit.change.ranges"')
    assert.matches("module cycle: [^\n]*vkit%.change%.ranges", problems(root))
  end)

  it("fails when a library module requires the command line or the REPL", function()
    for _, target in ipairs { "vkit.cli", "vkit.cli.outcomes", "vkit.commands.change", "vkit.repl" } do
      local found = problems_with("report/text.lua", ('local x = require %q'):format(target))
      assert.matches(("library module vkit.report.text requires the command line (%s)"):format(target), found, 1, true)
    end
  end)

  it("lets a front read the published exit statuses, and nothing else of the command line", function()
    local root, cleanup = tree_copy()
    finally(cleanup)
    plant(root, "mcp/runs.lua", 'local exit = require "vkit.cli.exit"')
    assert.equal("", problems(root))
    plant(root, "mcp/runs.lua", 'local outcomes = require "vkit.cli.outcomes"')
    assert.matches("front module vkit.mcp.runs requires the command line (vkit.cli.outcomes)", problems(root), 1, true)
  end)

  it("fails when a library module writes to standard output", function()
    for _, line in ipairs { 'print("x")', 'io.write("x")', 'io.stdout:write("x")', 'io.output("f")' } do
      local found = problems_with("change/ranges.lua", line)
      assert.matches("library module vkit.change.ranges writes to standard output", found, 1, true)
    end
  end)

  it("fails on a require of a computed name that is not declared", function()
    local root, cleanup = tree_copy()
    finally(cleanup)
    plant(root, "change/ranges.lua", 'local function load(name) return require(name) end')
    assert.matches("vkit.change.ranges requires a computed module name", problems(root), 1, true)
  end)

  it("does not count a module named in a comment, nor the bare word vkit", function()
    local scanned = graph_tool.scan('-- require "vkit.cli"\n--[[ require "vkit.repl" ]]\nlocal name = "vkit"\n'
      .. 'local s = "the process launcher (vkit.proc) is not available"\n')
    assert.same({}, scanned.named)
    scanned = graph_tool.scan('local x = require "vkit"\nlocal y = { "vkit.report.text" }\n')
    assert.same({ vkit = true, ["vkit.report.text"] = true }, scanned.named)
  end)
end)

describe("the cycle finder", function()
  it("finds each circle once, as a closed path, and none in a DAG", function()
    assert.same({}, graph_tool.cycles { a = { b = true }, b = { c = true }, c = {} })
    local cycles = graph_tool.cycles { a = { b = true }, b = { c = true }, c = { a = true }, d = { a = true } }
    assert.equal(1, #cycles)
    assert.same({ "a", "b", "c", "a" }, { table.unpack(cycles[1]) })
    assert.same({ "a", "b", "c" }, cycles[1].members)
    cycles = graph_tool.cycles { a = { b = true }, b = { a = true }, c = { d = true }, d = { c = true } }
    assert.equal(2, #cycles)
  end)
end)
