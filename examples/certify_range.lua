--- examples/certify_range.lua: certify every commit of a branch range.
--
--   vkit script examples/certify_range.lua --project DIR --intent DIGEST \
--       --trusted-target COMMIT --head COMMIT
--
-- Walks the first-parent history from HEAD back to the trusted target and,
-- oldest first, binds each commit to the accepted intent (claiming exactly
-- the intent's contract), runs the paired execution and the change
-- analysis, and prints one table row per commit.  Unlike examples/certify.lua
-- it calls the library directly, without the job store: preflight,
-- vkit.change.analysis and the reports it writes under DIR/.vkit/range/.
local vkit = require "vkit"
local json = vkit.json
local args = require "vkit.args"
local intent = require "vkit.change.intent"
local contract = require "vkit.change.contract"
local worker = require "vkit.store.worker"
local analysis = require "vkit.change.analysis"
local policy = vkit.policies.change

local opts, err = args.parse({ ... }, { options = { project = "string", intent = "string", trusted_target = "string",
                                                    head = "string" } })
if not opts or not (opts.project and opts.intent and opts.trusted_target and opts.head) then
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

-- The claim: exactly the accepted contract, read from the target.
local bytes = assert(repo:read(opts.trusted_target, intent.revision_path(policy.layout, opts.intent), 1 << 20)).bytes
local revision = assert(intent.parse_revision(bytes))
local claim = contract.to_document(revision.contract)

local never = function() return false end
local ctx = { cancelled = never, run_process = function(spec) return worker.run_process(spec, never) end }

print(("%-12s  %-28s %-24s %-22s %s"):format("commit", "preflight", "paired execution", "change analysis", "smallest violation"))
for _, candidate in ipairs(commits) do
  local request = { schema_version = 1, base = opts.trusted_target, candidate = candidate, intent = opts.intent,
                    claim = claim }
  local bound, message, code = vkit.change.preflight(repo, request, opts.trusted_target)
  if not bound then
    print(("%-12s  %-28s %s"):format(candidate:sub(1, 12), "refused: " .. code, message))
  else
    local dir = ("%s/.vkit/range/%s-%s"):format(opts.project, candidate:sub(1, 12), vkit.sys.random_hex(3))
    local result, report = analysis.run(bound, { repo = repo, dir = dir, ctx = ctx,
                                                 deadline_at = vkit.sys.monotonic_ms() + 300000 })
    local shrinking = report.shrinking and report.shrinking.smallest_violation
    print(("%-12s  %-28s %-24s %-22s %s"):format(candidate:sub(1, 12), "bound", report.status, result.status,
      shrinking and shrinking ~= json.null and tostring(shrinking) or "-"))
  end
end
