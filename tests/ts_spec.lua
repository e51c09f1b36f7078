-- vkit.ts: the compiled-in tree-sitter runtime and Rust grammar, and the
-- pinned build that produces them.
local vkit = require "vkit"
local t = require "tests.support.run"
local ts = require "vkit.ts"

local LIMIT = { max_bytes = 65536 }

local function lock_entries()
  local entries = {}
  for line in assert(vkit.fs.read(vkit.root .. "/deps/treesitter.lock", 65536)):gmatch "[^\n]+" do
    local name, version, sha = line:match "^([%w%-]+) (%S+) (%x+)$"
    if name then entries[name] = { version = version, sha256 = sha } end
  end
  return entries
end

-- Every node of an exported tree, preorder.
local function flatten(node, out, depth)
  out = out or {}
  depth = depth or 1
  out[#out + 1] = { node = node, depth = depth }
  for _, c in ipairs(node.children) do flatten(c, out, depth + 1) end
  return out
end

describe("vkit.ts", function()
  describe("identity", function()
    it("names the pinned packages, their tarball hashes and a compatible grammar ABI", function()
      local id = ts.identity()
      local lock = lock_entries()
      assert.equal("tree-sitter", id.runtime.package)
      assert.equal(lock["tree-sitter"].version, id.runtime.version)
      assert.equal(lock["tree-sitter"].sha256, id.runtime.tarball_sha256)
      assert.equal("tree-sitter-rust", id.grammar.package)
      assert.equal(lock["tree-sitter-rust"].version, id.grammar.version)
      assert.equal(lock["tree-sitter-rust"].sha256, id.grammar.tarball_sha256)
      assert.equal("rust", id.grammar.language)
      assert.equal(15, id.grammar.abi)
      assert.is_true(id.grammar.abi >= id.runtime.min_compatible_abi and id.grammar.abi <= id.runtime.language_abi)
      assert.matches("^%x+$", id.runtime.object_sha256)
      assert.equal(64, #id.grammar.object_sha256)
      assert.is_true(id.build == "obj" or id.build == "asan")
    end)
  end)

  describe("parse", function()
    it("refuses a source over max_bytes before parsing and parses one at the limit", function()
      local tree, message, code = ts.parse(("/"):rep(101), { max_bytes = 100 })
      assert.is_nil(tree)
      assert.equal("too-large", code)
      assert.matches("101 bytes, over the 100%-byte limit", message)
      local at_limit = "//" .. ("x"):rep(98)
      tree = assert(ts.parse(at_limit, { max_bytes = 100 }))
      assert.equal("source_file", tree:root():kind())
    end)

    it("raises on misuse: no limit, a bad source type", function()
      assert.has_error(function() ts.parse "fn f() {}" end)
      assert.has_error(function() ts.parse("fn f() {}", { max_bytes = -1 }) end)
      assert.has_error(function() ts.parse({}, LIMIT) end)
    end)

    it("survives hostile bytes: NULs, invalid UTF-8, deep nesting", function()
      for _, src in ipairs { "\0\0\0fn\0", "\xff\xfe\x80 pub fn", ("("):rep(20000), ("{"):rep(20000) .. ("}"):rep(20000) } do
        local tree = assert(ts.parse(src, LIMIT))
        local stats = tree:stats()
        assert.is_true(stats.nodes >= 1)
        tree:close()
      end
    end)
  end)

  describe("trees and nodes", function()
    local src = "pub fn f(x: u32) -> u32 { // note\n  x + 1 }\n"

    it("exports kinds, fields, byte ranges, anonymous tokens and extras", function()
      local tree = assert(ts.parse(src, LIMIT))
      local root = tree:export { max_nodes = 1000, max_depth = 64 }
      assert.equal("source_file", root.kind)
      assert.equal(0, root.start)
      assert.equal(#src, root.stop)
      local fn = root.children[1]
      assert.equal("function_item", fn.kind)
      local by_field = {}
      for _, c in ipairs(fn.children) do
        if c.field then by_field[c.field] = c end
      end
      assert.equal("identifier", by_field.name.kind)
      assert.equal("f", src:sub(by_field.name.start + 1, by_field.name.stop))
      assert.equal("u32", src:sub(by_field.return_type.start + 1, by_field.return_type.stop))
      assert.equal("pub", fn.children[1].children[1].kind)
      assert.is_false(fn.children[1].children[1].named)
      local comment
      for _, n in ipairs(flatten(root)) do
        if n.node.kind == "line_comment" then comment = n.node end
      end
      assert.is_true(comment.extra)
      assert.equal("// note", src:sub(comment.start + 1, comment.stop))
    end)

    it("counts every node and the depth, and says where limits are first exceeded", function()
      local tree = assert(ts.parse(src, LIMIT))
      local all = flatten(tree:export { max_nodes = 1000, max_depth = 64 })
      local depth = 0
      for _, n in ipairs(all) do depth = math.max(depth, n.depth) end
      local stats = tree:stats { max_nodes = 5, max_depth = 4 }
      assert.equal(#all, stats.nodes)
      assert.equal(depth, stats.depth)
      assert.is_false(stats.has_error)
      assert.equal(all[6].node.start, stats.nodes_exceeded_at)
      local first_deep
      for _, n in ipairs(all) do
        if n.depth == 5 and not first_deep then first_deep = n.node end
      end
      assert.equal(first_deep.start, stats.depth_exceeded_at)
      local within = tree:stats { max_nodes = 1000, max_depth = 64 }
      assert.is_nil(within.nodes_exceeded_at)
      assert.is_nil(within.depth_exceeded_at)
    end)

    it("refuses to export past its node and depth limits", function()
      local tree = assert(ts.parse(src, LIMIT))
      local _, _, code = tree:export { max_nodes = 5, max_depth = 64 }
      assert.equal("too-many-nodes", code)
      _, _, code = tree:export { max_nodes = 1000, max_depth = 3 }
      assert.equal("too-deep", code)
      assert.has_error(function() tree:export {} end)
    end)

    it("marks ERROR and MISSING nodes and has_error", function()
      local tree = assert(ts.parse("pub fn f(x: u32) -> u32 { let y: u32 = x\n y }", LIMIT))
      assert.is_true(tree:stats().has_error)
      assert.is_true(tree:root():has_error())
      local missing = false
      for _, n in ipairs(flatten(tree:export { max_nodes = 1000, max_depth = 64 })) do
        if n.node.missing then missing = true end
      end
      assert.is_true(missing)
    end)

    it("offers a node API: kind, named, range, field, children, parent", function()
      local tree = assert(ts.parse(src, LIMIT))
      local fn = tree:root():named_children()[1]
      assert.equal("function_item", fn:kind())
      assert.is_true(fn:named())
      local name = fn:field "name"
      assert.equal("identifier", name:kind())
      assert.same({ 7, 8 }, { name:range() })
      assert.is_nil(fn:field "no_such_field")
      assert.equal("function_item", name:parent():kind())
      assert.equal(#fn:children(), fn:child_count())
      assert.is_true(#fn:children() > #fn:named_children())
      assert.is_false(fn:is_error())
      assert.is_false(fn:is_missing())
      assert.matches("^vkit.ts.node function_item", tostring(fn))
    end)

    it("invalidates nodes when the tree is closed, and closes with <close>", function()
      local node
      do
        local tree <close> = assert(ts.parse(src, LIMIT))
        node = tree:root()
        assert.equal("source_file", node:kind())
      end
      assert.has_error(function() node:kind() end, "attempt to use a node of a closed tree")
      local tree = assert(ts.parse(src, LIMIT))
      tree:close()
      tree:close()
      assert.has_error(function() tree:root() end)
    end)
  end)

  describe("the pinned build (mk/treesitter.mk)", function()
    local dir, cleanup
    before_each(function()
      dir, cleanup = t.tempdir()
      assert(vkit.fs.mkdirs(dir .. "/mk"))
      assert(vkit.fs.mkdirs(dir .. "/deps"))
      assert(vkit.fs.mkdirs(dir .. "/build/treesitter/dl"))
      assert(vkit.fs.copy_file(vkit.root .. "/mk/treesitter.mk", dir .. "/mk/treesitter.mk"))
      assert(vkit.fs.copy_file(vkit.root .. "/deps/treesitter.lock", dir .. "/deps/treesitter.lock"))
    end)
    after_each(function() cleanup() end)

    local function make_stamp()
      local version = lock_entries()["tree-sitter"].version
      local stamp = ("build/treesitter/src/tree-sitter-%s/.verified"):format(version)
      local cmd = ("cd %s && make -s -f mk/treesitter.mk BUILD=build %s > out 2> err"):format(t.quote(dir), stamp)
      local ok = os.execute(cmd)
      return ok, t.slurp(dir .. "/err"), dir .. "/build/treesitter/src/tree-sitter-" .. version
    end

    it("refuses to extract a tarball whose sha256 differs from the lock", function()
      local version = lock_entries()["tree-sitter"].version
      -- A real tarball, but not the pinned one.
      assert(os.execute(("mkdir -p %s/package && echo hostile > %s/package/lib.c && tar -czf %s -C %s package"):format(
        t.quote(dir .. "/x"), t.quote(dir .. "/x"), t.quote(dir .. "/build/treesitter/dl/tree-sitter-" .. version .. ".tgz"),
        t.quote(dir .. "/x"))))
      local ok, err, extracted = make_stamp()
      assert.is_falsy(ok)
      assert.matches("differs from deps/treesitter.lock", err)
      assert.is_nil(vkit.fs.lstat(extracted))
      assert.is_nil(vkit.fs.lstat(extracted .. ".tmp"))
    end)

    it("extracts the pinned tarball when its sha256 matches", function()
      local version = lock_entries()["tree-sitter"].version
      local cached = vkit.root .. "/build/treesitter/dl/tree-sitter-" .. version .. ".tgz"
      if not vkit.fs.lstat(cached) then
        pending("no cached tarball in build/ (built from a tree without build/?)")
        return
      end
      assert(vkit.fs.copy_file(cached, dir .. "/build/treesitter/dl/tree-sitter-" .. version .. ".tgz"))
      local ok, err, extracted = make_stamp()
      assert.is_true(ok, err)
      assert.equal("file", vkit.fs.lstat(extracted .. "/vendor/tree-sitter/lib/src/lib.c").kind)
    end)

    it("refuses a lock entry that is not a sha256", function()
      local lock = t.slurp(dir .. "/deps/treesitter.lock"):gsub("(tree%-sitter %S+ )%x+", "%1abc", 1)
      t.write(dir .. "/deps/treesitter.lock", lock)
      local version = lock_entries()["tree-sitter"].version
      t.write(dir .. "/build/treesitter/dl/tree-sitter-" .. version .. ".tgz", "x")
      local ok, err = make_stamp()
      assert.is_falsy(ok)
      assert.matches("sha256", err)
    end)
  end)
end)
