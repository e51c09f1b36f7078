--- `vkit verify COMPONENT`: run a component's accepted external checks.
local args = require "vkit.args"
local store_mod = require "vkit.store"
local protocol_cli = require "vkit.protocol.cli"
local policy = require("vkit.policy").store

local USAGE = [[usage: vkit verify COMPONENT [--project DIR] [--store URL] [--wait S] [--json]
                   [--policy-sha256 HEX] [--package-sha256 HEX]

Resolves COMPONENT's version 2 claim (component-policy and package SHA-256
pins) from verification/manifest.json at the project's HEAD commit, queues
one job per accepted check, waits up to S seconds (0..60, default 0) and
prints the durable run summaries; the jobs continue in the background.
--policy-sha256 / --package-sha256 insist on the exact pins you reviewed:
when the manifest's differ, nothing is queued (exit 1, the pin named).
Exit: 0 PASS, 1 BLOCKED, 2 usage, 3 infrastructure failure, 4 still pending.]]

return {
  summary = "run a component's pinned external producer and checker (seed 000)",
  usage = USAGE,
  run = function(argv)
    local opts, err = args.parse(argv, { flags = { json = true },
                                         options = { project = "string", store = "string", wait = "number", policy_sha256 = "string",
                                                     package_sha256 = "string" },
                                         min = 1, max = 1, names = "COMPONENT" })
    if not opts then return require("vkit.cli").usage_error(err, "verify") end
    for _, name in ipairs { "policy_sha256", "package_sha256" } do
      if opts[name] and not opts[name]:match "^%x+$" or opts[name] and (#opts[name] ~= 64 or opts[name]:match "%u") then
        return require("vkit.cli").usage_error(("--%s needs 64 lowercase hex digits"):format(name:gsub("_", "-")), "verify")
      end
    end
    if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
      return require("vkit.cli").usage_error(("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds), "verify")
    end
    local ok, store = pcall(store_mod.open, { store = opts.store, project = opts.project or "." })
    if not ok then
      io.stderr:write("vkit: cannot open the job store: ", tostring(store), "\n")
      return 3
    end
    local ids, message = protocol_cli.submit_component(store, store.project, opts[1],
      { policy_sha256 = opts.policy_sha256, package_sha256 = opts.package_sha256 })
    if not ids then
      io.stderr:write("vkit: ", message, "\n")
      return 1
    end
    store:ensure_worker()
    return protocol_cli.report(store, ids, opts)
  end,
}
