-- `vkit mcp` end to end, driven by the official MCP TypeScript SDK client
-- (@modelcontextprotocol/sdk, pinned in tests/mcp/package-lock.json and
-- installed by `make mcp-client`): initialize, tools/list with schemas
-- compiled by Ajv, a real certification on a Git repository built here,
-- waits, a VAC fixture, malformed input of every kind in the same session,
-- and the server still serving afterwards.  tests/mcp/client.mjs reports
-- what happened; the assertions are here.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local project = dofile(vkit.root .. "/examples/external/project.lua")
local stores = require "tests.support.stores"

local TOOLS = { "change_certify", "run_get", "run_wait", "run_list", "run_report", "verify", "vac_verify" }

local installed = false
local function install_client()
  if installed then return end
  local ok = os.execute("make -s -C " .. t.quote(vkit.root) .. " mcp-client >&2")
  assert(ok, "make mcp-client failed: the pinned MCP SDK client could not be installed (npm ci in tests/mcp)")
  installed = true
end

--- Runs the Node harness with `config`; returns its decoded report.
local function drive(config)
  install_client()
  local dir, cleanup = t.tempdir()
  config.vkit = vkit.exe
  t.write(dir .. "/config.json", json.encode(config))
  local cmd = (t.env_prefix() .. "node %s %s > %s 2> %s"):format(t.quote(vkit.root .. "/tests/mcp/client.mjs"),
    t.quote(dir .. "/config.json"), t.quote(dir .. "/out"), t.quote(dir .. "/err"))
  local _, _, code = os.execute(cmd)
  local out, err = t.slurp(dir .. "/out"), t.slurp(dir .. "/err")
  cleanup()
  assert.equal(0, code, "the MCP client harness failed:\n" .. err .. out)
  local report = json.decode(out)
  assert.is_table(report, out)
  return report
end

