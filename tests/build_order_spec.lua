-- A fresh `make -j2` installs the missing Debian packages (build/.deps)
-- while it builds: every rule whose recipe runs a packaged tool (npm,
-- tar, lua5.4) must wait for that, or it runs before the tool is
-- there.  Read from make's own database of the rules (make -p).
local t = require "tests.support.run"

local TOOLS = { "npm ", "tar -x", "lua5.4 " }

-- The rules of `make -p -n -q target`: { {target, prereqs, recipe}, ... }.
local function rules(target)
  local p = io.popen(("make -s -p -n -q %s 2>/dev/null"):format(t.quote(target)))
  local out, list, current, in_define = p:read "a", {}, nil, false
  p:close()
  for line in out:gmatch "[^\n]*" do
    if in_define then -- a variable's text (make prints `define` bodies too), not a rule
      in_define = line ~= "endef"
    elseif line:match "^define " then
      in_define, current = true, nil
    elseif line:sub(1, 1) == "\t" then
      if current then current.recipe = current.recipe .. line .. "\n" end
    elseif line:sub(1, 1) ~= "#" then -- make's notes on a rule come between it and its recipe
      current = nil
      local name, prereqs = line:match "^([^#%s][^=]-):(.*)$"
      if name and not prereqs:match "^=" and not name:match "^%." then
        current = { target = name, prereqs = prereqs, recipe = "" }
        list[#list + 1] = current
      end
    end
  end
  return list
end

describe("the build", function()
  it("runs no packaged tool before the package check", function()
    local checked = 0
    for _, r in ipairs(rules "vkit") do
      for _, tool in ipairs(TOOLS) do
        if r.recipe:find(tool, 1, true) then
          checked = checked + 1
          local order_only = r.prereqs:match "|(.*)$" or ""
          assert.truthy(order_only:find("build/.deps", 1, true), r.target .. " runs " .. tool .. " without waiting for build/.deps")
          break
        end
      end
    end
    assert.is_true(checked >= 6, "the fetch, unpack and precompile rules were found") -- not vacuous
  end)
end)
