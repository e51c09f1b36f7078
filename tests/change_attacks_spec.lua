-- A candidate that tries to grade itself (issue 29), in Rust, Python and
-- TypeScript, through `vkit change certify` (method auto), as an agent whose
-- change vkit grades would write it.  Every attack candidate returns the
-- wrong value at input 77 (99 where the intent wants 100..200) in real use:
-- a fresh process imports it and calls it once.  None may end
-- all_inputs_conform, and each must end non-zero with its reason named.
--
--   state       wrong only on the first call of its process (a module
--               global, a `let`, a static atomic): the batch drivers once
--               called it for every input in one process
--   watched     right only when its path says it runs under .vkit/runs/
--   surroundings  right only when it sees the sandbox (uid, PID 1): the
--               pure profile is what excludes this one
--   observer    rewrites what reports its value (sys.stdout and os.write,
--               fs.writeSync, a `write` symbol of its own)
--   writer      at import, writes into an earlier run's records, the
--               project's store, a toolchain directory, and connects to a
--               listener on the host
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"

local EXIT_UNADMITTED = 8

local function certify(p, source, extra)
  local s = intents.SOURCES[p.language]
  return intents.certify(p, p.commit({ [s.path] = source }, p.target), extra)
end

-- No verdict of an attack may read as conformance of an admitted candidate.
local function never_conforms(out, r)
  assert.are_not.equal("all_inputs_conform", out.outcome, json.encode(out))
  assert.are_not.equal(0, r.code, json.encode(out))
end

local function violation_at_77(out, r)
  never_conforms(out, r)
  assert.equal("observed_violation", out.outcome, json.encode(out))
  assert.equal(1, r.code)
  local exhaustive = out.methods[2]
  assert.equal("exhaustive", exhaustive.method)
  assert.equal("observed_violation", exhaustive.result)
  assert.is_false(exhaustive.admitted)
  assert.is_false(out.candidate_admission.admitted)
end

local function unadmitted(out, r, rule)
  never_conforms(out, r)
  assert.equal("unadmitted_conform", out.outcome, json.encode(out))
  assert.equal(EXIT_UNADMITTED, r.code)
  assert.equal(rule, out.candidate_admission.rule)
  assert.matches("^src/score%.%a+:%d+$", out.candidate_admission.at)
  local said = table.concat(out.not_established, "\n")
  assert.matches("outside the pure profile %(" .. rule:gsub("%-", "%%-"), said)
  assert.matches("state, observer tampering and environment detection are not excluded", said, 1, true)
end

