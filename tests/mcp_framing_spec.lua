-- The MCP stdio framing and JSON-RPC message rules, as pure Lua.
local vkit = require "vkit"
local json = vkit.json
local framing = require "vkit.mcp.framing"
local jsonrpc = require "vkit.mcp.jsonrpc"
local versions = require "vkit.mcp.versions"
local arguments = require "vkit.mcp.arguments"

local function file_with(bytes)
  local f = assert(io.tmpfile())
  f:write(bytes)
  f:seek("set", 0)
  return f
end

local function lines_of(bytes, max)
  local read = framing.reader(file_with(bytes), max or 64)
  local out = {}
  while true do
    local line, err, size = read()
    if line then out[#out + 1] = line
    elseif err then out[#out + 1] = { err, size }
    else return out end
  end
end

describe("mcp framing", function()
  it("splits newline-delimited messages, drops a CR before the newline and keeps a final unterminated line", function()
    assert.same({ "{}", "[1]", "", "x" }, lines_of "{}\n[1]\r\n\nx")
    assert.same({ "a" }, lines_of "a\n")
    assert.same({}, lines_of "")
  end)

  it("refuses a line over the cap without keeping it, and reads on after it", function()
    local big = ("y"):rep(100)
    assert.same({ "ok", { "too-large", 100 }, "next" }, lines_of("ok\n" .. big .. "\nnext\n", 64))
    assert.same({ ("z"):rep(64) }, lines_of(("z"):rep(64) .. "\n", 64))          -- exactly the cap is fine
    assert.same({ { "too-large", 65 } }, lines_of(("z"):rep(65), 64))             -- unterminated, too large
    -- lines longer than the reader's internal chunk survive intact
    local long = ("0123456789"):rep(1000)
    assert.same({ long, "tail" }, lines_of(long .. "\ntail\n", 1 << 20))
  end)

  it("encodes a message as one line whatever its strings contain", function()
    local line = framing.encode(json.object { text = "a\nb\r\nc\0d\u{2028}" })
    assert.is_nil(line:find "[\r\n]")
    assert.equal("a\nb\r\nc\0d\u{2028}", json.decode(line).text)
    local out = file_with ""
    framing.writer(out)(json.object { a = 1 })
    out:seek("set", 0)
    assert.equal('{"a":1}\n', out:read "a")
  end)
end)

describe("mcp JSON-RPC classification", function()
  local function classify(text)
    return jsonrpc.classify(assert(json.decode(text)))
  end

  it("tells requests, notifications and responses apart", function()
    assert.equal("request", classify '{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert.equal("request", classify '{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}')
    assert.equal("notification", classify '{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert.equal("response", classify '{"jsonrpc":"2.0","id":1,"result":{}}')
    assert.equal("response", classify '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}')
  end)

  it("refuses invalid requests with -32600, echoing the id only when it is a valid id", function()
    local cases = {
      { "[1]", json.null }, { '"text"', json.null }, { "7", json.null },
      { '{"id":1,"method":"ping"}', 1 },
      { '{"jsonrpc":"2.0","id":null,"method":"ping"}', json.null },
      { '{"jsonrpc":"2.0","id":2.5,"method":"ping"}', json.null },
      { '{"jsonrpc":"2.0","id":true,"method":"ping"}', json.null },
      { '{"jsonrpc":"2.0","id":[1],"method":"ping"}', json.null },
      { '{"jsonrpc":"2.0","id":"x","method":7}', "x" },
      { '{"jsonrpc":"2.0","id":"x"}', "x" },
      { '{"jsonrpc":"2.0","id":"x","result":{},"error":{}}', "x" },
    }
    for _, case in ipairs(cases) do
      local kind, reply = classify(case[1])
      assert.is_nil(kind, case[1])
      assert.equal(jsonrpc.INVALID_REQUEST, reply.error.code, case[1])
      assert.equal(case[2], reply.id, case[1])
      assert.equal("2.0", reply.jsonrpc)
    end
  end)

  it("refuses non-object params of a request with -32602 and ignores them on a notification", function()
    local kind, reply = classify '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}'
    assert.is_nil(kind)
    assert.equal(jsonrpc.INVALID_PARAMS, reply.error.code)
    assert.equal(3, reply.id)
    assert.equal("notification", classify '{"jsonrpc":"2.0","method":"x","params":[1]}')
  end)
end)

describe("mcp protocol versions", function()
  it("answers a supported revision with itself and anything else with the latest", function()
    for _, v in ipairs(versions.list()) do assert.equal(v, versions.negotiate(v)) end
    assert.equal("2025-11-25", versions.LATEST)
    assert.equal(versions.LATEST, versions.negotiate "1999-01-01")
    assert.equal(versions.LATEST, versions.negotiate "")
    assert.is_true(versions.features("2025-06-18").structured)
    assert.is_false(versions.features("2025-03-26").structured)
    assert.is_true(versions.features("2025-03-26").batches)
    assert.is_false(versions.features("2025-11-25").batches)
  end)
end)

describe("mcp tool arguments", function()
  local schema = json.object {
    type = "object", additionalProperties = false, required = json.array { "id" },
    properties = json.object {
      id = json.object { type = "string", minLength = 1 },
      wait = json.object { type = "number", minimum = 0, maximum = 60 },
      n = json.object { type = "integer" },
      mode = json.object { enum = json.array { "a", "b" } },
      doc = json.object { type = "object" },
      list = json.object { type = "array", items = json.object { type = "string" } },
    },
  }
  local function check(text) return arguments.check(schema, assert(json.decode(text))) end

  it("accepts what the schema allows", function()
    assert.is_true(check '{"id":"x"}')
    assert.is_true(check '{"id":"x","wait":0,"n":3,"mode":"b","doc":{},"list":["p"]}')
    assert.is_true(check '{"id":"x","wait":60.0,"n":2.0}')   -- 2.0 is an integer in JSON Schema
  end)

  it("names the first problem", function()
    local cases = {
      { "{}", 'arguments: missing required property "id"' },
      { '{"id":""}', "arguments.id: must be at least 1 character(s) long" },
      { '{"id":3}', "arguments.id: expected string, got an integer" },
      { '{"id":"x","wait":"5"}', "arguments.wait: expected number, got string" },
      { '{"id":"x","wait":60.5}', "arguments.wait: 60.5 is above the maximum 60" },
      { '{"id":"x","wait":-1}', "arguments.wait: -1 is below the minimum 0" },
      { '{"id":"x","n":1.5}', "arguments.n: expected integer, got a non-integer number" },
      { '{"id":"x","mode":"c"}', 'arguments.mode: must be one of "a", "b"' },
      { '{"id":"x","doc":[]}', "arguments.doc: expected object, got an array" },
      { '{"id":"x","list":["p",1]}', "arguments.list[1]: expected string, got an integer" },
      { '{"id":"x","extra":null}', 'arguments: unknown property "extra"' },
    }
    for _, case in ipairs(cases) do
      local ok, message = check(case[1])
      assert.is_nil(ok, case[1])
      assert.equal(case[2], message)
    end
  end)

  it("refuses to enforce a schema with a keyword or a pattern it does not check", function()
    assert.has_error(function()
      arguments.check(json.object { type = "string", format = "uri" }, "b")
    end, 'schema keyword "format" is not enforced')
    assert.has_error(function()
      arguments.check(json.object { type = "string", pattern = "^a" }, "b")
    end, 'schema pattern "^a" is not enforced')
  end)

  it("enforces the patterns it publishes exactly", function()
    local hex = json.object { type = "string", pattern = "^[0-9a-f]{64}$" }
    assert.is_true(arguments.check(hex, ("a"):rep(64)))
    for _, bad in ipairs { ("a"):rep(63), ("a"):rep(65), ("A"):rep(64), ("g"):rep(64), ("a"):rep(64) .. "\n" } do
      assert.is_nil(arguments.check(hex, bad), bad)
    end
    local oid = json.object { type = "string", pattern = "^([0-9a-f]{40}|[0-9a-f]{64})$" }
    assert.is_true(arguments.check(oid, ("b"):rep(40)))
    assert.is_true(arguments.check(oid, ("b"):rep(64)))
    assert.is_nil(arguments.check(oid, ("b"):rep(41)))
    assert.is_nil(arguments.check(oid, "main"))
  end)
end)
