--- `vkit version`: the versions of vkit and of everything it embeds.
local vkit = require "vkit"

return {
  summary = "print the versions of vkit, Lua, lua-cjson, OpenSSL and libgit2",
  usage = "usage: vkit version",
  run = function(argv)
    if #argv > 0 then return require("vkit.cli").usage_error("version takes no arguments", "version") end
    local v = vkit.versions
    print("vkit " .. v.vkit)
    print(v.lua)
    print("lua-cjson " .. require("cjson")._VERSION:gsub("^lua%-cjson ", ""))
    print(v.openssl)
    print("libgit2 " .. v.libgit2)
    return 0
  end,
}
