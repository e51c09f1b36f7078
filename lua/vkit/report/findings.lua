--- One findings list per run: what every method found, merged.  A
--  violation at an input is one entry however many methods saw it, with
--  the methods that saw it; consecutive violating inputs that break the
--  same rule are one range ("30..49 (20 inputs)"), so a reviewer reads a
--  line per broken behaviour, not a line per input per method.
--
--   of(model) -> {{title, rule, detail, fields, from, to, count, seen_by =
--                 {{method, count}}, seen (one line)}}
-- Inputs: each method's findings ({title, detail, fields, input, rule}) and,
-- when its report kept them, its complete violation ranges (`ranges` =
-- {{from, to, count, rule}}: a method's listed findings stop at a cap, its
-- ranges do not).  Pure.
local M = {}

-- "exhaustive, finite_paired (4 of 20)": a method that saw every input of
-- the entry is named alone; "" when the run had one method (nothing to tell
-- apart).
local function seen_line(seen_by, count, methods)
  if methods < 2 then return "" end
  local parts = {}
  for _, s in ipairs(seen_by) do
    parts[#parts + 1] = (count > 1 and s.count < count) and ("%s (%d of %d)"):format(s.method, s.count, count) or s.method
  end
  return table.concat(parts, ", ")
end

local function title_of(from, to, count)
  if count == 1 then return ("input %d"):format(from) end
  return ("%d..%d (%d inputs)"):format(from, to, count)
end

local function ordered_seen(counts, order)
  local out = {}
  for _, name in ipairs(order) do
    if counts[name] then out[#out + 1] = { method = name, count = counts[name] } end
  end
  return out
end

function M.of(model)
  local cells, inputs, order = {}, {}, {}
  local others, other_keys = {}, {}
  local function cell(x)
    local c = cells[x]
    if not c then
      c = { methods = {} }
      cells[x] = c
      inputs[#inputs + 1] = x
    end
    return c
  end
  for _, m in ipairs(model.methods or {}) do
    order[#order + 1] = m.name
    for _, r in ipairs(m.ranges or {}) do
      for x = r.from, r.to do
        local c = cell(x)
        c.rule = c.rule or r.rule
        c.methods[m.name] = true
      end
    end
    for _, f in ipairs(m.findings or {}) do
      if f.input then
        local c = cell(f.input)
        c.rule = c.rule or f.rule
        c.example = c.example or f
        c.methods[m.name] = true
      else
        local key = tostring(f.title) .. "\0" .. tostring(f.detail)
        local o = other_keys[key]
        if not o then
          o = { title = f.title, detail = f.detail, fields = f.fields, counts = {} }
          other_keys[key] = o
          others[#others + 1] = o
        end
        o.counts[m.name] = 1
      end
    end
  end
  table.sort(inputs)
  local out = {}
  local group
  local function close()
    if not group then return end
    group.title = title_of(group.from, group.to, group.count)
    local e = group.example
    if e then
      group.detail = group.count > 1 and ("at input %d: %s"):format(e.input, e.detail or "") or e.detail
      group.fields = {}
      for _, field in ipairs(e.fields or {}) do
        if field.label ~= "rule" then group.fields[#group.fields + 1] = field end
      end
    end
    group.seen_by = ordered_seen(group.counts, order)
    group.seen = seen_line(group.seen_by, group.count, #order)
    group.counts, group.example = nil, nil
    out[#out + 1] = group
  end
  for _, x in ipairs(inputs) do
    local c = cells[x]
    if not (group and group.rule == c.rule and x == group.to + 1) then
      close()
      group = { from = x, to = x, count = 0, rule = c.rule, counts = {} }
    end
    group.to, group.count = x, group.count + 1
    group.example = group.example or c.example
    for name in pairs(c.methods) do group.counts[name] = (group.counts[name] or 0) + 1 end
  end
  close()
  for _, o in ipairs(others) do
    o.seen_by = ordered_seen(o.counts, order)
    o.seen = seen_line(o.seen_by, 1, #order)
    o.counts = nil
    out[#out + 1] = o
  end
  return out
end

--- The model's list (a model built by hand may not carry one yet).
function M.list(model)
  return model.findings or M.of(model)
end

--- The inputs the entries cover, in all.
function M.inputs(list)
  local n = 0
  for _, f in ipairs(list) do n = n + (f.count or 0) end
  return n
end

return M
