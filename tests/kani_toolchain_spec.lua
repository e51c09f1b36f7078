-- The Kani toolchain pin, on a real installation-shaped tree built here.
local vkit = require "vkit"
local t = require "tests.support.run"
local toolchain = require "vkit.relational.toolchain"
local support = require "tests.kani_support"

describe("the Kani toolchain pin", function()
  local dir, cleanup, desc, pin
  before_each(function()
    dir, cleanup = t.tempdir()
    desc = support.install(dir)
    pin = assert(toolchain.capture(desc))
  end)
  after_each(function() cleanup() end)

  local function entry(tree, path)
    for _, e in ipairs(pin.trees[tree].entries) do
      if e.path == path then return e end
    end
  end

  local function changes()
    local v = toolchain.validate(pin)
    assert.is_false(v.ok)
    local out = {}
    for _, c in ipairs(v.changes) do out[#out + 1] = c.where .. ":" .. c.path .. ":" .. c.change end
    return out, v
  end

  it("records every file and directory mode, file hashes, links and the root", function()
    local root = pin.trees.kani.entries[1]
    assert.same({ path = ".", kind = "dir", mode = vkit.fs.lstat(desc.kani_root).mode }, root)
    local driver = entry("kani", "bin/kani-driver")
    assert.equal("file", driver.kind)
    assert.equal(493, driver.mode)
    assert.equal(vkit.hash.file(desc.kani_root .. "/bin/kani-driver"), driver.sha256)
    assert.same({ path = "toolchain", kind = "link", mode = 511, target = desc.rust_root }, entry("kani", "toolchain"))
    assert.equal("dir", entry("kani", "bin").kind)
    local big = entry("rust", "lib/librustc_driver-nightly.so")
    assert.equal(3 * 1024 * 1024 + 6, big.size)
    assert.equal(vkit.hash.file(desc.cargo_bin .. "/rustup"), entry("cargo_bin", "cargo").sha256)
    assert.equal(1, #pin.host_libraries)
    assert.equal(desc.host_libraries[1], pin.host_libraries[1].path)
    assert.is_true(toolchain.validate(pin).ok)
  end)

  it("round-trips through its closed JSON format", function()
    local text = vkit.json.encode(pin)
    local again = assert(toolchain.parse(text))
    assert.equal(toolchain.digest(pin), toolchain.digest(again))
    assert.is_true(toolchain.validate(again).ok)
  end)

  it("detects a content change that keeps size and mode (streamed, not stat-based)", function()
    local path = desc.rust_root .. "/lib/librustc_driver-nightly.so"
    local bytes = t.slurp(path)
    local mid = #bytes // 2
    t.write(path, bytes:sub(1, mid) .. "\1" .. bytes:sub(mid + 2))
    assert.same({ "rust:lib/librustc_driver-nightly.so:sha256" }, (changes()))
  end)

  it("detects mode changes of files and directories", function()
    assert(vkit.fs.chmod(desc.kani_root .. "/bin/cbmc", 511))
    assert(vkit.fs.chmod(desc.rust_root .. "/lib", 448))
    assert.same({ "kani:bin/cbmc:mode", "rust:lib:mode" }, (changes()))
  end)

  it("detects added and removed files and a retargeted link", function()
    t.write(desc.cargo_bin .. "/rust-analyzer", "new proxy")
    os.remove(desc.kani_root .. "/bin/kani-compiler")
    os.remove(desc.kani_root .. "/toolchain")
    assert(vkit.fs.symlink("/elsewhere", desc.kani_root .. "/toolchain"))
    local list = changes()
    table.sort(list)
    assert.same({ "cargo_bin:rust-analyzer:added", "kani:bin/kani-compiler:missing", "kani:toolchain:target" }, list)
  end)

  it("detects a file replaced by a link to identical bytes", function()
    local proxy = desc.cargo_bin .. "/rustc"
    os.remove(proxy)
    assert(vkit.fs.symlink(desc.cargo_bin .. "/rustup", proxy))
    assert.same({ "cargo_bin:rustc:kind" }, (changes()))
  end)

  it("detects a changed host library and the rustup binary", function()
    t.write(desc.host_libraries[1], "\127ELF libz patched\n")
    t.write(desc.rustup_binary, "other rustup")
    local list = changes()
    table.sort(list)
    assert.same({ "cargo_bin:rustup:size", "host_libraries:" .. desc.host_libraries[1] .. ":size" }, list)
  end)

  it("reports a missing tree as missing (absent toolchain), not merely changed", function()
    assert(vkit.fs.remove_tree(desc.kani_root))
    local _, v = changes()
    assert.is_true(v.missing)
  end)

  it("refuses special files and a link as a tree root", function()
    assert(vkit.fs.mkfifo(desc.kani_root .. "/bin/pipe"))
    local p, problem = toolchain.capture(desc)
    assert.is_nil(p)
    assert.matches("special file", problem)
    local changed = changes()
    assert.equal(1, #changed)
    assert.matches("^kani:", changed[1])
    os.remove(desc.kani_root .. "/bin/pipe")
    local linked = dir .. "/rust-link"
    assert(vkit.fs.symlink(desc.rust_root, linked))
    local d2 = {}
    for k, v in pairs(desc) do d2[k] = v end
    d2.rust_root = linked
    assert.is_nil((toolchain.capture(d2)))
  end)

  describe("closed format", function()
    local function refused(mutate)
      local doc = vkit.json.decode(vkit.json.encode(pin))
      mutate(doc)
      local p, problem = toolchain.parse(vkit.json.encode(doc))
      assert.is_nil(p)
      return problem
    end

    it("refuses unknown and missing fields", function()
      assert.matches("unknown field", refused(function(d) d.extra = 1 end))
      assert.matches("lacks", refused(function(d) d.home = nil end))
      assert.matches("unknown field", refused(function(d) d.trees.kani.entries[2].note = "x" end))
      assert.matches("unknown field", refused(function(d) d.trees.extra = d.trees.kani end))
    end)

    it("refuses malformed entries", function()
      assert.matches("sha256", refused(function(d) d.trees.rust.entries[3].sha256 = "abc" end))
      assert.matches("mode", refused(function(d) d.trees.rust.entries[2].mode = 99999 end))
      assert.matches("relative", refused(function(d) d.trees.rust.entries[2].path = "../escape" end))
      assert.matches("twice", refused(function(d)
        local e = d.trees.rust.entries
        e[#e + 1] = vkit.json.decode(vkit.json.encode(e[2]))
      end))
      assert.matches("root directory", refused(function(d) table.remove(d.trees.kani.entries, 1) end))
    end)

    it("refuses a layout Kani would not run from", function()
      assert.matches("launcher", refused(function(d) d.launcher = "/usr/bin/kani" end))
      assert.matches("rustup binary", refused(function(d) d.rustup.binary = d.trees.cargo_bin.root .. "/missing" end))
      assert.matches("named kani%-0%.67%.0", refused(function(d) d.kani_version = "0.67.0" end))
      assert.matches("toolchain link", refused(function(d)
        for _, e in ipairs(d.trees.kani.entries) do
          if e.path == "toolchain" then e.target = "/other" end
        end
      end))
      assert.matches("absolute", refused(function(d) d.home = "relative/home" end))
      assert.matches("not valid JSON", (select(2, toolchain.parse "{")))
      assert.matches("duplicate", (select(2, toolchain.parse '{"schema":1,"schema":2}')))
    end)
  end)
end)
