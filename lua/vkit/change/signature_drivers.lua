--- Batch drivers of the multi-parameter profile (issue 34, in progress).  Pure.
--
-- The same protocol as the seed's batch drivers (vkit.change.batch_drivers,
-- batch mode), for a signature of vkit.change.signature:
--
-- stdin   one fixed-width record per input: each parameter in order,
--         little-endian, of its type's width (policies/signatures.lua
--         types[T].bytes; a bool is one byte, 0 or 1, anything else is a
--         bad encoding).  The driver reads ALL of it before it loads the
--         candidate module or calls its function.
-- stdout  one line per input, in the order given:
--           <input> <result>   the function returned <result>
--           <input> !raise     it raised (Python, TypeScript) or panicked (Rust)
--           <input> !range     it returned something outside the declared type
--         <input> and <result> are canonical tuple texts
--         (vkit.change.signature.tuple_text: "3,-1,true"); echoing the input
--         lets parse() check the driver decoded what it was given.
-- stderr  cause lines, vkit.change.driver_causes's format, with FIRST the
--         first input's text ("3,-1,true") instead of a u32.
-- exit    3 a bad input encoding, 5 a failed write: protocol failures.
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
local json = require "vkit.json"
local policy = require("vkit.policy").signatures

local M = {}

M.MARKERS = { raise = true, range = true }

local function types_of(sig)
  return signature.param_types(sig)
end

local function record_bytes(sig)
  local n = 0
  for _, t in ipairs(types_of(sig)) do n = n + signature.type(t).bytes end
  return n
end
M.record_bytes = record_bytes

local PACK = { bool = "B", u8 = "B", i8 = "b", u16 = "I2", i16 = "i2", u32 = "I4", i32 = "i4", u64 = "i8", i64 = "i8" }

--- The stdin bytes for a list of inputs (each a list of one value per
--  parameter, checked): the records, in order.  A u64 is packed as its 64
--  bits (its Lua representation, vkit.change.signature).
function M.encode_inputs(sig, inputs)
  local types, parts = types_of(sig), {}
  local fmt = "<"
  for _, t in ipairs(types) do fmt = fmt .. PACK[t] end
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

