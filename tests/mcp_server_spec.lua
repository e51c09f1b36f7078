-- The MCP session: lifecycle, negotiation, dispatch and tool results, in
-- process (vkit.mcp.server), plus `vkit mcp` as a real process on piped
-- stdin.  Jobs run in the real job store with its real detached worker.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local server = require "vkit.mcp.server"
local project_mod = require "vkit.mcp.project"
local tools = require "vkit.mcp.tools"
local arguments = require "vkit.mcp.arguments"
local versions = require "vkit.mcp.versions"
local stores = require "tests.support.stores"

local mcp = require "tests.support.mcp"
local initialize, request, session, ready, call = mcp.initialize, mcp.request, mcp.session, mcp.ready, mcp.call

for _, backend in ipairs(stores.backends()) do
describe("mcp session (" .. backend.name .. " store)", function()
  local dir, cleanup
  setup(function()
    backend.setup()
    project_mod.store_url = backend.url()
  end)
  teardown(function()
    project_mod.store_url = nil
    backend.teardown()
  end)
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function()
    backend.kill_workers(dir)
    cleanup()
  end)

  it("accepts only initialize and ping before initialization, and ignores other notifications", function()
    local s, sent = session(dir)
    s:receive(request(1, "tools/list"))
    assert.equal(-32600, sent[1].error.code)
    assert.matches("not initialized", sent[1].error.message)
    s:receive(request(2, "ping"))
    assert.same({ jsonrpc = "2.0", id = 2, result = {} }, sent[2])
    s:receive '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
    assert.equal(2, #sent)
    s:receive(request(3, "initialize", { protocolVersion = versions.LATEST }))   -- no capabilities, no clientInfo
    assert.equal(-32602, sent[3].error.code)
    s:receive(initialize(4))
    assert.equal(versions.LATEST, sent[4].result.protocolVersion)
    assert.equal('{"tools":{}}', json.encode(sent[4].result.capabilities))
    assert.equal("vkit", sent[4].result.serverInfo.name)
    s:receive(request(5, "tools/list"))          -- served before notifications/initialized too
    assert.equal(#tools.NAMES, #sent[5].result.tools)
    s:receive(initialize(6))
    assert.equal(-32600, sent[6].error.code)
    assert.matches("already initialized", sent[6].error.message)
  end)

  it("negotiates every supported revision and answers an unknown one with the latest", function()
    for _, v in ipairs(versions.list()) do
      local s, sent = session(dir)
      s:receive(initialize(1, v))
      assert.equal(v, sent[1].result.protocolVersion)
    end
    local s, sent = session(dir)
    s:receive(initialize(1, "2023-01-01"))
    assert.equal(versions.LATEST, sent[1].result.protocolVersion)
  end)

  it("offers titles, output schemas and structuredContent only from 2025-06-18, annotations from 2025-03-26", function()
    local function listed(version)
      local s, sent = ready(dir, version)
      s:receive(request(9, "tools/list"))
      return sent[1].result.tools, s, sent
    end
    for _, tool in ipairs((listed "2025-11-25")) do
      assert.is_table(tool.outputSchema)
      assert.is_string(tool.title)
      assert.is_table(tool.annotations)
    end
    for _, tool in ipairs((listed "2025-03-26")) do
      assert.is_nil(tool.outputSchema)
      assert.is_nil(tool.title)
      assert.is_table(tool.annotations)
    end
    local list, s, sent = listed "2024-11-05"
    for _, tool in ipairs(list) do
      assert.is_nil(tool.annotations)
      assert.is_table(tool.inputSchema)
    end
    local result = call(s, sent, 10, "vac_verify", { bundle = vkit.root .. "/fixtures/vac/valid/v01" })
    assert.is_nil(result.structuredContent)
    assert.equal("pass", json.decode(result.content[1].text).verdict)
  end)

  it("answers JSON-RPC batches only under the revisions that had them", function()
    local s, sent = ready(dir, "2025-03-26")
    s:receive('[' .. request("a", "ping") .. ',{"jsonrpc":"2.0","method":"notifications/x"},' .. request("b", "nope") .. ']')
    assert.equal(1, #sent)
    assert.equal(2, #sent[1])
    assert.same({ jsonrpc = "2.0", id = "a", result = {} }, sent[1][1])
    assert.equal(-32601, sent[1][2].error.code)
    s:receive "[]"
    assert.equal(-32600, sent[2].error.code)
    s:receive('[{"jsonrpc":"2.0","method":"notifications/x"}]')
    assert.equal(2, #sent)                                   -- only notifications: nothing is sent
    local s2, sent2 = ready(dir, "2025-06-18")
    s2:receive('[' .. request("a", "ping") .. ']')
    assert.equal(-32600, sent2[1].error.code)
    assert.equal(json.null, sent2[1].id)
  end)

  it("maps protocol errors to their codes and never answers a notification", function()
    local s, sent = ready(dir)
    s:receive "{oops"
    s:receive '{"jsonrpc":"2.0","id":1,"method":"ping","id":2}'
    s:receive(request(3, "prompts/list"))
    s:receive(request(4, "tools/call", { name = "nope" }))
    s:receive(request(5, "tools/call", { arguments = json.object() }))
    s:receive(request(6, "tools/list", { cursor = "c" }))
    s:receive '{"jsonrpc":"2.0","method":"tools/list"}'
    s:receive "   "
    s:oversized(5 << 20)
    local codes = {}
    for i, m in ipairs(sent) do codes[i] = m.error.code end
    assert.same({ -32700, -32700, -32601, -32602, -32602, -32602, -32600 }, codes)
    assert.equal("duplicate-key", sent[2].error.data.code)
    assert.equal(json.null, sent[1].id)
    assert.equal(json.null, sent[7].id)
    assert.equal("Unknown tool: nope", sent[4].error.message)
  end)

  it("reports a tool that raises as a tool error and keeps serving", function()
    local s, sent = ready(dir)
    local tool = tools.find "vac_verify"
    local run = tool.run
    tool.run = function() error("boom\nsecond line", 0) end
    local result = call(s, sent, 1, "vac_verify", { bundle = "x" })
    tool.run = run
    assert.is_true(result.isError)
    assert.equal("internal error in tool vac_verify: boom", result.content[1].text)
    s:receive(request(2, "ping"))
    assert.same({}, sent[#sent].result)
  end)

  it("waits within its bound, reports progress when asked, and reads failed and cancelled runs as errors", function()
    local s, sent = ready(dir)
    local store = backend.open(dir)
    local slow = store:submit("probe", { ms = 4000 })
    store:ensure_worker()
    local started = vkit.sys.monotonic_ms()
    local result, progress = call(s, sent, 1, "run_wait", { run_id = slow, wait = 1 })
    local took = vkit.sys.monotonic_ms() - started
    -- It waited its bound, and returned before the 4 s probe could end: the
    -- status, not a wall-clock ceiling, proves it (a loaded host is slow).
    assert.is_true(took >= 1000, "waited " .. took .. " ms for a 1 s bound")
    assert.is_false(result.isError)
    assert.is_true(result.structuredContent.status == "queued" or result.structuredContent.status == "running")
    assert.same({}, progress)                                -- no progressToken, no progress
    result, progress = call(s, sent, 2, "run_wait", { run_id = slow, wait = 20 }, { progressToken = "tok" })
    assert.equal("done", result.structuredContent.status)
    assert.equal("ok", result.structuredContent.outcome)
    assert.is_true(#progress >= 1)
    local last = -1
    for _, n in ipairs(progress) do
      assert.equal("notifications/progress", n.method)
      assert.is_nil(n.id)
      assert.equal("tok", n.params.progressToken)
      assert.equal(20.0, n.params.total)
      assert.is_true(n.params.progress > last)
      last = n.params.progress
      assert.matches("^run " .. slow:gsub("%-", "%%-") .. " is ", n.params.message)
    end
    -- the same result validates against the published output schema
    assert.is_true(arguments.check(tools.find("run_wait").output, result.structuredContent))

    local failing = store:submit("probe", { ms = 0, fail = "on purpose" })
    store:ensure_worker()
    result = call(s, sent, 3, "run_wait", { run_id = failing, wait = 20 })
    assert.is_true(result.isError)
    assert.matches("failed %(infrastructure%)", result.content[1].text)
    assert.equal("failed", result.structuredContent.status)

    local cancelled = store:submit("probe", { ms = 60000 })
    store:cancel(cancelled)
    -- A worker still scanning may have claimed it first: then the worker
    -- holding it stops it; either way it ends cancelled.
    assert.equal("cancelled", store:wait(cancelled, 60).state.status)
    result = call(s, sent, 4, "run_get", { run_id = cancelled })
    assert.is_true(result.isError)
    assert.matches("was cancelled", result.content[1].text)
  end)

  it("takes a run as `vkit run` does: whole id, unique prefix of it or of its tail, latest; refuses the rest", function()
    backend.fresh()                       -- runs no earlier case queued: `latest` and the prefixes are ours
    project_mod.store_url = backend.url()
    local common = require "vkit.store.common"
    local real_new_id = common.new_id
    finally(function() common.new_id = real_new_id end)
    local A = "r-20260101T000000Z-3f2a00000001"
    local B = "r-20260101T000001Z-3f2b00000002"
    local C = "r-20260101T000002Z-7c0000000003"
    local store = backend.open(dir)
    for _, id in ipairs { A, B, C } do
      common.new_id = function() return id end
      assert.equal(id, store:submit("probe", { ms = 0 }))
    end
    common.new_id = real_new_id
    local s, sent = ready(dir)
    for i, case in ipairs {
      { "run_get", C, C }, { "run_get", "3f2a", A }, { "run_get", "r-20260101T000001", B },
      { "run_get", "latest", C }, { "run_wait", "7c", C }, { "run_report", "3f2b", B },
    } do
      local args = { run_id = case[2] }
      if case[1] == "run_wait" then args.wait = 0 end
      local result = call(s, sent, i, case[1], args)
      assert.is_false(result.isError, case[1] .. " " .. case[2] .. ": " .. result.content[1].text)
      assert.equal(case[3], result.structuredContent.run_id, case[1] .. " " .. case[2])
      assert.is_true(arguments.check(tools.find(case[1]).output, result.structuredContent))
    end
    for i, case in ipairs {
      { "run_get", "3f", "3f is ambiguous: 2 runs start so (" .. B .. ", " .. A .. "); type more of the id (ambiguous-run)" },
      { "run_wait", "r-2026", "r-2026 is ambiguous: 3 runs start so (" .. C .. ", " .. B .. ", " .. A .. ")" },
      { "run_report", "3f", "(ambiguous-run)" },
      { "run_get", "9e", "no run 9e in " },
      { "run_report", "9e", "(unknown-run)" },
      { "run_wait", "r-20270101", "(unknown-run)" },
    } do
      local result = call(s, sent, 20 + i, case[1], { run_id = case[2] })
      assert.is_true(result.isError, case[1] .. " " .. case[2])
      assert.matches(case[3], result.content[1].text, 1, true)
      assert.is_nil(result.structuredContent)
    end
  end)

  it("reads blocked runs of both kinds as refusals naming why, and findings as results", function()
    local runs = require "vkit.mcp.runs"
    local function run(outcome) return { id = "r-1", state = { status = "done", outcome = outcome } } end
    assert.equal("run r-1 is blocked: the checker rejected the obligations (checker-rejected)",
      runs.refusal(run "BLOCKED", { summary = { reason = "checker-rejected", message = "the checker rejected the obligations" } }))
    assert.equal("run r-1 is blocked at preflight: not an exact commit (not-an-exact-commit)",
      runs.refusal(run "blocked", { blocked = { stage = "preflight", reason = "not-an-exact-commit",
                                                 message = "not an exact commit" } }))
    for _, outcome in ipairs { "PASS", "observed_conformance", "observed_violation", "unknown" } do
      assert.is_nil(runs.refusal(run(outcome), {}), outcome)
    end
    assert.is_nil(runs.refusal({ id = "r-2", state = { status = "running", outcome = json.null } }, {}))
  end)

  it("refuses change_certify input the CLI would refuse, as tool errors", function()
    local s, sent = ready(dir)
    local result = call(s, sent, 1, "change_certify", { request = json.object(), trusted_target_oid = "HEAD",
                                                         kani_toolchain = json.array() })
    assert.is_true(result.isError)
    assert.matches("kani_toolchain: expected object", result.content[1].text)
    for i, oid in ipairs { "", "HEAD", ("a"):rep(39), ("A"):rep(40) } do
      result = call(s, sent, 1 + i, "change_certify", { request = json.object(), trusted_target_oid = oid })
      assert.is_true(result.isError)
      assert.matches("trusted_target_oid: must match", result.content[1].text, 1, true)
    end
    result = call(s, sent, 9, "change_certify", { request = json.object { schema_version = 1 },
                                                  trusted_target_oid = ("a"):rep(40) })
    assert.is_true(result.isError)
    assert.matches("request: ", result.content[1].text, 1, true)
    assert.is_nil(vkit.fs.lstat(dir .. "/.vkit/runs") and vkit.fs.list(dir .. "/.vkit/runs")[1], "nothing was queued")
  end)

  it("publishes the schemas it enforces, with every empty object marked", function()
    for _, name in ipairs(tools.NAMES) do
      local tool = tools.find(name)
      local encoded = json.encode(tool.input)
      assert.equal("object", json.decode(encoded).type)
      assert.is_false(tool.input.additionalProperties)
      -- the output schema only uses keywords the checker enforces, so tests can hold results to it
      assert.has_no_error(function() arguments.check(tool.output, json.object()) end)
    end
  end)

  it("documents every tool's input schema exactly as tools/list publishes it", function()
    local doc = assert(vkit.fs.read(vkit.root .. "/docs/mcp.md", 1 << 20))
    for _, name in ipairs(tools.NAMES) do
      local block = "### `" .. name .. "`"
      local at = assert(doc:find(block, 1, true), "docs/mcp.md has no section " .. block)
      local schema = "```json\n" .. json.encode(tools.find(name).input, { indent = 2 }) .. "\n```"
      local found = doc:find(schema, at, true)
      assert.is_truthy(found, "docs/mcp.md does not show the current input schema of " .. name)
    end
  end)
end)
end

describe("vkit mcp as a process", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  it("answers piped messages one line each on stdout, logs on stderr, and exits 0 at end of input", function()
    local input = table.concat({
      initialize(1, "2025-06-18"),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      "{broken",
      request(2, "tools/call", { name = "vac_verify", arguments = { bundle = vkit.root .. "/fixtures/vac/valid/v02" } }),
      request(3, "tools/call", { name = "run_get", arguments = { run_id = "r-1" } }),
      request(4, "ping"),
    }, "\n")
    local r = t.vkit({ "mcp", "--project", dir }, input .. "\n")
    assert.equal(0, r.code, r.stderr)
    local lines = {}
    for line in r.stdout:gmatch "([^\n]*)\n" do lines[#lines + 1] = assert(json.decode(line), line) end
    assert.equal(5, #lines)
    assert.equal("2025-06-18", lines[1].result.protocolVersion)
    assert.equal(-32700, lines[2].error.code)
    assert.equal("pass", lines[3].result.structuredContent.verdict)
    assert.is_true(lines[4].result.isError)
    assert.same({}, lines[5].result)
    assert.matches("vkit mcp: serving", r.stderr)
    assert.is_nil(vkit.fs.lstat(dir .. "/.vkit/runs/r-1"))
  end)

  it("refuses a project that is not a directory and stray arguments (exit 2)", function()
    assert.equal(2, t.vkit({ "mcp", "--project", dir .. "/missing" }).code)
    assert.equal(2, t.vkit({ "mcp", "extra" }).code)
    assert.equal(2, t.vkit({ "mcp", "--wait", "3" }).code)
    local help = t.vkit { "mcp", "--help" }
    assert.equal(0, help.code)
    assert.matches("usage: vkit mcp", help.stdout)
  end)
end)
