--- The evidence profiles of SPEC §3, by name.
--
-- A profile module is pure: `recompute(ctx)` receives the check, the
-- manifest's protocol block, the vac_version, a failure list and a source
-- that decodes the check's (already hash-verified) artifacts, and returns
-- its §2.5 summary pool ({field = {values...}}) or nil when it could not
-- recompute.  Every profile names its evidence references: `refs` (the
-- first is the primary reference that a v0.2 scope derives from) and
-- `optional_refs` (held to the same bar once present).
local M = {}

M.NAMES = {
  "certlab-bundle-v1", "fleet-board-v1", "evalmut-run-v1", "crashkit-battery-v1",
  "crashkit-variance-v1", "modeldrift-board-v1", "rows-aggregate-v1",
}

local known = {}
for _, name in ipairs(M.NAMES) do known[name] = true end

function M.known(name) return type(name) == "string" and known[name] == true end

function M.get(name)
  if not M.known(name) then return nil end
  return require("vkit.vac.profiles." .. name)
end

return M
