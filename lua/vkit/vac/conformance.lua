--- The conformance corpus: bundles with the reference verifier's outcome
--  (expected.json: exit, verdict and the sorted set of reason names per
--  case).  vkit conforms on a case when its verdict and reason set match.
local fs = require "vkit.fs"
local json = require "vkit.json"

local M = {}

--- Runs every case under dir/cases against dir/expected.json:
--  {passed, failed, cases = {{name, ok, want, got}}} or nil, message.
function M.run(dir, verify)
  local text, err = fs.read(dir .. "/expected.json", 16 * 1024 * 1024)
  if not text then return nil, err end
  local expected, jerr = json.decode(text)
  if not expected then return nil, "expected.json: " .. jerr end
  local names = {}
  for name in pairs(expected) do names[#names + 1] = name end
  table.sort(names)
  local report = { passed = 0, failed = 0, cases = {} }
  for _, name in ipairs(names) do
    local want = expected[name]
    local result = verify(dir .. "/cases/" .. name)
    local got = result and result.failures:names() or { "(not verifiable)" }
    local verdict = result and result.verdict or "error"
    local ok = verdict == want.verdict and table.concat(got, ",") == table.concat(want.reasons, ",")
    report.cases[#report.cases + 1] = {
      name = name, ok = ok, want = want.verdict .. " {" .. table.concat(want.reasons, ", ") .. "}",
      got = verdict .. " {" .. table.concat(got, ", ") .. "}",
    }
    if ok then report.passed = report.passed + 1 else report.failed = report.failed + 1 end
  end
  return report
end

return M
