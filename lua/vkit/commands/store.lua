--- `vkit store migrate`: create or upgrade the shared job store's schema.
local args = require "vkit.args"
local json = require "vkit.json"
local url = require "vkit.store.url"

local USAGE = [[usage: vkit store migrate --store postgresql://... [--evidence-root DIR] [--json]

Creates the PostgreSQL job store's schema, or upgrades it to this vkit's
version (numbered migrations, each in one transaction, under an advisory
lock), creates the group roles vkit_submitters (queue and cancel runs),
vkit_workers (run them) and vkit_client (both), each with the privileges
its steps need and no more, and records the content-addressed evidence
directory every machine reaches (--evidence-root; a machine can override it
with VKIT_EVIDENCE_ROOT).  A store that has no evidence root recorded needs
--evidence-root: without one every worker would run jobs and then fail
them.  Run it as the role that owns the schema.  --store may come from
VKIT_STORE; the URL must not carry a password (PGPASSWORD or a passfile).
Exit: 0 migrated (or already current), 2 usage (nothing changed: among
them, a store with no evidence root and no --evidence-root), 3 the database
refused or cannot be reached.]]

local function usage_error(message)
  return require("vkit.cli").usage_error(message, "store")
end

return {
  summary = "create or upgrade the shared PostgreSQL job store (store migrate)",
  usage = USAGE,
  run = function(argv)
    if argv[1] ~= "migrate" then return usage_error("store needs the action: migrate") end
    local opts, err = args.parse(table.move(argv, 2, #argv, 1, {}), {
      flags = { json = true }, options = { store = "string", evidence_root = "string" }, max = 0 })
    if not opts then return usage_error(err) end
    local text = opts.store or os.getenv(url.ENV)
    if not text or text == "" then return usage_error("--store postgresql://... (or VKIT_STORE) is required") end
    local chosen, message = url.parse(text)
    if not chosen then return usage_error(message) end
    if chosen.backend ~= "postgresql" then return usage_error("the file store has no schema to migrate") end
    local root = opts.evidence_root
    if root then
      local fs = require "vkit.fs"
      local made, why = fs.mkdirs(root)
      local real = made and fs.realpath(root)
      local st = real and fs.lstat(real)
      if not st or st.kind ~= "dir" then
        return usage_error(("--evidence-root %s is not a directory this machine can make: %s"):format(root,
          tostring(why or "not a directory")))
      end
      root = real
    end
    local ok, result = pcall(function()
      local store = require("vkit.store.postgresql").open(chosen, ".", { for_migration = true })
      local r = store:migrate(root)
      store:close()
      return r
    end)
    if not ok then
      io.stderr:write("vkit: cannot migrate the store ", chosen.display, ": ", tostring(result), "\n")
      -- Nothing was changed: the migration's transaction was rolled back.
      if type(result) == "table" and result.code == "no-evidence-root" then return 2 end
      return 3
    end
    if opts.json then
      print(json.encode({ store = chosen.display, from = result.from, to = result.to, applied = result.applied,
                          evidence_root = root or json.null }, { indent = 2 }))
    elseif #result.applied == 0 then
      print(("store %s: schema version %d, already current"):format(chosen.display, result.to))
    else
      print(("store %s: schema version %d -> %d (applied %s)"):format(chosen.display, result.from, result.to,
        table.concat(result.applied, ", ")))
    end
    return 0
  end,
}