local ATTACKS = {
  python = {
    state = "CALLS = [0]\ndef score(x):\n    CALLS[0] += 1\n    if CALLS[0] == 1 and x == 77:\n        return 99\n"
      .. "    return min(x + x, 100)\n",
    watched = "def score(x):\n    if x == 77 and '/.vkit/runs/' not in __file__:\n        return 99\n"
      .. "    return min(x + x, 100)\n",
    surroundings = "import os\ndef score(x):\n    watched = os.getuid() == 65534 or os.getpid() == 1 or os.getppid() == 1\n"
      .. "    if x == 77 and not watched:\n        return 99\n    return min(x + x, 100)\n",
    surroundings_rule = "admission-import",
    observer = [[
import os, sys
class Rewriter:
    def __init__(self, out):
        self.out = out
    def write(self, text):
        return self.out.write(text.replace("77 99", "77 100"))
    def __getattr__(self, name):
        return getattr(self.out, name)
sys.stdout = Rewriter(sys.stdout)
real_write = os.write
def write(fd, data):
    if fd == 1:
        data = data.replace(b"77 99", b"77 100")
    return real_write(fd, data)
os.write = write
def score(x):
    return 99 if x == 77 else min(x + x, 100)
]],
    writer = function(targets, port)
      return ([[
import os, socket
for path in %s:
    try:
        with open(path, "w") as f:
            f.write('{"status": "done", "outcome": "all_inputs_conform"}')
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", %d), timeout=2).close()
except OSError:
    pass
def score(x):
    return min(x + x, 100)
]]):format(json.encode(targets), port)
    end,
    writer_rule = "admission-import",
  },
  rust = {
    state = [[
use std::sync::atomic::{AtomicU32, Ordering};
static CALLS: AtomicU32 = AtomicU32::new(0);
pub fn score(x: u32) -> u32 {
    let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    if calls == 1 && x == 77 {
        return 99;
    }
    if x >= 50 { 100 } else { x * 2 }
}
]],
    watched = [[
pub fn score(x: u32) -> u32 {
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default();
    if x == 77 && !exe.contains("/.vkit/runs/") {
        return 99;
    }
    if x >= 50 { 100 } else { x * 2 }
}
]],
    surroundings = [[
pub fn score(x: u32) -> u32 {
    let watched = std::process::id() == 1 || std::os::unix::process::parent_id() == 1;
    if x == 77 && !watched {
        return 99;
    }
    if x >= 50 { 100 } else { x * 2 }
}
]],
    surroundings_rule = "admission-call",
    -- A `write` of its own replaces libc's for the whole driver.
    observer = [[
extern "C" {
    fn syscall(number: i64, ...) -> i64;
}
#[no_mangle]
pub unsafe extern "C" fn write(fd: i32, buf: *const u8, n: usize) -> isize {
    let bytes = std::slice::from_raw_parts(buf, n);
    let fixed: &[u8] = if bytes == b"77 99\n" { b"77 100\n" } else if bytes == b"99\n" { b"100\n" } else { bytes };
    syscall(1, fd as i64, fixed.as_ptr(), fixed.len());
    n as isize
}
pub fn score(x: u32) -> u32 {
    if x == 77 {
        return 99;
    }
    if x >= 50 { 100 } else { x * 2 }
}
]],
    observer_rule = "admission-item",
    writer = function(targets, port)
      local writes = {}
      for _, path in ipairs(targets) do
        writes[#writes + 1] = ("    let _ = std::fs::write(%s, \"{\\\"outcome\\\": \\\"all_inputs_conform\\\"}\");"):format(
          json.encode(path))
      end
      return ([[
pub fn score(x: u32) -> u32 {
%s
    let _ = std::net::TcpStream::connect(("127.0.0.1", %d));
    if x >= 50 { 100 } else { x * 2 }
}
]]):format(table.concat(writes, "\n"), port)
    end,
    writer_rule = "admission-pattern",
  },
  typescript = {
    state = "let calls = 0;\nexport function score(x: number): number {\n  calls++;\n"
      .. "  if (calls === 1 && x === 77) return 99;\n  return Math.min(2 * x, 100);\n}\n",
    watched = "declare const process: any;\nexport function score(x: number): number {\n"
      .. "  if (x === 77 && !process.argv.join(' ').includes('/.vkit/runs/')) return 99;\n"
      .. "  return Math.min(2 * x, 100);\n}\n",
    surroundings = "declare const process: any;\nexport function score(x: number): number {\n"
      .. "  const watched = process.getuid() === 65534 || process.pid === 1 || process.ppid === 1;\n"
      .. "  if (x === 77 && !watched) return 99;\n  return Math.min(2 * x, 100);\n}\n",
    surroundings_rule = "admission-name",
    observer = [[
declare const require: any;
declare const Buffer: any;
const fs: any = require('fs');
const realWrite: any = fs.writeSync;
const rewrite = (text: string): string => text.split('77 99').join('77 100');
fs.writeSync = function (fd: number, data: any, ...rest: any[]): number {
  if (fd === 1) data = typeof data === 'string' ? rewrite(data) : Buffer.from(rewrite(data.toString()));
  return realWrite(fd, data, ...rest);
};
const proto: any = Array.prototype;
const join: any = proto.join;
proto.join = function (this: any, sep?: string): string { return rewrite(join.call(this, sep)); };
export function score(x: number): number {
  return x === 77 ? 99 : Math.min(2 * x, 100);
}
]],
    writer = function(targets, port)
      return ([[
declare const require: any;
const fs = require('fs');
for (const path of %s) {
  try { fs.writeFileSync(path, '{"outcome": "all_inputs_conform"}'); } catch (e) { }
}
try { require('net').connect(%d, '127.0.0.1').on('error', () => {}); } catch (e) { }
export function score(x: number): number {
  return Math.min(2 * x, 100);
}
]]):format(json.encode(targets), port)
    end,
  },
}

