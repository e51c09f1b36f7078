--- The cause lines of the fixed drivers (issue 33): why an input could not
-- be checked, said once by the driver itself, because nothing else knows
-- it (a value outside u32 leaves no trace but an exit status; an exception
-- caught by a batch driver none at all).  Pure: source text only.
--
-- A driver writes these lines to stderr, never stdout, so the observation
-- protocol is unchanged:
--
--   vkit driver: KIND COUNT FIRST DETAIL
--
-- KIND is `missing` (no such function in the module), `range` (DETAIL is
-- the returned value, or `type NAME` when it is not a number), `raise`
-- (DETAIL is the exception or panic), or `more` (COUNT further distinct
-- causes not listed); COUNT is how many inputs had the cause, FIRST the
-- first of them.  A batch driver groups identical causes and writes at most
-- policies/change.lua causes.lines lines of at most causes.line_bytes bytes
-- each, so they fit in the exhaustive method's stderr reserve.  Candidate
-- code can write look-alike lines: they are a diagnosis shown to a reader,
-- never evidence (vkit.change.causes reads them).
local limits = require("vkit.policy").change.causes

local M = {}

M.PREFIX = "vkit driver: "

-- FIRST is a u32 for the seed's drivers, an input's text ("3,-1,true")
-- for the multi-parameter ones (vkit.change.signature_drivers).
local FIRST = {
  u32 = { RUST_FIRST = "u32", PY_FIRST = "%d", PY_NO_FIRST = "0" },
  text = { RUST_FIRST = "String", PY_FIRST = "%s", PY_NO_FIRST = 'b"0"' },
}

local function filler(first)
  local values = { LINES = tostring(limits.lines), LINE = tostring(limits.line_bytes), PREFIX = M.PREFIX }
  for k, v in pairs(FIRST[first]) do values[k] = v end
  return function(text) return (text:gsub("@([%u_]+)@", values)) end
end

-- Python: cause() writes one line; shown() and raised() describe a value
-- and an exception without trusting them to print themselves; note() and
-- flush_causes() group a batch's causes.  Bound to what they use before
-- the candidate is imported.
local PYTHON = [[
def cause(kind, detail, count, first, write=os.write):
    line = b"@PREFIX@%s %d @PY_FIRST@ %s" % (kind, count, first, detail.replace(b"\n", b" ").replace(b"\r", b" "))
    try:
        write(2, line[:@LINE@].decode("utf-8", "ignore").encode("utf-8") + b"\n")
    except OSError:
        pass
def shown(y, kind=type, integer=int):
    if kind(y) is integer:
        return b"%d" % y if y.bit_length() <= 64 else b"an integer of %d bits" % y.bit_length()
    return ("type " + kind(y).__name__).encode("utf-8", "replace")
def raised(e, kind=type, text=str):
    try:
        message = text(e)
    except BaseException:
        message = ""
    name = kind(e).__name__
    return (name + ": " + message[:@LINE@] if message else name).encode("utf-8", "replace")
def note(causes, kind, detail, x):
    c = causes.get((kind, detail))
    if c is None:
        causes[(kind, detail)] = [1, x]
    else:
        c[0] += 1
def flush_causes(causes):
    items = list(causes.items())
    for i, ((kind, detail), (count, first)) in enumerate(items):
        if i == @LINES@ - 1 and len(items) > @LINES@:
            cause(b"more", b"-", len(items) - i, @PY_NO_FIRST@)
            break
        cause(kind, detail, count, first)
]]

-- TypeScript (the compiled driver is CommonJS): the same four helpers.
local TYPESCRIPT = [[
const causeWrite = fs.writeSync, causeBytes = Buffer.from;
function cause(kind, detail, count, first) {
  let line = ('@PREFIX@' + kind + ' ' + count + ' ' + first + ' ' + detail).replace(/[\r\n]+/g, ' ');
  const b = causeBytes(line);
  if (b.length > @LINE@) line = b.subarray(0, @LINE@ - 3).toString();
  try { causeWrite(2, line + '\n'); } catch (e) { /* a cause is a diagnosis: never a failure */ }
}
function shown(y) {
  return typeof y === 'number' ? String(y) : 'type ' + (y === null ? 'null' : typeof y);
}
function raised(e) {
  try {
    const name = e !== null && typeof e === 'object' && typeof e.name === 'string' ? e.name : typeof e;
    const message = e !== null && typeof e === 'object' && 'message' in e ? String(e.message) : String(e);
    return message ? name + ': ' + message.slice(0, @LINE@) : name;
  } catch (_) {
    return 'an exception';
  }
}
function note(causes, kind, detail, x) {
  const key = kind + ' ' + detail, c = causes.get(key);
  if (c === undefined) causes.set(key, [kind, detail, 1, x]);
  else c[2]++;
}
function flushCauses(causes) {
  const items = [...causes.values()];
  for (let i = 0; i < items.length; i++) {
    if (i === @LINES@ - 1 && items.length > @LINES@) { cause('more', '-', items.length - i, 0); break; }
    cause(items[i][0], items[i][1], items[i][2], items[i][3]);
  }
}
]]

-- Rust: the panic hook keeps the last panic's message (instead of printing
-- it); note() and flush_causes() group a batch's causes.
local RUST = [==[
static LAST_PANIC: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn keep_panics() {
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = info.to_string().replace('\n', " ");
        }
    }));
}

fn last_panic() -> String {
    LAST_PANIC.lock().map(|s| s.clone()).unwrap_or_default()
}

fn note(causes: &mut Vec<(&'static str, String, u64, @RUST_FIRST@)>, kind: &'static str, detail: String, x: @RUST_FIRST@) {
    match causes.iter_mut().find(|c| c.0 == kind && c.1 == detail) {
        Some(c) => c.2 += 1,
        None => causes.push((kind, detail, 1, x)),
    }
}

fn flush_causes(causes: &[(&'static str, String, u64, @RUST_FIRST@)]) {
    let mut err = std::io::stderr();
    for (i, c) in causes.iter().enumerate() {
        if i == @LINES@ - 1 && causes.len() > @LINES@ {
            let _ = writeln!(err, "@PREFIX@more {} 0 -", causes.len() - i);
            break;
        }
        let mut line = format!("@PREFIX@{} {} {} {}", c.0, c.2, c.3, c.1.replace(['\n', '\r'], " "));
        let mut end = line.len().min(@LINE@);
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        let _ = writeln!(err, "{}", line);
    }
}
]==]

for _, first in ipairs { "u32", "text" } do
  local fill = filler(first)
  local target = first == "u32" and M or {}
  target.python, target.typescript, target.rust = fill(PYTHON), fill(TYPESCRIPT), fill(RUST)
  if first == "text" then M.text_first = target end
end

return M
