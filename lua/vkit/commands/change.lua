--- `vkit change certify`: submit a candidate for shadow analysis (seed 001).
local args = require "vkit.args"
local json = require "vkit.json"
local fs = require "vkit.fs"
local store_mod = require "vkit.store"
local change_cli = require "vkit.change.cli"
local policy = require("vkit.policy").store

local USAGE = [[usage: vkit change certify --project PATH --request REQUEST.json --trusted-target COMMIT
                           [--method auto|finite_paired|rust_exhaustive|rust_kani]
                           [--kani-toolchain PIN.json] [--store URL] [--wait S] [--json]

Binds the request (base and candidate commits, accepted intent digest,
finite claim) to the accepted intent at the host's exact --trusted-target,
then runs the selected methods as one durable shadow job. --wait waits up to
S seconds (0..60, default 0) and prints the run summary; the job continues.
`vkit run wait --run ID` and `vkit run show --run ID` follow it.
Exit: 0 observed conformance, 1 violation, blocked or unknown, 2 usage,
3 infrastructure failure, 4 still pending.]]

local function usage_error(message)
  return require("vkit.cli").usage_error(message, "change")
end

local function read_json_file(path, what)
  local bytes, message = fs.read(path, 1024 * 1024)
  if not bytes then return nil, ("cannot read the %s %s: %s"):format(what, path, message) end
  local doc, dmessage = json.decode(bytes)
  if doc == nil then return nil, ("the %s %s is not valid JSON: %s"):format(what, path, dmessage) end
  return doc
end

return {
  summary = "certify a change against its accepted intent (change certify)",
  usage = USAGE,
  run = function(argv)
    if argv[1] ~= "certify" then return usage_error("change needs the action: certify") end
    local opts, err = args.parse(table.move(argv, 2, #argv, 1, {}), {
      flags = { json = true },
      options = { project = "string", request = "string", trusted_target = "string", method = "string",
                  kani_toolchain = "string", wait = "number", store = "string" },
    })
    if not opts then return usage_error(err) end
    for _, required in ipairs { "project", "request", "trusted_target" } do
      if not opts[required] then return usage_error(("--%s is required"):format(required:gsub("_", "-"))) end
    end
    if opts.wait and (opts.wait < 0 or opts.wait > policy.max_wait_seconds) then
      return usage_error(("--wait must be between 0 and %d seconds"):format(policy.max_wait_seconds))
    end
    local request, message = read_json_file(opts.request, "request")
    if not request then return usage_error(message) end
    local pin
    if opts.kani_toolchain then
      pin, message = read_json_file(opts.kani_toolchain, "Kani toolchain pin")
      if not pin then return usage_error(message) end
    end
    local ok, store = pcall(store_mod.open, { store = opts.store, project = opts.project })
    if not ok then
      io.stderr:write("vkit: cannot open the project: ", tostring(store), "\n")
      return 3
    end
    local id
    id, message = change_cli.submit(store, { request = request, trusted_target = opts.trusted_target,
                                             method = opts.method, kani_toolchain = pin })
    if not id then return usage_error(message) end
    local run = change_cli.wait(store, id, opts.wait or 0, function(text) io.stderr:write(text) end)
    local shadow = change_cli.shadow(store, run)
    if opts.json then print(json.encode(shadow, { indent = 2 })) else change_cli.print_human(shadow) end
    return change_cli.exit_code(run)
  end,
}