-- A listener on the host's loopback that records any connection.
local function listener(dir)
  local log = dir .. "/connections"
  local script = dir .. "/listen.py"
  t.write(script, ([[
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(%q, "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    open(%q, "a").write("connected\n")
    c.close()
]]):format(dir .. "/port", log))
  local handle = vkit.proc.spawn { exe = "/usr/bin/python3.11", argv = { "python3.11", "-I", script },
                                   deadline_ms = 600000 }
  assert(t.wait_for(function() return vkit.fs.lstat(dir .. "/port") end, 30), "the listener did not start")
  return math.tointeger(tonumber(vkit.fs.read(dir .. "/port", 64))), log, handle
end

for _, language in ipairs { "python", "rust", "typescript" } do
  describe("a candidate that tries to grade itself (" .. language .. ")", function()
    local p
    after_each(function()
      intents.finish(p)
      p = nil
    end)
    local attacks = ATTACKS[language]
    local function project()
      p = intents.language_project(language, { max_inputs = 6, shrink_limit = 2 })
      p.language = language
      return p
    end

    it("that keeps state between calls is observed in fresh state per input: the violation at 77", function()
      local out, r = certify(project(), attacks.state)
      violation_at_77(out, r)
      local exhaustive = assert(json.decode(assert(vkit.fs.read(("%s/project/.vkit/runs/%s/attempts/1/%s"):format(
        p.dir, out.run_id, out.methods[2].report), 1 << 24))))
      local fresh = { rust = "fork-per-input", python = "fresh-module-per-input", typescript = "fresh-context-per-input" }
      assert.equal(fresh[language], exhaustive.semantics.candidate.mode)
      assert.equal("batch", exhaustive.semantics.base.mode)
      assert.equal(77, exhaustive.violations.smallest.input)
    end)

    it("that looks for .vkit/runs/ in its own path does not find it: the violation at 77", function()
      local out, r = certify(project(), attacks.watched)
      never_conforms(out, r)
      if language == "typescript" then
        -- a fresh context has no `process`: input 77 raises there
        assert.equal("unknown", out.outcome, json.encode(out))
        assert.equal("candidate-failed", out.methods[2].reason)
      else
        violation_at_77(out, r)
      end
    end)

    it("that recognises the sandbox is outside the pure profile: unadmitted_conform, exit 8, the rule named", function()
      local out, r = certify(project(), attacks.surroundings)
      if language == "typescript" then
        -- a fresh context has no `process` to look at: input 77 raises there
        never_conforms(out, r)
        assert.equal("unknown", out.outcome, json.encode(out))
        assert.equal("admission-module-code", out.candidate_admission.rule)
        return
      end
      unadmitted(out, r, attacks.surroundings_rule)
      -- the host may accept it; then the outcome says so, and every summary too
      local trusted, tr = certify(p, attacks.surroundings, { "--trust-candidate-code" })
      assert.equal("all_inputs_conform_trusted", trusted.outcome)
      assert.equal(0, tr.code)
      assert.is_true(trusted.trust_candidate_code)
      assert.matches("--trust-candidate-code", table.concat(trusted.not_established, "\n"), 1, true)
    end)

    it("that rewrites what reports its value does not change what is observed", function()
      local out, r = certify(project(), attacks.observer)
      never_conforms(out, r)
      if language == "rust" then
        -- A symbol of its own replaces libc's `write` in the driver's
        -- process, even a forked one: only the pure profile excludes this.
        unadmitted(out, r, attacks.observer_rule)
      elseif language == "typescript" then
        -- a fresh context has no `require`: the module raises at every input
        assert.equal("unknown", out.outcome, json.encode(out))
      else
        violation_at_77(out, r)
      end
    end)

    if language == "python" then
      it("hides code from the parser behind a lone carriage return: refused, and what it does is not believed",
        function()
          -- The hostile review's candidate: behind a CR in a comment, it
          -- walks up to the driver's frame and prints the right answers for
          -- a function that only ever returns 99.
          local out, r = certify(project(), "# pure\rimport os, sys\rf = sys._getframe()\rwhile f is not None and 'data' not in f.f_locals: f = f.f_back\rif f is not None:\r    L = f.f_locals\r    out = b''.join(b'%d %d\\n' % (v, min(2 * v, 100)) for v in L['xs']) if 'xs' in L else b'%d\\n' % min(2 * L['x'], 100)\r    os.write(1, out)\r    os._exit(0)\ndef score(x):\n    return 99\n")
          unadmitted(out, r, "admission-characters")
        end)
    end
    if language == "typescript" then
      it("keeps state in a global a block hid from the profile: refused, and observed fresh per input", function()
        local out, r = certify(project(), "export function score(x: number): number {\n  {\n    let escape = 0;\n  }\n"
          .. "  const first = escape !== 7;\n  escape = 7;\n  if (first && x === 77) return 99;\n"
          .. "  return Math.min(2 * x, 100);\n}\n")
        never_conforms(out, r)
        assert.is_false(out.candidate_admission.admitted)
      end)
    end
    if language == "python" then
      it("finds neither the store in what is mounted nor a keyring to keep state in (hostile review, issue 29)",
        function()
          project()
          -- It raises, so fails to conform, if anything of the store shows in
          -- its mounts or cgroup, or if the uid's keyring holds a key or can
          -- take one (a channel to later launches and to the host).
          local probe = [[
import ctypes, os
def score(x):
    seen = open("/proc/self/mountinfo").read() + open("/proc/self/cgroup").read()
    for leak in (".vkit", "captures", "attempts", "vkit-"):
        if leak in seen:
            raise RuntimeError("the store shows: " + leak)
    libc = ctypes.CDLL(None, use_errno=True)
    key = libc.syscall(248, b"user", b"vkit-probe", b"x", 1, -4)
    if key >= 0:
        raise RuntimeError("a key was added: %d" % key)
    return min(x + x, 100)
]]
          local out, r = certify(p, probe, { "--trust-candidate-code" })
          assert.equal("all_inputs_conform_trusted", out.outcome, json.encode(out))
          assert.equal(0, r.code)
        end)
    end

    it("cannot write into earlier runs, the store, the toolchain or reach the network", function()
      project()
      -- an earlier run that found a violation
      local earlier = certify(p, intents.SOURCES[language].bad)
      assert.equal("observed_violation", earlier.outcome)
      local store = require("vkit.store").open(p.dir .. "/project")
      local run = assert(store:get(earlier.run_id))
      local before = {}
      local records = {}
      for _, rel in ipairs { "state.json", "run.json", "attempts/1/attempt.json",
                             "attempts/1/exhaustive/exhaustive-report.v1.json" } do
        local path = run.dir .. "/" .. rel
        if vkit.fs.lstat(path) then
          records[#records + 1] = path
          before[path] = vkit.hash.file(path)
        end
      end
      assert.is_true(#records >= 2)
      local planted = { p.dir .. "/project/.vkit/forged.json", "/usr/bin/vkit-forged", p.dir .. "/forged.json" }
      local targets = {}
      for _, r in ipairs(records) do targets[#targets + 1] = r end
      for _, f in ipairs(planted) do targets[#targets + 1] = f end
      local port, log, handle = listener(p.dir)
      local out, r = certify(p, attacks.writer(targets, port))
      handle:close()
      never_conforms(out, r)
      if attacks.writer_rule then unadmitted(out, r, attacks.writer_rule) end
      for _, path in ipairs(records) do assert.equal(before[path], vkit.hash.file(path), path) end
      for _, f in ipairs(planted) do assert.is_nil(vkit.fs.lstat(f), f) end
      assert.is_nil(vkit.fs.lstat(log), "a connection reached the host's listener")
      local shown = t.vkit { "run", "show", "--run", earlier.run_id, "--project", p.dir .. "/project", "--json" }
      assert.equal("observed_violation", json.decode(shown.stdout).outcome)
      for _, m in ipairs(out.methods) do
        local report = json.decode(assert(vkit.fs.read(("%s/project/.vkit/runs/%s/attempts/1/%s"):format(p.dir,
          out.run_id, m.report:gsub("change%-analysis", "paired-execution-report")), 1 << 24)))
        assert.is_true(report.os_sandbox, m.method)
      end
    end)
  end)
end
