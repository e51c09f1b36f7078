--- Whether an environment model binds only on the machine that wrote it
-- (issue 33 item 5): a tool pinned under a home directory or under vkit's
-- own installation (its build tree or install prefix) is where this user
-- or this install keeps it, not where another machine will, so an intent
-- accepted with it may never certify elsewhere.  Pure: the caller says
-- which directories are this machine's.
local M = {}

local function beneath(path, dir)
  return path:sub(1, #dir + 1) == dir .. "/"
end

-- Every path a chain pins: its tools' and its dependencies'.
local function paths_of(chain)
  local out = {}
  for key, tool in pairs(chain) do
    if key == "dependencies" then
      for _, d in ipairs(tool) do out[#out + 1] = d.path end
    elseif type(tool) == "table" and type(tool.path) == "string" then
      out[#out + 1] = tool.path
    end
  end
  table.sort(out)
  return out
end

--- The warnings for an environment model: one sentence per language and
--  place.  places = {{dir, what}} (e.g. {dir = "/root", what = "the home
--  directory"}); languages in the model's order of `languages`.
function M.warnings(model, languages, places)
  local out = {}
  for _, language in ipairs(languages) do
    local chain = model.toolchains[language]
    local all = chain and paths_of(chain) or {}
    local said = {}  -- a path is counted under the first place that holds it
    for _, place in ipairs(places) do
      local dir = place.dir and place.dir:gsub("/+$", "")
      local hits = {}
      if dir and dir ~= "" then
        for _, path in ipairs(all) do
          if not said[path] and beneath(path, dir) then
            hits[#hits + 1], said[path] = path, true
          end
        end
      end
      if #hits > 0 then
        out[#out + 1] = ("%s: %d pinned path(s) under %s %s (%s%s): another machine or user will not have them "
          .. "there; install this toolchain at a stable path every machine has (the layout is in `vkit change intent "
          .. "init --help`) and pass --toolchain-root DIR, e.g. /opt/%s"):format(language, #hits, place.what, dir,
            hits[1], #hits > 1 and ", ..." or "", language)
      end
    end
  end
  return out
end

return M
