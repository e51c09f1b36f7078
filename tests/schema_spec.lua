local json = require "vkit.json"
local S = require "vkit.schema"
local paths = require "vkit.paths"

local function check(spec, text)
  return S.check(spec, assert(json.decode(text)))
end

describe("vkit.schema", function()
  local spec = S.object {
    version = S.const(1),
    id = S.commit_id,
    digest = S.sha256,
    name = S.string { max = 5 },
    n = S.integer { min = 0, max = 10 },
    flag = S.optional(S.boolean),
    kind = S.enum { "a", "b" },
    items = S.array(S.u32, { min = 1, unique = true }),
  }
  local good = '{"version":1,"id":"' .. ("a"):rep(40) .. '","digest":"' .. ("0"):rep(64)
    .. '","name":"x","n":3,"kind":"a","items":[1,2]}'

  it("accepts a conforming document", function()
    assert.is_true(check(spec, good))
  end)

  local function expect(code, path, text)
    local ok, err = check(spec, text)
    assert.is_nil(ok, text)
    assert.equal(code, err.code, S.explain(err))
    assert.equal(path, err.path)
  end

  it("names missing and unknown fields", function()
    expect("missing-field", "kind", (good:gsub(',"kind":"a"', "")))
    expect("unknown-field", "extra", (good:gsub("}$", ',"extra":0}')))
  end)

  it("names wrong types, including float for integer", function()
    expect("wrong-type", "n", (good:gsub('"n":3', '"n":3.0')))
    expect("wrong-type", "flag", (good:gsub('"n":3', '"n":3,"flag":1')))
    expect("wrong-type", "items", (good:gsub('%[1,2%]', "{}")))
    expect("wrong-type", "$", "[]")
  end)

  it("names values out of range, bad formats and duplicates", function()
    expect("out-of-range", "n", (good:gsub('"n":3', '"n":11')))
    expect("out-of-range", "name", (good:gsub('"name":"x"', '"name":"toolong"')))
    expect("out-of-range", "items[1]", (good:gsub('%[1,2%]', "[4294967296]")))
    expect("out-of-range", "items", (good:gsub('%[1,2%]', "[]")))
    expect("duplicate-item", "items[2]", (good:gsub('%[1,2%]', "[7,7]")))
    expect("invalid-value", "version", (good:gsub('"version":1', '"version":2')))
    expect("invalid-value", "kind", (good:gsub('"kind":"a"', '"kind":"c"')))
  end)

  it("names a unique-array item that canonical JSON cannot hold, never raising", function()
    local loose = S.array(S.any_object, { unique = true })
    local ok, err = check(loose, '[{"n":9007199254740993}]')
    assert.is_nil(ok)
    assert.equal("number-out-of-range", err.code)
    assert.equal("[1]", err.path)
  end)

  it("accepts only full lowercase commit ids and SHA-256 digests", function()
    for _, bad in ipairs { "main", "HEAD", ("a"):rep(39), ("A"):rep(40), ("g"):rep(40), ("a"):rep(41) } do
      expect("bad-format", "id", (good:gsub(("a"):rep(40), bad)))
    end
    assert.is_true(check(spec, (good:gsub(("a"):rep(40), ("b"):rep(64)))))
    expect("bad-format", "digest", (good:gsub(("0"):rep(64), ("F"):rep(64))))
  end)

  -- The one commit-id rule the CLI, the MCP arguments and the schemas share:
  -- every byte at every place of both lengths, and the lengths beside them.
  it("is_commit_id: 40 or 64 lowercase hex digits, nothing else", function()
    for _, n in ipairs { 40, 64 } do
      assert.is_true(S.is_commit_id(("0123456789abcdef"):rep(4):sub(1, n)))
      for _, at in ipairs { 1, n // 2, n } do
        for byte = 0, 255 do
          local c = string.char(byte)
          local id = ("a"):rep(at - 1) .. c .. ("a"):rep(n - at)
          assert.equal(c:find "^[0-9a-f]$" ~= nil, S.is_commit_id(id), ("byte %d at %d of %d"):format(byte, at, n))
        end
      end
    end
    for _, n in ipairs { 0, 1, 39, 41, 63, 65, 80 } do assert.is_false(S.is_commit_id(("a"):rep(n)), n) end
    for _, v in ipairs { 1234567890, true, {} } do assert.is_false(S.is_commit_id(v)) end
    assert.is_false(S.is_commit_id(nil))
  end)
end)

describe("vkit.paths", function()
  it("accepts normalised relative POSIX paths", function()
    for _, p in ipairs { "a", "a/b.txt", "spec/model.smt2", ".hidden", "a..b", "x/.gitignore" } do
      assert.is_true(paths.check(p), p)
    end
  end)

  it("refuses everything else", function()
    for _, p in ipairs { "", "/abs", "a//b", "a/./b", "./a", "a/..", "../a", "a/", "a\\b", "a\0b", "a\nb",
                         ".git/config", "x/.GIT/y", ("a"):rep(4097) } do
      local ok, reason = paths.check(p)
      assert.is_nil(ok, p)
      assert.equal("invalid-path", reason)
    end
    assert.is_nil(paths.check(42))
  end)

  it("takes a path of policies/protocol.lua max_path_bytes and refuses one byte more", function()
    local max = require("vkit").policies.protocol.max_path_bytes
    assert.is_true(paths.check(("a"):rep(max)))
    assert.is_nil(paths.check(("a"):rep(max + 1)))
  end)
end)

describe("a guard's name in a difference policy", function()
  -- printed in violation messages and reports: a control character in it
  -- could move a terminal's cursor or start a CI log command
  local differences = require "vkit.change.differences"
  local function policy(name)
    return require("vkit").json.encode { schema_version = 1, intent = ("a"):rep(64),
      guards = { { name = name, inputs = { 1 }, outputs = { 1 } } } }
  end
  it("is one line of visible text, in the seed's profile and the multi-parameter one", function()
    local S = require "vkit.schema"
    assert.is_truthy(S.check(S.one_line(200), "repair for SCORE-2"))
    for _, bad in ipairs { "a\nb", "a\rb", "\27[2J", "" , ("x"):rep(201) } do
      assert.is_falsy(S.check(S.one_line(200), bad), bad)
    end
    local ok = differences.parse(policy("fine"), ("a"):rep(64), { { 0, 10 } })
    assert.is_table(ok)
    local refused, message, code = differences.parse(policy("fine\n::error::x"), ("a"):rep(64), { { 0, 10 } })
    assert.is_nil(refused)
    assert.equal("difference-policy-invalid", code, message)
    local mdiff = require "vkit.change.multi.differences"
    local function multi(name)
      return { schema_version = 1, intent = ("a"):rep(64), guards = { { name = name, inputs = { x = "0..3" },
               outputs = { "*" } } } }
    end
    assert.is_truthy(S.check(mdiff.schema, multi "fine"))
    assert.is_falsy(S.check(mdiff.schema, multi "fine\n::error::x"))
  end)
end)
