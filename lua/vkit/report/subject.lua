--- The subject of a change report, what a reviewer reads first: the
--  repository-relative source file, the function, its language and line,
--  and the base and candidate with short ids (the full ids stay in the
--  model, so `--json` keeps them).  Read from what the run retained: a
--  method's copy of the binding map and its capture of the candidate's
--  source (the line is where the function is defined there).
local json = require "vkit.json"
local fs = require "vkit.fs"
local records = require "vkit.report.records"

local M = {}

M.SHORT = 12
M.SOURCE_CAP = 1 << 20

-- A line defining `name` in each language's source (no parser: the
-- binding map names a top-level function, and the line is a pointer for
-- the reviewer, not part of any claim).
local DEFINITIONS = {
  python = { "^%s*def%s+NAME%s*%(", "^%s*async%s+def%s+NAME%s*%(" },
  rust = { "^%s*pub%s+fn%s+NAME%s*[<(]", "^%s*fn%s+NAME%s*[<(]", "^%s*pub%(%w+%)%s+fn%s+NAME%s*[<(]" },
  typescript = { "function%s+NAME%s*[<(]", "^%s*export%s+const%s+NAME%s*[=:]", "^%s*const%s+NAME%s*[=:]" },
}

--- The 1-based line of the function's definition in source, or nil.
function M.definition_line(language, source, name)
  local patterns = DEFINITIONS[language]
  if not patterns or type(source) ~= "string" or type(name) ~= "string" then return nil end
  local escaped = name:gsub("%p", "%%%0")
  local n = 0
  for line in (source .. "\n"):gmatch "([^\n]*)\n" do
    n = n + 1
    for _, p in ipairs(patterns) do
      if line:find((p:gsub("NAME", escaped))) then return n end
    end
  end
  return nil
end

function M.short(id)
  return type(id) == "string" and id:sub(1, M.SHORT) or nil
end

--- {file, ["function"], language, line, base, candidate} of a change run
--  from its attempt directory and the full base and candidate ids (any
--  field nil when the run never got far enough to retain it).
function M.of(dir, base, candidate)
  local s = { base = base, candidate = candidate }
  if not dir then return s end
  for _, method in ipairs { "exhaustive", "finite_paired", "rust_exhaustive", "rust_kani" } do
    local binding = records.read_json(("%s/%s/artifacts/binding_map.json"):format(dir, method))
    if type(binding) == "table" and type(binding.source) == "string" then
      s.file, s["function"], s.language = binding.source, binding["function"], binding.language
      for _, side in ipairs { "candidate", "base" } do
        local src = fs.read(("%s/%s/captures/%s/%s"):format(dir, method, side, binding.source), M.SOURCE_CAP,
          { nofollow = true })
        s.line = s.line or M.definition_line(s.language, src, s["function"])
      end
      break
    end
  end
  return s
end

--- The subject as the report's first rows: {{label, value}, ...}.
function M.rows(s)
  local rows = {}
  local function add(label, value)
    if value ~= nil and value ~= json.null then rows[#rows + 1] = { label = label, value = value } end
  end
  if s.file then add("file", s.line and ("%s:%d"):format(s.file, s.line) or s.file) end
  add("function", s["function"])
  add("language", s.language)
  add("base", M.short(s.base))
  add("candidate", M.short(s.candidate))
  return rows
end

return M
