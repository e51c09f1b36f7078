--- The vkit Lua library: the public API scripts, the REPL and teams' own
-- orchestration build on.
--
-- `vkit script FILE.lua` and `vkit repl` give it as the global `vkit` (and
-- as `require "vkit"`).  Its fields are the whole public API: the modules
-- below (each loaded on first use) and a few facts about the running vkit.
-- Everything else under `lua/vkit/` is internal: `require "vkit.<name>"`
-- still loads those modules, but they may change in any release, and none
-- of them is reachable through the public tables.
--
--    local vkit = require "vkit"
--    print(vkit.hash.sha256 "abc", vkit.json.encode { ok = true })
--
-- @module vkit
local core = require "vkit.core"

-- The public modules: the name scripts use and the module behind it, each
-- loaded on first use.
local PUBLIC = {
  hash = "vkit.api.hash", json = "vkit.api.json", fs = "vkit.api.fs", sys = "vkit.api.sys",
  proc = "vkit.api.proc", git = "vkit.api.git", change = "vkit.api.change", protocol = "vkit.api.protocol",
  vac = "vkit.api.vac", store = "vkit.api.store", report = "vkit.api.report",
}

--- The public module: change certification: intents, requests, preflight, certify, results (`vkit.change`).
-- @field change

--- The public module: filesystem primitives that never follow a link by accident (`vkit.fs`).
-- @field fs

--- The public module: exact Git objects, captured safely (`vkit.git`); loads libgit2 on first use.
-- @field git

--- The public module: SHA-256 and the evidence digest (`vkit.hash`).
-- @field hash

--- The public module: the strict JSON reader and canonical writer (`vkit.json`).
-- @field json

--- The public module: running pinned processes (`vkit.proc`).
-- @field proc

--- The public module: the external verifier protocol (`vkit.protocol`).
-- @field protocol

--- The public module: run reports: model and render (`vkit.report`).
-- @field report

--- The public module: the durable job store (`vkit.store`).
-- @field store

--- The public module: clocks, sleeping, the process and the host (`vkit.sys`).
-- @field sys

--- The public module: VAC bundles: verify, draft, registry (`vkit.vac`).
-- @field vac

--- vkit's version string.
-- @field version

--- The absolute path of the running vkit executable.
-- @field exe

--- vkit's library root: the build tree, or `PREFIX/share/vkit` when installed
-- (it holds `lua/`, `policies/` and the examples).
-- @field root

--- Versions of the parts vkit is built from: `vkit`, `lua`, `openssl` and
-- `libgit2` (read when first asked for: it loads libgit2).
-- @field versions

--- The read-only policy tables of `policies/<name>.lua` (`vkit.policies.limits.paired.max_invocations`):
-- every limit the seeds name lives once in `policies/limits.lua`; a missing
-- policy or entry raises rather than reading as "no limit".
-- @field policies

-- The facts and the policies are vkit.core's, which library modules use
-- instead of this table (it loads everything above them).
local modules = {}
for name in pairs(PUBLIC) do modules[#modules + 1] = name end
table.sort(modules)

local vkit = { version = core.version, exe = core.exe, root = core.root, versions = core.versions,
               policies = core.policies }

return setmetatable(vkit, {
  -- The names __index would load, for the REPL's completion.
  __complete = function() return modules end,
  __index = function(t, key)
    local name = PUBLIC[key]
    if not name then return nil end
    local module = require(name)
    rawset(t, key, module)
    return module
  end,
})
