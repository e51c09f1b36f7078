-- `make uninstall` (scripts/install.lua, scripts/install_manifest.lua) never
-- removes anything outside PREFIX (issue 30 item 4).  The whole manifest is
-- checked first, every entry walked beneath PREFIX one component at a time
-- with no link followed: an entry that leaves PREFIX (absolute, "..") or
-- crosses a symbolic link (a directory link on its way, a link at its end)
-- refuses the uninstall, named, and nothing at all is removed.  Removal
-- walks the same way again (vkit.fs directory handles: dir:remove and
-- dir:rmdir), so a link swapped in after the check is refused there.
local vkit = require "vkit"
local t = require "tests.support.run"
local fs = require "vkit.fs" -- the C module: directory handles

local ROOT = vkit.root
local SCRIPT = ROOT .. "/scripts/install.lua"

local function write(path, bytes)
  assert(vkit.fs.mkdirs(path:match "^(.*)/[^/]*$"))
  t.write(path, bytes)
end

-- Every path under dir with its kind, a file's digest, a link's target.
local function listing(dir)
  local out = {}
  for _, e in ipairs(assert(vkit.fs.walk(dir))) do
    local extra = e.kind == "file" and vkit.hash.file(dir .. "/" .. e.path) or e.kind == "link" and e.target or ""
    out[#out + 1] = ("%s %s %s"):format(e.path, e.kind, extra)
  end
  return out
end

-- A prefix as `make install` leaves it (a few files, the directories it
-- made, the manifest), beside a file of another package it must keep, and
-- a directory outside it that nothing may touch.  Returns prefix, outside,
-- the manifest's lines.
local function installed(dir)
  local prefix, outside = dir .. "/prefix", dir .. "/outside"
  write(prefix .. "/bin/other-tool", "not vkit's\n")
  local lines = {}
  for _, rel in ipairs { "bin/vkit", "lib/vkit/vkit_git.so", "share/vkit/lua/vkit/init.lua", "share/doc/vkit/README.md",
                         "share/doc/vkit/api/index.html" } do
    write(prefix .. "/" .. rel, rel .. "\n")
    lines[#lines + 1] = "f " .. rel
  end
  -- share/vkit/typescript: a directory install made that holds no file of the manifest
  assert(vkit.fs.mkdirs(prefix .. "/share/vkit/typescript"))
  for _, rel in ipairs { "lib", "lib/vkit", "share", "share/vkit", "share/vkit/lua", "share/vkit/lua/vkit",
                         "share/vkit/typescript", "share/doc", "share/doc/vkit", "share/doc/vkit/api" } do
    lines[#lines + 1] = "d " .. rel
  end
  for _, rel in ipairs { "victim", "README.md", "api/index.html", "sub/victim", "init.lua" } do
    write(outside .. "/" .. rel, "outside: " .. rel .. "\n")
  end
  assert(vkit.fs.mkdirs(outside .. "/empty"))
  return prefix, outside, lines
end

local function set_manifest(prefix, lines)
  write(prefix .. "/share/vkit/install-manifest.txt", table.concat(lines, "\n") .. "\n")
end

local function uninstall(prefix)
  local r = vkit.proc.run { exe = vkit.exe, argv = { "vkit", "script", SCRIPT, "uninstall", prefix }, cwd = ROOT,
                            env = { PATH = "/usr/bin:/bin" }, deadline_ms = 60000 }
  assert.equal("exited", r.status)
  return r
end

-- Uninstalls with the manifest `lines` after `arrange(prefix, outside)`
-- and expects a refusal naming `entry`, with nothing removed anywhere.
local function refused(lines_of, arrange, entry)
  local dir, cleanup = t.tempdir()
  local prefix, outside, lines = installed(dir)
  lines = lines_of(lines)
  set_manifest(prefix, lines)
  if arrange then arrange(prefix, outside) end
  local before_prefix, before_outside = listing(prefix), listing(outside)
  local r = uninstall(prefix)
  assert.equal(1, r.code, r.stdout .. r.stderr)
  assert.matches("refusing to uninstall", r.stderr, 1, true)
  assert.matches(entry, r.stderr, 1, true)
  assert.matches("nothing was removed", r.stderr, 1, true)
  assert.same(before_outside, listing(outside))
  assert.same(before_prefix, listing(prefix))
  cleanup()
  return r
end

local function plus(...)
  local extra = { ... }
  return function(lines)
    for _, l in ipairs(extra) do table.insert(lines, 2, l) end -- early: nothing after it may go either
    return lines
  end
end

describe("make uninstall", function()
  it("runs scripts/install.lua uninstall with the vkit just built", function()
    assert.matches('\nuninstall: vkit\n\t%./vkit script scripts/install%.lua uninstall "%$%(DESTDIR%)%$%(PREFIX%)"\n',
      t.slurp(ROOT .. "/Makefile"))
  end)

  it("removes what the manifest lists and the directories install made, and nothing else", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local prefix, outside, lines = installed(dir)
    local before_outside = listing(outside)
    -- a file of another package inside a directory install made: it stays, and so does its directory
    write(prefix .. "/share/doc/other.txt", "not vkit's\n")
    set_manifest(prefix, lines)
    local r = uninstall(prefix)
    assert.equal(0, r.code, r.stderr)
    assert.equal(("removed 5 files from %s\n"):format(prefix), r.stdout)
    assert.same({ "bin dir ", "bin/other-tool file " .. vkit.hash.sha256 "not vkit's\n", "share dir ",
                  "share/doc dir ", "share/doc/other.txt file " .. vkit.hash.sha256 "not vkit's\n" }, listing(prefix))
    assert.same(before_outside, listing(outside))
    -- again: nothing installed, nothing to do
    r = uninstall(prefix)
    assert.equal(0, r.code, r.stderr)
    assert.equal(("removed 0 files from %s\n"):format(prefix), r.stdout)
  end)

  describe("refuses, naming the entry, and removes nothing at all", function()
    it("an entry through a directory link", function()
      refused(plus("f share/link/victim"), function(prefix, outside)
        assert(vkit.fs.symlink(outside, prefix .. "/share/link"))
      end, "share/link/victim")
    end)

    it("a directory entry through a link, and a directory entry that is a link", function()
      refused(plus("d share/link/empty"), function(prefix, outside)
        assert(vkit.fs.symlink(outside, prefix .. "/share/link"))
      end, "share/link/empty")
      refused(plus("d share/link"), function(prefix, outside)
        assert(vkit.fs.symlink(outside .. "/empty", prefix .. "/share/link"))
      end, '"d share/link"')
    end)

    it("a directory install made, replaced by a link to one outside holding the same names", function()
      refused(function(lines) return lines end, function(prefix, outside)
        assert(vkit.fs.remove_tree(prefix .. "/share/doc/vkit"))
        assert(vkit.fs.symlink(outside, prefix .. "/share/doc/vkit"))
      end, "share/doc/vkit")
    end)

    it("a file entry that is a link", function()
      refused(function(lines) return lines end, function(prefix, outside)
        assert(os.remove(prefix .. "/share/doc/vkit/README.md"))
        assert(vkit.fs.symlink(outside .. "/README.md", prefix .. "/share/doc/vkit/README.md"))
      end, '"f share/doc/vkit/README.md" is a symbolic link')
    end)

    it("entries with '..' components", function()
      for _, entry in ipairs { "f ../outside/victim", "f share/../../outside/victim", "d share/vkit/..", "d ..",
                               "f share/./vkit/lua/vkit/init.lua", "f share//doc/vkit/README.md" } do
        refused(plus(entry), nil, ("%q"):format(entry))
      end
    end)

    it("an absolute entry", function()
      local dir, cleanup = t.tempdir()
      finally(cleanup)
      local outside = dir .. "/abs"
      write(outside .. "/victim", "outside\n")
      local r = refused(plus("f " .. outside .. "/victim"), nil, "f " .. outside .. "/victim")
      assert.matches("is absolute", r.stderr, 1, true)
      assert.equal("outside\n", t.slurp(outside .. "/victim"))
    end)

    it("a manifest reached through a link, and one that is not a manifest", function()
      local r = refused(function(lines) return lines end, function(prefix, outside)
        -- share/vkit moved outside and linked back: the manifest itself crosses the link
        assert(os.rename(prefix .. "/share/vkit", outside .. "/vkit"))
        assert(vkit.fs.symlink(outside .. "/vkit", prefix .. "/share/vkit"))
      end, "share/vkit/install-manifest.txt")
      assert.matches("is a symbolic link", r.stderr, 1, true)
      refused(plus("x share/doc/vkit/README.md"), nil, '"x share/doc/vkit/README.md"')
      local dir, cleanup = t.tempdir()
      finally(cleanup)
      local prefix = installed(dir)
      write(prefix .. "/share/vkit/install-manifest.txt", "f bin/vkit\nf lib/vkit/vkit_git.so") -- cut short
      local before = listing(prefix)
      r = uninstall(prefix)
      assert.equal(1, r.code)
      assert.matches("does not end with a newline", r.stderr, 1, true)
      assert.same(before, listing(prefix))
    end)
  end)

  -- A link put in place after the whole manifest was checked: the removal
  -- itself walks beneath the prefix without following it.  The two steps
  -- are run here one after the other, the link swapped in between.
  describe("refuses a link swapped in after the check, at the removal itself", function()
    local function swapped(swap, entry)
      local manifest = dofile(ROOT .. "/scripts/install_manifest.lua")
      local dir, cleanup = t.tempdir()
      local prefix, outside, lines = installed(dir)
      set_manifest(prefix, lines)
      local before_outside = listing(outside)
      local plan = assert(manifest.check(prefix))
      swap(prefix, outside)
      local removed, message = manifest.remove(plan)
      assert.is_nil(removed)
      assert.matches("refused " .. entry, message, 1, true)
      assert.same(before_outside, listing(outside))
      local after = listing(prefix)
      cleanup()
      return message, after
    end

    it("a directory on the way", function()
      local message, after = swapped(function(prefix, outside)
        assert(os.rename(prefix .. "/share/doc/vkit", prefix .. "/share/doc/moved"))
        assert(vkit.fs.symlink(outside, prefix .. "/share/doc/vkit"))
      end, "share/doc/vkit/README.md")
      assert.matches("share/doc/vkit: is a symbolic link", message, 1, true)
      -- removal stopped there: the manifest is still in place to run it again
      assert.is_true(#after > 0)
    end)

    it("a file", function()
      local message = swapped(function(prefix, outside)
        assert(os.remove(prefix .. "/share/vkit/lua/vkit/init.lua"))
        assert(vkit.fs.symlink(outside .. "/init.lua", prefix .. "/share/vkit/lua/vkit/init.lua"))
      end, "share/vkit/lua/vkit/init.lua")
      assert.matches("is a symbolic link", message, 1, true)
    end)

    it("an empty directory install made", function()
      local message = swapped(function(prefix, outside)
        assert(vkit.fs.remove_tree(prefix .. "/share/vkit/typescript"))
        assert(vkit.fs.symlink(outside .. "/empty", prefix .. "/share/vkit/typescript"))
      end, "share/vkit/typescript")
      assert.matches("is a symbolic link", message, 1, true)
    end)
  end)
end)

describe("vkit.fs directory handles remove beneath themselves", function()
  local function code_of(...) return select(3, ...) end

  it("dir:remove: a regular file, never a link, a directory or through a link", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    write(dir .. "/in/a/file", "x")
    write(dir .. "/out/file", "outside")
    assert(vkit.fs.symlink(dir .. "/out", dir .. "/in/link"))
    assert(vkit.fs.symlink(dir .. "/out/file", dir .. "/in/a/file-link"))
    assert(vkit.fs.mkfifo(dir .. "/in/fifo"))
    local d <close> = assert(fs.opendir(dir .. "/in"))
    assert.equal("link-in-path", code_of(d:remove "link/file"))
    assert.equal("link-in-path", code_of(d:remove "a/file-link"))
    assert.equal("link-in-path", code_of(d:remove "link"))
    assert.equal("not-a-regular-file", code_of(d:remove "a"))
    assert.equal("not-a-regular-file", code_of(d:remove "fifo"))
    assert.equal("ENOENT", code_of(d:remove "a/none"))
    assert.equal("outside", t.slurp(dir .. "/out/file"))
    assert.is_true(d:remove "a/file")
    assert.is_nil(vkit.fs.lstat(dir .. "/in/a/file"))
    assert.has_error(function() d:remove "../out/file" end)
    assert.has_error(function() d:remove(dir .. "/out/file") end)
    assert.equal("outside", t.slurp(dir .. "/out/file"))
  end)

  it("dir:rmdir: an empty directory, never a link or through one", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    assert(vkit.fs.mkdirs(dir .. "/in/a/empty"))
    assert(vkit.fs.mkdirs(dir .. "/out/empty"))
    write(dir .. "/in/full/file", "x")
    assert(vkit.fs.symlink(dir .. "/out", dir .. "/in/link"))
    assert(vkit.fs.symlink(dir .. "/out/empty", dir .. "/in/empty-link"))
    local d <close> = assert(fs.opendir(dir .. "/in"))
    assert.equal("link-in-path", code_of(d:rmdir "link/empty"))
    assert.equal("link-in-path", code_of(d:rmdir "empty-link"))
    assert.equal("ENOTEMPTY", code_of(d:rmdir "full"))
    assert.equal("not-a-directory", code_of(d:rmdir "full/file"))
    assert.equal("ENOENT", code_of(d:rmdir "none"))
    assert.is_table(vkit.fs.lstat(dir .. "/out/empty"))
    assert.is_true(d:rmdir "a/empty")
    assert.is_nil(vkit.fs.lstat(dir .. "/in/a/empty"))
    assert.has_error(function() d:rmdir "../out/empty" end)
  end)
end)
