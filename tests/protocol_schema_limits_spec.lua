-- The sizes of a manifest, a component policy and a package live in
-- policies/protocol.lua (schema); each is accepted at its limit and
-- refused one past it, named manifest-invalid.
local vkit = require "vkit"
local json = vkit.json
local manifest = require "vkit.protocol.manifest"
local sizes = vkit.policies.protocol.schema

local H = ("a"):rep(64)

local function command()
  return { executable = { path = "/usr/bin/python3", sha256 = H }, argv = { "check.py" },
           dependencies = json.array(), trusted_tool_dependencies = json.array(), deadline_ms = 1000 }
end

local function check(id)
  return { id = id, claim = { specification = "spec.smt2", obligations = { "comm" }, assumptions = json.array(),
                              model_scope = "scope" },
           assurance = "a", evidence = { "proof.txt" }, producer = command(), checker = command() }
end

local function list(n, make)
  local out = json.array()
  for i = 1, n do out[i] = make(i) end
  return out
end

local function path(i) return ("f%d.txt"):format(i) end

-- name, the limit, and how a policy with n of it looks
local POLICY_LIMITS = {
  { "max_checks", function(n) return { checks = list(n, function(i) return check("c" .. i) end) } end },
  { "max_name_bytes", function(n) return { checks = { check(("c"):rep(n)) } } end },
  { "max_argv", function(n) local c = check "c"; c.producer.argv = list(n, function() return "x" end)
      return { checks = { c } } end },
  { "max_arg_bytes", function(n) local c = check "c"; c.producer.argv = { ("x"):rep(n) }; return { checks = { c } } end },
  { "max_dependencies", function(n) local c = check "c"
      c.producer.dependencies = list(n, function(i) return { path = path(i), sha256 = H } end)
      return { checks = { c } } end },
  { "max_obligations", function(n) local c = check "c"
      c.claim.obligations = list(n, function(i) return "o" .. i end); return { checks = { c } } end },
  { "max_obligation_bytes", function(n) local c = check "c"; c.claim.obligations = { ("o"):rep(n) }
      return { checks = { c } } end },
  { "max_assumptions", function(n) local c = check "c"
      c.claim.assumptions = list(n, function() return "a" end); return { checks = { c } } end },
  { "max_text_bytes", function(n) local c = check "c"; c.claim.model_scope = ("s"):rep(n); return { checks = { c } } end },
  { "max_assurance_bytes", function(n) local c = check "c"; c.assurance = ("a"):rep(n); return { checks = { c } } end },
  { "max_evidence", function(n) local c = check "c"; c.evidence = list(n, path); return { checks = { c } } end },
}

local function policy(doc)
  doc.schema_version, doc.component = 1, "bv"
  return manifest.parse_policy(json.encode(doc), "bv")
end

describe("the protocol's schema sizes", function()
  for _, l in ipairs(POLICY_LIMITS) do
    it(("hold a component policy at %s and refuse one past it"):format(l[1]), function()
      local n = sizes[l[1]]
      assert.is_number(n)
      assert.is_table((policy(l[2](n))))
      local doc, message, code = policy(l[2](n + 1))
      assert.is_nil(doc)
      assert.equal("manifest-invalid", code, message)
    end)
  end

  it("hold a manifest at max_components and refuse one past it", function()
    local function doc(n)
      local components = json.object()
      for i = 1, n do components["c" .. i] = { claim_version = 2, policy = { path = "p.json", sha256 = H },
                                                  package = { path = "k.json", sha256 = H } } end
      return json.encode { schema_version = 2, components = components }
    end
    assert.is_table((manifest.parse_manifest(doc(sizes.max_components))))
    assert.equal("manifest-invalid", select(3, manifest.parse_manifest(doc(sizes.max_components + 1))))
  end)

  it("hold a package at max_inputs and refuse one past it", function()
    local function doc(n) return json.encode { schema_version = 1, component = "bv", inputs = list(n, path) } end
    assert.is_table((manifest.parse_package(doc(sizes.max_inputs), "bv")))
    assert.equal("manifest-invalid", select(3, manifest.parse_package(doc(sizes.max_inputs + 1), "bv")))
  end)
end)