-- The longest canonical text of a value of a type.
local function text_bound(t)
  local info = signature.type(t)
  if info.bool then return 5 end
  return math.max(#signature.text(t, info.min), #signature.text(t, info.max))
end

--- The longest line a driver can print for an input of `sig`: the input's
--  text, a space, the longest result or marker, a newline.
function M.line_bound(sig)
  local n = #sig.params - 1
  for _, p in ipairs(sig.params) do n = n + text_bound(p.type) end
  local r = #sig.returns - 1
  for _, t in ipairs(sig.returns) do r = r + text_bound(t) end
  return n + 1 + math.max(r, #"!range") + 1
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

--- The Rust driver: the candidate module included with #[path], called
--  with native types; a tuple result is a native tuple.
function M.rust(sig, module_path, fn)
  local types, decode, args, names, fmt = types_of(sig), {}, {}, {}, {}
  local offset = 0
  for i, t in ipairs(types) do
    decode[i] = rust_decode(t, offset)
    offset = offset + signature.type(t).bytes
    args[i] = "a" .. (i - 1)
    fmt[i] = "{}"
  end
  local results, rfmt = {}, {}
  for i in ipairs(sig.returns) do results[i] = "r" .. (i - 1) rfmt[i] = "{}" end
  local ret = sig.tuple and "(" .. table.concat(sig.returns, ", ") .. ")" or sig.returns[1]
  local pattern = sig.tuple and "(" .. table.concat(results, ", ") .. ")" or results[1]
  return ([==[// vkit batch driver (rust, multi-parameter profile): every input first, then the candidate.
use std::io::{Read, Write};

#[path = %s]
mod candidate;
%s
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
    let mut out = String::with_capacity(xs.len() * %d);
    for &(%s,) in &xs {
        let shown = format!("%s", %s);
        match std::panic::catch_unwind(|| -> %s { candidate::%s(%s) }) {
            Ok(%s) => out.push_str(&format!("{} %s\n", shown, %s)),
            Err(_) => {
                out.push_str(&format!("{} !raise\n", shown));
                note(&mut causes, "raise", last_panic(), shown);
            }
        }
    }
%s]==]):format(drivers.literal(module_path), causes.text_first.rust, offset, table.concat(types, ", "), offset, offset,
    table.concat(decode, ", "), M.line_bound(sig), table.concat(args, ", "), table.concat(fmt, ","),
    table.concat(args, ", "), ret, identifier(fn), table.concat(args, ", "), pattern, table.concat(rfmt, ","),
    table.concat(results, ", "), batch_end.rust)
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
  local result = sig.tuple and "join([text(v) for v in y])" or "text(y)"
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
         records=struct.iter_unpack, join=b",".join, pairs=enumerate):
    data = sys.stdin.buffer.read()
    if not data or size(data) %% %d:
        exit(3)
    xs = []
    for x in records(%q, data):
        if %s:
            exit(3)
        xs.append((%s,))
    shown_all = [join([text(v) for v in x]) for x in xs]
    import importlib.util
    spec = importlib.util.spec_from_file_location("candidate", %s)
    candidate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(candidate)
    lines, causes, missing = [], {}, not has(candidate, %s)
    for i, x in pairs(xs):
        s = shown_all[i]
        if missing:
            lines.append(s + b" !raise\n")
            note(causes, b"missing", %s, s)
            continue
        try:
            y = candidate.%s(*x)
        except BaseException as e:
            lines.append(s + b" !raise\n")
            note(causes, b"raise", raised(e), s)
            continue
        problem = check(y)
        if problem is not None:
            lines.append(s + b" !range\n")
            note(causes, b"range", problem, s)
        else:
            lines.append(s + b" " + %s + b"\n")
%s]]):format(causes.text_first.python, table.concat(check, "\n"), record_bytes(sig), fmt,
    #bools > 0 and table.concat(bools, " or ") or "False", table.concat(args, ", "),
    drivers.literal(module_path), json.encode(identifier(fn)), drivers.py_bytes(fn), fn, result, batch_end.python)
end

-- TypeScript ------------------------------------------------------------

local READ = { u8 = "readUInt8", i8 = "readInt8", u16 = "readUInt16LE", i16 = "readInt16LE", u32 = "readUInt32LE",
               i32 = "readInt32LE", u64 = "readBigUInt64LE", i64 = "readBigInt64LE" }

