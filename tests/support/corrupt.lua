-- A run whose retained files do not back its records: CORRUPT for `reason`
-- in `run show`, `run wait`, `run report` and `run list` (exit 3), and
-- `claimed` (the outcome its records claim) shown by none of them.
-- vk(...): runs vkit with the arguments and the project's --project.
local json = require("vkit").json
local assert = require "luassert"

local M = {}

function M.assert_corrupt(vk, id, reason, claimed)
  local shown = vk("run", "show", "--run", id, "--json")
  assert.equal(3, shown.code, shown.stdout .. shown.stderr)
  assert.matches(reason, shown.stderr, 1, true)
  assert.not_matches(claimed, shown.stdout, 1, true)
  local waited = vk("run", "wait", "--run", id, "--wait", "0")
  assert.equal(3, waited.code, waited.stdout .. waited.stderr)
  local report = vk("run", "report", "--run", id)
  assert.equal(3, report.code)
  assert.not_matches(claimed, report.stdout, 1, true)
  local listed = vk("run", "list", "--json")
  assert.equal(3, listed.code)
  local found
  for _, row in ipairs(json.decode(listed.stdout)) do
    if row.run_id == id then found = row end
  end
  assert.equal("corrupt", found.status)
  assert.equal(reason, found.corrupt.reason)
end

return M
