-- Environment models that survive a toolchain's home (issue 18 item 5):
-- `intent init --toolchain-root DIR` pins every tool by its path under DIR,
-- so an intent accepted with one installation certifies with another that
-- has the same bytes at that path (here: the root removed and installed
-- again), and a file with other bytes is named, with both digests.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"

local GIT = "git -c user.name=spec -c user.email=spec@example.invalid"
local RUST_HOME = (os.getenv "HOME" or "/root") .. "/.rustup/toolchains/stable-x86_64-unknown-linux-gnu"

local function sh(dir, script)
  local out = dir .. "/.sh-out"
  local _, _, code = os.execute(("cd %s && (%s) > %s 2>&1"):format(t.quote(dir), script, t.quote(out)))
  local text = t.slurp(out)
  os.remove(out)
  assert(code == 0, script .. "\n" .. text)
  return text
end

-- A repository with an intent accepted for `source` under the toolchain
-- root, and a conforming candidate; returns what certify needs.
local function accepted_project(dir, language, path, base, candidate, root)
  local project = dir .. "/project"
  assert(vkit.fs.mkdirs(project .. "/src"))
  t.write(project .. "/" .. path, base)
  sh(project, "git init -q -b main && git add -A && " .. GIT .. " commit -q -m base")
  local r = t.vkit { "change", "intent", "init", "--project", project, "--language", language, "--source", path,
                     "--function", "score", "--domain", "0..99", "--observations", "0..100", "--toolchain-root", root,
                     "--json" }
  assert(r.code == 0, r.stderr)
  local out = json.decode(r.stdout)
  t.write(project .. "/" .. out.accepted_list.path, out.accepted_list.bytes)
  sh(project, "git add -A && " .. GIT .. " commit -q -m 'propose and accept'")
  local target = sh(project, "git rev-parse HEAD"):match "%x+"
  t.write(project .. "/" .. path, candidate)
  sh(project, GIT .. " commit -q -am refactor")
  local head = sh(project, "git rev-parse HEAD"):match "%x+"
  r = t.vkit { "change", "request", "--project", project, "--intent", out.digest, "--base", target, "--candidate", head,
               "--output", dir .. "/request.json" }
  assert(r.code == 0, r.stderr)
  local environment = json.decode(vkit.fs.read(project .. "/verification/score/environment.json"))
  return { project = project, target = target, request = dir .. "/request.json", environment = environment }
end

-- Certifies with the exhaustive method, waiting for the run whatever the
-- machine's speed; returns the exit status and what certify and run show printed.
local function certify(p)
  local r = t.vkit { "change", "certify", "--project", p.project, "--request", p.request, "--trusted-target", p.target,
                     "--method", "exhaustive", "--wait", "60", "--json" }
  local summary = json.decode(r.stdout)
  local id = type(summary) == "table" and summary.run_id
  assert(id, r.stdout .. r.stderr)
  local code = r.code
  while code == 4 do code = t.vkit({ "run", "wait", "--run", id, "--project", p.project, "--wait", "60" }).code end
  local show = t.vkit { "run", "show", "--run", id, "--project", p.project }
  return code, r.stdout .. show.stdout
end

