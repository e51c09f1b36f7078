-- run_kani_relational: qualification, the toolchain pin around the run,
-- program and capture checks, the fixed invocation, and (with vkit.proc)
-- real hostile processes standing in the pinned launcher's place.  No
-- process here ever produces a verification result: Kani is not
-- installable on this machine, and the decoder is specified on transcripts.
local vkit = require "vkit"
local t = require "tests.support.run"
local K = require "vkit.relational.kani"
local H = require "vkit.relational.harness"
local toolchain = require "vkit.relational.toolchain"
local support = require "tests.kani_support"

local BASE = "pub fn scale(x: u32) -> u32 {\n    let doubled: u32 = x * 2;\n    doubled + 7\n}\n"
local CANDIDATE = "pub fn scale(x: u32) -> u32 {\n    x + x + 7\n}\n"

local function has_proc()
  local ok, proc = pcall(require, "vkit.proc")
  return ok and type(proc) == "table" and type(proc.run) == "function"
end

local function capture(bytes, extra)
  local files = { { path = "src/lib.rs", bytes = bytes, sha256 = vkit.hash.sha256(bytes), mode = "100644" } }
  for path, b in pairs(extra or {}) do
    files[#files + 1] = { path = path, bytes = b, sha256 = vkit.hash.sha256(b), mode = "100644" }
  end
  return { commit = ("ab"):rep(20), module = "src/lib.rs", files = files }
end

-- A program as item 4's preparation would hand it over: captures, their
-- admission records (only outcome and source hash are read here) and the
-- generated harness.
local function program(base, candidate)
  base, candidate = base or BASE, candidate or CANDIDATE
  local h = assert(H.generate {
    function_name = "scale",
    modules = K.module_paths("src/lib.rs", "src/lib.rs"),
    inputs = { 0, 1, 2, 3 },
    observations = { 7, 9, 11, 13 },
  })
  return {
    captures = { base = capture(base), candidate = capture(candidate) },
    admissions = {
      base = { outcome = "admitted", source = { sha256 = vkit.hash.sha256(base) } },
      candidate = { outcome = "admitted", source = { sha256 = vkit.hash.sha256(candidate) } },
    },
    harness = h,
  }
end

local function flags_false(report)
  assert.is_false(report.source_proof)
  assert.is_false(report.native_compiler_correspondence)
  assert.is_false(report.approval_authority)
  assert.is_false(report.concrete_counterexample)
end

local function written_report(outdir)
  return assert(vkit.json.decode(assert(vkit.fs.read(outdir .. "/report.json", 1 << 22))))
end

describe("run_kani_relational", function()
  local dir, cleanup, desc, pin, outdir
  before_each(function()
    dir, cleanup = t.tempdir()
    desc = support.install(dir)
    pin = assert(toolchain.capture(desc))
    outdir = dir .. "/out"
  end)
  after_each(function() cleanup() end)

  describe("qualification", function()
    it("is unknown/unsupported_platform on another host, writing nothing", function()
      local r = K.run_kani_relational(program(), pin, outdir, { uname = { sysname = "Linux", machine = "aarch64" } })
      assert.equal("unknown", r.outcome)
      assert.equal("unsupported_platform", r.reason)
      flags_false(r)
      assert.is_nil(vkit.fs.lstat(outdir))
      r = K.run_kani_relational(program(), pin, outdir, { uname = { sysname = "Darwin", machine = "x86_64" } })
      assert.equal("unsupported_platform", r.reason)
    end)

    it("is unknown/unsupported_platform without a toolchain or with an unqualified one", function()
      assert.equal("unsupported_platform", K.run_kani_relational(program(), nil, outdir).reason)
      local other = vkit.json.decode(vkit.json.encode(pin))
      other.kani_version = "0.67.0"
      assert.equal("unsupported_platform", K.run_kani_relational(program(), other, outdir).reason)
      other = vkit.json.decode(vkit.json.encode(pin))
      other.platform = "aarch64-unknown-linux-gnu"
      local r = K.run_kani_relational(program(), other, outdir)
      assert.equal("unknown", r.outcome)
      assert.equal("unsupported_platform", r.reason)
    end)

    it("is unknown/unsupported_platform when the pinned toolchain is not installed", function()
      assert(vkit.fs.remove_tree(desc.kani_root))
      local r = K.run_kani_relational(program(), pin, outdir)
      assert.equal("unknown", r.outcome)
      assert.equal("unsupported_platform", r.reason)
      assert.same(r, written_report(outdir))
    end)

    it("fails as infrastructure when the toolchain differs from its pin before the run", function()
      t.write(desc.kani_root .. "/bin/cbmc", "\127ELF other cbmc\n")
      local r = K.run_kani_relational(program(), pin, outdir)
      assert.equal("infrastructure_failure", r.outcome)
      assert.equal("toolchain_changed", r.reason)
      flags_false(written_report(outdir))
      local before = vkit.json.decode(vkit.fs.read(outdir .. "/records/toolchain-before.json", 1 << 20))
      assert.equal("kani", before.changes[1].where)
    end)

    it("refuses a malformed pin and an output directory that already exists", function()
      local bad = vkit.json.decode(vkit.json.encode(pin))
      bad.launcher = "/usr/bin/env"
      assert.equal("invalid_pin", K.run_kani_relational(program(), bad, outdir).reason)
      assert(vkit.fs.mkdirs(outdir))
      local r = K.run_kani_relational(program(), pin, outdir)
      assert.equal("outdir_not_fresh", r.reason)
      assert.is_nil(vkit.fs.lstat(outdir .. "/report.json"))
    end)
  end)

  describe("the program", function()
    local runs = 0
    local function refused(mutate)
      local p = program()
      mutate(p)
      runs = runs + 1
      local r = K.run_kani_relational(p, pin, outdir .. runs)
      assert.equal("infrastructure_failure", r.outcome)
      assert.equal("invalid_program", r.reason, r.message)
      return r.message
    end

    it("refuses harness bytes that differ from their hash or from the Kani target", function()
      assert.matches("hash", refused(function(p) p.harness.bytes = p.harness.bytes .. "\n" end))
      assert.matches("Kani", refused(function(p)
        local s = { function_name = "scale", modules = K.module_paths("src/lib.rs", "src/lib.rs"),
          inputs = { 0 }, observations = { 7 }, target = "native" }
        p.harness = assert(H.generate(s))
      end))
    end)

    it("refuses a harness naming other module paths", function()
      assert.matches("module paths", refused(function(p)
        p.harness = assert(H.generate { function_name = "scale", modules = { base = "a.rs", candidate = "b.rs" },
          inputs = { 0 }, observations = { 7 } })
      end))
    end)

    it("refuses captures whose bytes, admission or module do not line up", function()
      assert.matches("differs from its hash", refused(function(p) p.captures.base.files[1].bytes = "pub fn scale" end))
      assert.matches("not admitted", refused(function(p) p.admissions.candidate.outcome = "rejected" end))
      assert.matches("not admitted", refused(function(p) p.admissions.base.source.sha256 = ("0"):rep(64) end))
      assert.matches("module", refused(function(p) p.captures.base.module = "src/main.rs" end))
      assert.matches("safe relative", refused(function(p) p.captures.base.module = "../lib.rs" end))
      assert.matches("twice", refused(function(p) p.captures.base.files[2] = p.captures.base.files[1] end))
    end)
  end)

  describe("materialised captures", function()
    local n = 0
    local function check(mutate)
      local c = capture(BASE, { ["Cargo.toml"] = "[package]\nname = \"x\"\n" })
      n = n + 1
      local where = dir .. "/m" .. n
      for _, f in ipairs(c.files) do
        assert(vkit.fs.mkdirs((where .. "/" .. f.path):match "^(.*)/"))
        t.write(where .. "/" .. f.path, f.bytes)
      end
      assert.is_nil(K.capture_problem(c, where))
      mutate(where)
      return K.capture_problem(c, where)
    end

    it("refuses an extra file, a missing file, changed bytes, a link and a special file", function()
      assert.matches("not part of the capture", check(function(w) t.write(w .. "/src/extra.rs", "") end))
      assert.matches("1 of 2", check(function(w) os.remove(w .. "/Cargo.toml") end))
      assert.matches("differs from its captured bytes", check(function(w) t.write(w .. "/src/lib.rs", BASE .. " ") end))
      assert.matches("is a link", check(function(w)
        os.remove(w .. "/Cargo.toml")
        assert(vkit.fs.symlink("/etc/hostname", w .. "/Cargo.toml"))
      end))
      assert.matches("special file", check(function(w) assert(vkit.fs.mkfifo(w .. "/src/pipe")) end))
    end)

    it("writes both captures and the harness into the output directory and retains them with hashes", function()
      local p = program()
      local r = K.run_kani_relational(p, pin, outdir)
      -- Without vkit.proc the run stops at re-admission; with it, at the engine.
      assert.is_true(r.reason == "admission_failed" or r.process ~= vkit.json.null, r.message)
      assert.equal(BASE, t.slurp(outdir .. "/work/base/src/lib.rs"))
      assert.equal(CANDIDATE, t.slurp(outdir .. "/work/candidate/src/lib.rs"))
      assert.equal(p.harness.bytes, t.slurp(outdir .. "/work/vkit_harness.rs"))
      local report = written_report(outdir)
      assert.is_true(#report.artifacts >= 3)
      for _, a in ipairs(report.artifacts) do
        assert.equal(a.sha256, vkit.hash.file(outdir .. "/" .. a.path), a.path)
      end
      assert.equal(toolchain.digest(pin), report.engine.toolchain_digest)
      assert.equal("0.68.0", report.engine.version)
      flags_false(report)
    end)
  end)

  describe("the invocation", function()
    it("is the fixed command line with default checks and the export in the output directory", function()
      local inv = K.invocation(pin, "/o", 1000)
      assert.same({ desc.launcher, "vkit_harness.rs", "--harness", "vkit_relational", "--exact",
        "--output-format", "regular", "-Z", "unstable-options", "--export-json", "/o/records/kani-export.json",
        "--target-dir", "/o/target" }, inv.argv)
      for _, a in ipairs(inv.argv) do
        assert.is_nil(a:match "^%-%-no%-", a)
        assert.is_nil(a:match "checks", a)
      end
      assert.equal("/o/work", inv.cwd)
      assert.equal(1024 * 1024, inv.output_cap)
      assert.equal(2 * 1024 * 1024, inv.max_result_bytes)
    end)

    it("runs in a closed environment naming only the pinned installation", function()
      local env = K.invocation(pin, "/o", 1000).env
      local keys = {}
      for k in pairs(env) do keys[#keys + 1] = k end
      table.sort(keys)
      assert.same({ "CARGO_HOME", "HOME", "KANI_HOME", "LANG", "LC_ALL", "NO_COLOR", "PATH", "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN", "RUST_BACKTRACE", "TMPDIR" }, keys)
      assert.equal(desc.home .. "/.kani", env.KANI_HOME)
      assert.equal(support.toolchain, env.RUSTUP_TOOLCHAIN)
      assert.equal(desc.cargo_bin .. ":" .. desc.rust_root .. "/bin:/usr/bin:/bin", env.PATH)
      assert.equal("/o/tmp", env.TMPDIR)
    end)

    it("never allows a deadline over 300 seconds", function()
      assert.equal(300000, K.deadline())
      assert.equal(300000, K.deadline { deadline_ms = 3600 * 1000 })
      assert.equal(1500, K.deadline { deadline_ms = 1500 })
      assert.has_error(function() K.deadline { deadline_ms = 0 } end)
      assert.has_error(function() K.deadline { deadline_ms = 1.5 } end)
    end)

    it("never turns an incomplete process into a completed run", function()
      assert.same({ "unknown", "timeout" }, { K.process_outcome { status = "timeout" } })
      assert.same({ "unknown", "cancelled" }, { K.process_outcome { status = "cancelled" } })
      assert.same({ "unknown", "output_capped" }, { K.process_outcome { status = "output-capped" } })
      assert.same({ "infrastructure_failure", "engine_crashed" }, { K.process_outcome { status = "signaled" } })
      assert.same({ "infrastructure_failure", "engine_launch_failed" }, { K.process_outcome { status = "launch-failed" } })
      assert.same({ "infrastructure_failure", "engine_launch_failed" }, { K.process_outcome { status = "pin-mismatch" } })
      assert.is_nil(K.process_outcome { status = "exited", code = 0 })
    end)
  end)

  describe("hostile processes in the launcher's place", function()
    local it = has_proc() and it or function(name) pending(name .. " (needs vkit.proc)") end

    -- Reinstalls the tree with a launcher script, pins it and runs.
    local function run_with(script, opts)
      cleanup()
      dir, cleanup = t.tempdir()
      desc = support.install(dir, { launcher_script = script })
      pin = assert(toolchain.capture(desc))
      outdir = dir .. "/out"
      return K.run_kani_relational(program(), pin, outdir, opts)
    end

    it("is unknown at the deadline", function()
      local r = run_with("exec sleep 30", { deadline_ms = 500 })
      assert.same({ "unknown", "timeout" }, { r.outcome, r.reason })
      flags_false(written_report(outdir))
    end)

    it("is unknown when the output cap is exceeded", function()
      local r = run_with "exec yes VERIFICATION:- SUCCESSFUL"
      assert.same({ "unknown", "output_capped" }, { r.outcome, r.reason })
    end)

    it("is an infrastructure failure when the engine crashes", function()
      local r = run_with "kill -SEGV $$"
      assert.same({ "infrastructure_failure", "engine_crashed" }, { r.outcome, r.reason })
    end)

    it("is an infrastructure failure when a completed run leaves no export", function()
      local r = run_with "echo 'VERIFICATION:- SUCCESSFUL'; exit 0"
      assert.same({ "infrastructure_failure", "missing_export" }, { r.outcome, r.reason })
    end)

    it("imports an export of at most 2 MiB, and refuses one byte more before reading it", function()
      local limit = vkit.policies.limits.kani.max_result_bytes
      local function export_of(bytes)
        return run_with(("head -c %d /dev/zero | tr '\\0' ' ' > ../records/kani-export.json; "
          .. "echo 'VERIFICATION:- SUCCESSFUL'; exit 0"):format(bytes))
      end
      local r = export_of(limit + 1)
      assert.same({ "infrastructure_failure", "export_too_large" }, { r.outcome, r.reason })
      assert.equal(limit + 1, vkit.fs.lstat(outdir .. "/records/kani-export.json").size)
      r = export_of(limit)
      assert.equal("infrastructure_failure", r.outcome)
      assert.equal("malformed_export", r.reason)   -- read and decoded: 2 MiB of blanks is no export
    end)

    it("is an infrastructure failure when the run changes the pinned toolchain", function()
      local r = run_with 'echo patched >> "$KANI_HOME/kani-0.68.0/bin/cbmc"; exit 0'
      assert.same({ "infrastructure_failure", "toolchain_changed" }, { r.outcome, r.reason })
      local after = vkit.json.decode(vkit.fs.read(outdir .. "/records/toolchain-after.json", 1 << 20))
      assert.is_false(after.ok)
    end)

    it("is an infrastructure failure when the run changes a materialised capture", function()
      local r = run_with "echo '// changed' >> candidate/src/lib.rs; exit 0"
      assert.same({ "infrastructure_failure", "artifacts_changed" }, { r.outcome, r.reason })
    end)

    it("re-runs admission and refuses a module whose admission record was forged", function()
      local p = program(BASE, "pub fn scale(x: u32) -> u32 {\n    loop {}\n}\n")
      local r = K.run_kani_relational(p, pin, outdir)
      assert.same({ "infrastructure_failure", "admission_changed" }, { r.outcome, r.reason })
      assert.matches("loop", r.message)
    end)
  end)
end)
