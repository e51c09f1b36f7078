--- `vkit vac verify|draft|registry|conformance`: VAC (Verifiable Agent
-- Claims) capability evidence bundles.
--  Every subcommand takes --help (synopsis, options, exit codes) and
--  --json (one JSON document on stdout, errors included).
local args = require "vkit.args"
local cli = require "vkit.cli"

local HELP = {
  verify = [[
usage: vkit vac verify BUNDLE... [--json]
       vkit vac verify BUNDLE --report md|html|json|junit|text [--output FILE]

Structural verification of VAC (Verifiable Agent Claims) capability evidence
bundles, as the VAC specification defines it: the
manifest schema and draft gate, artifact presence, sha256 and closure,
stamps, the replay block, every declared number recomputed from the pinned
artifacts, and the summary rule.  Structural verification is not semantic
replay; the report says so and echoes the bundle's replay block.

BUNDLE is a bundle directory or a .tar, .tar.gz or .tgz archive of one.
With one BUNDLE the report is one "FAIL <reason>: <detail>" line per failure,
the verdict and the replay block; with several, a table (one row per
bundle: PASS, FAIL with its reasons, or ERROR when it could not be verified)
and a total, all in one process.

options:
  --json     one JSON document on stdout: the verification object for one
             bundle, {"bundles": [...], "total": {...}} for several; errors
             as {"error": {"code", "message"}}
  --report F the verification as a self-contained report (md, html, json,
             junit or text: the run reports' formats), with the bundle's
             files and their SHA-256; --output FILE writes it there
  --help     this text

exit codes:
  0  every bundle is structurally clean
  1  some bundle was refused (its reasons are named)
  2  usage error, or some BUNDLE is not a bundle: no such path
     (no-such-path), a file that is not a .tar/.tar.gz/.tgz archive
     (not-a-bundle), a tar compressed other than with gzip
     (unsupported-compression)]],
  draft = [[
usage: vkit vac draft DIR [--json]

Scaffolds DIR/vac.json over the files in DIR: mechanical fields
derived (every file's sha256, issuer and commit from the enclosing Git
repository), every judgment field a TODO(...) marker that `vkit vac verify`
refuses until a person authors it.  An existing vac.json is never
overwritten.

options:
  --json     {"manifest", "artifacts", "markers", "warnings"} on stdout;
             errors as {"error": {"code", "message"}}
  --help     this text

exit codes:
  0  drafted
  1  not drafted (DIR is not a directory, vac.json exists, a link or special
     file in DIR, no files)
  2  usage error]],
  registry = [[
usage: vkit vac registry [--config FILE] [--out FILE] [--json]
       vkit vac registry --check-fetched DIR [--registry FILE] [--json]

Regenerates registry.json from configured issuer checkouts, reading
committed HEAD trees only, or checks fetched artifacts
(DIR/<entry name>/<path>) against the pins of an existing registry.

options:
  --config FILE         issuer configuration (default vac-registry.json)
  --out FILE            where to write the registry (default registry.json)
  --check-fetched DIR   check fetched artifacts instead of generating
  --registry FILE       the registry --check-fetched reads (default registry.json)
  --json                the outcome as one JSON document on stdout; errors
                        as {"error": {"code", "message"}}
  --help                this text

exit codes:
  0  generated (pending bundles are listed), or every fetched artifact holds
  1  generation refused (an issuer's HEAD on no remote branch, an unreadable
     checkout), or a fetched artifact does not hold its pin
  2  usage error, or a configuration or registry that cannot be read
  3  vkit.git is not built into this vkit]],
  conformance = [[
usage: vkit vac conformance CORPUS-DIR [--verbose] [--json]

Runs a conformance corpus (CORPUS-DIR/cases/* and expected.json: the
reference verifier's verdict and reason set per case) and prints
"N passed, N failed".

options:
  --verbose  a line for every case, not only the failing ones
  --json     {"passed", "failed", "cases": [{name, ok, want, got}]}
  --help     this text

exit codes:
  0  every case conforms
  1  some case does not
  2  usage error, or a corpus that cannot be read]],
}

local USAGE = [[
usage: vkit vac verify BUNDLE... [--json]
       vkit vac verify BUNDLE --report md|html|json|junit|text [--output FILE]
       vkit vac draft DIR [--json]
       vkit vac registry [--config FILE] [--out FILE] [--check-fetched DIR] [--json]
       vkit vac conformance CORPUS-DIR [--verbose] [--json]

verify       structural verification of one or more bundles
draft        scaffold vac.json over the files in DIR, judgment fields TODO(...)
registry     regenerate registry.json from committed issuer trees, or check
             fetched artifacts against its pins
conformance  run a conformance corpus and print "N passed, N failed"

'vkit vac COMMAND --help' describes one command: its options and exit codes.]]

local M = {
  summary = "verify, draft and register VAC (Verifiable Agent Claims) evidence bundles",
  usage = USAGE,
  help = HELP, -- each action's help (vkit.cli's convention; the man page reads it)
  own_help = true,
}

local function output() return require "vkit.vac.output" end

-- A failure to report: under --json one {"error"} document on stdout,
-- else a line on stderr; returns status.
local function fail(opts, status, code, message, command)
  if opts and opts.json then
    io.stdout:write(output().error_json(code, message))
    return status
  end
  if status == 2 and code == "usage" then return cli.usage_error(message, command) end
  io.stderr:write("vkit ", command, ": ", message, "\n")
  return status
end

-- Parses argv for `vac <name>`: opts, or nil and the exit status (usage
-- errors reported, as JSON when --json was asked for).
local function parse(name, argv, spec)
  local wants_json = false
  for _, a in ipairs(argv) do
    if a == "--" then break end
    if a == "--json" then wants_json = true end
  end
  local opts, err = args.parse(argv, spec)
  if not opts then return nil, fail({ json = wants_json }, 2, "usage", err, "vac " .. name) end
  return opts
end

-- `vac verify BUNDLE --report FORMAT [--output FILE]`: the verification
-- as a run report (vkit.report), for a review or a CI test view.
local function verify_report(opts, result)
  local report = require "vkit.report"
  local known = false
  for _, f in ipairs(report.FORMATS) do known = known or f == opts.report end
  if not known then
    return fail(opts, 2, "usage", ("--report must be one of %s"):format(table.concat(report.FORMATS, ", ")), "vac verify")
  end
  local doc = require("vkit.json").decode(output().json(result))
  local text = report.render(report.vac_model(doc, opts[1]), opts.report)
  if opts.output then
    local ok, err = require("vkit.fs").write_atomic(opts.output, text)
    if not ok then return fail(opts, 3, "unwritable", "cannot write the report: " .. err, "vac verify") end
  else
    io.stdout:write(text)
  end
  return result.verdict == "pass" and 0 or 1
end

local function verify(argv)
  local opts, status = parse("verify", argv, { flags = { json = true }, options = { report = "string", output = "string" },
                                               min = 1, max = -1, names = "<bundle>..." })
  if not opts then return status end
  local vac = require "vkit.vac"
  local out = output()
  if opts.report and #opts > 1 then
    return fail(opts, 2, "usage", "--report takes one bundle", "vac verify")
  end
  if #opts == 1 then
    local result, why, code = vac.verify(opts[1])
    if not result then return fail(opts, 2, code, why, "vac verify") end
    if opts.report then return verify_report(opts, result) end
    io.stdout:write(opts.json and out.json(result) or out.text(result, out.style(io.stdout, opts.json)))
    return result.verdict == "pass" and 0 or 1
  end
  local rows = {}
  for i, path in ipairs(opts) do
    local result, why, code = vac.verify(path)
    if result and opts.json then
      rows[i] = { result = result, doc = out.json_doc(result) } -- what is printed, not the whole manifest
      result.manifest = nil
    elseif result then
      result.manifest = nil -- the table needs the verdict and the failures only
      rows[i] = { result = result }
    else
      rows[i] = { path = path, code = code, message = why }
    end
  end
  io.stdout:write(opts.json and out.batch_json(rows) or out.batch_text(rows, out.style(io.stdout, opts.json)))
  local worst = 0
  for _, r in ipairs(rows) do
    if not r.result then worst = 2 elseif r.result.verdict ~= "pass" and worst == 0 then worst = 1 end
  end
  return worst
end

local function conformance(argv)
  local opts, status = parse("conformance", argv,
    { flags = { verbose = true, json = true }, min = 1, max = 1, names = "<corpus-dir>" })
  if not opts then return status end
  local vac = require "vkit.vac"
  local report, why = require("vkit.vac.conformance").run(opts[1], vac.verify)
  if not report then return fail(opts, 2, "unreadable-corpus", why, "vac conformance") end
  if opts.json then
    io.stdout:write(output().conformance_json(report))
  else
    for _, c in ipairs(report.cases) do
      if not c.ok or opts.verbose then
        print(("%s %s: reference %s, vkit %s"):format(c.ok and "ok  " or "FAIL", c.name, c.want, c.got))
      end
    end
    print(("%d passed, %d failed"):format(report.passed, report.failed))
  end
  return report.failed == 0 and 0 or 1
end

local function draft(argv)
  local opts, status = parse("draft", argv, { flags = { json = true }, min = 1, max = 1, names = "<dir>" })
  if not opts then return status end
  local drafter = require "vkit.vac.draft"
  local ok, warnings, m = drafter.run(opts[1])
  if not ok then return fail(opts, 1, "not-drafted", warnings, "vac draft") end
  local markers = require("vkit.vac.failures").new()
  require("vkit.vac.manifest").todo_failures(m, markers)
  local path = opts[1] .. "/vac.json"
  if opts.json then
    io.stdout:write(output().draft_json(path, #m.evidence, #markers, warnings))
    return 0
  end
  for _, w in ipairs(warnings) do io.stderr:write("warning: ", w, "\n") end
  print(("drafted %s: %d artifact(s) hashed, %d judgment field(s) marked TODO(...)"):format(path, #m.evidence,
    #markers))
  print("author every marker, then run: vkit vac verify " .. opts[1])
  return 0
end

local function registry(argv)
  local opts, status = parse("registry", argv, { flags = { json = true }, max = 0,
    options = { config = "string", out = "string", check_fetched = "string", registry = "string" } })
  if not opts then return status end
  local reg = require "vkit.vac.registry"
  local out = output()
  if opts.check_fetched then
    local doc, why = reg.load_registry(opts.registry or "registry.json")
    if not doc then return fail(opts, 2, "unreadable-registry", why, "vac registry") end
    local problems = reg.check_fetched(doc, opts.check_fetched)
    if opts.json then
      io.stdout:write(out.check_fetched_json(problems, #doc.entries))
    else
      for _, p in ipairs(problems) do print("FAIL " .. out.escape(p)) end
      print(#problems == 0 and ("check-fetched: every pinned artifact holds (%d entries)"):format(#doc.entries)
        or ("check-fetched: FAIL — %d problem(s)"):format(#problems))
    end
    return #problems == 0 and 0 or 1
  end
  local ok, git = pcall(require, "vkit.git")
  if not ok then return fail(opts, 3, "no-git", "vkit.git is not built into this vkit", "vac registry") end
  local issuers, cerr = reg.load_config(opts.config or "vac-registry.json")
  if not issuers then return fail(opts, 2, "unreadable-config", cerr, "vac registry") end
  local doc, berr = reg.build(issuers, git)
  if not doc then return fail(opts, 1, "refused", berr, "vac registry") end
  local path = opts.out or "registry.json"
  local written, werr = reg.write(path, doc)
  if not written then return fail(opts, 1, "not-written", werr, "vac registry") end
  if opts.json then
    io.stdout:write(out.registry_json(path, doc))
    return 0
  end
  print(("%s: %d accepted, %d pending"):format(path, #doc.entries, #doc.pending))
  for _, p in ipairs(doc.pending) do print("pending " .. p.name .. ": " .. out.escape(p.reason)) end
  return 0
end

local SUB = { verify = verify, conformance = conformance, draft = draft, registry = registry }

function M.run(argv)
  local name = argv[1]
  local rest = table.move(argv, 2, #argv, 1, {})
  if name == nil or name == "--help" or name == "-h" or name == "help" then
    io[name and "stdout" or "stderr"]:write(USAGE, "\n")
    return name and 0 or 2
  end
  local sub = SUB[name]
  if not sub then
    local wants_json = false
    for _, a in ipairs(rest) do wants_json = wants_json or a == "--json" end
    local names = {}
    for known in pairs(SUB) do names[#names + 1] = known end
    local near = require("vkit.cli.suggest").hint(name, names)
    return fail({ json = wants_json }, 2, "usage", ("unknown vac command %q%s"):format(name, near), "vac")
  end
  if args.wants_help(rest) then
    io.stdout:write(HELP[name], "\n")
    return 0
  end
  return sub(rest)
end

return M
