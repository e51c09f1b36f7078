-- The external verifier protocol's rules as pure functions (seed 000).
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local manifest = require "vkit.protocol.manifest"
local placeholders = require "vkit.protocol.placeholders"
local identity = require "vkit.protocol.identity"
local receipt = require "vkit.protocol.receipt"

local H = ("a"):rep(64)

local function command(overrides)
  local c = { executable = { path = "/usr/bin/python3", sha256 = H }, argv = { "{{python}}", "check.py", "{{request}}" },
              dependencies = json.array(), trusted_tool_dependencies = json.array(), deadline_ms = 1000 }
  for k, v in pairs(overrides or {}) do c[k] = v end
  return c
end

local function policy_doc(check_overrides)
  local check = {
    id = "bv", claim = { specification = "spec/bv.smt2", obligations = { "comm", "assoc" }, assumptions = json.array(),
                         model_scope = "32-bit vectors" },
    assurance = "smt-rechecked", evidence = { "proof.txt", "log.txt" }, producer = command(), checker = command(),
  }
  for k, v in pairs(check_overrides or {}) do check[k] = v end
  return json.encode { schema_version = 1, component = "bv", checks = { check } }
end

describe("the accepted manifest", function()
  it("parses a version 2 manifest and a component policy", function()
    local m = assert(manifest.parse_manifest(json.encode { schema_version = 2, components = {
      bv = { claim_version = 2, policy = { path = "v/bv.policy.json", sha256 = H }, package = { path = "v/bv.pkg.json", sha256 = H } } } }))
    assert.truthy(manifest.component(m, "bv"))
    local p = assert(manifest.parse_policy(policy_doc(), "bv"))
    assert.equal("bv", p.by_id.bv.id)
  end)

  it("refuses anything but version 2 package claims", function()
    assert.equal("unsupported-claim-version", select(3, manifest.parse_manifest '{"schema_version":1,"components":{}}'))
    local m = assert(manifest.parse_manifest(json.encode { schema_version = 2, components = {
      old = { claim_version = 1, policy = { path = "a", sha256 = H }, package = { path = "b", sha256 = H } } } }))
    assert.equal("unsupported-claim-version", select(3, manifest.component(m, "old")))
    assert.equal("unknown-component", select(3, manifest.component(m, "nope")))
  end)

  local function refused(code, doc)
    local ok, message, got = manifest.parse_policy(doc, "bv")
    assert.is_nil(ok)
    assert.equal(code, got, message)
  end

  it("names unknown and missing fields", function()
    refused("manifest-invalid", (policy_doc():gsub('"assurance"', '"assurances"')))
    refused("manifest-invalid", (policy_doc { producer = command { shell = true } }))
    refused("manifest-invalid", (policy_doc():gsub('"model_scope":"32%-bit vectors",', "")))
  end)

  it("refuses non-normalised paths", function()
    refused("manifest-invalid", policy_doc { claim = { specification = "spec/../x", obligations = { "a" },
      assumptions = json.array(), model_scope = "" } })
    refused("manifest-invalid", policy_doc { evidence = { "/abs/proof" } })
    refused("manifest-invalid", policy_doc { evidence = { "a//b" } })
    refused("manifest-invalid", policy_doc { producer = command { executable = { path = "python3", sha256 = H } } })
    refused("manifest-invalid", policy_doc { producer = command { executable = { path = "/usr/../bin/x", sha256 = H } } })
    refused("manifest-invalid", policy_doc { checker = command { dependencies = { { path = "../up.py", sha256 = H } } } })
  end)

  it("refuses duplicate artifacts, obligations and checks", function()
    refused("duplicate-artifact", policy_doc { evidence = { "p", "p" } })
    refused("duplicate-obligation", policy_doc { claim = { specification = "s", obligations = { "a", "a" },
      assumptions = json.array(), model_scope = "" } })
    local doc = json.decode(policy_doc())
    doc.checks[2] = doc.checks[1]
    refused("duplicate-check", json.encode(doc))
  end)

  it("refuses unknown placeholders and deadlines out of range", function()
    refused("unknown-placeholder", policy_doc { checker = command { argv = { "{{python}}", "{{shell}}" } } })
    refused("unknown-placeholder", policy_doc { checker = command { argv = { "{{python}", "x" } } })
    refused("manifest-invalid", policy_doc { checker = command { deadline_ms = 0 } })
    refused("manifest-invalid", policy_doc { checker = command { argv = json.array() } })
  end)

  it("always includes the specification in the declared inputs", function()
    local pkg = assert(manifest.parse_package('{"schema_version":1,"component":"bv","inputs":["b.txt","a.txt"]}', "bv"))
    local check = assert(manifest.parse_policy(policy_doc(), "bv")).checks[1]
    assert.same({ "a.txt", "b.txt", "spec/bv.smt2" }, manifest.inputs(pkg, check))
    assert.equal("duplicate-input", select(3, manifest.parse_package('{"schema_version":1,"component":"bv","inputs":["a","a"]}', "bv")))
  end)
end)

