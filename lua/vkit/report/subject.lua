--- The subject of a change report, what a reviewer reads first: the
--  repository-relative source file, the function, its language and line,
--  and the base and candidate with short ids (the full ids stay in the
--  model, so `--json` keeps them).  Read from what the run retained: a
--  method's copy of the binding map and its capture of the candidate's
--  source (the line is where the function is defined there); when no
--  method ran, from the project's repository: the binding map preflight
--  bound (at the base, with the digest it recorded) and the candidate's
--  source.
local json = require "vkit.json"
local fs = require "vkit.fs"
local git = require "vkit.git"
local hash = require "vkit.hash"
local paths = require "vkit.paths"
local records = require "vkit.report.records"
local shape = require "vkit.admission.shape"
local ts = require "vkit.ts"
local limits = require("vkit.policy").limits.admission
local caps = require("vkit.policy").change.caps
local report_policy = require("vkit.policy").report

local M = {}

--- The 1-based line of the function's definition in source, or nil: read
--  from the syntax tree (vkit.admission.shape), so a comment or a string
--  that looks like a definition cannot move where a reviewer is pointed.
function M.definition_line(language, source, name)
  return shape.definition_line(ts, language, source, name, limits)
end

-- The line of the function's one definition, or nil and, when it is
-- defined more than once at the top level (a Python module's later `def`
-- is the one that runs; a Rust item may be compiled out), every line:
-- a report then points at none rather than at one that may be dead.
local function located(language, source, name)
  local line = M.definition_line(language, source, name)
  if not line then return nil end
  local lines = shape.definition_lines(ts, language, source, name, limits)
  if #lines > 1 then return nil, lines end
  return line
end

function M.short(id)
  return type(id) == "string" and id:sub(1, report_policy.short_id_digits) or nil
end

-- The binding preflight bound, read from the repository at the base (only
-- with the digest preflight recorded), and the line in the candidate.
local function from_repository(s, dir, project)
  local pre = records.read_json(dir .. "/preflight.json")
  local pin = type(pre) == "table" and type(pre.intent) == "table" and type(pre.intent.revision) == "table"
    and type(pre.intent.revision.artifacts) == "table" and pre.intent.revision.artifacts.binding_map
  if type(pin) ~= "table" or type(pin.path) ~= "string" or type(project) ~= "string"
    or type(s.base) ~= "string" then return end
  local repo = git.open(project)
  if not repo then return end
  local blob = repo:read(s.base, pin.path, caps.artifact_bytes)
  local binding = blob and hash.sha256(blob.bytes) == pin.sha256 and json.decode(blob.bytes)
  if type(binding) == "table" and type(binding.source) == "string" then
    s.file, s["function"], s.language = binding.source, binding["function"], binding.language
    local src = type(s.candidate) == "string" and paths.check(binding.source)
      and repo:read(s.candidate, binding.source, caps.source_bytes)
    s.line, s.lines = located(s.language, src and src.bytes, s["function"])
  end
  repo:close()
end

--- {file, ["function"], language, line, lines (set instead of line when
--  the function is defined more than once), base, candidate} of a change run
--  from its attempt directory, the full base and candidate ids and the
--  project directory (any field nil when the run never got far enough).
function M.of(dir, base, candidate, project)
  local s = { base = base, candidate = candidate }
  if not dir then return s end
  for _, method in ipairs { "exhaustive", "finite_paired", "rust_exhaustive", "rust_kani" } do
    local binding = records.read_json(("%s/%s/artifacts/binding_map.json"):format(dir, method))
    if type(binding) == "table" and type(binding.source) == "string" then
      s.file, s["function"], s.language = binding.source, binding["function"], binding.language
      -- a retained record names the file; only a normalised relative path
      -- is read, so no `..` or absolute path leads outside the run
      for _, side in ipairs(paths.check(binding.source) and { "candidate", "base" } or {}) do
        local src = fs.read(("%s/%s/captures/%s/%s"):format(dir, method, side, binding.source), caps.source_bytes,
          { nofollow = true })
        if not (s.line or s.lines) then s.line, s.lines = located(s.language, src, s["function"]) end
      end
      break
    end
  end
  if not s.file then from_repository(s, dir, project) end
  return s
end

--- The subject as the report's first rows: {{label, value}, ...}.
function M.rows(s)
  local rows = {}
  local function add(label, value)
    if value ~= nil and value ~= json.null then rows[#rows + 1] = { label = label, value = value } end
  end
  if s.file then
    local several = type(s.lines) == "table" and #s.lines > 1
      and ("%s (%s is defined %d times, at lines %s)"):format(s.file, tostring(s["function"]), #s.lines,
        table.concat(s.lines, ", "))
    add("file", s.line and ("%s:%d"):format(s.file, s.line) or several or s.file)
  end
  add("function", s["function"])
  add("language", s.language)
  add("base", M.short(s.base))
  add("candidate", M.short(s.candidate))
  return rows
end

return M
