--- Batch drivers of the multi-parameter profile (issue 34).  Pure.
--
-- The same protocol as the seed's batch drivers (vkit.change.batch_drivers,
-- batch mode), for a signature of vkit.change.signature:
--
-- stdin   one fixed-width record per input: each parameter in order,
--         little-endian, of its type's width (policies/signatures.lua
--         types[T].bytes; a bool is one byte, 0 or 1, anything else is a
--         bad encoding).  The driver reads ALL of it before it loads the
--         candidate module or calls its function.
-- stdout  one fixed-width binary record per input, in the order given,
--         then a trailer: the format of vkit.change.signature_records (a
--         status byte, value / raise / range, then the result's
--         components; the trailer counts the records and echoes the first
--         and last inputs as the driver decoded them).
-- stderr  cause lines, vkit.change.driver_causes's format, with FIRST the
--         first input's text ("3,-1,true") instead of a u32; a driver
--         makes that text only for an input that has a cause.
-- exit    3 a bad input encoding, 5 a failed write, 6 (fork mode) a
--         failed pipe or fork: protocol failures.
--
-- Modes: M.driver(language, sig, path, fn, mode) with a mode of
-- vkit.change.batch_drivers ("batch", or the language's fresh mode for a
-- side outside the pure profile): see "Fresh mode" below.
--
-- What is outside the declared type, never coerced, each a `range`
-- finding with its cause: Python — an int out of range, a bool where an
-- int is declared and an int where a bool is ("type(y) is int" exactly),
-- anything not an exact tuple of the declared length for a tuple result;
-- TypeScript (numbers for widths up to 32 bits, bigint for 64, boolean,
-- a fixed-length array for a tuple) — a non-integer, -0, a number out of
-- range, a number where a bigint is declared and the reverse, an array of
-- another length.  Rust's compiler types the result: a candidate of
-- another signature does not build.
local drivers = require "vkit.change.drivers"
local causes = require "vkit.change.driver_causes"
local batch_end = require "vkit.change.batch_end"
local signature = require "vkit.change.signature"
local records = require "vkit.change.signature_records"
local json = require "vkit.json"
local policy = require("vkit.policy").signatures

local M = {}

M.MARKERS = { raise = true, range = true, crash = true }

local function types_of(sig)
  return signature.param_types(sig)
end

M.record_bytes = records.input_bytes

