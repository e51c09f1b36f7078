--- `vkit change request`: a finite request whose claim is the accepted
-- intent's own contract (vkit.change.scaffold.request).
local args = require "vkit.args"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local repository = require "vkit.cli.repository"
local scaffold = require "vkit.change.scaffold"

local cli = require "vkit.cli"

local M = {}

M.USAGE = [[usage: vkit change request --intent DIGEST --base REV --candidate REV
                           [--project DIR] [--output FILE]

Prints a finite request (strict JSON) for `vkit change certify`: the base and
candidate commits, the intent digest, and as its claim the intent revision's
own contract, read from the base commit's Git objects (never the working
tree).  The request chooses nothing else: the commands, environments and
toolchain are the accepted artifacts'; whether it binds is preflight's to say.
A revision (HEAD, main~1, a tag, a unique prefix) is resolved here to the
full commit id the request records; a request file itself takes full ids only.

options:
  --intent DIGEST       the intent revision's digest (64 hex digits)
  --base REV            the base: the trusted target commit
  --candidate REV       the candidate commit
  --project DIR         the repository (default: the one holding the current
                        directory, found upward as git does)
  --output FILE         write the request there instead of stdout
  --help                this text

exit codes: 0 written, 1 the base holds no such intent revision (or it does
  not parse), 2 usage (also a REV that names no commit), 3 FILE cannot be
  written, 7 not a Git repository]]

local function usage_error(message)
  return cli.usage_error(message, "change request")
end

function M.run(argv)
  local opts, err = args.parse(argv, { options = { intent = "string", base = "string", candidate = "string",
                                                   project = "string", output = "string" } })
  if not opts then return usage_error(err) end
  for _, required in ipairs { "intent", "base", "candidate" } do
    if not opts[required] then return usage_error(("--%s is required"):format(required)) end
  end
  if not hash.is_digest(opts.intent) then
    return usage_error(("--intent must be a digest of 64 lowercase hex digits, not %q"):format(opts.intent))
  end
  local repo, where = repository.open(opts.project or ".")
  if not repo then return cli.fail(cli.EXIT.not_a_repository, "the project %s", where) end
  for _, which in ipairs { "base", "candidate" } do
    local id, why = repository.resolve(repo, opts[which], where)
    if not id then
      repo:close()
      return usage_error(("--%s %s"):format(which, why))
    end
    opts[which] = id
  end
  local bytes, why = scaffold.request(repo, { base = opts.base, candidate = opts.candidate, intent = opts.intent })
  repo:close()
  if not bytes then return cli.fail(cli.EXIT.refused, "%s", why) end
  if opts.output then
    local ok, werr = fs.write_atomic(opts.output, bytes)
    if not ok then return cli.fail(cli.EXIT.infrastructure, "cannot write %s: %s", opts.output, werr) end
  else
    io.stdout:write(bytes)
  end
  return cli.EXIT.ok
end

return M
