--- examples/certify_range.lua: certify every commit of a branch range.
--
--   vkit script examples/certify_range.lua --project DIR --intent DIGEST \
--       --trusted-target COMMIT --head COMMIT
--
-- Walks the first-parent history from HEAD back to the trusted target and,
-- oldest first, binds each commit to the accepted intent (claiming exactly
-- the intent's contract), runs the paired execution and the change
-- analysis, then the exhaustive method (every accepted input), and prints
-- one table row per commit with what each checked.  Unlike
-- examples/certify.lua it calls the library directly, without the job
-- store: vkit.change.run_change_analysis and vkit.change.run_exhaustive
-- (each does its own preflight and starts its deadline after it), and the
-- reports they write under DIR/.vkit/range/.
local vkit = require "vkit"
local json = vkit.json

-- --name value pairs.
local opts, err = {}, nil
local argv = { ... }
for i = 1, #argv, 2 do
  local key = (argv[i]:match "^%-%-([%w-]+)$" or ""):gsub("-", "_")
  if argv[i + 1] == nil or not ({ project = 1, intent = 1, trusted_target = 1, head = 1 })[key] then
    err = "bad argument " .. argv[i]
    break
  end
  opts[key] = argv[i + 1]
end
if err or not (opts.project and opts.intent and opts.trusted_target and opts.head) then
  io.stderr:write("usage: vkit script examples/certify_range.lua --project DIR --intent DIGEST "
    .. "--trusted-target COMMIT --head COMMIT\n", err and (err .. "\n") or "")
  os.exit(2)
end

local repo = assert(vkit.git.open(opts.project))

-- The commits after the target, oldest first, along first parents.
local commits, id = {}, opts.head
while id ~= opts.trusted_target do
  local c = assert(repo:commit(id))
  table.insert(commits, 1, c.id)
  id = c.parents[1]
  if not id then error("the trusted target is not a first-parent ancestor of " .. opts.head) end
end


print(("%-12s  %-28s %-24s %-22s %-18s %-20s %s"):format("commit", "preflight", "paired execution", "change analysis",
  "smallest violation", "exhaustive", "coverage"))
for _, candidate in ipairs(commits) do
  -- The claim: exactly the accepted contract, read from the target.
  local request = assert(vkit.change.request_for(repo, { base = opts.trusted_target, candidate = candidate,
                                                         intent = opts.intent }))
  local dir = ("%s/.vkit/range/%s-%s"):format(opts.project, candidate:sub(1, 12), vkit.sys.random_hex(3))
  local result, report, code = vkit.change.run_change_analysis(repo, request, opts.trusted_target, { dir = dir .. "/paired" })
  if not result then
    print(("%-12s  %-28s %s"):format(candidate:sub(1, 12), "refused: " .. code, report))
  else
    local exhaustive = assert(vkit.change.run_exhaustive(repo, request, opts.trusted_target,
      { dir = dir .. "/exhaustive", sampled = report }))
    local shrinking = report.shrinking and report.shrinking.smallest_violation
    local c = result.coverage
    print(("%-12s  %-28s %-24s %-22s %-18s %-20s %s"):format(candidate:sub(1, 12), "bound", report.status, result.status,
      shrinking and shrinking ~= json.null and tostring(shrinking) or "-", exhaustive.status,
      ("sampled %d, %s"):format(c.conforming + c.violations, exhaustive.coverage.statement)))
  end
end