local function wide(t) return signature.type(t).bytes == 8 end

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
  local types, checks, decode, args, offset = types_of(sig), {}, {}, {}, 0
  for i, t in ipairs(types) do
    if t == "bool" then
      checks[#checks + 1] = ("  if (data[o + %d] > 1) exit(3);"):format(offset)
      decode[i] = ("data[o + %d] === 1"):format(offset)
    else
      decode[i] = ("data.%s(o + %d)"):format(READ[t], offset)
    end
    offset = offset + signature.type(t).bytes
    args[i] = ("x[%d]"):format(i - 1)
  end
  local check, result = {}, {}
  if sig.tuple then
    check[#check + 1] = "  if (!isArray(y)) return describe(y);"
    check[#check + 1] = ("  if (y.length !== %d) return 'an array of ' + y.length + ', not %d';"):format(
      #sig.returns, #sig.returns)
    for i, t in ipairs(sig.returns) do
      check[#check + 1] = ("  if (!%s) return 'component %d: ' + describe(y[%d]);"):format(
        js_ok(t, ("y[%d]"):format(i - 1)), i, i - 1)
      result[i] = ("text(y[%d])"):format(i - 1)
    end
  else
    check[#check + 1] = ("  if (!%s) return describe(y);"):format(js_ok(sig.returns[1], "y"))
    result[1] = "text(y)"
  end
  return ([['use strict';
// vkit batch driver (typescript, multi-parameter profile): every input first, then the candidate.
const fs = require('fs');
const writeSync = fs.writeSync, isInteger = Number.isInteger, exit = process.exit, bytesOf = Buffer.from,
  isArray = Array.isArray, same = Object.is, text = String;
const data = fs.readFileSync(0);
if (data.length === 0 || data.length %% %d !== 0) exit(3);
const xs = [], shownAll = [];
for (let o = 0; o < data.length; o += %d) {
%s
  const x = [%s];
  xs.push(x);
  shownAll.push(x.map(text).join(','));
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
const candidate = require(%s);
const causes = new Map(), missing = typeof candidate[%s] !== 'function';
let out = '';
for (let i = 0; i < xs.length; i++) {
  const x = xs[i], s = shownAll[i];
  let y;
  if (missing) {
    out += s + ' !raise\n';
    note(causes, 'missing', %s, s);
    continue;
  }
  try {
    y = candidate.%s(%s);
  } catch (e) {
    out += s + ' !raise\n';
    note(causes, 'raise', raised(e), s);
    continue;
  }
  const problem = check(y);
  if (problem !== null) {
    out += s + ' !range\n';
    note(causes, 'range', problem, s);
  } else out += s + ' ' + %s + '\n';
}
%s]]):format(offset, offset, table.concat(checks, "\n"), table.concat(decode, ", "), causes.text_first.typescript,
    table.concat(check, "\n"), drivers.literal(compiled_path), json.encode(identifier(fn)), json.encode(fn), fn,
    table.concat(args, ", "), table.concat(result, " + ',' + "), batch_end.typescript)
end

local FILES = { rust = "batch.rs", python = "batch.py", typescript = "batch.js" }

--- The driver file name and source for a side: `path` is the captured
--  module (the compiled one for TypeScript) as the side's processes see it.
function M.driver(language, sig, path, fn)
  assert(FILES[language], "unknown language")
  return FILES[language], M[language](sig, path, fn)
end

--- Parses a batch's stdout against the inputs it was given, in order.
--  Returns a list of {value = result} (a value, or a list for a tuple
--  result) | {marker = "raise" | "range"}, or nil, message, code:
--  `no-newline`, `extra-line`, `wrong-input` (a line naming another input:
--  a reordered line, or a driver that decoded something else),
--  `malformed` (a result that is not canonical text of the declared types),
--  `missing-lines`.
function M.parse(sig, stdout, inputs)
  local types, out, i, pos = types_of(sig), {}, 0, 1
  while pos <= #stdout do
    local nl = stdout:find("\n", pos, true)
    if not nl then return nil, ("line %d has no newline"):format(i + 1), "no-newline" end
    local line = stdout:sub(pos, nl - 1)
    pos = nl + 1
    i = i + 1
    local expected = inputs[i]
    if expected == nil then return nil, ("line %d is beyond the %d inputs given"):format(i, #inputs), "extra-line" end
    local want = signature.tuple_text(types, expected)
    local x, rest = line:match "^(%S+) (%S+)$"
    if x ~= want then
      return nil, ("line %d names input %s where input %s was given"):format(i, tostring(x), want), "wrong-input"
    end
    local marker = rest:match "^!(%a+)$"
    if marker and M.MARKERS[marker] then
      out[i] = { marker = marker }
    else
      local value, msg = signature.parse_result(sig, rest)
      if value == nil then
        return nil, ("line %d (input %s): %s"):format(i, want, msg or "not a result or a marker"), "malformed"
      end
      out[i] = { value = value }
    end
  end
  if i ~= #inputs then return nil, ("%d lines for %d inputs"):format(i, #inputs), "missing-lines" end
  return out
end

return M
