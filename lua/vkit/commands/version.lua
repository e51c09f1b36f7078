--- `vkit version [--json]`: the versions of vkit and of everything it embeds.
local vkit = require "vkit"
local args = require "vkit.args"
local cli = require "vkit.cli"
local json = require "vkit.json"

local USAGE = [[usage: vkit version [--json]

Prints the versions of vkit and of what it embeds: Lua, lua-cjson, libgit2,
and the compiled-in tree-sitter runtime and Rust grammar (npm package,
version, language ABI); and OpenSSL, whose libcrypto computes SHA-256.

options:
  --json   one JSON object on stdout
  --help   this text

exit codes: 0, 2 usage]]

-- {name, version, detail} for each component, in print order.
local function components()
  local v = vkit.versions
  local ts = require("vkit.ts").identity()
  return {
    { name = "vkit", version = v.vkit },
    { name = "Lua", version = (v.lua:gsub("^Lua ", "")) },
    { name = "lua-cjson", version = (require("cjson")._VERSION:gsub("^lua%-cjson ", "")) },
    { name = "OpenSSL", version = (v.openssl:match "^OpenSSL (%S+)" or v.openssl),
      detail = "libcrypto, linked statically: SHA-256" },
    { name = "libgit2", version = v.libgit2 },
    { name = "tree-sitter", version = ts.runtime.version,
      detail = ("npm %s, language ABI %d, oldest compatible %d"):format(ts.runtime.package, ts.runtime.language_abi,
        ts.runtime.min_compatible_abi) },
    { name = "tree-sitter-rust", version = ts.grammar.version,
      detail = ("npm %s, ABI %d"):format(ts.grammar.package, ts.grammar.abi) },
  }
end

return {
  summary = "print the versions of vkit and of what it embeds (Lua, libgit2, tree-sitter)",
  usage = USAGE,
  run = function(argv)
    local opts, err = args.parse(argv, { flags = { json = true } })
    if not opts then return cli.usage_error(err, "version") end
    local list = components()
    if opts.json then
      local out = json.object()
      for _, c in ipairs(list) do out[c.name] = json.object { version = c.version, detail = c.detail } end
      print(json.encode(out, { indent = 2 }))
      return 0
    end
    for _, c in ipairs(list) do
      print(c.name .. " " .. c.version .. (c.detail and (" (" .. c.detail .. ")") or ""))
    end
    return 0
  end,
}
