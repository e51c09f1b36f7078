--- Fixed batch drivers for the exhaustive method (u32 -> u32).  Pure.
--
-- A batch driver reads ALL its input bytes from stdin (four little-endian
-- bytes per input) BEFORE it imports the candidate module or calls its
-- function, then calls the function once per input, in the order given,
-- and prints one line per input:
--
--   <input> <value>     the function returned the canonical decimal u32 <value>
--   <input> !raise      it raised (Python, TypeScript) or panicked (Rust)
--   <input> !range      it returned something that is not a u32
--   <input> !crash      (fresh mode) the input's own process ended without
--                       an answer
--
-- so one failing input never hides the others.
--
-- Two modes (issue 29).  "batch": one process calls the function once per
-- input, in the order given: sound for an admitted candidate, which cannot
-- keep state from one call to the next.  "fresh": each input in fresh
-- state, as close to real use (a fresh process imports the module and
-- calls it once) as is cheap, for candidates outside the pure profile:
-- Rust forks one process per input from the driver, after it has read
-- every input and before the candidate is called (the child calls, answers
-- through a pipe and exits; its stdout goes to stderr); Python executes the
-- module anew per input (a fork per input costs ~39 ms on the reference
-- machine, COW faults of the interpreter's heap); Node cannot fork, so
-- TypeScript evaluates the compiled module afresh in a new V8 context per
-- input, made from a prototype-less object so that no object of the driver
-- or of another input is reachable from it.  SEMANTICS says what each
-- mode's observations are.  The lines are written at
-- the end, in one piece; on stderr the driver writes only its cause lines
-- (vkit.change.driver_causes: each distinct exception, panic, value out of
-- range or missing function once, with a count; Rust's panic hook keeps
-- the message instead of printing it).  Exit status 3 is a bad input encoding, 5 a
-- failed write: protocol failures, never observations.  The captured module
-- is used as it is, exactly as the per-input drivers use it.
local drivers = require "vkit.change.drivers"
local causes = require "vkit.change.driver_causes"
local batch_end = require "vkit.change.batch_end"
local json = require "vkit.json"

local M = {}

M.MARKERS = { raise = true, range = true, crash = true }

--- What an observation of each mode is (reports print it).
M.SEMANTICS = {
  batch = "batch: one process per batch calls the function once per input, in the order given",
  ["fork-per-input"] = "fork-per-input: each input in its own process, forked before the candidate is loaded; "
    .. "the function is called once in it, as in real use",
  ["fresh-module-per-input"] = "fresh-module-per-input: the module executed anew for each input in the batch's "
    .. "process and called once; state it keeps outside its own module (builtins, other modules, the interpreter) is "
    .. "not reset (a fork per input costs ~39 ms here: docs/change.md)",
  ["fresh-context-per-input"] = "fresh-context-per-input: each input in a new V8 context of the batch's process, "
    .. "the compiled module evaluated afresh and called once; no object of the driver or of another input is "
    .. "reachable (Node cannot fork)",
}

--- The mode for a side: batch when its source is admitted, else fresh.
local FRESH = { rust = "fork-per-input", python = "fresh-module-per-input", typescript = "fresh-context-per-input" }

function M.mode(language, admitted)
  if admitted then return "batch" end
  return FRESH[language]
end

--- The longest line a driver prints for an input of `digits` digits: the
--  input, a space, a u32 (10 digits; a marker is shorter) and a newline.
function M.line_bound(digits)
  return digits + 1 + 10 + 1
end

-- What every driver of a language shares, as text spliced into its
-- program (each variant differs only in how it calls the function): the
-- input read, which happens before the candidate is loaded, and the check
-- that a value is a u32 (the end, the one write: vkit.change.batch_end).
local RUST_READ = [==[
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() || input.is_empty() || input.len() % 4 != 0 {
        std::process::exit(3);
    }
    let xs: Vec<u32> = input.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    keep_panics();
    let mut causes = Vec::new();
    let mut out = String::with_capacity(xs.len() * 22);
]==]

-- Python's helpers are bound as main's defaults, before the candidate
-- runs, so a candidate that rebinds os.write or int changes nothing here.
local PY_READ = [[
    data = sys.stdin.buffer.read()
    if not data or len(data) % 4:
        exit(3)
    xs = [integer.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
]]

local PY_CLASSIFY = [[
        if kind(y) is not integer or not 0 <= y <= 0xFFFFFFFF:
            lines.append(b"%d !range\n" % x)
            note(causes, b"range", shown(y), x)
        else:
            lines.append(b"%d %d\n" % (x, y))
]]

-- TypeScript's helpers are taken before the candidate is required, so a
-- candidate that patches fs.writeSync or Number.isInteger changes nothing.
local TS_READ = [[
const fs = require('fs');
const writeSync = fs.writeSync, isInteger = Number.isInteger, exit = process.exit, bytesOf = Buffer.from;
const data = fs.readFileSync(0);
if (data.length === 0 || data.length % 4 !== 0) exit(3);
const xs = [];
for (let i = 0; i < data.length; i += 4) xs.push(data.readUInt32LE(i));
const notU32 = (y) => typeof y !== 'number' || !isInteger(y) || y < 0 || y > 0xFFFFFFFF;
]]

function M.rust(module_path, fn)
  return ([==[// vkit batch driver (rust): every input first, then the candidate.
use std::io::{Read, Write};

#[path = %s]
mod candidate;
%s
fn main() {
%s    for &x in &xs {
        match std::panic::catch_unwind(|| -> u32 { candidate::%s(x) }) {
            Ok(y) => out.push_str(&format!("{} {}\n", x, y)),
            Err(_) => {
                out.push_str(&format!("{} !raise\n", x));
                note(&mut causes, "raise", last_panic(), x);
            }
        }
    }
%s]==]):format(drivers.literal(module_path), causes.rust, RUST_READ, fn, batch_end.rust)
end

function M.python(module_path, fn)
  return ([[# vkit batch driver (python): every input first, then the candidate.
import os, sys
%s
def main(write=os.write, exit=os._exit, kind=type, integer=int, flush=sys.stdout.flush, has=hasattr):
%s    import importlib.util
    spec = importlib.util.spec_from_file_location("candidate", %s)
    candidate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(candidate)
    lines, causes, missing = [], {}, not has(candidate, %s)
    for x in xs:
        if missing:
            lines.append(b"%%d !raise\n" %% x)
            note(causes, b"missing", %s, x)
            continue
        try:
            y = candidate.%s(x)
        except BaseException as e:
            lines.append(b"%%d !raise\n" %% x)
            note(causes, b"raise", raised(e), x)
            continue
%s%s]]):format(causes.python, PY_READ, drivers.literal(module_path), json.encode(fn), drivers.py_bytes(fn), fn,
    PY_CLASSIFY, batch_end.python)
end

function M.typescript(compiled_path, fn)
  return ([['use strict';
// vkit batch driver (typescript, compiled by the pinned native tsc): every input first, then the candidate.
%s%s
const candidate = require(%s);
const causes = new Map(), missing = typeof candidate[%s] !== 'function';
let out = '';
for (let i = 0; i < xs.length; i++) {
  const x = xs[i];
  let y;
  if (missing) {
    out += x + ' !raise\n';
    note(causes, 'missing', %s, x);
    continue;
  }
  try {
    y = candidate.%s(x);
  } catch (e) {
    out += x + ' !raise\n';
    note(causes, 'raise', raised(e), x);
    continue;
  }
  if (notU32(y)) {
    out += x + ' !range\n';
    note(causes, 'range', shown(y), x);
  } else out += x + ' ' + y + '\n';
}
%s]]):format(TS_READ, causes.typescript, drivers.literal(compiled_path), json.encode(fn), json.encode(fn), fn, batch_end.typescript)
end

function M.rust_fresh(module_path, fn)
  return ([==[// vkit batch driver (rust, fork per input): every input first, then one fresh process per input.
use std::io::{Read, Write};

#[path = %s]
mod candidate;
%s
extern "C" {
    fn fork() -> i32;
    fn pipe(fds: *mut i32) -> i32;
    fn read(fd: i32, buf: *mut u8, n: usize) -> isize;
    fn write(fd: i32, buf: *const u8, n: usize) -> isize;
    fn close(fd: i32) -> i32;
    fn dup2(from: i32, to: i32) -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn _exit(code: i32) -> !;
}

fn main() {
%s    for &x in &xs {
        let mut fds = [0i32; 2];
        let pid = unsafe {
            if pipe(fds.as_mut_ptr()) != 0 {
                std::process::exit(6);
            }
            fork()
        };
        if pid < 0 {
            std::process::exit(6);
        }
        if pid == 0 {
            unsafe {
                close(fds[0]);
                dup2(2, 1);
            }
            // a panic's message follows the answer line, for the parent's causes
            let line = match std::panic::catch_unwind(|| -> u32 { candidate::%s(x) }) {
                Ok(y) => format!("{} {}\n", x, y),
                Err(_) => format!("{} !raise\n{}", x, last_panic()),
            };
            unsafe {
                write(fds[1], line.as_ptr(), line.len());
                _exit(0);
            }
        }
        let mut answer = Vec::new();
        let mut chunk = [0u8; 64];
        unsafe {
            close(fds[1]);
            loop {
                let n = read(fds[0], chunk.as_mut_ptr(), chunk.len());
                if n <= 0 {
                    break;
                }
                answer.extend_from_slice(&chunk[..n as usize]);
            }
            close(fds[0]);
            let mut status = 0i32;
            waitpid(pid, &mut status, 0);
        }
        let text = String::from_utf8_lossy(&answer);
        let prefix = format!("{} ", x);
        let raised = format!("{} !raise\n", x);
        if text.starts_with(&raised) {
            out.push_str(&raised);
            note(&mut causes, "raise", text[raised.len()..].to_string(), x);
        } else if text.starts_with(&prefix) && text.ends_with('\n') && text.matches('\n').count() == 1 {
            out.push_str(&text);
        } else {
            out.push_str(&format!("{} !crash\n", x));
            note(&mut causes, "raise", "the input's process ended without an answer".to_string(), x);
        }
    }
%s]==]):format(drivers.literal(module_path), causes.rust, RUST_READ, fn, batch_end.rust)
end

function M.python_fresh(module_path, fn)
  return ([[# vkit batch driver (python, a fresh module per input): every input first, then the candidate.
import os, sys, types
%s
def main(write=os.write, exit=os._exit, kind=type, integer=int, module_type=types.ModuleType, run=exec,
         flush=sys.stdout.flush):
%s    path = %s
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    lines, causes = [], {}
    for x in xs:
        module = module_type("candidate")
        module.__file__ = path
        try:
            run(code, module.__dict__)
            y = module.__dict__[%q](x)
        except BaseException as e:
            lines.append(b"%%d !raise\n" %% x)
            if %q in module.__dict__:
                note(causes, b"raise", raised(e), x)
            else:
                note(causes, b"missing", %s, x)
            continue
%s%s]]):format(causes.python, PY_READ, drivers.literal(module_path), fn, fn, drivers.py_bytes(fn), PY_CLASSIFY,
    batch_end.python)
end

function M.typescript_fresh(compiled_path, fn)
  return ([['use strict';
// vkit batch driver (typescript, a fresh V8 context per input): every input first, then the candidate.
%sconst vm = require('vm');
const code = '(function () { var exports = {}; var module = { exports: exports };\n'
  + fs.readFileSync(%s, 'utf8') + '\nreturn module.exports; })()';
const script = new vm.Script(code);
%s
const causes = new Map();
let out = '';
for (const x of xs) {
  let line, exported;
  try {
    const context = vm.createContext(Object.create(null));
    exported = script.runInContext(context);
    if (typeof exported[%s] !== 'function') {
      out += x + ' !raise\n';
      note(causes, 'missing', %s, x);
      continue;
    }
    const y = exported.%s(x);
    if (notU32(y)) {
      line = x + ' !range\n';
      note(causes, 'range', shown(y), x);
    } else line = x + ' ' + y + '\n';
  } catch (e) {
    line = x + ' !raise\n';
    note(causes, 'raise', raised(e), x);
  }
  out += line;
}
%s]]):format(TS_READ, drivers.literal(compiled_path), causes.typescript, json.encode(fn), json.encode(fn), fn, batch_end.typescript)
end

--- A batch driver's file name per language (both profiles' drivers).
M.FILES = { rust = "batch.rs", python = "batch.py", typescript = "batch.js" }
local FILES = M.FILES
local SOURCES = {
  batch = { rust = M.rust, python = M.python, typescript = M.typescript },
  ["fork-per-input"] = { rust = M.rust_fresh },
  ["fresh-module-per-input"] = { python = M.python_fresh },
  ["fresh-context-per-input"] = { typescript = M.typescript_fresh },
}

--- The driver file name and source for a side (sides.prepare's driver):
--  module_path is the captured module (compiled_path the compiled one, for
--  TypeScript) as the side's processes see it; admitted, whether the
--  side's source is inside the pure profile (vkit.change.admission).
function M.driver(language, module_path, fn, compiled_path, admitted)
  local make = SOURCES[M.mode(language, admitted)][language]
  return FILES[language], make(language == "typescript" and compiled_path or module_path, fn)
end

--- Parses a batch's stdout against the inputs it was given, in order.
--  Returns an array of {value = v} | {marker = "raise"|"range"}, or nil
--  and what is wrong (a missing, extra, reordered or malformed line).
function M.parse(stdout, inputs)
  local out, i = {}, 0
  local pos = 1
  while pos <= #stdout do
    local nl = stdout:find("\n", pos, true)
    if not nl then return nil, ("line %d has no newline"):format(i + 1) end
    local line = stdout:sub(pos, nl - 1)
    pos = nl + 1
    i = i + 1
    local expected = inputs[i]
    if expected == nil then return nil, ("line %d is beyond the %d inputs given"):format(i, #inputs) end
    local x, rest = line:match "^(%d+) (.+)$"
    if x ~= tostring(expected) then
      return nil, ("line %d names input %s where input %d was given"):format(i, tostring(x), expected)
    end
    local marker = rest:match "^!(%a+)$"
    if marker and M.MARKERS[marker] then
      out[i] = { marker = marker }
    else
      local value = drivers.parse_output(rest .. "\n")
      if not value then return nil, ("line %d (input %d) is not a canonical decimal u32 or a marker"):format(i, expected) end
      out[i] = { value = value }
    end
  end
  if i ~= #inputs then return nil, ("%d lines for %d inputs"):format(i, #inputs) end
  return out
end

return M
