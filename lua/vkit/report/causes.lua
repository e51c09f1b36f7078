--- Why a method could not check inputs, as report lines (issue 33): the
--  causes vkit.change.causes finds in the method's retained invocation
--  records, one line per cause and side, e.g.
--    cause (candidate): returned -1, not a u32 (50 inputs, first 50)
--    cause (candidate): returned 300, not a u8 (4 inputs, first x=3, lo=-1)
local json = require "vkit.json"
local fs = require "vkit.fs"
local records = require "vkit.report.records"
local causes_mod = require "vkit.change.causes"
local signature = require "vkit.change.signature"

local M = {}

M.STDERR_TAIL = require("vkit.policy").report.stderr_tail_bytes

--- One cause as a line.
function M.line(c)
  local where = ""
  if c.count > 0 then
    local unit = c.count == 1 and c.unit:gsub("s$", "") or c.unit
    where = c.first and (" (%d %s, first %s)"):format(c.count, unit, c.first) or (" (%d %s)"):format(c.count, unit)
  end
  return ("cause (%s): %s%s"):format(c.side, c.text, where)
end

-- The bound source of each side, as the method report names it.
local function sources(doc)
  local out = {}
  for _, side in ipairs { "base", "candidate" } do
    local a = type(doc.admission) == "table" and doc.admission[side]
    local captured = type(doc.source_captures) == "table" and doc.source_captures[side]
    if type(a) == "table" and type(a.source) == "table" and type(a.source.path) == "string" then
      out[side] = a.source.path
    elseif type(captured) == "table" and json.kind(captured.inventory) == "array" and #captured.inventory == 1 then
      out[side] = captured.inventory[1].path
    end
  end
  return out
end

-- The batches the multi-parameter exhaustive method split past their
-- share of the deadline (its report's batches.split, why =
-- "deadline-share"), as a set of batch indexes.
local function cut_batches(doc)
  local split = type(doc.batches) == "table" and doc.batches.split
  if json.kind(split) ~= "array" then return nil end
  local out = {}
  for _, s in ipairs(split) do
    if type(s) == "table" and s.why == "deadline-share" then out[tostring(s.index)] = true end
  end
  return out
end

--- The causes of a certification method `m` (a summary's method entry)
--  whose records are under the attempt directory `dir`.
function M.of_method(dir, m)
  local report, method_dir = records.inside(dir, m.report), records.inside(dir, m.method)
  if not (report and method_dir and tostring(m.method):find "^[%w_]+$") then return {} end
  local doc = records.read_json(report)
  if type(doc) ~= "table" or json.kind(doc.invocation_records) ~= "array" then
    doc = records.read_json(method_dir .. "/paired-execution-report.v1.json")
  end
  if type(doc) ~= "table" then return {} end
  return causes_mod.of_records(doc.invocation_records, {
    sources = sources(doc),
    -- the multi-parameter profile's reports name their signature; the
    -- seed's do not (and are read as u32 -> u32)
    signature = json.kind(doc.signature) == "object" and signature.parse(doc.signature) or nil,
    cut_batches = cut_batches(doc),
    stderr = function(n)
      local path = ("%s/invocations/%03d.stderr"):format(method_dir, math.tointeger(n) or 0)
      local st = fs.lstat(path)
      if not st or st.kind ~= "file" then return nil end
      local bytes = fs.read(path, records.CAP, { nofollow = true })
      return bytes and bytes:sub(-M.STDERR_TAIL)
    end,
  })
end

--- Adds a method model's causes: method.causes ({side, text, count, unit,
--  first}, in the JSON view too) and a note per cause (every other view).
function M.add(method, dir, m)
  method.causes = json.array(M.of_method(dir, m))
  for _, c in ipairs(method.causes) do method.notes[#method.notes + 1] = M.line(c) end
end

--- Every cause of a run's model (nil: none), one entry per method, side
--  and cause: {method, side, text, count, unit, first} (`vkit run show
--  --json`'s "causes"; the same causes the text lines say).
function M.of_model(model)
  local out = json.array()
  for _, method in ipairs(model and model.methods or {}) do
    for _, c in ipairs(method.causes or {}) do
      out[#out + 1] = json.object { method = method.name, side = c.side, text = c.text, count = c.count,
                                    unit = c.unit, first = c.first }
    end
  end
  return out
end

return M
