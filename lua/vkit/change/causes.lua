--- Why inputs could not be checked, read from a method's retained
-- invocation records (issue 33): one cause per distinct reason and side,
-- with how many inputs (or runs) had it.  Pure: the caller reads files.
--
-- Sources, in order of precedence for one invocation:
--   * the driver's cause lines (vkit.change.driver_causes): a missing
--     function, a value outside the declared result type, an exception or
--     panic a driver caught, an input's process that ended without an
--     answer (the multi-parameter profile's fresh Rust mode), each with its
--     count and first input -- a u32 in the seed's profile, an input's
--     canonical text ("3,-1,true") in the multi-parameter one, shown with
--     its parameters named when the signature is known;
--   * a failed build: its first error lines;
--   * a failed run: the exception and the last lines of the traceback
--     (Python), the panic (Rust), the error and its first frame (Node), or
--     the last lines of stderr;
--   * a run that did not end on its own: its timeout or signal.
-- A cause is a diagnosis for a reader, never evidence: candidate code can
-- print look-alike lines, and nothing decides an outcome from them.
local json = require "vkit.json"
local driver_causes = require "vkit.change.driver_causes"
local signature = require "vkit.change.signature"
local mcontract = require "vkit.change.multi.contract"
local limits = require("vkit.policy").change.causes
local escape = require("vkit.terminal").escape

local M = {}

-- One line a report can carry: whitespace runs as one space, then control
-- characters (C0, DEL, C1), bidi controls and bytes that are not UTF-8 (a
-- stderr tail cut inside a character, candidate bytes) written as visible
-- \xNN / \uNNNN text (vkit.terminal.escape), so every format, JSON
-- included, can encode it and nothing in it repaints a reader's screen.
local function clip(s)
  s = s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  s = escape(s)
  if #s <= limits.shown_bytes then return s end
  local cut = s:sub(1, limits.shown_bytes - 3)
  -- never end inside a UTF-8 sequence
  while #cut > 0 and not utf8.len(cut) do cut = cut:sub(1, -2) end
  return cut .. "..."
end

-- Lines worth reading: not blank, not a caret marker, not a runtime's
-- closing boilerplate.
local function lines_of(text)
  local out = {}
  for line in (text .. "\n"):gmatch "([^\n]*)\n" do
    local bare = line:gsub("%s+$", "")
    if bare:find "%S" and not bare:match "^[%s%^~|]+$" and not bare:match "^Node%.js v"
       and not bare:match "^note: run with `RUST_BACKTRACE" and not bare:find(driver_causes.PREFIX, 1, true) then
      out[#out + 1] = bare
    end
  end
  return out
end

local function joined(lines, from, to)
  local part = {}
  for i = math.max(1, from), math.min(#lines, to) do part[#part + 1] = lines[i]:gsub("^%s+", "") end
  return table.concat(part, " | ")
end

--- The exception in a failed run's stderr, in one line.
function M.exception(stderr)
  local lines = lines_of(stderr or "")
  if #lines == 0 then return nil end
  local n = limits.tail_lines
  for i, line in ipairs(lines) do
    if line:find("panicked at", 1, true) then return clip(joined(lines, i, i + 1)) end
  end
  for _, line in ipairs(lines) do
    if line == "Traceback (most recent call last):" then return clip(joined(lines, #lines - n + 1, #lines)) end
  end
  for i, line in ipairs(lines) do
    if line:match "^[%w_$.]*Error%f[^%w_]" and (lines[i + 1] or ""):match "^%s+at " then
      return clip(joined(lines, i, i + 1))
    end
  end
  return clip(joined(lines, #lines - n + 1, #lines))
end

--- A failed build's first error lines, in one line.
function M.build_error(stderr)
  local lines = lines_of(stderr or "")
  local first = 1
  for i, line in ipairs(lines) do
    if line:lower():find("error", 1, true) then first = i break end
  end
  if #lines == 0 then return nil end
  return clip(joined(lines, first, first + limits.tail_lines - 1))
end

-- The driver's cause lines in a stderr text: {kind, count, first, detail},
-- FIRST as its text: a u32 (the seed's drivers) or an input's text (the
-- multi-parameter drivers), read by first_input.
local function driver_lines(stderr)
  local out = {}
  for line in (stderr .. "\n"):gmatch "([^\n]*)\n" do
    local kind, count, first, detail = line:match("^" .. driver_causes.PREFIX:gsub("%p", "%%%0")
      .. "(%a+) (%d+) (%S+) ?(.*)$")
    if kind then
      out[#out + 1] = { kind = kind, count = math.tointeger(tonumber(count)), first = first, detail = detail }
    end
  end
  return out
end

-- The first input of a cause as it is reported: a u32 as a number; a
-- multi-parameter input as "x=3, lo=-1, hi=true" when it is a legal input
-- text of `sig` (a look-alike line is candidate text: anything else is
-- dropped rather than shown); nil when there is none.
local function first_input(first, sig)
  if not sig then return first:match "^%d+$" and math.tointeger(tonumber(first)) or nil end
  -- under a signature a bare number is validated like any other text (a
  -- look-alike "5" is no input of a two-parameter signature)
  local values = signature.parse_tuple(signature.param_types(sig), first)
  return values and mcontract.input_text(sig, values) or nil
end

-- The declared result type a range cause is measured against: u32 in the
-- seed's profile, the signature's result (or one of its components).
local function declared(sig, component)
  if not sig then return "u32" end
  if component then return sig.returns[component] or "declared component" end
  if sig.tuple then return "tuple (" .. table.concat(sig.returns, ", ") .. ")" end
  return sig.returns[1]
end

-- "a u32", "an i32", "an int".  The seed's lines keep "a" before every
-- word, as their reports always said.
local function a(word, sig)
  return ((sig and word:match "^[aeioAEIO]") and "an " or "a ") .. word
end

-- A range cause's detail, as the drivers write it: the value, "type NAME",
-- "component N: " and either, or "a tuple of N, not M" (Python) / "an
-- array of N, not M" (TypeScript).
local function range_text(detail, sig)
  if detail:match "^an? %a+ of %d+, not %d+$" then return "returned " .. detail end
  local component, rest = detail:match "^component (%d+): (.*)$"
  component = component and math.tointeger(tonumber(component))
  local value = rest or detail
  local type_name = value:match "^type (.+)$"
  value = type_name and a(type_name, sig) or value
  local want = a(declared(sig, component), sig)
  if component then return ("returned %s as component %d, not %s"):format(value, component, want) end
  return ("returned %s, not %s"):format(value, want)
end

local function driver_text(c, source, sig)
  if c.kind == "missing" then return ("no function `%s` in %s"):format(c.detail, source or "the bound module") end
  if c.kind == "range" then return range_text(c.detail, sig) end
  if c.kind == "raise" then return c.detail:find("^panicked") and c.detail or ("raised " .. c.detail) end
  if c.kind == "crash" then return "crashed: " .. c.detail end
  if c.kind == "more" then return ("%d further distinct causes not listed by the driver"):format(c.count) end
  return c.kind .. " " .. c.detail
end

local function side_of(label)
  for _, s in ipairs { "base", "candidate" } do
    if (" " .. label .. " "):find(" " .. s .. " ", 1, true) then return s end
  end
end

-- Which record counts: the first repetition and the first pass only, so a
-- cause seen again when an input is re-run is not counted twice.
local function first_run(label)
  local rep, pass = label:match " rep (%d+)", label:match " pass (%d+)"
  return (rep == nil or rep == "1") and (pass == nil or pass == "1")
end

local function failed(r)
  return r.status ~= "exited" or r.code ~= 0
end

local function process_text(r, stderr, is_build)
  if r.status == "timeout" then return is_build and "the build timed out" or "timed out" end
  if r.status == "signaled" or (r.signal ~= nil and r.signal ~= json.null) then
    return ("ended by signal %s"):format(tostring(r.signal))
  end
  if r.status == "output-capped" then return "wrote more than the output cap" end
  if r.status ~= "exited" then return nil end
  if is_build then
    return "build failed: " .. (M.build_error(stderr) or ("exit " .. tostring(r.code) .. ", nothing on stderr"))
  end
  return M.exception(stderr) or ("exit " .. tostring(r.code) .. ", nothing on stderr")
end

--- The causes in a method report's invocation records, grouped: a list of
--  {side, text, count, unit ("inputs" | "runs"), first (input) | nil}, base
--  first, then in the order first seen.
--  `first` is a u32, or for the multi-parameter profile the first input
--  seen with its parameters named ("x=3, lo=-1, hi=true").
--  opts = {stderr = function(n) -> text | nil, for a record whose stderr is
--  kept only as a file; sources = {base = path, candidate = path};
--  signature = the multi-parameter contract's parsed signature, if any;
--  cut_batches = {[batch index] = true} for batches split past their share
--  of the deadline, whose launches' timeouts are no cause}
function M.of_records(records, opts)
  opts = opts or {}
  local sources = opts.sources or {}
  local groups, order = {}, {}
  local function add(side, text, count, unit, first)
    local key = side .. "\0" .. text
    local g = groups[key]
    if not g then
      g = { side = side, text = text, count = 0, unit = unit }
      groups[key] = g
      order[#order + 1] = g
    end
    g.count = g.count + (count or 1)
    -- a u32 keeps the smallest; an input text keeps the first seen (the
    -- drivers see inputs in the domain's order)
    if first ~= nil and (g.first == nil or (math.type(first) == "integer" and math.type(g.first) == "integer"
                                            and first < g.first)) then
      g.first = first
    end
  end
  for _, r in ipairs(json.kind(records) == "array" and records or {}) do
    local label = type(r) == "table" and type(r.label) == "string" and r.label or ""
    local side = side_of(label)
    -- a launch cut at its share of the deadline was split and its
    -- inputs re-run: its timeout is not why any input went unchecked
    local cut = opts.cut_batches and opts.cut_batches[label:match "^batch (%S+) pass " or false]
    if side and first_run(label) and not cut then
      local stderr = type(r.stderr) == "string" and r.stderr or (opts.stderr and opts.stderr(r.n)) or ""
      local said = driver_lines(stderr)
      for _, c in ipairs(said) do
        add(side, clip(driver_text(c, sources[side], opts.signature)), c.kind ~= "more" and c.count or 0, "inputs",
          c.kind ~= "more" and first_input(c.first, opts.signature) or nil)
      end
      if #said == 0 and failed(r) then
        local is_build = label:match "^build " ~= nil
        local text = process_text(r, stderr, is_build)
        -- the seed's per-input runs are labelled "input 59", the
        -- multi-parameter ones "input clamp(x=3, lo=-1, hi=7)" (vkit's
        -- own text, not the candidate's)
        local input = math.tointeger(tonumber(label:match " input (%d+)")) or label:match " input [%w_]+%((.-)%) rep %d+$"
        if text then add(side, text, 1, input and "inputs" or "runs", input) end
      end
    end
  end
  return order
end

return M
