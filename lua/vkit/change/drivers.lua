--- Fixed drivers for the u32 -> u32 profile (seed 001).  Pure.
--
-- Each driver reads exactly four little-endian input bytes from stdin
-- BEFORE it imports the candidate module or calls its function, then
-- prints one canonical decimal u32 line.  What reports the value is taken
-- before the candidate is imported (Python's os.write, type and int;
-- Node's fs.writeSync, Number.isInteger and String), so a candidate that
-- replaces sys.stdout, os.write or fs.writeSync at import does not change
-- what is reported (an admitted candidate cannot reach any of them; this
-- is for the others).  The captured module is used as
-- it is: Rust includes the file as a separate module with #[path], Python
-- loads it from its path, TypeScript requires the compiled file.  Exit
-- statuses 3 (bad input) and 4 (a return value that is not a u32) are
-- protocol failures, never observations.  Before exit 4, and before exit 1
-- when the module has no such function, the driver writes one cause line
-- to stderr (vkit.change.driver_causes); an exception or a panic is left
-- to the runtime, whose traceback on stderr is the cause.
local json = require "vkit.json"
local causes = require "vkit.change.driver_causes"

local M = {}

-- Paths are embedded as string literals; only plain absolute paths are used.
local function literal(path)
  assert(path:match "^/[%w%._%-/]+$", "driver paths must be plain absolute paths")
  return json.encode(path)
end
M.literal = literal

function M.rust(module_path, fn)
  return ([==[// vkit fixed driver (rust): input first, then the candidate.
use std::io::{Read, Write};

#[path = %s]
mod candidate;

fn main() {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() || input.len() != 4 {
        std::process::exit(3);
    }
    let x = u32::from_le_bytes([input[0], input[1], input[2], input[3]]);
    let y: u32 = candidate::%s(x);
    let mut out = std::io::stdout();
    if writeln!(out, "{}", y).is_err() || out.flush().is_err() {
        std::process::exit(5);
    }
}
]==]):format(literal(module_path), fn)
end

function M.python(module_path, fn)
  return ([[# vkit fixed driver (python): input first, then the candidate.
import os, sys
%s
def main(write=os.write, exit=os._exit, kind=type, integer=int, flush=sys.stdout.flush, has=hasattr):
    data = sys.stdin.buffer.read()
    if len(data) != 4:
        exit(3)
    x = integer.from_bytes(data, "little")
    import importlib.util
    spec = importlib.util.spec_from_file_location("candidate", %s)
    candidate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(candidate)
    if not has(candidate, %s):
        cause(b"missing", %s, 1, x)
        exit(1)
    y = candidate.%s(x)
    if kind(y) is not integer or not 0 <= y <= 0xFFFFFFFF:
        cause(b"range", shown(y), 1, x)
        exit(4)
    line = b"%%d\n" %% y
    flush()
    if write(1, line) != len(line):
        exit(5)
    exit(0)
main()
]]):format(causes.python, literal(module_path), json.encode(fn), M.py_bytes(fn), fn)
end

--- A Python bytes literal of an identifier (a function name).
function M.py_bytes(name)
  assert(name:match "^[%w_]+$", "function names are identifiers")
  return 'b"' .. name .. '"'
end

function M.typescript(compiled_path, fn)
  return ([['use strict';
// vkit fixed driver (typescript, compiled by the pinned native tsc): input first, then the candidate.
const fs = require('fs');
const writeSync = fs.writeSync, isInteger = Number.isInteger, text = String, exit = process.exit;
const data = fs.readFileSync(0);
if (data.length !== 4) exit(3);
const x = data.readUInt32LE(0);
%s
const candidate = require(%s);
if (typeof candidate[%s] !== 'function') {
  cause('missing', %s, 1, x);
  exit(1);
}
const y = candidate.%s(x);
if (typeof y !== 'number' || !isInteger(y) || y < 0 || y > 0xFFFFFFFF) {
  cause('range', shown(y), 1, x);
  exit(4);
}
writeSync(1, text(y) + '\n');
]]):format(causes.typescript, literal(compiled_path), json.encode(fn), json.encode(fn), fn)
end

--- Parses a driver's stdout: the u32 value, or nil when it is not exactly
--  one canonical decimal u32 line.
function M.parse_output(stdout)
  local digits = stdout:match "^(0)\n$" or stdout:match "^([1-9]%d*)\n$"
  if not digits or #digits > 10 then return nil end
  local v = math.tointeger(tonumber(digits))
  if not v or v > 0xFFFFFFFF then return nil end
  return v
end

--- The four stdin bytes for an input.
function M.encode_input(x)
  return string.pack("<I4", x)
end

--- The stdin bytes for a list of inputs: four little-endian bytes each.
function M.encode_inputs(inputs)
  local parts = {}
  for i, x in ipairs(inputs) do parts[i] = M.encode_input(x) end
  return table.concat(parts)
end

--- Whether stdin bytes are exactly the encoding of `inputs`, in order:
--  checked right before each launch.
function M.inputs_match(bytes, inputs)
  if type(bytes) ~= "string" or #bytes ~= 4 * #inputs then return false end
  for i, x in ipairs(inputs) do
    if string.unpack("<I4", bytes, 4 * i - 3) ~= x then return false end
  end
  return true
end

return M
