-- The C files of csrc call only downward (issue 32): scripts/c-call-graph.lua
-- reads the call graph between them from the compiled objects and finds no
-- circle.  The script can fail too: a circle given to its graph functions is
-- reported, and two objects compiled here that call each other make the
-- command exit 1.
local assert = require "luassert"
local t = require "tests.support.run"

local SCRIPT = "scripts/c-call-graph.lua"
local graph = dofile(SCRIPT)

local function object(file, defined, undefined) return { file = file, defined = defined, undefined = undefined } end

describe("the C call graph of csrc", function()
  it("has no circle in the built objects", function()
    local r = t.vkit { "script", SCRIPT }
    assert.equal("", r.stderr)
    assert.matches("\nno circle\n$", r.stdout)
    assert.equal(0, r.code)
    -- the edges were read, from the core (obj/) and the shared modules (pic/) alike
    assert.matches("\nprocess%.c %-> process_launch%.c: [^\n]*%f[%w_]launch%f[^%w_]", r.stdout)
    assert.matches("\ngit%.c %-> util%.c: ", r.stdout)
    assert.matches("\nmain%.c %-> process%.c: luaopen_vkit_process\n", r.stdout)
  end)

  -- The families' layers, top first (csrc/process.h, git.h, fs.h, json.h): a
  -- file calls only files of a lower layer of its family, never one beside it.
  local LAYERS = {
    process = { { "process.c" }, { "process_launch.c" }, { "process_keeper.c" }, { "process_start.c" },
      { "process_tree.c", "process_isolate.c", "process_landlock.c" }, { "process_common.c" } },
    git = { { "git.c" }, { "git_capture.c", "git_write.c", "git_fetch.c" }, { "git_tree.c", "git_odb.c" },
      { "git_common.c" } },
    fs = { { "fs.c" }, { "fs_dir.c" }, { "fs_common.c" } },
    json = { { "json.c" }, { "json_read.c" }, { "json_tally.c" }, { "json_lines.c", "json_encode.c" },
      { "json_decode.c", "json_pin.c" } },
  }

  it("is layered: process, git, fs and json files call only downward, upward through callbacks alone", function()
    local g = graph.graph(assert(graph.read_objects("build", "csrc")))
    assert.same({}, graph.circles(g))
    for family, layers in pairs(LAYERS) do
      local rank = {}
      for i, layer in ipairs(layers) do
        for _, file in ipairs(layer) do rank[file] = i end
      end
      for _, file in ipairs(g.files) do
        if file == family .. ".c" or file:match("^" .. family .. "_") then
          assert(rank[file], file .. " is in no layer of " .. family .. " (tests/c_call_graph_spec.lua)")
          for callee in pairs(g.calls[file]) do
            if rank[callee] then
              assert(rank[callee] > rank[file], ("%s calls %s, which is not below it"):format(file, callee))
            end
          end
        end
      end
    end
    -- the tree reports to the keepers through KeeperHooks, never by name
    assert.is_nil(g.calls["process_tree.c"]["process_keeper.c"])
    assert.truthy(g.calls["process_keeper.c"]["process_tree.c"])
    -- the decoder hands a streamed array to json.read's tally through its
    -- rows hook (ParseRows), never by name
    assert.is_nil(g.calls["json_decode.c"]["json_tally.c"])
    assert.is_nil(g.calls["json_decode.c"]["json_read.c"])
    assert.truthy(g.calls["json_read.c"]["json_decode.c"])
  end)

  it("reads nm -P: global definitions and undefined symbols, nothing local", function()
    local defined, undefined = graph.parse_nm(table.concat({
      "vkit_fail T 0000000000000000 0000000000000040",
      "helper t 0000000000000040 0000000000000010",
      "table D 0000000000000000 0000000000000008",
      "counter B 0000000000000000 0000000000000004",
      "lua_pushnil U",
      "refuse U",
      "", }, "\n"))
    assert.same({ "counter", "table", "vkit_fail" }, defined)
    assert.same({ "lua_pushnil", "refuse" }, undefined)
  end)

  it("reports a circle given to it, with the symbols of each edge", function()
    local g = graph.graph {
      object("a.c", { "a_up" }, { "b_down", "lua_pushnil" }),
      object("b.c", { "b_down" }, { "a_up", "c_leaf", "b_down" }),
      object("c.c", { "c_leaf" }, { "memcpy" }),
    }
    assert.same({ "a.c", "b.c", "c.c" }, g.files)
    assert.same({ "b_down" }, g.calls["a.c"]["b.c"])
    assert.same({ "a_up" }, g.calls["b.c"]["a.c"])
    assert.is_nil(g.calls["b.c"]["b.c"]) -- a file's own symbols are no edge
    assert.same({ { "a.c", "b.c" } }, graph.components(g))
    local circles = graph.circles(g)
    assert.same({ { "a.c", "b.c", "a.c" } }, circles)
    local text = graph.text(g, circles)
    assert.matches("\n  a%.c %-> b%.c %-> a%.c\n$", text)
    assert.matches("\"b.c\" %-> \"a.c\" %[color=red%];", graph.dot(g, circles))
    assert.matches("\"b.c\" %-> \"c.c\";", graph.dot(g, circles))
  end)

  it("finds every circle of a tangle, each once, and none in a layered graph", function()
    local tangle = graph.graph {
      object("launch.c", { "launch" }, { "keep", "collect" }),
      object("keeper.c", { "keep" }, { "start", "collect" }),
      object("tree.c", { "collect" }, { "keep", "start" }),
      object("start.c", { "start" }, {}),
    }
    local texts = {}
    for _, c in ipairs(graph.circles(tangle)) do texts[#texts + 1] = graph.circle_text(c) end
    assert.same({ "keeper.c -> tree.c -> keeper.c" }, texts)
    local layered = graph.graph {
      object("launch.c", { "launch" }, { "keep", "collect", "start" }),
      object("keeper.c", { "keep" }, { "start", "collect" }),
      object("tree.c", { "collect" }, {}),
      object("start.c", { "start" }, { "collect" }),
    }
    assert.same({}, graph.circles(layered))
    assert.matches("\nno circle\n$", graph.text(layered, {}))
  end)

  it("exits 1 on objects that call each other (compiled here)", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    assert(require("vkit").fs.mkdirs(dir .. "/csrc"))
    assert(require("vkit").fs.mkdirs(dir .. "/build/obj"))
    t.write(dir .. "/csrc/up.c", "int down(int);\nint up(int n) { return n ? down(n - 1) : 0; }\n")
    t.write(dir .. "/csrc/down.c", "int up(int);\nint down(int n) { return n ? up(n - 1) : 1; }\n")
    for _, name in ipairs { "up", "down" } do
      assert.is_true(os.execute(("cc -c -o %s %s"):format(t.quote(dir .. "/build/obj/" .. name .. ".o"),
        t.quote(dir .. "/csrc/" .. name .. ".c"))))
    end
    local r = t.vkit { "script", SCRIPT, "--build", dir .. "/build", "--csrc", dir .. "/csrc" }
    assert.equal(1, r.code)
    assert.matches("\n1 circle:\n  down.c %-> up.c %-> down.c\n$", r.stdout)
    r = t.vkit { "script", SCRIPT, "--dot", "--build", dir .. "/build", "--csrc", dir .. "/csrc" }
    assert.equal(1, r.code)
    assert.matches("^digraph csrc {", r.stdout)
    assert.equal("circle: down.c -> up.c -> down.c\n", r.stderr)
    -- without its source, an object is no file of csrc
    assert(os.remove(dir .. "/csrc/up.c"))
    r = t.vkit { "script", SCRIPT, "--build", dir .. "/build", "--csrc", dir .. "/csrc" }
    assert.equal(0, r.code)
    assert.equal("down.c (calls no file of csrc)\nno circle\n", r.stdout)
  end)
end)