-- Every path the environment model names.
local function paths_of(environment)
  local out = {}
  for _, chain in pairs(environment.toolchains) do
    for key, tool in pairs(chain) do
      if key == "dependencies" then
        for _, d in ipairs(tool) do out[#out + 1] = d.path end
      else
        out[#out + 1] = tool.path
      end
    end
  end
  return out
end

-- Every path the model names lies under root.
local function assert_under(root, environment)
  local paths = paths_of(environment)
  assert.is_true(#paths > 0)
  for _, path in ipairs(paths) do
    assert.equal(root .. "/", path:sub(1, #root + 1), path .. " is outside the toolchain root")
  end
end

describe("a toolchain declared under a stable root", function()
  it("certifies after the root is installed again with the same bytes, and names the file that differs", function()
    local dir, cleanup = t.tempdir()
    local root = dir .. "/opt/python"
    local function install()
      assert(vkit.fs.mkdirs(root .. "/bin"))
      assert(vkit.fs.copy_file("/usr/bin/python3.11", root .. "/bin/python3.11"))
    end
    install()
    local p = accepted_project(dir, "python", "src/score.py", "def score(x):\n    return min(2 * x, 100)\n",
      "def score(x):\n    return 100 if x >= 50 else x + x\n", root)
    assert_under(root, p.environment)
    local code, out = certify(p)
    assert.equal(0, code, out)
    assert.matches("all_inputs_conform", out, 1, true)

    -- another machine: the same toolchain bytes installed afresh at that path
    assert(vkit.fs.remove_tree(root))
    install()
    code, out = certify(p)
    assert.equal(0, code, out)

    -- a toolchain with other bytes: refused, the file named with both digests
    assert(os.remove(root .. "/bin/python3.11"))
    local bytes = assert(vkit.fs.read("/usr/bin/python3.11", 64 << 20))
    t.write(root .. "/bin/python3.11", bytes .. "\0")
    assert(vkit.fs.chmod(root .. "/bin/python3.11", 493))
    code, out = certify(p)
    assert.equal(3, code, out)
    assert.matches("infrastructure_failure", out, 1, true)
    assert.matches(root .. "/bin/python3.11: pinned sha256 " .. vkit.hash.sha256(bytes) .. ", actual "
      .. vkit.hash.sha256(bytes .. "\0"), out, 1, true)
    t.kill_workers(p.project)
    cleanup()
  end)

  it("binds on a second root at another path, which the host names when it queues", function()
    local dir, cleanup = t.tempdir()
    local first, second = dir .. "/opt/rust", dir .. "/srv/toolchains/rust-elsewhere"
    assert(vkit.fs.mkdirs(dir .. "/opt"))
    assert(vkit.fs.mkdirs(dir .. "/srv/toolchains"))
    -- two real directories with the same bytes (hard links: no copy of 500 MB, no symbolic link)
    assert(os.execute(("cp -al %s %s"):format(t.quote(RUST_HOME), t.quote(first))))
    local p = accepted_project(dir, "rust", "src/score.rs",
      "pub fn score(x: u32) -> u32 {\n    if x >= 50 { 100 } else { 2 * x }\n}\n",
      "pub fn score(x: u32) -> u32 {\n    if x < 50 { x + x } else { 100 }\n}\n", first)
    assert(os.execute(("cp -al %s %s"):format(t.quote(first), t.quote(second))))
    assert(vkit.fs.remove_tree(first))
    -- the declared root is gone: without the host's word it cannot bind
    local code, out = certify(p)
    assert.equal(3, code, out)
    assert.matches(first .. "/bin/rustc", out, 1, true)
    local saved = t.env
    t.env = { VKIT_TOOLCHAIN_ROOTS = first .. "=" .. second }
    code, out = certify(p)
    t.env = saved
    assert.equal(0, code, out)
    assert.matches("all_inputs_conform", out, 1, true)
    -- the evidence says where the root was read from
    local report = assert(vkit.fs.read(p.project .. "/.vkit/runs/" .. out:match '"run_id": "([^"]+)"'
      .. "/attempts/1/exhaustive/exhaustive-report.v1.json", 1 << 26))
    assert.same({ { from = first, to = second } }, json.decode(report).runtime_identity.toolchain_roots)
    -- a malformed value is refused before anything is queued
    t.env = { VKIT_TOOLCHAIN_ROOTS = "relative=" .. second }
    local r = t.vkit { "change", "certify", "--project", p.project, "--request", p.request, "--trusted-target", p.target }
    t.env = saved
    assert.equal(2, r.code, r.stderr)
    assert.matches('VKIT_TOOLCHAIN_ROOTS: "relative=' .. second .. '" is not FROM=TO with two absolute paths', r.stderr, 1, true)
    t.kill_workers(p.project)
    cleanup()
  end)

  it("names a Rust standard-library file whose bytes differ", function()
    local dir, cleanup = t.tempdir()
    local root = dir .. "/opt/rust"
    assert(vkit.fs.mkdirs(dir .. "/opt"))
    -- a root with the same bytes as this host's toolchain (hard links: no copy of 500 MB)
    assert(os.execute(("cp -al %s %s"):format(t.quote(RUST_HOME), t.quote(root))))
    local p = accepted_project(dir, "rust", "src/score.rs",
      "pub fn score(x: u32) -> u32 {\n    if x >= 50 { 100 } else { 2 * x }\n}\n",
      "pub fn score(x: u32) -> u32 {\n    if x < 50 { x + x } else { 100 }\n}\n", root)
    assert.equal(root .. "/bin/rustc", p.environment.toolchains.rust.rustc.path)
    assert_under(root, p.environment)
    local code, out = certify(p)
    assert.equal(0, code, out)
    -- replace (never rewrite: the file is a hard link to the host's) one rlib
    local std = root .. "/lib/rustlib/x86_64-unknown-linux-gnu/lib"
    local rlib
    for _, name in ipairs(vkit.fs.list(std)) do
      if name:match "^libcore%-.*%.rlib$" then rlib = std .. "/" .. name end
    end
    local bytes = assert(vkit.fs.read(rlib, 256 << 20))
    assert(os.remove(rlib))
    t.write(rlib, bytes .. "tampered")
    code, out = certify(p)
    assert.equal(3, code, out)
    assert.matches("dependency " .. rlib .. ": pinned sha256 " .. vkit.hash.sha256(bytes), out, 1, true)
    assert.equal(vkit.hash.sha256(bytes), vkit.hash.file(RUST_HOME .. rlib:sub(#root + 1)), "the host's file changed")
    t.kill_workers(p.project)
    cleanup()
  end)

  it("refuses a tool that leads out of the root, and a root with no toolchain", function()
    local dir, cleanup = t.tempdir()
    local project = dir .. "/project"
    assert(vkit.fs.mkdirs(project .. "/src"))
    t.write(project .. "/src/score.py", "def score(x):\n    return x\n")
    sh(project, "git init -q -b main && git add -A && " .. GIT .. " commit -q -m base")
    local root = dir .. "/opt/python"
    assert(vkit.fs.mkdirs(root .. "/bin"))
    assert(vkit.fs.symlink("/usr/bin/python3.11", root .. "/bin/python3.11"))
    local argv = { "change", "intent", "init", "--project", project, "--language", "python", "--source", "src/score.py",
                   "--function", "score", "--domain", "0..9", "--observations", "0..9", "--toolchain-root", root }
    local r = t.vkit(argv)
    assert.equal(1, r.code)
    assert.matches(root .. "/bin/python3.11 leads to /usr/bin/python3.11, outside the toolchain root", r.stderr, 1, true)
    argv[#argv] = dir
    r = t.vkit(argv)
    assert.equal(1, r.code)
    assert.matches("no python toolchain under " .. dir, r.stderr, 1, true)
    argv[#argv] = "relative/root"
    r = t.vkit(argv)
    assert.equal(1, r.code)
    assert.matches("is not an absolute path", r.stderr, 1, true)
    assert.is_nil(vkit.fs.lstat(project .. "/verification"))
    cleanup()
  end)
end)

-- Issue 33 item 5: an intent that pins paths only this machine has is
-- written with a warning (stderr, and --json's "warnings"): a toolchain in a
-- home directory, or under vkit's own installation; none for system paths
-- or a toolchain root.
describe("intent init and paths only this machine has", function()
  local function init(language, path, source, extra)
    local dir, cleanup = t.tempdir()
    local project = dir .. "/project"
    assert(vkit.fs.mkdirs(project .. "/src"))
    t.write(project .. "/" .. path, source)
    sh(project, "git init -q -b main && git add -A && " .. GIT .. " commit -q -m base")
    local argv = { "change", "intent", "init", "--project", project, "--language", language, "--source", path,
                   "--function", "score", "--domain", "0..9", "--observations", "0..9", "--json" }
    for _, a in ipairs(extra and extra(dir) or {}) do argv[#argv + 1] = a end
    local r = t.vkit(argv)
    assert(r.code == 0, r.stderr)
    cleanup()
    return json.decode(r.stdout).warnings, r.stderr
  end

  it("warns for a Rust toolchain under the home directory and TypeScript under vkit's installation", function()
    local warnings, stderr = init("rust", "src/score.rs", "pub fn score(x: u32) -> u32 { x }\n")
    assert.equal(1, #warnings)
    assert.matches("^rust: %d+ pinned path%(s%) under the home directory " .. (os.getenv "HOME" or "/root"):gsub("%p", "%%%0")
      .. " %(" .. RUST_HOME:gsub("%p", "%%%0") .. "/", warnings[1])
    assert.matches("pass --toolchain-root DIR, e.g. /opt/rust", warnings[1], 1, true)
    assert.matches("vkit: warning: " .. warnings[1], stderr, 1, true)
    warnings = init("typescript", "src/score.ts", "export function score(x: number): number { return x; }\n")
    assert.equal(1, #warnings)
    assert.matches("^typescript: %d+ pinned path%(s%) under vkit's installation " .. vkit.fs.realpath(vkit.root)
      :gsub("%p", "%%%0"), warnings[1])
  end)

  it("says nothing for the system's Python or a toolchain root", function()
    local warnings, stderr = init("python", "src/score.py", "def score(x):\n    return x\n")
    assert.same({}, warnings)
    assert.not_matches("warning", stderr, 1, true)
    warnings = init("rust", "src/score.rs", "pub fn score(x: u32) -> u32 { x }\n", function(dir)
      assert(vkit.fs.mkdirs(dir .. "/opt"))
      assert(os.execute(("cp -al %s %s"):format(t.quote(RUST_HOME), t.quote(dir .. "/opt/rust"))))
      return { "--toolchain-root", dir .. "/opt/rust" }
    end)
    assert.same({}, warnings)
  end)
end)
