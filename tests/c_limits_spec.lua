-- Limits live once, in policies/ (issue 32): where the C core needs a
-- default of its own (a call that names none), it is the policy's number,
-- held equal here; change one and this fails until the other follows.
local vkit = require "vkit"
local policy = vkit.policies.api

describe("the C core's built-in limits", function()
  it("are policies/api.lua's", function()
    local json, fs = require "vkit.json", require "vkit.fs"
    assert.equal(policy.json_max_depth, json.default_max_depth)
    assert.equal(policy.json_max_depth_cap, json.max_depth_cap)
    assert.equal(policy.walk_max_depth, fs.max_walk_depth)
  end)

  it("are what the readers do: the default depth and the cap, one level past each refused", function()
    local json = require "vkit.json"
    local function nested(n) return ("["):rep(n) .. ("]"):rep(n) end
    assert.is_table(json.decode(nested(policy.json_max_depth)))
    local doc, _, code = json.decode(nested(policy.json_max_depth + 1))
    assert.is_nil(doc)
    assert.equal("too-deep", code)
    assert.is_table(json.decode(nested(policy.json_max_depth_cap), { max_depth = policy.json_max_depth_cap }))
    assert.has_error(function() json.decode("[]", { max_depth = policy.json_max_depth_cap + 1 }) end)
  end)

  it("is what a walk does: nesting at the walk depth is walked, one directory deeper is too-deep", function()
    local t = require "tests.support.run"
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local deepest = dir .. ("/d"):rep(policy.walk_max_depth)
    assert(vkit.fs.mkdirs(deepest))
    assert.is_table(vkit.fs.walk(dir))
    assert(vkit.fs.mkdirs(deepest .. "/d"))
    local entries, message, code = vkit.fs.walk(dir)
    assert.is_nil(entries)
    assert.equal("too-deep", code)
    assert.matches("directory nesting deeper than " .. policy.walk_max_depth, message, 1, true)
  end)
end)