local function set_of(list)
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function keys(tbl)
  local out = {}
  for k in pairs(tbl) do out[#out + 1] = k end
  table.sort(out)
  return out
end

local function cli_json(argv)
  local r = t.vkit(argv)
  local doc = json.decode(r.stdout)
  assert.is_table(doc, r.stderr .. r.stdout)
  return doc, r.code
end

local function assert_rpc_error(reply, code, id)
  assert.is_table(reply)
  assert.equal("2.0", reply.jsonrpc)
  assert.is_nil(reply.result)
  assert.equal(code, reply.error.code, json.encode(reply))
  assert.is_string(reply.error.message)
  assert.equal(id == nil and json.null or id, reply.id)
end

for _, backend in ipairs(stores.backends()) do
describe("vkit mcp with the official MCP SDK client (" .. backend.name .. " store)", function()
  local p, dir, cleanup
  setup(backend.setup)
  teardown(backend.teardown)
  after_each(function()
    for _, d in pairs { p and p.dir or false, dir or false } do
      if d then backend.kill_workers(d) end
    end
    if p then p.cleanup() end
    if cleanup then cleanup() end
    p, dir, cleanup = nil, nil, nil
  end)

  it("initializes, lists valid schemas, certifies, waits, fetches, verifies VAC and survives malformed input", function()
    p = intents.project { artifacts = intents.artifacts_for("python", "src/score.py", { max_inputs = 4 }) }
    local candidate = p.commit({ ["src/score.py"] = "def score(x):\n    return 100 if x >= 50 else x + x\n" }, p.target)
    local request = assert(json.decode(p.request(candidate)))
    local refused = vkit.root .. "/fixtures/vac/tampered/sha256-mismatch"
    local report = drive {
      project = p.dir .. "/project", scenario = "certify",
      certify = { request = request, trusted_target = p.target },
      vac = { valid = vkit.root .. "/fixtures/vac/valid/v01", refused = refused },
    }
    local s = report.steps

    -- Nothing but JSON-RPC messages on stdout, and the server exited cleanly when stdin closed.
    assert.same({}, report.not_jsonrpc)
    assert.same({ code = 0, signal = json.null }, report.exit)
    assert.matches("vkit mcp: serving", report.stderr)

    -- Version negotiation: the SDK asks for its latest revision and gets it.
    assert.equal(report.sdk.latest, report.initialize.result.protocolVersion)
    local ours = set_of(require("vkit.mcp.versions").list())
    for _, v in ipairs(report.sdk.supported) do assert.is_true(ours[v], "the SDK speaks " .. v) end
    assert.equal("vkit", report.server.version.name)
    assert.equal("object", json.kind(report.server.capabilities.tools))
    assert.equal("{}", json.encode(report.initialize.result.capabilities.tools))
    assert.is_true(s.ping.ok)

    -- tools/list: the five tools, each schema compiled by Ajv (2020-12, strict) and by the SDK's validator.
    assert.is_true(s.tools.ok, json.encode(s.tools))
    local names = {}
    for _, tool in ipairs(s.tools.value) do
      names[#names + 1] = tool.name
      assert.same({ inputSchema = "ok", outputSchema = "ok" }, tool.checks)
      assert.equal("object", tool.inputSchema.type)
      assert.is_false(tool.inputSchema.additionalProperties)
      assert.equal("object", tool.outputSchema.type)
      assert.is_string(tool.title)
    end
    table.sort(names)
    assert.same({ "change_certify", "run_get", "run_list", "run_report", "run_wait", "vac_verify", "verify" }, names)

    -- change_certify queues and answers at once; run_wait follows it to the end.
    assert.is_true(s.certify.ok, json.encode(s.certify))
    local queued = s.certify.value
    assert.is_false(queued.isError, json.encode(queued))
    assert.matches("^r%-%d+T%d+Z%-%x+$", queued.structured.run_id)
    assert.equal("change-certify", queued.structured.kind)
    assert.is_false(queued.structured.source_proof)
    assert.is_false(queued.structured.approval_authority)
    assert.is_true(queued.structured.status == "queued" or queued.structured.status == "running")
    assert.same(queued.structured, json.decode(queued.text[1]))   -- the serialized JSON text block

    assert.is_true(s.wait.ok, json.encode(s.wait))
    local final = s.wait.value.structured
    assert.is_table(final, json.encode(s.wait))
    assert.equal("done", final.status)
    assert.equal("all_inputs_conform", final.outcome)
    assert.equal("checked 100 of 100 accepted inputs (exhaustive)", final.coverage.statement)
    assert.is_false(s.wait.value.isError)
    assert.equal("ISSUE-42", final.requirement.source)
    assert.equal(p.digest, final.intent_digest)
    assert.equal(p.target, final.target)
    assert.equal(candidate, final.candidate)
    assert.equal("finite_paired", final.methods[1].method)
    assert.equal("observed_conformance", final.methods[1].result)
    assert.equal("checked 4 of 100 accepted inputs (finite_paired)", final.methods[1].coverage.statement)
    assert.equal("exhaustive", final.methods[2].method)
    assert.equal("all_inputs_conform", final.methods[2].result)
    assert.matches("^%x+$", final.methods[1].report_sha256)
    assert.equal(64, #final.methods[1].report_sha256)
    assert.is_nil(final.plan)
    assert.is_nil(final.summary)   -- no method plan, no input vectors: only the compact shadow summary

    -- The CLI's --json prints the same fields for the same request.
    t.write(p.dir .. "/request.json", p.request(candidate))
    local cli = cli_json { "change", "certify", "--project", p.dir .. "/project", "--request", p.dir .. "/request.json",
                           "--trusted-target", p.target, "--wait", "60", "--json" }
    assert.same(keys(cli), keys(final))
    for _, k in ipairs { "kind", "status", "outcome", "requirement", "intent_digest", "target", "candidate",
                         "source_proof", "approval_authority", "blocked" } do
      assert.same(cli[k], final[k], k)
    end
    assert.equal(cli.methods[1].method, final.methods[1].method)
    assert.equal(cli.methods[1].result, final.methods[1].result)

    -- run_get and an immediate run_wait read the same durable run.
    assert.same(final, s.get.value.structured)
    assert.is_false(s.get.value.isError)
    assert.same(final, s.wait_zero.value.structured)

    -- run_list lists the run as run_get reports it; run_report renders its report.
    assert.is_false(s.list.value.isError, json.encode(s.list))
    assert.equal(1, s.list.value.structured.total)
    assert.same(final, s.list.value.structured.runs[1])
    local md = s.report_md.value.structured
    assert.equal("md", md.format)
    assert.matches("# vkit change certification `" .. final.run_id, md.report, 1, true)
    assert.matches('<testsuites name="vkit"', s.report_junit.value.structured.report, 1, true)
    local model = json.decode(s.report_json.value.structured.report)
    assert.equal(final.run_id, model.run_id)
    assert.equal(s.report_json.value.structured.passing, model.passing)

    -- An argument that is not a full commit id, or a request that is not a
    -- change request, is a tool error naming it, and nothing is queued.
    assert.is_true(s.target_not_commit.value.isError)
    assert.matches("arguments.trusted_target_oid: must match", s.target_not_commit.value.text[1], 1, true)
    assert.is_true(s.request_invalid.value.isError)
    assert.matches("request: ", s.request_invalid.value.text[1], 1, true)
    assert.equal(1, s.list_after_refusals.value.structured.total, "the refused calls queued nothing")

    -- A blocked run is a tool result with isError and the summary, never a protocol error.
    local blocked = s.blocked.value
    assert.is_true(blocked.isError, json.encode(blocked))
    assert.equal("blocked", blocked.structured.outcome)
    assert.equal("unsupported_binding", blocked.structured.blocked.reason)
    assert.matches("blocked at method", blocked.text[1])
    assert.same({}, blocked.structured.methods)

    -- A run named by a unique prefix of its id or of its hex tail, or latest
    -- (the blocked run, queued last); an ambiguous or unknown name is a tool
    -- error with the sentence and its code, and no structured content.
    assert.same(final, s.get_tail_prefix.value.structured)
    assert.same(final, s.wait_prefix.value.structured)
    assert.equal(final.run_id, s.report_tail_prefix.value.structured.run_id)
    assert.equal(blocked.structured.run_id, s.get_latest.value.structured.run_id)
    local ambiguous = s.get_ambiguous.value
    assert.is_true(ambiguous.isError)
    assert.equal(json.null, ambiguous.structured)
    assert.matches("r- is ambiguous: 2 runs start so (" .. blocked.structured.run_id .. ", " .. final.run_id
      .. "); type more of the id (ambiguous-run)", ambiguous.text[1], 1, true)
    assert.is_true(s.wait_unknown_name.value.isError)
    assert.matches("no run zz in .* %(unknown%-run%)$", s.wait_unknown_name.value.text[1])

    -- vac_verify returns exactly what `vkit vac verify --json` prints.
    local vac_cli = cli_json { "vac", "verify", vkit.root .. "/fixtures/vac/valid/v01", "--json" }
    assert.is_false(s.vac_valid.value.isError)
    assert.same(vac_cli, s.vac_valid.value.structured)
    assert.equal("pass", s.vac_valid.value.structured.verdict)
    local vac_refused = cli_json { "vac", "verify", refused, "--json" }
    assert.is_true(s.vac_refused.value.isError)
    assert.same(vac_refused, s.vac_refused.value.structured)
    assert.equal("fail", s.vac_refused.value.structured.verdict)
    assert.matches("sha256%-mismatch", s.vac_refused.value.text[1])
    assert.is_true(s.vac_missing.value.isError)
    assert.equal(json.null, s.vac_missing.value.structured)
    assert.matches("not a bundle", s.vac_missing.value.text[1])

    -- verify on a project it cannot resolve (this repository has no HEAD): a tool error naming why.
    assert.is_true(s.verify_no_manifest.value.isError)
    assert.matches("no HEAD commit", s.verify_no_manifest.value.text[1])

    -- Unknown tool: a protocol error (-32602); bad arguments: tool errors a model can act on.
    assert.is_false(s.unknown_tool.ok)
    assert.equal(-32602, s.unknown_tool.error.code)
    assert.matches("Unknown tool: no_such_tool", s.unknown_tool.error.message)
    local expect = {
      missing_arguments = 'missing required property "request"',
      no_arguments = 'missing required property "run_id"',
      wrong_types = "arguments.run_id: expected string, got an integer",
      wait_out_of_range = "arguments.wait: 61 is above the maximum 60",
      unknown_property = 'unknown property "verbose"',
      bad_method = "arguments.method: must be one of",
      unknown_run = "no run r%-20000101T000000Z%-000000000000",
    }
    for name, text in pairs(expect) do
      assert.is_true(s[name].ok, name .. ": " .. json.encode(s[name]))
      assert.is_true(s[name].value.isError, name)
      assert.matches(text, s[name].value.text[1], 1, false, name)
    end

    -- Raw malformed input in the same session: each answered as JSON-RPC 2.0 requires.
    local raw = s.raw.value
    assert.is_table(raw, json.encode(s.raw))
    assert_rpc_error(raw.bad_json, -32700)
    assert_rpc_error(raw.not_utf8, -32700)
    assert_rpc_error(raw.huge, -32600)
    assert.matches("exceeds the limit of 4194304 bytes", raw.huge.error.message)
    assert.same({ jsonrpc = "2.0", id = "raw-after-huge", result = {} }, raw.after_huge)
    assert_rpc_error(raw.not_object, -32600)
    assert_rpc_error(raw.no_jsonrpc, -32600, "raw-3")
    assert_rpc_error(raw.wrong_jsonrpc, -32600, "raw-4")
    assert_rpc_error(raw.null_id, -32600)
    assert_rpc_error(raw.float_id, -32600)
    assert_rpc_error(raw.object_id, -32600)
    assert_rpc_error(raw.method_not_string, -32600, "raw-5")
    assert_rpc_error(raw.unknown_method, -32601, "raw-6")
    assert_rpc_error(raw.params_array, -32602, "raw-7")
    assert_rpc_error(raw.call_without_name, -32602, "raw-8")
    assert_rpc_error(raw.arguments_array, -32602, "raw-9")
    assert_rpc_error(raw.bad_cursor, -32602, "raw-10")
    assert_rpc_error(raw.reinitialize, -32600, "raw-11")
    assert_rpc_error(raw.batch, -32600)
    -- the notification got no answer: the next line is the ping after it
    assert.equal("raw-after-notification", raw.notification_then_ping.id)
    assert.equal(0, raw.pending_after)

    -- And the SDK session still works.
    assert.is_true(s.ping_after.ok)
    assert.same(final, s.get_after.value.structured)
  end)

  it("runs a component's external verification (z3 producer, cvc5 checker) through verify and run_wait", function()
    dir, cleanup = t.tempdir()
    local ext = project.build(dir)
    local report = drive { project = ext.path, scenario = "verify", verify = { component = project.COMPONENT } }
    local s = report.steps
    assert.same({}, report.not_jsonrpc)
    assert.same({ code = 0, signal = json.null }, report.exit)
    assert.is_true(s.verify.ok, json.encode(s.verify))
    local v = s.verify.value
    local run = v.structured.runs[1]
    assert.equal(1, #v.structured.runs)
    assert.equal("external-check", run.kind)
    assert.is_string(v.structured.establishes)
    -- within the 45 s bound the check normally finishes; run_wait settles it either way
    local final = s.wait.value.structured
    assert.equal(run.run_id, final.run_id)
    assert.equal("done", final.status, json.encode(s.wait))
    assert.equal("PASS", final.outcome)
    assert.equal("accepted", final.summary.checker_verdict)
    assert.is_false(s.wait.value.isError)
    assert.is_true(s.unknown_component.value.isError)
    assert.matches("nope", s.unknown_component.value.text[1])
  end)
end)
end
