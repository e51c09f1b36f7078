--- The external verifier protocol (seed 000): a pinned producer writes
-- evidence in a frozen snapshot, a pinned checker judges it and writes a
-- bound receipt, and vkit validates that receipt.
--
-- PASS means the pinned checker accepted every approved obligation with a
-- valid receipt bound to this job, identity and evidence; `rejected` and
-- `unknown` are BLOCKED (inconclusive, never a counterexample).  Producer
-- and checker run as the vkit user (`docs/protocol.md` says what is and is
-- not isolated).
-- @module vkit.protocol
local authoring = require "vkit.protocol.authoring"
local claims = require "vkit.protocol.claims"
local exit = require "vkit.cli.exit"

local M = {}

--- What a PASS establishes, in one sentence (printed by `vkit verify`).
-- @field ESTABLISHES
M.ESTABLISHES = claims.ESTABLISHES

--- What a PASS does not establish (printed by `vkit verify`).
-- @field DOES_NOT_ESTABLISH
M.DOES_NOT_ESTABLISH = claims.DOES_NOT

--- A manifest entry: the component policy, the package and
-- `verification/manifest.json`, every executable and dependency pinned by
-- SHA-256, parsed back by the parsers `vkit verify` uses.
--
-- A command is `{executable, argv, dependencies, trusted_tool_dependencies,
-- deadline_ms = 60000}`: the executable an absolute host path (hashed now) or
-- a `{path, sha256}` pin; each dependency a repository path (hashed from
-- `files`), an absolute host path (hashed now) or a pin.  argv placeholders:
-- `{{python}}` (the executable), `{{snapshot}}`, `{{run_dir}}`, `{{request}}`,
-- `{{evidence}}`, `{{receipt}}`.
-- @tparam table spec `{component = name, files = {[path] = bytes} (the
-- repository files), inputs = {paths}? (default: every path of files),
-- manifest = <the current manifest's bytes>? (other components are kept),
-- checks = {{id, claim = {specification, obligations, assumptions, model_scope},
-- assurance, evidence = {paths under evidence/}, producer = command, checker = command},...}}`
-- @treturn table `{[path] = bytes}` for the policy, the package and the manifest
-- @return nil, message, code: `dependency-not-in-files`, `manifest-invalid`,
-- `unknown-placeholder`, `duplicate-artifact`, `duplicate-obligation`, `duplicate-check`, an errno name
function M.manifest_entry(spec)
  return authoring.entry(spec)
end

--- Verifies a component: queues every check of it at the project's `HEAD`
-- commit (as `vkit verify` does); wait with `store:wait`.
-- @tparam Store store `vkit.store.open`'s
-- @string component
-- @tparam[opt] table insist `{policy_sha256 =, package_sha256 =}`: the pins you reviewed;
-- the manifest's must be the same, else nothing is queued
-- @treturn {string,...} the run ids, one per check
-- @return nil, message, code: `unknown-component`, `manifest-missing`,
-- `component-policy-pin-mismatch`, `package-pin-mismatch`, `pin-mismatch`, ...
function M.verify(store, component, insist)
  local _, ids, code = store:submit("external-check", {
    component = component, policy_sha256 = insist and insist.policy_sha256,
    package_sha256 = insist and insist.package_sha256 })
  if not _ then return nil, ids, code end
  return ids
end

--- Replays a finished external check: its retained evidence, the currently
-- pinned checker, a fresh receipt (the stored status and receipt are never consulted).
-- @tparam Store store
-- @string run_id the external-check run
-- @treturn string the replay's run id
-- @return nil, message, code: `unknown-run`, `not-replayable`, `no-attempt`
function M.replay(store, run_id)
  return store:submit("external-replay", { run = run_id })
end

--- The exit status `vkit verify` gives these runs: 0 every one PASS,
-- 1 BLOCKED or cancelled, 3 a run failed, 4 still pending.
-- @tparam {table,...} runs as `store:get` returns them
-- @treturn integer
function M.exit_code(runs)
  return exit.external_exit(runs)
end

return M