describe("placeholders", function()
  it("expand inside one argument element, never splitting", function()
    local argv = placeholders.expand({ "{{python}}", "--in={{snapshot}}/x y", "{{receipt}}{{receipt}}", "*" },
      { python = "/usr/bin/python3", snapshot = "/run/snap shot", receipt = "r" })
    assert.same({ "/usr/bin/python3", "--in=/run/snap shot/x y", "rr", "*" }, argv)
  end)

  it("keep % and other pattern characters in values literal", function()
    assert.same({ "a%1b" }, placeholders.expand({ "{{run_dir}}" }, { run_dir = "a%1b" }))
  end)
end)

describe("identity(check)", function()
  it("re-hashes every pin and refuses a mismatch naming path, expected and actual", function()
    local dir, cleanup = t.tempdir()
    t.write(dir .. "/exe", "#!/bin/true\n")
    t.write(dir .. "/dep.py", "print(1)\n")
    local exe_hash, dep_hash = vkit.hash.file(dir .. "/exe"), vkit.hash.file(dir .. "/dep.py")
    local check = { producer = command { executable = { path = dir .. "/exe", sha256 = exe_hash },
                                         dependencies = { { path = "dep.py", sha256 = dep_hash } } },
                    checker = command { executable = { path = dir .. "/exe", sha256 = exe_hash } } }
    local id = assert(identity.build(check, dir))
    assert.equal(dep_hash, id.producer.dependencies[1].sha256)
    assert.equal(exe_hash, id.checker.executable.sha256)
    t.write(dir .. "/dep.py", "print(2)\n")
    local ok, message, code = identity.build(check, dir)
    cleanup()
    assert.is_nil(ok)
    assert.equal("pin-mismatch", code)
    assert.matches("dep%.py", message)
    assert.matches(dep_hash, message)
  end)
end)

