--- `vkit verify COMPONENT`: run a component's accepted external checks.
local args = require "vkit.args"
local hash = require "vkit.hash"
local external_runs = require "vkit.runs.external"
local outcomes = require "vkit.cli.outcomes"
local policy = require("vkit.policy").store

local cli = require "vkit.cli"

local USAGE = [[usage: vkit verify COMPONENT [--project DIR] [--store URL] [--wait S] [--json]
                   [--policy-sha256 HEX] [--package-sha256 HEX]

Runs a component's accepted external checks (a pinned producer, then an
independent pinned checker): resolves COMPONENT's
version 2 claim (component-policy and package SHA-256 pins) from
verification/manifest.json at the project's HEAD commit, queues one job per
accepted check (the pinned producer, then the independent pinned checker
whose receipt is validated field by field), waits up to S seconds and prints
the durable run summaries; the jobs continue in the background.  When
tracked files differ from HEAD (uncommitted changes), it says so on stderr
(and in --json's "warnings"): those changes are not what is verified.

options:
  --project DIR          the project: the Git work tree holding DIR (default: the
                         current directory), found upward as git does
  --store URL            the job store: postgresql://... (libpq syntax, no password
                         in it) or VKIT_STORE; default the project's file store
  --wait S               seconds to wait, a decimal from 0 to 60 (default 0)
  --policy-sha256 HEX    insist on the component-policy pin you reviewed: when
                         the manifest's differs nothing is queued (exit 1)
  --package-sha256 HEX   the same for the package pin
  --json                 the run summaries as JSON on stdout
  --help                 this text

]] .. cli.EXIT_TEXT .. "\n\n" .. [[  (verify: 0 every check PASSed, 1 BLOCKED or refused before queueing,
   3 a run failed, 4 still pending, 7 not a Git repository)]]

-- What `vkit verify` says when the working tree differs from the commit it
-- checks (HEAD): uncommitted changes to tracked files, staged or not, are
-- not what is verified.  Untracked files are not counted: HEAD never had them.
local SHOWN_PATHS = 5
local function working_tree_warnings(project)
  local repo = require("vkit.git").open(project)
  if not repo then return {} end
  local head = repo:head()
  local dirty = repo:dirty { tracked = true }
  repo:close()
  if type(dirty) ~= "table" or #dirty == 0 then return {} end
  local shown = {}
  for i = 1, math.min(#dirty, SHOWN_PATHS) do shown[i] = dirty[i] end
  return { ("the working tree differs from HEAD %s in %d tracked path(s) (%s%s): vkit verify checks the commit, "
    .. "not the working tree; commit first to verify these changes"):format(
      type(head) == "string" and head:sub(1, 12) or "?", #dirty, table.concat(shown, ", "),
      #dirty > SHOWN_PATHS and ", ..." or "") }
end

return {
  summary = "run a component's pinned external producer and its independent checker",
  usage = USAGE,
  run = function(argv)
    local opts, err = args.parse(argv, { flags = { json = true },
                                         options = { project = "string", store = "string", wait = "number",
                                                     policy_sha256 = "string",
                                                     package_sha256 = "string" },
                                         min = 1, max = 1, names = "COMPONENT" })
    if not opts then return cli.usage_error(err, "verify") end
    for _, name in ipairs { "policy_sha256", "package_sha256" } do
      if opts[name] and not hash.is_digest(opts[name]) then
        return cli.usage_error(("--%s needs 64 lowercase hex digits"):format(name:gsub("_", "-")), "verify")
      end
    end
    if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
      return cli.usage_error(("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds), "verify")
    end
    local store, status = cli.open_store(opts.project, { git = true, store = opts.store })
    if not store then return status end
    local warnings = working_tree_warnings(store.project)
    for _, w in ipairs(warnings) do io.stderr:write("vkit: warning: ", w, "\n") end
    opts.warnings = warnings
    local ids, message = external_runs.submit_component(store, store.project, opts[1],
      { policy_sha256 = opts.policy_sha256, package_sha256 = opts.package_sha256 })
    if not ids then
      io.stderr:write("vkit: ", message, "\n")
      return 1
    end
    store:ensure_worker()
    return outcomes.print_external(store, external_runs.wait_all(store, ids, opts.wait), opts)
  end,
}