--- The stdin bytes for a list of inputs (each a list of one value per
--  parameter, checked): the records, in order.  A u64 is packed as its 64
--  bits (its Lua representation, vkit.change.signature).
function M.encode_inputs(sig, inputs)
  local types, parts = types_of(sig), {}
  local fmt = "<"
  for _, t in ipairs(types) do fmt = fmt .. records.PACK[t] end
  for k, tuple in ipairs(inputs) do
    local values = {}
    for i, t in ipairs(types) do
      assert(signature.check(t, tuple[i]))
      local v = tuple[i]
      if t == "bool" then v = v and 1 or 0 end
      values[i] = v
    end
    parts[k] = string.pack(fmt, table.unpack(values, 1, #types))
  end
  return table.concat(parts)
end

--- Whether stdin bytes are exactly the encoding of `inputs`, in order.
function M.inputs_match(sig, bytes, inputs)
  return type(bytes) == "string" and bytes == M.encode_inputs(sig, inputs)
end

--- The largest stdout a driver can print per input: one result record
--  (the trailer is counted once per batch by the caller).
function M.line_bound(sig)
  return records.result_bytes(sig)
end

--- Inputs per driver invocation (policies/signatures.lua batch_inputs).
M.batch_inputs = policy.batch_inputs

local function identifier(fn)
  assert(type(fn) == "string" and fn:match "^[%a_][%w_]*$", "function names are identifiers")
  return fn
end

-- Rust ------------------------------------------------------------------

local function rust_decode(t, offset)
  if t == "bool" then
    return ("match c[%d] { 0 => false, 1 => true, _ => std::process::exit(3) }"):format(offset)
  end
  local bytes = signature.type(t).bytes
  return ("%s::from_le_bytes(le::<%d>(c, %d))"):format(t, bytes, offset)
end

-- Le::put appends a value's little-endian bytes (a bool one byte 0 or 1);
-- Out lets batch_end.rust write a byte vector as it writes a String.
local RUST_LE = [==[
trait Le {
    fn put(self, o: &mut Vec<u8>);
}
impl Le for bool {
    fn put(self, o: &mut Vec<u8>) {
        o.push(self as u8);
    }
}
macro_rules! le_ints {
    ($($t:ty),*) => {$(impl Le for $t {
        fn put(self, o: &mut Vec<u8>) {
            o.extend_from_slice(&self.to_le_bytes());
        }
    })*};
}
le_ints!(u8, i8, u16, i16, u32, i32, u64, i64);
struct Out(Vec<u8>);
impl Out {
    fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}
]==]

--- The Rust driver: the candidate module included with #[path], called
--  with native types; a tuple result is a native tuple.
function M.rust(sig, module_path, fn)
  local types, decode, args, fmt = types_of(sig), {}, {}, {}
  local offset = 0
  for i, t in ipairs(types) do
    decode[i] = rust_decode(t, offset)
    offset = offset + signature.type(t).bytes
    args[i] = "a" .. (i - 1)
    fmt[i] = "{}"
  end
  local results, puts = {}, {}
  for i in ipairs(sig.returns) do
    results[i] = "r" .. (i - 1)
    puts[i] = ("r%d.put(&mut out);"):format(i - 1)
  end
  local echo = {}
  for i in ipairs(types) do echo[i] = ("x.%d.put(&mut out);"):format(i - 1) end
  local ret = sig.tuple and "(" .. table.concat(sig.returns, ", ") .. ")" or sig.returns[1]
  local pattern = sig.tuple and "(" .. table.concat(results, ", ") .. ")" or results[1]
  local width = records.result_bytes(sig)
  return ([==[// vkit batch driver (rust, multi-parameter profile): every input first, then the candidate.
use std::io::{Read, Write};

#[path = %s]
mod candidate;
%s%s
#[allow(dead_code)] // a signature of bools only reads no integer
fn le<const N: usize>(c: &[u8], o: usize) -> [u8; N] {
    let mut b = [0u8; N];
    b.copy_from_slice(&c[o..o + N]);
    b
}

fn main() {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() || input.is_empty() || input.len() %% %d != 0 {
        std::process::exit(3);
    }
    let mut xs: Vec<(%s,)> = Vec::with_capacity(input.len() / %d);
    for c in input.chunks(%d) {
        xs.push((%s,));
    }
    keep_panics();
    let mut causes = Vec::new();
    let mut out: Vec<u8> = Vec::with_capacity(xs.len() * %d + 4 + 2 * %d);
    for &(%s,) in &xs {
        match std::panic::catch_unwind(|| -> %s { candidate::%s(%s) }) {
            Ok(%s) => {
                out.push(0);
                %s
            }
            Err(_) => {
                out.push(1);
                out.extend_from_slice(&[0u8; %d]);
                note(&mut causes, "raise", last_panic(), format!("%s", %s));
            }
        }
    }
    (xs.len() as u32).put(&mut out);
    for x in [xs[0], xs[xs.len() - 1]] {
        %s
    }
    let out = Out(out);
%s]==]):format(drivers.literal(module_path), causes.text_first.rust, RUST_LE, offset, table.concat(types, ", "),
    offset, offset, table.concat(decode, ", "), width, offset, table.concat(args, ", "), ret, identifier(fn),
    table.concat(args, ", "), pattern, table.concat(puts, "\n                "), width - 1, table.concat(fmt, ","),
    table.concat(args, ", "), table.concat(echo, "\n        "), batch_end.rust)
end

-- Python ----------------------------------------------------------------

local STRUCT = { bool = "B", u8 = "B", i8 = "b", u16 = "H", i16 = "h", u32 = "I", i32 = "i", u64 = "Q", i64 = "q" }

-- A Python expression: whether `v` is exactly a value of `t`.
local function py_ok(t, v)
  if t == "bool" then return ("(kind(%s) is boolean)"):format(v) end
  local info = policy.types[t]
  return ("(kind(%s) is integer and %s <= %s <= %s)"):format(v, info.min, v, info.max)
end

--- The Python driver: the candidate loaded from its path, called with ints
--  and bools; a result checked exactly against its declared types.
function M.python(sig, module_path, fn)
  local types, fmt, bools, args = types_of(sig), "<", {}, {}
  for i, t in ipairs(types) do
    fmt = fmt .. STRUCT[t]
    if t == "bool" then
      bools[#bools + 1] = ("x[%d] > 1"):format(i - 1)
      args[i] = ("x[%d] == 1"):format(i - 1)
    else
      args[i] = ("x[%d]"):format(i - 1)
    end
  end
  local rfmt = "<B"
  for _, t in ipairs(sig.returns) do rfmt = rfmt .. STRUCT[t] end
  local check = {}
  if sig.tuple then
    check[#check + 1] = "    if kind(y) is not sequence:\n        return shown(y)"
    check[#check + 1] = ("    if size(y) != %d:\n        return b\"a tuple of %%d, not %d\" %% size(y)"):format(
      #sig.returns, #sig.returns)
    for i, t in ipairs(sig.returns) do
      check[#check + 1] = ("    if not %s:\n        return b\"component %d: \" + shown(y[%d])"):format(
        py_ok(t, ("y[%d]"):format(i - 1)), i, i - 1)
    end
  else
    check[#check + 1] = ("    if not %s:\n        return shown(y)"):format(py_ok(sig.returns[1], "y"))
  end
  return ([[# vkit batch driver (python, multi-parameter profile): every input first, then the candidate.
import os, sys, struct
%s
def text(v, kind=type, boolean=bool):
    if kind(v) is boolean:
        return b"true" if v else b"false"
    return b"%%d" %% v
def check(y, kind=type, integer=int, boolean=bool, sequence=tuple, size=len):
%s
    return None
def main(write=os.write, exit=os._exit, size=len, flush=sys.stdout.flush, has=hasattr,
         records=struct.iter_unpack, join=b",".join, pairs=enumerate, packer=struct.Struct):
    data = sys.stdin.buffer.read()
    if not data or size(data) %% %d:
        exit(3)
    xs = []
    for x in records(%q, data):
        if %s:
            exit(3)
        xs.append((%s,))
    record, echo = packer(%q).pack, packer(%q).pack
    raise_record, range_record = b"\x01" + bytes(%d), b"\x02" + bytes(%d)
    import importlib.util
    spec = importlib.util.spec_from_file_location("candidate", %s)
    candidate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(candidate)
    lines, causes, missing = [], {}, not has(candidate, %s)
    for x in xs:
        if missing:
            lines.append(raise_record)
            note(causes, b"missing", %s, join([text(v) for v in x]))
            continue
        try:
            y = candidate.%s(*x)
        except BaseException as e:
            lines.append(raise_record)
            note(causes, b"raise", raised(e), join([text(v) for v in x]))
            continue
        problem = check(y)
        if problem is not None:
            lines.append(range_record)
            note(causes, b"range", problem, join([text(v) for v in x]))
        else:
            lines.append(record(0, %s))
    lines.append(struct.pack("<I", size(xs)) + echo(*xs[0]) + echo(*xs[-1]))
%s]]):format(causes.text_first.python, table.concat(check, "\n"), records.input_bytes(sig), fmt,
    #bools > 0 and table.concat(bools, " or ") or "False", table.concat(args, ", "), rfmt, fmt,
    records.result_bytes(sig) - 1, records.result_bytes(sig) - 1,
    drivers.literal(module_path), json.encode(identifier(fn)), drivers.py_bytes(fn), fn,
    sig.tuple and "*y" or "y", batch_end.python)
end

-- TypeScript ------------------------------------------------------------

local READ = { u8 = "readUInt8", i8 = "readInt8", u16 = "readUInt16LE", i16 = "readInt16LE", u32 = "readUInt32LE",
               i32 = "readInt32LE", u64 = "readBigUInt64LE", i64 = "readBigInt64LE" }

local function wide(t) return signature.type(t).bytes == 8 end

-- A statement writing value `v` of type `t` into Buffer `b` at `o`.
local function js_put(t, v, o)
  if t == "bool" then return ("%s[%s] = %s ? 1 : 0;"):format("b", o, v) end
  return ("b.%s(%s, %s);"):format(READ[t]:gsub("^read", "write"), v, o)
end

-- A JavaScript expression: whether `v` is exactly a value of `t`.
local function js_ok(t, v)
  if t == "bool" then return ("(typeof %s === 'boolean')"):format(v) end
  local info = policy.types[t]
  if wide(t) then
    return ("(typeof %s === 'bigint' && %s >= %sn && %s <= %sn)"):format(v, v, info.min, v, info.max)
  end
  return ("(typeof %s === 'number' && isInteger(%s) && !same(%s, -0) && %s >= %s && %s <= %s)"):format(
    v, v, v, v, info.min, v, info.max)
end

--- The TypeScript driver (CommonJS JavaScript, as the seed's): the compiled
--  candidate required, called with numbers (widths up to 32 bits), bigints
--  (64 bits) and booleans; a tuple result is an array of exact length.
function M.typescript(sig, compiled_path, fn)
  local types, checks, decode, args, echo, offset = types_of(sig), {}, {}, {}, {}, 0
  for i, t in ipairs(types) do
    if t == "bool" then
      checks[#checks + 1] = ("  if (data[o + %d] > 1) exit(3);"):format(offset)
      decode[i] = ("data[o + %d] === 1"):format(offset)
    else
      decode[i] = ("data.%s(o + %d)"):format(READ[t], offset)
    end
    echo[i] = "  " .. js_put(t, ("x[%d]"):format(i - 1), ("o + %d"):format(offset))
    offset = offset + signature.type(t).bytes
    args[i] = ("x[%d]"):format(i - 1)
  end
  local check, put, at = {}, {}, 1
  for i, t in ipairs(sig.returns) do
    local v = sig.tuple and ("y[%d]"):format(i - 1) or "y"
    put[i] = "    " .. js_put(t, v, ("o + %d"):format(at))
    at = at + signature.type(t).bytes
  end
  if sig.tuple then
    check[#check + 1] = "  if (!isArray(y)) return describe(y);"
    check[#check + 1] = ("  if (y.length !== %d) return 'an array of ' + y.length + ', not %d';"):format(
      #sig.returns, #sig.returns)
    for i, t in ipairs(sig.returns) do
      check[#check + 1] = ("  if (!%s) return 'component %d: ' + describe(y[%d]);"):format(
        js_ok(t, ("y[%d]"):format(i - 1)), i, i - 1)
    end
  else
    check[#check + 1] = ("  if (!%s) return describe(y);"):format(js_ok(sig.returns[1], "y"))
  end
  return ([['use strict';
// vkit batch driver (typescript, multi-parameter profile): every input first, then the candidate.
const fs = require('fs');
const writeSync = fs.writeSync, isInteger = Number.isInteger, exit = process.exit, bytesOf = Buffer.from,
  isArray = Array.isArray, same = Object.is, text = String, alloc = Buffer.alloc;
const data = fs.readFileSync(0);
if (data.length === 0 || data.length %% %d !== 0) exit(3);
const xs = [];
for (let o = 0; o < data.length; o += %d) {
%s
  xs.push([%s]);
}
%s
function describe(y) {
  if (typeof y === 'number') return same(y, -0) ? '-0' : text(y);
  if (typeof y === 'bigint') return text(y) + 'n';
  return 'type ' + (y === null ? 'null' : isArray(y) ? 'array' : typeof y);
}
function check(y) {
%s
  return null;
}
function echo(b, o, x) {
%s
}
const inputText = (x) => x.map(text).join(',');
const candidate = require(%s);
const causes = new Map(), missing = typeof candidate[%s] !== 'function';
const W = %d, b = alloc(xs.length * W + 4 + 2 * %d);
for (let i = 0; i < xs.length; i++) {
  const x = xs[i], o = i * W;
  let y;
  if (missing) {
    b[o] = 1;
    note(causes, 'missing', %s, inputText(x));
    continue;
  }
  try {
    y = candidate.%s(%s);
  } catch (e) {
    b[o] = 1;
    note(causes, 'raise', raised(e), inputText(x));
    continue;
  }
  const problem = check(y);
  if (problem !== null) {
    b[o] = 2;
    note(causes, 'range', problem, inputText(x));
  } else {
%s
  }
}
b.writeUInt32LE(xs.length, xs.length * W);
echo(b, xs.length * W + 4, xs[0]);
echo(b, xs.length * W + 4 + %d, xs[xs.length - 1]);
const out = b;
%s]]):format(offset, offset, table.concat(checks, "\n"), table.concat(decode, ", "), causes.text_first.typescript,
    table.concat(check, "\n"), table.concat(echo, "\n"), drivers.literal(compiled_path), json.encode(identifier(fn)),
    records.result_bytes(sig), offset, json.encode(fn), fn, table.concat(args, ", "), table.concat(put, "\n"),
    offset, batch_end.typescript)
end

-- Fresh mode (issue 34, the seed's issue 29) -----------------------------
--
-- For a side outside the pure profile, the modes of the seed's fresh
-- drivers (vkit.change.batch_drivers.mode and SEMANTICS name them), so
-- that an observation is what the function does in real use: Rust forks
-- one process per input after reading every input and before the
-- candidate is called (the child calls, writes its record through a pipe
-- and exits with _exit; a child that ends without exactly one record, or
-- not with status 0, is a `crash` record, status 3, never a value);
-- Python compiles the module once and executes it anew per input into a
-- fresh module's dict in the batch's process; TypeScript evaluates the
-- compiled module afresh per input in a new V8 context made from a
-- prototype-less object.  stdin, the records, the trailer and the cause
-- lines are the batch driver's: a fresh driver IS the batch driver with its
-- candidate loading and call loop replaced (splice checks that the text
-- replaced occurs exactly once), so the parser is the same.

-- `source` with the unique occurrence of `from` .. (up to, not including) `to` replaced by `with`.
local function splice(source, from, to, with)
  local a = assert(source:find(from, 1, true), "fresh splice: start not found")
  assert(not source:find(from, a + 1, true), "fresh splice: start not unique")
  local b = assert(source:find(to, a, true), "fresh splice: end not found")
  return source:sub(1, a - 1) .. with .. source:sub(b)
end

local RUST_FFI = [==[
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

]==]

--- The Rust driver, fork per input: exit 6 when a pipe or a fork fails
--  (a resource failure, never an observation).
function M.rust_fresh(sig, module_path, fn)
  local types, args, fmt = types_of(sig), {}, {}
  for i in ipairs(types) do
    args[i] = "a" .. (i - 1)
    fmt[i] = "{}"
  end
  local results, puts = {}, {}
  for i in ipairs(sig.returns) do
    results[i] = "r" .. (i - 1)
    puts[i] = ("r%d.put(&mut rec);"):format(i - 1)
  end
  local ret = sig.tuple and "(" .. table.concat(sig.returns, ", ") .. ")" or sig.returns[1]
  local pattern = sig.tuple and "(" .. table.concat(results, ", ") .. ")" or results[1]
  local width = records.result_bytes(sig)
  local loop = ([==[    for &(%s,) in &xs {
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
            // the record, then a panic's message for the parent's causes
            let mut rec: Vec<u8> = Vec::with_capacity(%d);
            match std::panic::catch_unwind(|| -> %s { candidate::%s(%s) }) {
                Ok(%s) => {
                    rec.push(0);
                    %s
                }
                Err(_) => {
                    rec.push(1);
                    rec.extend_from_slice(&[0u8; %d]);
                    rec.extend_from_slice(last_panic().as_bytes());
                }
            }
            unsafe {
                let mut at = 0;
                while at < rec.len() {
                    let n = write(fds[1], rec[at..].as_ptr(), rec.len() - at);
                    if n <= 0 {
                        break;
                    }
                    at += n as usize;
                }
                _exit(0);
            }
        }
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut status = -1i32;
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
            if waitpid(pid, &mut status, 0) != pid {
                status = -1;
            }
        }
        if status == 0 && answer.len() == %d && answer[0] == 0 {
            out.extend_from_slice(&answer);
        } else if status == 0 && answer.len() >= %d && answer[0] == 1 && answer[1..%d].iter().all(|&v| v == 0) {
            out.extend_from_slice(&answer[..%d]);
            note(&mut causes, "raise", String::from_utf8_lossy(&answer[%d..]).into_owned(), format!("%s", %s));
        } else {
            out.push(3);
            out.extend_from_slice(&[0u8; %d]);
            note(&mut causes, "crash", "the input's process ended without an answer".to_string(),
                 format!("%s", %s));
        }
    }
]==]):format(table.concat(args, ", "), width, ret, identifier(fn), table.concat(args, ", "), pattern,
    table.concat(puts, "\n                    "), width - 1, width, width, width, width, width,
    table.concat(fmt, ","), table.concat(args, ", "), width - 1, table.concat(fmt, ","), table.concat(args, ", "))
  local source = M.rust(sig, module_path, fn)
  source = source:gsub("^// vkit batch driver %(rust, multi%-parameter profile%): every input first, then the candidate%.",
    "// vkit batch driver (rust, multi-parameter profile, fork per input): every input first, then one fresh process per input.")
  source = splice(source, "fn main() {", "fn main() {", RUST_FFI)
  return splice(source, "    for &(", "    (xs.len() as u32).put(&mut out);", loop)
end

--- The Python driver, a fresh module per input.
function M.python_fresh(sig, module_path, fn)
  local source = M.python(sig, module_path, fn)
  source = splice(source, "# vkit batch driver (python, multi-parameter profile)", "import os, sys, struct\n",
    "# vkit batch driver (python, multi-parameter profile, a fresh module per input): every input first, then the "
    .. "candidate.\n")
  source = splice(source, "import os, sys, struct\n", "\n", "import os, sys, struct, types")
  source = splice(source, "         records=struct.iter_unpack,", "):\n",
    "         records=struct.iter_unpack, join=b\",\".join, pairs=enumerate, packer=struct.Struct,\n"
    .. "         module_type=types.ModuleType, run=exec")
  local call = sig.tuple and "*y" or "y"
  local loop = ([[    path = %s
    with open(path, "rb") as f:
        code = compile(f.read(), path, "exec")
    lines, causes = [], {}
    for x in xs:
        module = module_type("candidate")
        module.__file__ = path
        scope = module.__dict__
        try:
            run(code, scope)
            y = scope[%s](*x)
        except BaseException as e:
            lines.append(raise_record)
            if %s in scope:
                note(causes, b"raise", raised(e), join([text(v) for v in x]))
            else:
                note(causes, b"missing", %s, join([text(v) for v in x]))
            continue
        problem = check(y)
        if problem is not None:
            lines.append(range_record)
            note(causes, b"range", problem, join([text(v) for v in x]))
        else:
            lines.append(record(0, %s))
]]):format(drivers.literal(module_path), json.encode(identifier(fn)), json.encode(fn), drivers.py_bytes(fn), call)
  return splice(source, "    import importlib.util\n", "    lines.append(struct.pack(", loop)
end

--- The TypeScript driver, a fresh V8 context per input.
function M.typescript_fresh(sig, compiled_path, fn)
  local args = {}
  for i in ipairs(types_of(sig)) do args[i] = ("x[%d]"):format(i - 1) end
  local source = M.typescript(sig, compiled_path, fn)
  source = splice(source, "// vkit batch driver (typescript, multi-parameter profile)", "\nconst fs",
    "// vkit batch driver (typescript, multi-parameter profile, a fresh V8 context per input): every input first, "
    .. "then the candidate.")
  local load = ([[const vm = require('vm'), newContext = vm.createContext, blank = Object.create;
const script = new vm.Script('(function () { var exports = {}; var module = { exports: exports };\n'
  + fs.readFileSync(%s, 'utf8') + '\nreturn module.exports; })()');
const causes = new Map();
]]):format(drivers.literal(compiled_path))
  source = splice(source, "const candidate = require(", "const W = ", load)
  local call = ([[  let y;
  try {
    const exported = script.runInContext(newContext(blank(null)));
    if (exported === null || (typeof exported !== 'object' && typeof exported !== 'function')
        || typeof exported[%s] !== 'function') {
      b[o] = 1;
      note(causes, 'missing', %s, inputText(x));
      continue;
    }
    y = exported[%s](%s);
  } catch (e) {
]]):format(json.encode(fn), json.encode(fn), json.encode(fn), table.concat(args, ", "))
  return splice(source, "  let y;\n  if (missing) {", "    b[o] = 1;\n    note(causes, 'raise'", call)
end

local FILES = require("vkit.change.batch_drivers").FILES
local SOURCES = {
  batch = { rust = M.rust, python = M.python, typescript = M.typescript },
  ["fork-per-input"] = { rust = M.rust_fresh },
  ["fresh-module-per-input"] = { python = M.python_fresh },
  ["fresh-context-per-input"] = { typescript = M.typescript_fresh },
}

--- The driver file name and source for a side: `path` is the captured
--  module (the compiled one for TypeScript) as the side's processes see it;
--  `mode` a mode of vkit.change.batch_drivers (batch_drivers.mode:
--  "batch" for an admitted side, its language's fresh mode otherwise),
--  "batch" when absent.
function M.driver(language, sig, path, fn, mode)
  assert(FILES[language], "unknown language")
  local make = assert(SOURCES[mode or "batch"][language], "no such mode for the language")
  return FILES[language], make(sig, path, fn)
end

--- Parses a batch's stdout against the inputs it was given, in order.
--  Returns a list of {value = result} (a value, or a list for a tuple
--  result) | {marker = "raise" | "range" | "crash"}, or nil, message, code: a
--  vkit.change.signature_records failure (`truncated`, `wrong-count`,
--  `wrong-input`, `malformed`).
function M.parse(sig, stdout, inputs)
  local decode = records.decoder(sig)
  local list, msg, code = records.records(sig, stdout, M.encode_inputs(sig, inputs), decode)
  if not list then return nil, msg, code end
  local out = {}
  for i, rec in ipairs(list) do out[i] = decode(rec) end
  return out
end

return M
