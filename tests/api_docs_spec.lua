-- The public Lua API (issue 18 item 1): the `vkit` table and its modules
-- are exactly what the LDoc reference documents (`make docs`), every
-- function and method with a summary, its arguments and its results; no
-- internal module is reachable through a public table; the examples call
-- nothing else.
local vkit = require "vkit"
local t = require "tests.support.run"

local ROOT = vkit.root

-- LDoc's index of the reference: documented[module][name] = {type, summary,
-- params, returns}, and the lines that were not index rows (LDoc's
-- warnings: an undocumented formal argument, an unknown tag, ...).
local function ldoc_index()
  local cmd = ("cd %s/docs && LUA_PATH=%s ldoc --filter ldoc_index.tsv . 2>&1"):format(t.quote(ROOT),
    t.quote(ROOT .. "/scripts/?.lua;;"))
  local out = io.popen(cmd):read "a"
  local documented, other = {}, {}
  for line in out:gmatch "[^\n]+" do
    local module, kind, name, summary, params, returns = line:match "^([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]*)\t(%d+)\t(%d+)$"
    if module then
      documented[module] = documented[module] or {}
      documented[module][name] = { type = kind, summary = summary, params = tonumber(params), returns = tonumber(returns) }
    else
      other[#other + 1] = line
    end
  end
  return documented, other
end

-- The methods of a handle: the functions of its metatable's __index.
local function methods(handle)
  local out = {}
  local index = getmetatable(handle).__index
  for name, fn in pairs(index) do
    if type(fn) == "function" and not name:match "^__" then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

-- One instance of every handle type the public API returns.
local function handle_types(dir)
  local repo = assert(vkit.git.init(dir .. "/repo"))
  local process = vkit.proc.spawn { exe = "/bin/true", argv = { "true" } }
  process:wait()
  return {
    { module = "vkit.hash", type = "Hasher", handle = vkit.hash.new() },
    { module = "vkit.fs", type = "Lock", handle = assert(vkit.fs.lock(dir .. "/lock")) },
    { module = "vkit.proc", type = "Process", handle = process },
    { module = "vkit.proc", type = "Executable", handle = assert(vkit.proc.open_executable "/bin/true") },
    { module = "vkit.proc", type = "Canceller", handle = vkit.proc.canceller() },
    { module = "vkit.git", type = "Repository", handle = repo },
    { module = "vkit.store", type = "Store", handle = assert(vkit.store.open(dir)) },
  }
end

local FACTS = { "version", "exe", "root", "versions", "policies" }

describe("the public Lua API", function()
  local documented, warnings

  setup(function() documented, warnings = ldoc_index() end)

  it("has an LDoc reference that LDoc reads without a warning", function()
    assert.is_table(documented.vkit, "LDoc gave no index: " .. table.concat(warnings, "\n"))
    assert.same({}, warnings)
  end)

  it("documents every field of the vkit table, and the vkit table holds nothing else", function()
    local names = {}
    for _, name in ipairs(FACTS) do names[#names + 1] = name end
    for _, name in ipairs(getmetatable(vkit).__complete()) do names[#names + 1] = name end
    for _, name in ipairs(names) do
      assert.is_not_nil(vkit[name], name)
      local item = documented.vkit[name]
      assert.is_table(item, "vkit." .. name .. " is not documented")
      assert.is_true(#item.summary > 0, name)
    end
    local listed = {}
    for _, name in ipairs(names) do listed[name] = true end
    for name in pairs(documented.vkit) do
      if name ~= "vkit" then assert.is_true(listed[name], "documented but not public: vkit." .. name) end
    end
    for name in pairs(vkit) do assert.is_true(listed[name], "public but not listed: vkit." .. tostring(name)) end
  end)

  it("documents every function of every public module with its arguments and results", function()
    local checked = 0
    for _, short in ipairs(getmetatable(vkit).__complete()) do
      local module = "vkit." .. short
      local docs = documented[module]
      assert.is_table(docs, module .. " has no reference page")
      assert.is_true(#docs[module].summary > 0, module)
      for name, value in pairs(vkit[short]) do
        local item = docs[name]
        assert.is_table(item, ("%s.%s is not documented"):format(module, name))
        assert.is_true(#item.summary > 0, ("%s.%s has no summary"):format(module, name))
        if type(value) == "function" then
          assert.equal("function", item.type, module .. "." .. name)
          assert.is_true(item.returns > 0, ("%s.%s does not document its results"):format(module, name))
        end
        checked = checked + 1
      end
      -- nothing documented that the module does not have
      for name, item in pairs(docs) do
        if item.type ~= "module" and not name:find(":", 1, true) then
          assert.is_not_nil(vkit[short][name], ("%s.%s is documented but absent"):format(module, name))
        end
      end
    end
    assert.is_true(checked > 80, "only " .. checked .. " entries")
  end)

  it("documents every method of every handle it returns, and no method a handle lacks", function()
    local dir, cleanup = t.tempdir()
    local ok, problem = pcall(function()
      local types = handle_types(dir)
      local seen = {}
      for _, h in ipairs(types) do
        seen[h.module .. " " .. h.type] = true
        local have = {}
        for _, name in ipairs(methods(h.handle)) do
          have[name] = true
          local item = documented[h.module][h.type .. ":" .. name]
          assert.is_table(item, ("%s %s:%s is not documented"):format(h.module, h.type, name))
          assert.is_true(#item.summary > 0 and item.returns > 0, ("%s:%s lacks a summary or its results"):format(h.type, name))
        end
        for name in pairs(documented[h.module]) do
          local type_name, method = name:match "^(%w+):(.+)$"
          if type_name == h.type then
            assert.is_true(have[method], ("%s is documented but a %s has no such method"):format(name, h.type))
          end
        end
      end
      -- every documented type is one of those instances
      for module, docs in pairs(documented) do
        for name in pairs(docs) do
          local type_name = name:match "^(%w+):"
          if type_name then assert.is_true(seen[module .. " " .. type_name], module .. " " .. type_name) end
        end
      end
    end)
    cleanup()
    assert(ok, problem)
  end)

  it("reaches no internal module through a public table or handle", function()
    local public = {}
    for _, short in ipairs(getmetatable(vkit).__complete()) do public[vkit[short]] = true end
    local internal = {}
    for name, module in pairs(package.loaded) do
      if type(module) == "table" and name:match "^vkit%." and not public[module] then internal[module] = name end
    end
    internal[require "vkit.store"] = "vkit.store"
    internal[require "vkit.change"] = "vkit.change"
    local function scan(tbl, where, depth)
      for k, v in pairs(tbl) do
        assert.is_nil(internal[v], ("%s.%s is the internal module %s"):format(where, tostring(k), tostring(internal[v])))
        if type(v) == "table" and depth < 3 and not public[v] then scan(v, where .. "." .. tostring(k), depth + 1) end
      end
    end
    for _, short in ipairs(getmetatable(vkit).__complete()) do scan(vkit[short], "vkit." .. short, 1) end
    local dir, cleanup = t.tempdir()
    local store = assert(vkit.store.open(dir))
    local fields = {}
    for k in pairs(store) do fields[#fields + 1] = k end
    cleanup()
    assert.same({}, fields)
    assert.is_nil(vkit.store.worker)
    assert.is_nil(vkit.change.cli)
    assert.has_error(function() vkit.change.result({}, {}) end, "not a handle opened by the vkit API (use vkit.store.open)")
  end)

  it("is all that the examples call: they require nothing but vkit", function()
    local entries = assert(vkit.fs.walk(ROOT .. "/examples"))
    local scripts = 0
    for _, e in ipairs(entries) do
      if e.kind == "file" and e.path:match "%.lua$" then
        local source = assert(vkit.fs.read(ROOT .. "/examples/" .. e.path))
        for name in source:gmatch "require%s*%(?%s*[\"']([^\"']+)[\"']" do
          assert.equal("vkit", name, ("examples/%s requires %s"):format(e.path, name))
        end
        scripts = scripts + 1
      end
    end
    assert.is_true(scripts >= 5)
  end)

  it("runs examples/inventory.lua (the other examples have their own specs)", function()
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/a.txt", "a\n")
    assert(vkit.fs.symlink("/etc/hostname", dir .. "/link"))
    local r = t.vkit { "script", ROOT .. "/examples/inventory.lua", dir }
    cleanup()
    assert.equal(1, r.code, r.stderr) -- a refused entry: the inventory is not whole
    local inventory = vkit.json.decode(r.stdout)
    assert.same({ { path = "a.txt", sha256 = vkit.hash.sha256 "a\n", size = 2, mode = "0644" } }, inventory.files)
    assert.same({ { path = "link", kind = "link" } }, inventory.refused)
    assert.matches("1 files hashed, 1 entries refused, inventory digest " .. vkit.json.digest(inventory), r.stderr, 1, true)
  end)

  it("runs the whole script docs/api.md shows, and prints what it says", function()
    local doc = assert(vkit.fs.read(ROOT .. "/docs/api.md"))
    local script, expected = doc:match "\n```lua\n(.-\n)```\n.-\n```text\n(.-\n)```\n"
    assert.is_string(script)
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/certify.lua", script)
    local r = t.vkit({ "script", dir .. "/certify.lua", dir .. "/project" }, nil, { cd = dir })
    t.kill_workers(dir .. "/project")
    cleanup()
    assert.equal(0, r.code, r.stdout .. r.stderr)
    local ok, missing = require("tests.support.transcript").shows(r.stdout, expected)
    assert(ok, ("docs/api.md's script does not print %q:\n%s"):format(tostring(missing), r.stdout))
  end)

  it("builds the HTML reference with make docs", function()
    local dir, cleanup = t.tempdir()
    local ok = os.execute(("make -s -C %s docs DOCS_DIR=%s >%s 2>&1"):format(t.quote(ROOT), t.quote(dir .. "/api"),
      t.quote(dir .. "/log")))
    local index = vkit.fs.read(dir .. "/api/index.html")
    local page = vkit.fs.read(dir .. "/api/modules/vkit.change.html")
    local log = vkit.fs.read(dir .. "/log")
    cleanup()
    assert.is_true(ok, log)
    assert.matches("vkit.store", index, 1, true)
    assert.matches("run_change_analysis", page, 1, true)
  end)
end)