describe("receipt validation", function()
  local ident = { producer = { executable = { path = "/p", sha256 = H } }, checker = { executable = { path = "/c", sha256 = H } } }
  local expected = { job_id = "job", run_id = "run", check_id = "bv", check_digest = ("c"):rep(64),
                     specification_digest = ("d"):rep(64), identity = ident, evidence_digest = ("e"):rep(64),
                     obligations = { "comm", "assoc" }, evidence = { "proof.txt", "log.txt" } }
  local exited = { status = "exited", code = 0 }

  local function good()
    return { schema_version = 1, job_id = "job", run_id = "run", check_id = "bv", check_digest = ("c"):rep(64),
             specification_digest = ("d"):rep(64), identity = ident, evidence_digest = ("e"):rep(64), verdict = "accepted",
             obligations = { { name = "comm", result = "accepted", evidence = { "proof.txt" } },
                             { name = "assoc", result = "accepted", evidence = { "proof.txt", "log.txt" } } } }
  end

  local function judge(r, checker)
    return receipt.judge(checker or exited, r and (type(r) == "string" and r or json.encode(r)), expected)
  end

  it("is PASS only for a valid accepting receipt", function()
    local v = judge(good())
    assert.equal("PASS", v.outcome)
    assert.equal("accepted", v.checker_verdict)
  end)

  it("is BLOCKED, inconclusive, for rejected and unknown verdicts", function()
    local r = good()
    r.verdict, r.obligations[2].result = "rejected", "rejected"
    local v = judge(r)
    assert.equal("BLOCKED", v.outcome)
    assert.equal("checker-rejected", v.reason)
    assert.matches("not a counterexample", v.message)
    r.verdict, r.obligations[2].result = "unknown", "unknown"
    assert.equal("checker-unknown", judge(r).reason)
  end)

  local function reason_for(mutate, checker)
    local r = good()
    mutate(r)
    local v = judge(r, checker)
    assert.equal("BLOCKED", v.outcome)
    return v.reason
  end

  it("needs exit status zero, and exit zero alone never suffices", function()
    assert.equal("checker-exit-nonzero", reason_for(function() end, { status = "exited", code = 1 }))
    assert.equal("checker-timeout", reason_for(function() end, { status = "timeout" }))
    assert.equal("receipt-missing", judge(nil).reason)
    assert.equal("receipt-invalid-json", judge("{").reason)
    assert.equal("receipt-invalid-json", judge('{"verdict":"accepted","verdict":"accepted"}').reason)
  end)

  it("requires exactly the listed fields", function()
    assert.equal("receipt-unknown-field", reason_for(function(r) r.extra = true end))
    assert.equal("receipt-field-missing", reason_for(function(r) r.identity = nil end))
    assert.equal("receipt-schema-version", reason_for(function(r) r.schema_version = 2 end))
    assert.equal("receipt-schema-version", reason_for(function(r) r.schema_version = 1.0 end))
    assert.equal("receipt-unknown-field", reason_for(function(r) r.obligations[1].note = "x" end))
  end)

  it("binds job, run, check, digests and the complete identity", function()
    assert.equal("receipt-job-mismatch", reason_for(function(r) r.job_id = "other" end))
    assert.equal("receipt-run-mismatch", reason_for(function(r) r.run_id = "other" end))
    assert.equal("receipt-check-mismatch", reason_for(function(r) r.check_id = "other" end))
    assert.equal("receipt-check-digest-mismatch", reason_for(function(r) r.check_digest = H end))
    assert.equal("receipt-specification-digest-mismatch", reason_for(function(r) r.specification_digest = H end))
    assert.equal("receipt-evidence-digest-mismatch", reason_for(function(r) r.evidence_digest = H end))
    assert.equal("receipt-identity-mismatch", reason_for(function(r) r.identity = "abbreviated" end))
    assert.equal("receipt-identity-mismatch", reason_for(function(r)
      r.identity = { producer = ident.producer, checker = { executable = { path = "/c", sha256 = ("f"):rep(64) } } }
    end))
  end)

  it("requires every accepted obligation once, in manifest order, with listed evidence", function()
    assert.equal("receipt-obligations-mismatch", reason_for(function(r) r.obligations[1], r.obligations[2] = r.obligations[2], r.obligations[1] end))
    assert.equal("receipt-obligations-mismatch", reason_for(function(r) r.obligations[2] = nil end))
    assert.equal("receipt-obligations-mismatch", reason_for(function(r) r.obligations[3] = r.obligations[2] end))
    assert.equal("receipt-obligations-mismatch", reason_for(function(r) r.obligations[2].name = "other" end))
    assert.equal("receipt-obligation-evidence", reason_for(function(r) r.obligations[1].evidence = json.array() end))
    assert.equal("receipt-obligation-evidence", reason_for(function(r) r.obligations[1].evidence = { "unlisted.txt" } end))
  end)

  it("requires the top-level verdict to agree with every obligation", function()
    assert.equal("receipt-verdict-inconsistent", reason_for(function(r) r.obligations[2].result = "rejected" end))
    assert.equal("receipt-verdict-inconsistent", reason_for(function(r) r.verdict = "rejected" end))
    assert.equal("receipt-invalid", reason_for(function(r) r.verdict = "ACCEPTED" end))
  end)
end)
