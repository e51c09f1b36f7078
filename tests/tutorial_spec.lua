-- docs/tutorial.md, run verbatim (issue 18 item 2): every `sh` block in
-- order in one bash session, from an empty directory, with this build's
-- vkit first on PATH; each block must end with status 0 and print, in
-- order, the lines of the `text` block that follows it (`…` matches
-- anything).  The scripts part 2 writes are the example's own files, byte
-- for byte, so the tutorial and examples/external cannot drift apart.
local vkit = require "vkit"
local t = require "tests.support.run"
local shows = require("tests.support.transcript").shows

local TUTORIAL = vkit.root .. "/docs/tutorial.md"

-- The fenced blocks: {lang, body} in document order.
local function blocks(markdown)
  local out = {}
  for lang, body in markdown:gmatch "\n```(%w*)\n(.-)\n```\n" do out[#out + 1] = { lang = lang, body = body .. "\n" } end
  return out
end

-- Each sh block with the text block that follows it, before the next sh block.
local function steps(list)
  local out = {}
  for _, b in ipairs(list) do
    if b.lang == "sh" then
      out[#out + 1] = { script = b.body }
    elseif b.lang == "text" and out[#out] and not out[#out].expected then
      out[#out].expected = b.body
    end
  end
  return out
end

-- The files the sh blocks write with `cat > PATH <<'EOF'`.
local function heredocs(list)
  local out = {}
  for _, b in ipairs(list) do
    if b.lang == "sh" then
      for path, body in b.body:gmatch "cat > ([%w_./-]+) <<'EOF'\n(.-\n)EOF\n" do out[path] = body end
    end
  end
  return out
end

describe("docs/tutorial.md", function()
  local markdown = assert(vkit.fs.read(TUTORIAL))
  local list = blocks(markdown)

  it("writes the external example's own specification and scripts, byte for byte", function()
    local files = heredocs(list)
    for _, path in ipairs { "spec/bvadd.smt2", "verification/backend/smtlib.py", "verification/backend/produce.py",
                            "verification/backend/check.py" } do
      assert.is_string(files[path], path .. " is not written by the tutorial")
      assert.equal(assert(vkit.fs.read(vkit.root .. "/examples/external/" .. path)), files[path], path)
    end
  end)

  it("runs as written, from an empty directory, and shows what it says", function()
    local all = steps(list)
    assert.is_true(#all >= 12, "only " .. #all .. " sh blocks")
    local dir, cleanup = t.tempdir()
    assert(vkit.fs.mkdirs(dir .. "/bin"))
    assert(vkit.fs.mkdirs(dir .. "/home"))
    assert(vkit.fs.mkdirs(dir .. "/work"))
    assert(vkit.fs.symlink(vkit.exe, dir .. "/bin/vkit"))
    local script = { "cd " .. t.quote(dir .. "/work") }
    for i, step in ipairs(all) do
      script[#script + 1] = step.script
      script[#script + 1] = ("printf '\\n@@tutorial-block %d %%d\\n' $?"):format(i)
    end
    t.write(dir .. "/tutorial.sh", table.concat(script, "\n") .. "\n")
    local cmd = ("env -i HOME=%s PATH=%s LC_ALL=C.UTF-8 timeout 1800 bash %s > %s 2>&1"):format(t.quote(dir .. "/home"),
      t.quote(dir .. "/bin:/usr/bin:/bin"), t.quote(dir .. "/tutorial.sh"), t.quote(dir .. "/out"))
    os.execute(cmd)
    local out = t.slurp(dir .. "/out")
    t.kill_workers(dir .. "/work/tutorial")
    t.kill_workers(dir .. "/work/adder")
    t.kill_workers(dir .. "/work/clamp")
    local from = 1
    for i, step in ipairs(all) do
      local s, e, status = out:find(("\n@@tutorial%%-block %d (%%d+)\n"):format(i), from)
      assert(s, ("block %d did not finish:\n%s\n--- output:\n%s"):format(i, step.script, out:sub(from)))
      local shown = out:sub(from, s)
      assert(status == "0", ("block %d ended with status %s:\n%s\n--- output:\n%s"):format(i, status, step.script, shown))
      if step.expected then
        local ok, missing = shows(shown, step.expected)
        assert(ok, ("block %d does not show %q:\n%s\n--- output:\n%s"):format(i, tostring(missing), step.script, shown))
      end
      from = e
    end
    cleanup()
  end)
end)
