--- `vkit vac verify|draft|registry|conformance`: VAC bundles (seed 003).
local args = require "vkit.args"
local cli = require "vkit.cli"

local USAGE = [[
usage: vkit vac verify <bundle-dir | bundle.tar.gz | bundle.tgz | bundle.tar> [--json]
       vkit vac draft <dir>
       vkit vac registry [--config FILE] [--out FILE] [--check-fetched DIR]
       vkit vac conformance <corpus-dir>

verify     structural verification (SPEC §4): exit 0 clean, 1 refused, 2 usage.
           Structural verification is not semantic replay; the report says so
           and echoes the bundle's replay block.
draft      scaffold vac.json over the files in <dir>: mechanical fields derived
           (sha256, issuer and commit from Git), judgment fields TODO(...) markers.
registry   regenerate registry.json from configured issuer checkouts (committed
           HEAD trees only), or check fetched artifacts against its pins.
conformance  run a conformance corpus (cases/ + expected.json) and print
           "N passed, N failed".]]

local M = {
  summary = "verify, draft and register VAC capability evidence bundles",
  usage = USAGE,
}

local function verify(argv)
  local opts, err = args.parse(argv, { flags = { json = true }, min = 1, max = 1, names = "<bundle>" })
  if not opts then return cli.usage_error(err, "vac verify") end
  local vac = require "vkit.vac"
  local output = require "vkit.vac.output"
  local result, why = vac.verify(opts[1])
  if not result then return cli.usage_error(why, "vac verify") end
  io.stdout:write(opts.json and output.json(result) or output.text(result))
  return result.verdict == "pass" and 0 or 1
end

local function conformance(argv)
  local opts, err = args.parse(argv, { flags = { verbose = true }, min = 1, max = 1, names = "<corpus-dir>" })
  if not opts then return cli.usage_error(err, "vac conformance") end
  local vac = require "vkit.vac"
  local report, why = require("vkit.vac.conformance").run(opts[1], vac.verify)
  if not report then
    io.stderr:write("vkit vac conformance: ", why, "\n")
    return 2
  end
  for _, c in ipairs(report.cases) do
    if not c.ok or opts.verbose then
      print(("%s %s: reference %s, vkit %s"):format(c.ok and "ok  " or "FAIL", c.name, c.want, c.got))
    end
  end
  print(("%d passed, %d failed"):format(report.passed, report.failed))
  return report.failed == 0 and 0 or 1
end

local SUB = {
  verify = verify,
  conformance = conformance,
  draft = function(argv) return require("vkit.vac.draft").command(argv) end,
  registry = function(argv) return require("vkit.vac.registry").command(argv) end,
}

function M.run(argv)
  local sub = SUB[argv[1] or ""]
  if not sub then
    return cli.usage_error(argv[1] and ("unknown vac command %q"):format(argv[1]) or "vac needs a command", "vac")
  end
  return sub(table.move(argv, 2, #argv, 1, {}))
end

return M
