-- vkit.change.trusted_base on the graph shapes a CI job meets (issue 33):
-- a base reached from the trusted target only through a merge of a side
-- branch is in its history (accepted, as docs/change.md "What the one
-- command trusts" decides), the trusted target itself is, and a trusted
-- target that does not descend from the base is refused.  A real Git
-- repository built by the spec.
local intents = require "tests.support.intents"
local trusted_base = require "vkit.change.trusted_base"
local json = require("vkit").json

describe("trusted_base.contains", function()
  local p
  before_each(function() p = intents.project() end)
  after_each(function() intents.finish(p) end)

  local function merge(first, second)
    local tree = assert(p.repo:write_tree { { path = "README", bytes = "merged\n" } })
    return assert(p.repo:commit_tree { tree = tree, parents = { first, second }, message = "merge\n" })
  end

  it("takes a base reached only through a merge's second parent, and the target itself", function()
    local main1 = p.commit({ README = "main\n" }, p.target)
    local side = p.commit({ README = "side\n" }, p.target)
    local side2 = p.commit({ README = "side 2\n" }, side)
    local merged = merge(main1, side2)
    assert.is_true(trusted_base.contains(p.repo, merged, side))
    assert.is_true(trusted_base.contains(p.repo, merged, side2))
    assert.is_true(trusted_base.contains(p.repo, merged, merged))
    assert.equal(("%s, the base"):format(merged), trusted_base.describe(merged, merged))
    assert.is_true(trusted_base.still_accepted(p.repo, merged, merged, p.digest))
  end)

  it("refuses a trusted target that is not a descendant of the base, either way round", function()
    local main1 = p.commit({ README = "main\n" }, p.target)
    local side = p.commit({ README = "side\n" }, p.target)
    for _, case in ipairs { { main1, side }, { side, main1 }, { p.target, main1 } } do
      local ok, code, message = trusted_base.contains(p.repo, case[1], case[2])
      assert.is_nil(ok)
      assert.equal("base-not-in-trusted-target", code)
      assert.matches("is not the trusted target", message, 1, true)
    end
    -- an unrelated history (a root commit of its own)
    local tree = assert(p.repo:write_tree { { path = "README", bytes = "other\n" } })
    local root = assert(p.repo:commit_tree { tree = tree, parents = json.array(), message = "root\n" })
    assert.equal("base-not-in-trusted-target", select(2, trusted_base.contains(p.repo, root, p.target)))
  end)
end)
