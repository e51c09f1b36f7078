-- `make install PREFIX=...` installs a whole vkit (issue 18 item 4): from a
-- copy of the checkout, which is then removed, the installed binary, run
-- from a directory far from both, runs the demo (certifications in Rust,
-- Python and TypeScript, the TypeScript compiler found in the installed
-- tree), the external demo, verifies VAC bundles and serves MCP to the
-- official SDK client; its man page and completion come from --help; and
-- `make uninstall` removes exactly what was installed.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"

local ROOT = vkit.root

-- Runs a shell command; returns its status and output.
local function sh(cmd)
  local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-test-")
  local _, _, code = os.execute(("(%s) > %s 2>&1"):format(cmd, t.quote(dir .. "/out")))
  local out = t.slurp(dir .. "/out")
  vkit.fs.remove_tree(dir)
  return code, out
end

-- Every path under dir with its kind and, for files, its digest.
local function listing(dir)
  local out = {}
  for _, e in ipairs(assert(vkit.fs.walk(dir))) do
    out[#out + 1] = e.path .. " " .. e.kind .. (e.kind == "file" and (" " .. vkit.hash.file(dir .. "/" .. e.path)) or "")
  end
  return out
end

-- The checkout, copied as a user would have it after `make` (no Git
-- metadata, no runs, no test installs), timestamps kept so make rebuilds nothing.
local function copy_checkout(dest)
  assert(vkit.fs.mkdirs(dest))
  local excludes = {}
  for _, p in ipairs { "./.git", "./.vkit", "./build/demo", "./build/demo-external", "./build/docs", "./build/asan",
                       "./build/asan-lib", "./build/asan-pic", "./vkit-asan", "./tests/mcp/node_modules",
                       "./tests/junit/node_modules" } do
    excludes[#excludes + 1] = "--exclude=" .. t.quote(p)
  end
  local code, out = sh(("tar -C %s %s -cf - . | tar -C %s -xf -"):format(t.quote(ROOT), table.concat(excludes, " "),
    t.quote(dest)))
  assert(code == 0, out)
end

-- Drives `vkit mcp` (the installed one) with the official SDK client of this checkout.
local function mcp(exe, project, dir)
  assert(os.execute("make -s -C " .. t.quote(ROOT) .. " mcp-client >&2"))
  t.write(dir .. "/mcp.json", json.encode { vkit = exe, project = project, scenario = "verify",
                                            verify = { component = "bvadd" } })
  local _, _, code = os.execute(("cd %s && node %s %s > %s 2> %s"):format(t.quote(dir),
    t.quote(ROOT .. "/tests/mcp/client.mjs"), t.quote(dir .. "/mcp.json"), t.quote(dir .. "/mcp.out"),
    t.quote(dir .. "/mcp.err")))
  local out = t.slurp(dir .. "/mcp.out")
  assert(code == 0, out .. t.slurp(dir .. "/mcp.err"))
  return assert(json.decode(out))
end

describe("make install", function()
  it("installs a vkit that works whole with the checkout gone, and make uninstall removes exactly it", function()
    local dir, cleanup = t.tempdir()
    local src, prefix, far = dir .. "/checkout", dir .. "/prefix", dir .. "/far/away/from/both"
    -- files of the prefix that are not vkit's: uninstall must leave them
    assert(vkit.fs.mkdirs(prefix .. "/bin"))
    assert(vkit.fs.mkdirs(prefix .. "/share/man/man1"))
    t.write(prefix .. "/bin/other-tool", "#!/bin/sh\n")
    t.write(prefix .. "/share/man/man1/other-tool.1", ".TH OTHER 1\n")
    local before = listing(prefix)

    copy_checkout(src)
    local code, out = sh(("make -s -C %s install PREFIX=%s"):format(t.quote(src), t.quote(prefix)))
    assert(code == 0, out)
    assert(vkit.fs.remove_tree(src))

    assert(vkit.fs.mkdirs(far))
    for _, bundle in ipairs { "valid/v01", "tampered/sha256-mismatch" } do
      assert(sh(("cp -a %s %s"):format(t.quote(ROOT .. "/fixtures/vac/" .. bundle), t.quote(far))) == 0)
    end
    local exe = prefix .. "/bin/vkit"
    -- one executable, and beside the library the shared modules it loads on first use
    assert.equal("file", vkit.fs.lstat(exe).kind)
    assert.is_nil(vkit.fs.lstat(prefix .. "/lib/vkit/vkit"))
    assert.equal("file", vkit.fs.lstat(prefix .. "/lib/vkit/vkit_git.so").kind)
    local function run(cmd)
      return sh(("cd %s && env -i HOME=%s PATH=%s:/usr/bin:/bin %s"):format(t.quote(far), t.quote(os.getenv "HOME" or "/root"),
        t.quote(prefix .. "/bin"), cmd))
    end

    -- nothing installed names the removed copy
    code, out = sh(("grep -rl %s %s"):format(t.quote(src), t.quote(prefix)))
    assert.equal(1, code, "installed files name the checkout copy: " .. out)

    -- the demo: nine certifications, three languages, the installed TypeScript compiler; nine more of clamp
    code, out = run(("vkit script %s/share/vkit/examples/certify.lua --dir %s/demo"):format(prefix, far))
    assert.equal(0, code, out)
    for _, language in ipairs { "rust", "python", "typescript" } do
      for _, variant in ipairs { "conforming", "violating", "one_input" } do
        assert.matches("\n" .. language .. "/" .. variant .. " +%S+ +as expected", out)
        -- and the multi-parameter demo (issue 34): clamp(x, lo, hi), every one of 44,541 inputs
        assert.matches("\nclamp " .. language .. "/" .. variant .. " +%S+ +as expected [^\n]*exhaustive %S+ %(44541 of 44541%)",
          out)
      end
    end
    local repo = assert(vkit.git.open(far .. "/demo/project"))
    local env = json.decode(assert(repo:read(assert(repo:head()), "verification/environment.json", 1 << 20)).bytes)
    repo:close()
    local tsc = env.toolchains.typescript.tsc.path
    assert.equal(prefix .. "/share/vkit/typescript/", tsc:sub(1, #prefix + 23), tsc)

    -- the external protocol: verify, replay, a false law blocked
    code, out = run(("vkit script %s/share/vkit/examples/external/demo.lua --dir %s/ext"):format(prefix, far))
    assert.equal(0, code, out)

    -- VAC bundles
    code, out = run "vkit vac verify v01"
    assert.equal(0, code, out)
    code, out = run "vkit vac verify sha256-mismatch"
    assert.equal(1, code, out)
    assert.matches("sha256-mismatch", out, 1, true)

    -- MCP, served by the installed binary to the official SDK client
    local report = mcp(exe, far .. "/ext/project", far)
    assert.same({}, report.not_jsonrpc)
    assert.is_true(report.steps.verify.ok, json.encode(report.steps.verify))
    -- the external demo's HEAD holds its false law: BLOCKED, through MCP as through the CLI
    assert.equal("BLOCKED", report.steps.wait.value.structured.outcome, json.encode(report.steps.wait))
    assert.equal("checker-unknown", report.steps.wait.value.structured.summary.reason)

    -- the man page and the completion, from the same source as --help
    local manual = require "vkit.commands.help.manual"
    assert.equal(manual.roff(vkit.version), vkit.fs.read(prefix .. "/share/man/man1/vkit.1"))
    assert.equal(manual.bash(), vkit.fs.read(prefix .. "/share/bash-completion/completions/vkit"))
    code, out = run(("MANWIDTH=200 man -l %s/share/man/man1/vkit.1"):format(prefix))
    assert.equal(0, code, out)
    for _, name in ipairs(require("vkit.cli").command_names()) do assert.matches("\n   " .. name .. "\n", out, 1, true) end
    assert.matches("vkit change intent init", out, 1, true)
    code, out = run(("bash -c %s"):format(t.quote(("source %s/share/bash-completion/completions/vkit; "
      .. "COMP_WORDS=(vkit change intent --tool); COMP_CWORD=3; _vkit; echo \"${COMPREPLY[*]}\""):format(prefix))))
    assert.equal(0, code, out)
    assert.equal("--toolchain-root\n", out)
    assert.is_table(vkit.fs.lstat(prefix .. "/share/doc/vkit/tutorial.md"))
    assert.is_table(vkit.fs.lstat(prefix .. "/share/doc/vkit/api/modules/vkit.change.html"))

    t.kill_workers(far .. "/demo/project")
    t.kill_workers(far .. "/ext/project")
    code, out = sh(("make -s -C %s uninstall PREFIX=%s"):format(t.quote(ROOT), t.quote(prefix)))
    assert(code == 0, out)
    assert.same(before, listing(prefix))
    cleanup()
  end)
end)
