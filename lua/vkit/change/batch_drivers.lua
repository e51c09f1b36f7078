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
--
-- so one failing input never hides the others.  The lines are written at
-- the end, in one piece; the driver itself writes nothing to stderr (Rust's
-- panic hook is silenced).  Exit status 3 is a bad input encoding, 5 a
-- failed write: protocol failures, never observations.  The captured module
-- is used as it is, exactly as the per-input drivers use it.
local drivers = require "vkit.change.drivers"

local M = {}

M.MARKERS = { raise = true, range = true }

--- The longest line a driver prints for an input of `digits` digits: the
--  input, a space, a u32 (10 digits; a marker is shorter) and a newline.
function M.line_bound(digits)
  return digits + 1 + 10 + 1
end

function M.rust(module_path, fn)
  return ([==[// vkit batch driver (rust): every input first, then the candidate.
use std::io::{Read, Write};

#[path = %s]
mod candidate;

fn main() {
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() || input.is_empty() || input.len() %% 4 != 0 {
        std::process::exit(3);
    }
    let xs: Vec<u32> = input.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    std::panic::set_hook(Box::new(|_| {}));
    let mut out = String::with_capacity(xs.len() * 22);
    for &x in &xs {
        match std::panic::catch_unwind(|| -> u32 { candidate::%s(x) }) {
            Ok(y) => out.push_str(&format!("{} {}\n", x, y)),
            Err(_) => out.push_str(&format!("{} !raise\n", x)),
        }
    }
    let mut stdout = std::io::stdout();
    if stdout.write_all(out.as_bytes()).is_err() || stdout.flush().is_err() {
        std::process::exit(5);
    }
}
]==]):format(drivers.literal(module_path), fn)
end

function M.python(module_path, fn)
  return ([[# vkit batch driver (python): every input first, then the candidate.
import sys
data = sys.stdin.buffer.read()
if not data or len(data) %% 4:
    sys.exit(3)
xs = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
import importlib.util
spec = importlib.util.spec_from_file_location("candidate", %s)
candidate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(candidate)
lines = []
for x in xs:
    try:
        y = candidate.%s(x)
    except BaseException:
        lines.append("%%d !raise\n" %% x)
        continue
    if type(y) is not int or not 0 <= y <= 0xFFFFFFFF:
        lines.append("%%d !range\n" %% x)
    else:
        lines.append("%%d %%d\n" %% (x, y))
try:
    sys.stdout.write("".join(lines))
    sys.stdout.flush()
except OSError:
    sys.exit(5)
]]):format(drivers.literal(module_path), fn)
end

function M.typescript(compiled_path, fn)
  return ([['use strict';
// vkit batch driver (typescript, compiled by the pinned native tsc): every input first, then the candidate.
const fs = require('fs');
const data = fs.readFileSync(0);
if (data.length === 0 || data.length %% 4 !== 0) process.exit(3);
const xs = [];
for (let i = 0; i < data.length; i += 4) xs.push(data.readUInt32LE(i));
const candidate = require(%s);
const lines = [];
for (const x of xs) {
  let y;
  try {
    y = candidate.%s(x);
  } catch (e) {
    lines.push(x + ' !raise\n');
    continue;
  }
  if (!Number.isInteger(y) || y < 0 || y > 0xFFFFFFFF) lines.push(x + ' !range\n');
  else lines.push(x + ' ' + String(y) + '\n');
}
const out = Buffer.from(lines.join(''));
let off = 0;
while (off < out.length) {
  try {
    off += fs.writeSync(1, out, off, out.length - off);
  } catch (e) {
    if (e.code !== 'EAGAIN') process.exit(5);
  }
}
]]):format(drivers.literal(compiled_path), fn)
end

--- The driver file name and source for a side (sides.prepare's driver).
function M.driver(language, module_path, fn, compiled_path)
  if language == "rust" then return "batch.rs", M.rust(module_path, fn) end
  if language == "python" then return "batch.py", M.python(module_path, fn) end
  return "batch.js", M.typescript(compiled_path, fn)
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
