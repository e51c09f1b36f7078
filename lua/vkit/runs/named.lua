--- Naming a run: its whole id, a unique prefix of it (or of its 12-digit
-- hex tail, the part that differs: `3f2a` for r-20261206T172530Z-3f2a…),
-- or `latest`, the newest run (refused when several were queued in the
-- same millisecond, the ids' resolution).  `vkit run` resolves its
-- argument here; this module never prints.
local visible = require "vkit.visible"

local M = {}

M.LATEST = "latest"

-- How much of a name that matched nothing a sentence repeats: ids are 31
-- bytes, and a name comes from a command line, a REPL or an MCP client.
local ECHOED = 64

-- The name as a sentence repeats it: control bytes (line breaks too) and
-- bidi overrides shown, not sent to a terminal or a log, and a long one cut.
local function shown(s)
  return (visible(s):gsub("[\t\n\r]", function(c) return ("\\x%02x"):format(c:byte()) end))
end

local function said(name)
  if #name <= ECHOED then return shown(name) end
  local cut = name:sub(1, ECHOED)
  -- not through the middle of a character
  for _ = 1, 3 do
    if utf8.len(cut) then break end
    cut = cut:sub(1, -2)
  end
  return shown(cut) .. "…"
end

-- How many candidates an ambiguity lists before "and N more".
local LISTED = 5

local function matches(id, name)
  if id:sub(1, #name) == name then return true end
  local tail = id:match "%-([0-9a-f]+)$"
  return tail ~= nil and tail:sub(1, #name) == name
end

-- The millisecond an id was queued in: "r-20261206T172530Z-1f3" (its
-- tail's first 3 hex digits; vkit.store.common.new_id).
local function stamp(id)
  return id:match "^(.*%-[0-9a-f][0-9a-f][0-9a-f])[0-9a-f]*$" or id
end

local function ambiguous(name, found, how)
  local listed = table.move(found, 1, math.min(#found, LISTED), 1, {})
  local more = #found > LISTED and (", and %d more"):format(#found - LISTED) or ""
  return ("%s is ambiguous: %d runs %s (%s%s); type more of the id"):format(said(name), #found, how,
    table.concat(listed, ", "), more)
end

--- The run id `name` denotes in `store`: id, or nil, a sentence and the
--  code unknown-run (nothing matches; an empty store for `latest`) or
--  ambiguous-run (the sentence lists the candidates).
function M.resolve(store, name)
  if type(name) ~= "string" or name == "" then return nil, "a run id is required", "unknown-run" end
  local ids = store:list() -- newest first
  local found = {}
  if name == M.LATEST then
    if not ids[1] then return nil, ("latest: there are no runs in %s"):format(store:describe()), "unknown-run" end
    -- An id orders runs to the millisecond; runs queued in the same one
    -- have no newest, and a guess could show another job's verdict.
    for _, id in ipairs(ids) do
      if stamp(id) == stamp(ids[1]) then found[#found + 1] = id end
    end
    if #found == 1 then return ids[1] end
    return nil, ambiguous(name, found, "were queued in the same millisecond"), "ambiguous-run"
  end
  for _, id in ipairs(ids) do
    if id == name then return id end
    if matches(id, name) then found[#found + 1] = id end
  end
  if #found == 1 then return found[1] end
  if #found == 0 then return nil, ("no run %s in %s"):format(said(name), store:describe()), "unknown-run" end
  return nil, ambiguous(name, found, "start so"), "ambiguous-run"
end

return M
