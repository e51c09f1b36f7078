--- `vkit change intent init`: writes a proposed intent revision and its
-- four artifacts into a repository's verification/ tree for review, and
-- says what to commit and what the acceptance commit must contain.  It never
-- accepts anything (vkit.change.scaffold).
local args = require "vkit.args"
local json = require "vkit.json"
local fs = require "vkit.fs"
local hash = require "vkit.hash"
local scaffold = require "vkit.change.scaffold"
local host_tools = require "vkit.change.host_tools"
local change_policy = require("vkit.policy").change

local cli = require "vkit.cli"

local M = {}

M.USAGE = [[usage: vkit change intent init --language rust|python|typescript --source PATH --function NAME
                               --domain FROM..TO --observations FROM..TO [--require INPUTS=OUTPUTS ...]
                               [--requirement LABEL] [--statement TEXT] [--toolchain-root DIR]
                               [--dir PATH] [--repetitions N] [--selection spread|ascending]
                               [--max-inputs N] [--shrink-limit N] [--process-deadline-ms N]
                               [--project DIR] [--json]
       vkit change intent init --language L --source PATH --function NAME
                               [--type PARAM=TYPE ...] [--returns TYPE|T1,T2,...]
                               --domain PARAM=SET ... --observations SETS
                               [--require 'BOX -> SETS' ...] [other options as above]

Writes a proposed intent for the u32 -> u32 function NAME in the source file
PATH (relative to the repository) into the project's working tree, for
review: the binding map, codec, observation policy and environment model
(under --dir, default verification/NAME) and the intent revision that pins
them (verification/change-intents/<digest>.v1.json).  It then prints what to
commit and the exact verification/change-intents/accepted.v1.json the
acceptance commit must contain.  It never accepts anything: acceptance is
that commit, made to the trusted target through your own review; only then
does `vkit change certify` bind a request to the revision.

A set is comma-separated integers and FROM..TO ranges (0..99,200).

The second form (a function of 1 to 4 parameters, each bool or u8 u16 u32
u64 i8 i16 i32 i64, returning one such value or a tuple of 2 to 4; see
docs/change.md, "Multi-parameter profile") is chosen by --domain PARAM=SET,
--type or --returns.  The signature is read from the source; where the
source fixes no width (Python `int` or no annotation, TypeScript `number` /
`bigint`) --type and --returns say it, and a declaration the source
contradicts is refused.  Sets there are `*` (the whole type) or items V and
LO..HI joined by `|` (-5..-1|7); the accepted inputs, the product of the
parameters' sets, are at most 1,048,576 (every one is run).

  --type PARAM=TYPE     the width of a parameter the source leaves open (repeatable)
  --returns TYPE        the result's type; T1,T2,... for a tuple (u32,bool)
  --domain PARAM=SET    one parameter's accepted values, once per parameter
  --observations SETS   every output the function may legally return, one set
                        per result component joined by `;` (`*; 0..100`)
  --require 'BOX -> SETS'
                        a standing requirement: on every input in BOX
                        (PARAM=SET,... ; an omitted parameter is its whole
                        type), each result component is in its set (`*`: any),
                        e.g. 'x=0..9,flag=true -> 0..5' (repeatable)

options:
  --language L          rust, python or typescript
  --source PATH         the module holding the function (repository-relative)
  --function NAME       the function: u32 -> u32
  --domain SET          the accepted inputs (at most 4,096)
  --observations SET    every output the function may legally return (at most 4,096)
  --require IN=OUT      a standing requirement: inputs IN must return a value in
                        OUT (repeatable); without any, a candidate conforms where
                        it returns what the base returns
  --requirement LABEL   the requirement's citation label (an issue, a document);
                        default PATH#NAME
  --statement TEXT      the requirement's literal statement (default generated)
  --toolchain-root DIR  pin the toolchain under DIR, a stable location every
                        machine installs with the same bytes (e.g. /opt/rust),
                        instead of where this host keeps it (without it, a
                        path pinned under a home directory or vkit's own
                        installation is warned about); layout under DIR:
                          rust        bin/rustc, lib/librustc_driver-*.so,
                                      lib/libLLVM*, lib/rustlib/x86_64-unknown-linux-gnu/lib/*
                          python      bin/python3.11 or bin/python3
                          typescript  lib/tsc and lib/*.d.ts (the @typescript/
                                      typescript-linux-x64 package), bin/node
  --dir PATH            where the four artifacts go (default verification/NAME)
  --repetitions N, --selection S, --max-inputs N, --shrink-limit N,
  --process-deadline-ms N
                        the observation policy (defaults 2, spread, 12, 8, 10000)
  --project DIR         the repository's working tree (default: the one holding the
                        current directory, found upward as git does)
  --json                the files, the digest and the acceptance list as JSON
  --help                this text

A file that exists with other bytes is never overwritten (exit 1).

Before anything is written, the source must define the function at module
level with the profile's shape, as far as the source states it (one
parameter, declared u32 / int / number or undeclared, the same result):
otherwise it is refused as no-function, not-exported, wrong-shape or
syntax-error and nothing is written.  In the second form the refusals are
width-required (naming the flag to pass), type-contradiction,
unknown-parameter, missing-domain (a parameter with no --domain), set-invalid,
exhaustive-cap (the product's size and the cap), observations-invalid and
require-invalid.

exit codes: 0 written, 1 refused (a file in the way, no such function or the
  wrong shape, no toolchain found, an intent that would not parse), 2 usage,
  7 not a Git repository]]

local OPTIONS = {
  language = "string", source = "string", ["function"] = "string", domain = "list", observations = "string",
  type = "list", returns = "string",
  require = "list", requirement = "string", statement = "string", toolchain_root = "string", dir = "string",
  repetitions = "number", selection = "string", max_inputs = "number", shrink_limit = "number",
  process_deadline_ms = "number", project = "string",
}

local function usage_error(message)
  return cli.usage_error(message, "change intent init")
end

local function refuse(fmt, ...)
  return cli.fail(cli.EXIT.refused, fmt, ...)
end

-- Whether the options ask for the multi-parameter profile (issue 34): a
-- --domain NAME=SET, --type or --returns.  A bare --domain SET is the
-- seed's u32 -> u32, exactly as before the profile existed.
local function is_multi(opts)
  if opts.type or opts.returns then return true end
  for _, text in ipairs(opts.domain or {}) do
    if text:find("=", 1, true) then return true end
  end
  return false
end

-- The spec for scaffold.intent from the options, or nil, message.
local function spec_of(opts)
  for _, required in ipairs { "language", "source", "function", "domain", "observations" } do
    if not opts[required] then return nil, ("--%s is required"):format(required) end
  end
  local known = {}
  for _, l in ipairs(change_policy.languages) do known[l] = true end
  if not known[opts.language] then
    return nil, ("--language must be one of %s, not %q"):format(table.concat(change_policy.languages, ", "), opts.language)
  end
  local spec = { language = opts.language, source = opts.source, ["function"] = opts["function"], dir = opts.dir,
                 requirements = {}, observation = {} }
  if is_multi(opts) then
    -- the multi-parameter profile: the sets are read once the signature is known (multi_of)
    for _, text in ipairs(opts.domain) do
      if not text:find("=", 1, true) then
        return nil, ("--domain %s: a function of several parameters (or with --type / --returns) takes --domain "
          .. "NAME=SET once per parameter"):format(text)
      end
    end
  else
    if #opts.domain > 1 then return nil, "--domain given twice" end
    local message
    spec.domain, message = scaffold.parse_set(opts.domain[1])
    if not spec.domain then return nil, "--domain: " .. message end
    spec.observations, message = scaffold.parse_set(opts.observations)
    if not spec.observations then return nil, "--observations: " .. message end
    for _, text in ipairs(opts.require or {}) do
      local r, rmessage = scaffold.parse_requirement(text)
      if not r then return nil, "--require " .. rmessage end
      spec.requirements[#spec.requirements + 1] = r
    end
  end
  if opts.requirement or opts.statement then
    if not (opts.requirement and opts.statement) then return nil, "--requirement and --statement go together" end
    spec.requirement = { source = opts.requirement, statement = opts.statement }
  end
  for _, k in ipairs { "repetitions", "max_inputs", "shrink_limit", "process_deadline_ms" } do
    if opts[k] ~= nil then
      if math.type(opts[k]) ~= "integer" then return nil, ("--%s needs an integer"):format(k:gsub("_", "-")) end
      spec.observation[k] = opts[k]
    end
  end
  spec.observation.selection = opts.selection
  return spec
end

function M.init(argv)
  local opts, err = args.parse(argv, { flags = { json = true }, options = OPTIONS })
  if not opts then return usage_error(err) end
  local spec, problem = spec_of(opts)
  if not spec then return usage_error(problem) end
  local project = opts.project or "."
  local root = fs.realpath(project)
  local git_ok, git = pcall(require, "vkit.git")
  local repo = root and git_ok and git.open(root, { search = true }) -- upward, as git finds it
  if not repo then return cli.fail(cli.EXIT.not_a_repository, "the project %s is not a Git repository", project) end
  local workdir = repo:workdir()
  repo:close()
  if not workdir then return cli.fail(cli.EXIT.not_a_repository, "the project %s has no working tree", project) end
  workdir = workdir:gsub("/+$", "")
  -- the path is checked before anything is looked up: never outside the tree
  local normal, _, why_path = require("vkit.paths").check(spec.source)
  if not normal then
    return refuse("the source %s is not a normalised repository path: %s", spec.source, tostring(why_path))
  end
  local source_st = fs.lstat(workdir .. "/" .. spec.source)
  if not source_st or source_st.kind ~= "file" then
    return refuse("the source %s is not a regular file in %s", spec.source, workdir)
  end
  local env, why = host_tools.environment_model({ spec.language }, { toolchain_root = opts.toolchain_root })
  if not env then return refuse("%s", why) end
  -- Paths only this machine has: said, not refused (a single-machine intent is legitimate).
  local warnings = require("vkit.change.portability").warnings(env, { spec.language }, {
    { dir = os.getenv "HOME" ~= "/" and os.getenv "HOME" or nil, what = "the home directory" },
    { dir = "/home", what = "the home directories" },
    { dir = fs.realpath(require("vkit.boot").root), what = "vkit's installation" } })
  spec.environment_model = env
  spec.accepted = fs.read(workdir .. "/" .. change_policy.layout.accepted_list, change_policy.caps.document_bytes)
  local function read_source()
    local bytes = fs.read(workdir .. "/" .. spec.source, change_policy.caps.source_bytes + 1)
    if not bytes or #bytes > change_policy.caps.source_bytes then
      return nil, refuse("the source %s could not be read within %d bytes; nothing was written", spec.source,
        change_policy.caps.source_bytes)
    end
    return bytes
  end
  local source, read_exit
  if is_multi(opts) then
    -- The signature comes from the source (and --type / --returns) before the documents can be built.
    source, read_exit = read_source()
    if not source then return read_exit end
    local multi, mmessage, mcode = require("vkit.change.multi.scaffold").from_source {
      ts = require "vkit.ts", language = spec.language, source = source, path = spec.source,
      ["function"] = spec["function"], types = opts.type, returns = opts.returns, domains = opts.domain,
      observations = opts.observations, requires = opts.require }
    if not multi then return refuse("%s (%s); nothing was written", mmessage, tostring(mcode)) end
    spec.multi, spec.requirements = multi, multi.requirements
  end
  local plan, message, code = scaffold.intent(spec)
  if not plan then return refuse("%s (%s)", message, tostring(code)) end
  if not spec.multi then
    -- The function must exist with the profile's shape before anything is written.
    source, read_exit = read_source()
    if not source then return read_exit end
    local shaped, shape_code, shape_message = require("vkit.admission.shape").check(require "vkit.ts", spec.language,
      source, spec["function"], spec.source, require("vkit.policy").limits.admission)
    if not shaped then return refuse("%s (%s); nothing was written", shape_message, shape_code) end
  end
  -- Nothing is written unless every file can be: one in the way stops all,
  -- and so does a link or a file where a directory of the path should be
  -- (the files are written where they are named, never through a link).
  for _, f in ipairs(plan.files) do
    local target = workdir .. "/" .. f.path
    local prefix = workdir
    for part in f.path:match("^(.*)/[^/]*$"):gmatch "[^/]+" do
      prefix = prefix .. "/" .. part
      local dst = fs.lstat(prefix)
      if dst and dst.kind ~= "dir" then
        return refuse("%s is a %s, not a directory; nothing was written", prefix:sub(#workdir + 2), dst.kind)
      end
    end
    local st = fs.lstat(target)
    if st and (st.kind ~= "file" or hash.file(target) ~= hash.sha256(f.bytes)) then
      return refuse("%s exists with other contents; nothing was written (move it away, or choose --dir)", f.path)
    end
  end
  for _, f in ipairs(plan.files) do
    local target = workdir .. "/" .. f.path
    assert(fs.mkdirs(target:match "^(.*)/[^/]*$"))
    assert(fs.write_atomic(target, f.bytes))
  end
  for _, w in ipairs(warnings) do io.stderr:write("vkit: warning: ", w, "\n") end
  if opts.json then
    local files = json.array()
    for i, f in ipairs(plan.files) do files[i] = { path = f.path, role = f.role, sha256 = hash.sha256(f.bytes) } end
    print(json.encode({ digest = plan.digest, files = files, accepted_list = plan.accepted, notes = json.array(plan.notes),
                        accepted = false, warnings = json.array(warnings) }, { indent = 2 }))
    return cli.EXIT.ok
  end
  print("wrote, for review (nothing is accepted):")
  for _, f in ipairs(plan.files) do print(("  %-56s %s"):format(f.path, f.role)) end
  print("digest " .. plan.digest)
  for _, note in ipairs(plan.notes) do print("note: " .. note) end
  print("")
  print("1. Commit these files for review, e.g.")
  local dirs = { plan.files[1].path:match "^(.*)/[^/]*$", plan.revision_path }
  print("     git add " .. table.concat(dirs, " "))
  print(("     git commit -m 'propose intent %s'"):format(plan.digest:sub(1, 12)))
  print(("2. The acceptance commit, made to the trusted target through your review, must set %s to:"):format(
    plan.accepted.path))
  for line in plan.accepted.bytes:gmatch "[^\n]+" do print("     " .. line) end
  print("   and change nothing else; a candidate may not touch that list or these files.")
  print("3. Then certify a candidate C whose history holds that target T (any revisions, e.g. main and HEAD):")
  print(("     vkit change certify --base T --candidate C --intent %s --timeout 10m"):format(plan.digest))
  return cli.EXIT.ok
end

return M
