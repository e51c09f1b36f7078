-- Public verification takes version 2 package claims "with exact
-- component-policy and package SHA-256 pins" (seed 001): a pin that does not
-- match the bytes it pins is refused before anything is queued, and a
-- caller (the CLI's --policy-sha256/--package-sha256, MCP verify's
-- component_policy_sha256/package_sha256) can insist on the pins it
-- reviewed.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local mcp = require "tests.support.mcp"
local project = dofile(vkit.root .. "/examples/external/project.lua")

describe("exact component-policy and package pins", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    t.kill_workers(dir)
    cleanup()
  end)

  local function manifest_pins(p)
    local files = project.files()
    local component = json.decode(files["verification/manifest.json"]).components[project.COMPONENT]
    return component.policy.sha256, component.package.sha256, files
  end

  local function queued(p)
    return vkit.fs.list(p.path .. "/.vkit/runs") or {}
  end

  for _, which in ipairs { "policy", "package" } do
    it(("refuses a manifest whose %s pin does not match the %s's bytes, queueing nothing"):format(which, which),
      function()
        local p = project.build(dir)
        local _, _, files = manifest_pins(p)
        local manifest = json.decode(files["verification/manifest.json"])
        manifest.components[project.COMPONENT][which].sha256 = ("0"):rep(64)
        files["verification/manifest.json"] = json.encode(manifest)
        project.commit(p.repo, files, p.head)
        local r = t.vkit { "verify", project.COMPONENT, "--project", p.path }
        assert.equal(1, r.code)
        assert.matches(("%s verification/bvadd.%s.json: pinned sha256 0+, actual %%x+"):format(which, which), r.stderr)
        assert.same({}, queued(p))
      end)
  end

  it("runs with the pins the caller insists on when the manifest's are the same", function()
    local p = project.build(dir)
    local policy_pin, package_pin = manifest_pins(p)
    local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, "--wait", "60", "--json",
                       "--policy-sha256", policy_pin, "--package-sha256", package_pin }
    assert.equal(0, r.code, r.stderr)
    assert.equal("PASS", json.decode(r.stdout).runs[1].outcome)
  end)

  for _, case in ipairs { { "--policy-sha256", "component-policy", "component policy" },
                          { "--package-sha256", "package", "package" } } do
    it(("refuses by name when %s differs from the manifest's pin"):format(case[1]), function()
      local p = project.build(dir)
      local r = t.vkit { "verify", project.COMPONENT, "--project", p.path, case[1], ("e"):rep(64) }
      assert.equal(1, r.code)
      assert.matches(("pins the %s verification/bvadd%%.%%a+%%.json as %%x+, not the e+ you gave"):format(case[3]),
        r.stderr)
      assert.same({}, queued(p))
      assert.equal(2, t.vkit({ "verify", project.COMPONENT, "--project", p.path, case[1], "abc" }).code)
      assert.equal(2, t.vkit({ "verify", project.COMPONENT, "--project", p.path, case[1], ("E"):rep(64) }).code)
    end)
  end

  it("lets an MCP client insist on the pins it reviewed", function()
    local p = project.build(dir)
    local policy_pin, package_pin = manifest_pins(p)
    local s, sent = mcp.ready(p.path)
    local result = mcp.call(s, sent, 1, "verify", { component = project.COMPONENT, component_policy_sha256 = ("e"):rep(64) })
    assert.is_true(result.isError)
    assert.matches("pins the component policy verification/bvadd.policy.json as " .. policy_pin, result.content[1].text,
      1, true)
    result = mcp.call(s, sent, 2, "verify", { component = project.COMPONENT, package_sha256 = ("e"):rep(64) })
    assert.is_true(result.isError)
    assert.matches("pins the package verification/bvadd.package.json as " .. package_pin, result.content[1].text, 1, true)
    assert.same({}, queued(p))
    result = mcp.call(s, sent, 3, "verify", { component = project.COMPONENT, package_sha256 = "nothex" })
    assert.is_true(result.isError)
    assert.matches("arguments.package_sha256: must match ^[0-9a-f]{64}$", result.content[1].text, 1, true)
    result = mcp.call(s, sent, 4, "verify", { component = project.COMPONENT, component_policy_sha256 = policy_pin,
                                              package_sha256 = package_pin, wait = 60 })
    assert.is_false(result.isError, result.content[1].text)
    assert.equal("PASS", result.structuredContent.runs[1].outcome)
  end)
end)
