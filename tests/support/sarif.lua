--- Microsoft's SARIF multitool (the reference checker of SARIF 2.1.0) for
--  the specs: `make sarif-multitool` installs the version deps/sarif.lock
--  pins; validate(dir, path) runs its `validate` command and returns what
--  it found, read from the SARIF log it writes (its exit status is 0
--  whether or not the file is valid).
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"

local M = {}

M.NAME = "@microsoft/sarif-multitool-linux"

--- The installed executable (installs it first).
function M.tool()
  assert(os.execute("make -s -C " .. t.quote(vkit.root) .. " sarif-multitool >&2"), "make sarif-multitool failed")
  local lock = assert(vkit.fs.read(vkit.root .. "/deps/sarif.lock", 65536))
  local version = lock:match("\n" .. M.NAME:gsub("%p", "%%%0") .. " (%S+) %x+")
  return ("%s/build/sarif-multitool/%s/Sarif.Multitool"):format(vkit.root, assert(version, "deps/sarif.lock"))
end

--- {errors = {{rule, text}}, warnings = {{rule, text}}, output} for the
--  SARIF file at path; dir is a scratch directory.
function M.validate(dir, path)
  local exe = M.tool()
  local log = dir .. "/validation.sarif"
  -- a self-contained .NET program: no ICU needed in invariant mode, its
  -- bundle extracted under dir, nothing sent anywhere
  local r = vkit.proc.run { exe = exe, argv = { exe, "validate", path, "--output", log, "--log", "ForceOverwrite" },
    env = { HOME = dir, PATH = "/usr/bin:/bin", DOTNET_SYSTEM_GLOBALIZATION_INVARIANT = "1",
            DOTNET_BUNDLE_EXTRACT_BASE_DIR = dir .. "/dotnet", DOTNET_CLI_TELEMETRY_OPTOUT = "1" },
    cwd = dir, deadline_ms = 120000, output_cap = 1 << 20 }
  assert(r.status == "exited" and r.code == 0, "Sarif.Multitool validate: " .. tostring(r.status) .. " "
    .. tostring(r.code) .. " " .. tostring(r.stdout) .. tostring(r.stderr))
  local doc = assert(json.decode(assert(vkit.fs.read(log, 1 << 24))))
  local out = { errors = {}, warnings = {}, output = r.stdout }
  for _, result in ipairs(doc.runs[1].results or {}) do
    local level = result.level or "warning"
    local entry = { rule = result.ruleId, text = json.encode(result.message) }
    if level == "error" then out.errors[#out.errors + 1] = entry end
    if level == "warning" then out.warnings[#out.warnings + 1] = entry end
  end
  return out
end

return M
