-- Properties of the Lua library as a whole.
local vkit = require "vkit"
local t = require "tests.support.run"

describe("the vkit Lua library", function()
  it("defines no globals: every module is a local table", function()
    local entries = assert(vkit.fs.walk(vkit.root .. "/lua"))
    local checked = 0
    for _, e in ipairs(entries) do
      if e.kind == "file" and e.path:match "%.lua$" then
        local path = vkit.root .. "/lua/" .. e.path
        local listing = io.popen("luac5.4 -l -p " .. t.quote(path) .. " 2>&1"):read "a"
        for line in listing:gmatch "[^\n]+" do
          assert.is_nil(line:match "SETTABUP.-_ENV", ("%s assigns a global: %s"):format(e.path, line))
        end
        checked = checked + 1
      end
    end
    assert.is_true(checked > 5)
  end)

  it("loads the public modules lazily and reaches nothing else", function()
    assert.is_function(vkit.store.open)
    for _, internal in ipairs { "pretty", "cli", "args", "process", "ts", "archive", "term", "boot", "mcp", "relational",
                                "tables", "run_dir", "no_such_package", "../escape", "api" } do
      assert.is_nil(vkit[internal], internal)
    end
  end)

  describe("policies", function()
    it("reads the seeds' limits from policies/", function()
      local limits = vkit.policies.limits
      assert.equal(128, limits.paired.max_invocations)
      assert.equal(64 * 1024, limits.paired.output_cap)
      assert.equal(3000, limits.admission.max_nodes)
      assert.equal(64, limits.admission.max_depth)
      assert.equal(4096, limits.relational.max_domain)
      assert.equal(256 * 1024, limits.relational.max_harness_bytes)
      assert.equal(2 * 1024 * 1024, limits.kani.max_result_bytes)
    end)

    it("raises on a missing policy or entry instead of returning nil", function()
      assert.has_error(function() return vkit.policies.limits.paired.no_such_limit end)
      assert.has_error(function() return vkit.policies.no_such_policy end)
      assert.has_error(function() return vkit.policies["../etc"] end)
    end)

    it("is read-only", function()
      assert.has_error(function() vkit.policies.limits.paired.max_invocations = 1e9 end)
    end)
  end)
end)
