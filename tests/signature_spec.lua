-- Issue 34 (foundation): signatures of the multi-parameter profile, every
-- type at its extremes, values checked without coercion, canonical texts,
-- the limits of policies/signatures.lua at the limit and one past.
local signature = require "vkit.change.signature"
local policy = require("vkit.policy").signatures

-- Every type with its extremes as canonical text and as the Lua value.
local EXTREMES = {
  u8 = { { "0", 0 }, { "255", 255 } },
  u16 = { { "0", 0 }, { "65535", 65535 } },
  u32 = { { "0", 0 }, { "4294967295", 4294967295 } },
  u64 = { { "0", 0 }, { "9223372036854775807", math.maxinteger }, { "9223372036854775808", math.mininteger },
          { "18446744073709551615", -1 } },
  i8 = { { "-128", -128 }, { "-1", -1 }, { "0", 0 }, { "127", 127 } },
  i16 = { { "-32768", -32768 }, { "-1", -1 }, { "0", 0 }, { "32767", 32767 } },
  i32 = { { "-2147483648", -2147483648 }, { "-1", -1 }, { "0", 0 }, { "2147483647", 2147483647 } },
  i64 = { { "-9223372036854775808", math.mininteger }, { "-1", -1 }, { "0", 0 },
          { "9223372036854775807", math.maxinteger } },
  bool = { { "false", false }, { "true", true } },
}

-- One past each end, as text.
local PAST = {
  u8 = { "-1", "256" }, u16 = { "-1", "65536" }, u32 = { "-1", "4294967296" },
  u64 = { "-1", "18446744073709551616" }, i8 = { "-129", "128" }, i16 = { "-32769", "32768" },
  i32 = { "-2147483649", "2147483648" }, i64 = { "-9223372036854775809", "9223372036854775808" },
}

local function code_of(f, ...)
  local ok, msg, code = f(...)
  assert.is_nil(ok, "expected a refusal")
  assert.is_string(msg)
  return code
end

describe("signature types", function()
  it("are the nine of the issue, with the policy's widths", function()
    assert.same({ "bool", "i16", "i32", "i64", "i8", "u16", "u32", "u64", "u8" }, signature.type_names())
    for _, name in ipairs(signature.type_names()) do
      local bits = tonumber(name:match "%d+") or 8
      assert.equal(bits // 8, signature.type(name).bytes, name)
    end
  end)

  it("read, check and print every type at its extremes, and round-trip them", function()
    for t, cases in pairs(EXTREMES) do
      for _, c in ipairs(cases) do
        local text, value = c[1], c[2]
        assert.equal(value, signature.parse_value(t, text), t .. " " .. text)
        assert.is_true(signature.check(t, value))
        assert.equal(text, signature.text(t, value))
        assert.equal(value, signature.from_ord(t, signature.ord(t, value)))
      end
    end
  end)

  it("order every type by its own order, u64 unsigned (the ord)", function()
    for t, cases in pairs(EXTREMES) do
      for i = 2, #cases do
        assert.is_true(signature.ord(t, cases[i - 1][2]) < signature.ord(t, cases[i][2]), t)
      end
    end
    assert.is_true(signature.ord("u64", -1) > signature.ord("u64", math.maxinteger))
  end)

  it("refuse a value one past either end as range, and non-canonical text as syntax", function()
    for t, past in pairs(PAST) do
      for _, text in ipairs(past) do
        assert.equal("range", code_of(signature.parse_value, t, text), t .. " " .. text)
      end
    end
    for _, text in ipairs { "007", "+7", "-0", " 7", "7 ", "", "0x10", "1e3", "1.0", "--1", "true" } do
      assert.equal("syntax", code_of(signature.parse_value, "i32", text), text)
    end
    for _, text in ipairs { "True", "1", "0", "" } do assert.equal("syntax", code_of(signature.parse_value, "bool", text)) end
    assert.equal("range", code_of(signature.parse_value, "u64", "99999999999999999999999"))
    assert.equal("unknown-type", code_of(signature.parse_value, "u128", "1"))
  end)

  it("check values without coercion: a float, a bool for an int, an int for a bool, a string are range", function()
    for _, c in ipairs { { "u8", 256 }, { "u8", -1 }, { "i8", 128 }, { "i8", -129 }, { "u32", 1.0 },
                         { "u32", true }, { "bool", 0 }, { "bool", 1 }, { "i64", "5" }, { "u16", 65536 },
                         { "u32", 4294967296 }, { "i32", -2147483649 } } do
      assert.equal("range", code_of(signature.check, c[1], c[2]), c[1] .. " " .. tostring(c[2]))
    end
    -- every Lua integer is a u64 value (its 64 bits)
    assert.is_true(signature.check("u64", math.mininteger))
  end)
end)

describe("signature descriptions", function()
  local function params(n, t)
    local out = {}
    for i = 1, n do out[i] = { name = "p" .. i, type = t or "u8" } end
    return out
  end

  it("parse parameters and a single or tuple result", function()
    local sig = assert(signature.parse { params = { { name = "x", type = "i32" }, { name = "flag", type = "bool" } },
                                         returns = { "bool", "u32" } })
    assert.same({ { name = "x", type = "i32" }, { name = "flag", type = "bool" } }, sig.params)
    assert.same({ "bool", "u32" }, sig.returns)
    assert.is_true(sig.tuple)
    assert.equal("(x: i32, flag: bool) -> (bool, u32)", signature.describe(sig))
    local one = assert(signature.parse { params = { { name = "year", type = "u16" } }, returns = "bool" })
    assert.is_false(one.tuple)
    assert.same({ "bool" }, one.returns)
  end)

  it("take up to the policy's parameters and components, and refuse one past", function()
    assert.equal(4, policy.max_params)
    assert.equal(4, policy.max_components)
    assert.truthy(signature.parse { params = params(policy.max_params), returns = "u8" })
    assert.equal("too-many-params", code_of(signature.parse, { params = params(policy.max_params + 1), returns = "u8" }))
    assert.equal("no-params", code_of(signature.parse, { params = {}, returns = "u8" }))
    local four = { "u8", "u16", "i64", "bool" }
    assert.truthy(signature.parse { params = params(1), returns = four })
    assert.equal("tuple-length", code_of(signature.parse, { params = params(1), returns = { "u8", "u8", "u8", "u8", "u8" } }))
    assert.equal("tuple-length", code_of(signature.parse, { params = params(1), returns = { "u8" } }))
    assert.equal("tuple-length", code_of(signature.parse, { params = params(1), returns = {} }))
  end)

  it("name what is wrong", function()
    local function refused(desc) return code_of(signature.parse, desc) end
    assert.equal("not-a-table", refused "u32 -> u32")
    assert.equal("unknown-field", refused { params = params(1), returns = "u8", extra = 1 })
    assert.equal("unknown-field", refused { params = { { name = "x", type = "u8", width = 8 } }, returns = "u8" })
    assert.equal("param-name", refused { params = { { name = "2x", type = "u8" } }, returns = "u8" })
    assert.equal("param-name", refused { params = { { type = "u8" } }, returns = "u8" })
    assert.equal("param-name", refused { params = { "u8" }, returns = "u8" })
    assert.equal("duplicate-param", refused { params = { { name = "x", type = "u8" }, { name = "x", type = "u8" } },
                                              returns = "u8" })
    assert.equal("unknown-type", refused { params = { { name = "x", type = "u128" } }, returns = "u8" })
    assert.equal("unknown-type", refused { params = { { name = "x", type = "f64" } }, returns = "u8" })
    assert.equal("unknown-type", refused { params = params(1), returns = "char" })
    assert.equal("unknown-type", refused { params = params(1), returns = { "u8", "str" } })
    assert.equal("no-returns", refused { params = params(1) })
    assert.equal("no-params", refused { params = { [2] = { name = "x", type = "u8" } }, returns = "u8" })
  end)

  it("know the seed's profile exactly: one u32 parameter, one u32 result", function()
    local function sig(p, r) return assert(signature.parse { params = p, returns = r }) end
    assert.is_true(signature.is_seed_profile(sig({ { name = "x", type = "u32" } }, "u32")))
    assert.is_true(signature.is_seed_profile(sig({ { name = "points", type = "u32" } }, "u32")))
    assert.is_false(signature.is_seed_profile(sig({ { name = "x", type = "u32" } }, "u64")))
    assert.is_false(signature.is_seed_profile(sig({ { name = "x", type = "i32" } }, "u32")))
    assert.is_false(signature.is_seed_profile(sig({ { name = "x", type = "u32" } }, { "u32", "u32" })))
    assert.is_false(signature.is_seed_profile(sig(params(2, "u32"), "u32")))
  end)
end)

describe("results and tuples", function()
  local sig = assert(signature.parse { params = { { name = "a", type = "u32" }, { name = "b", type = "u32" } },
                                       returns = { "bool", "u32" } })

  it("have one canonical text, read back exactly", function()
    assert.equal("true,4294967295", signature.result_text(sig, { true, 4294967295 }))
    assert.same({ false, 0 }, signature.parse_result(sig, "false,0"))
    assert.equal("-1,18446744073709551615,true", signature.tuple_text({ "i8", "u64", "bool" }, { -1, -1, true }))
    assert.same({ -1, -1, true }, signature.parse_tuple({ "i8", "u64", "bool" }, "-1,18446744073709551615,true"))
    local one = assert(signature.parse { params = { { name = "x", type = "i64" } }, returns = "i64" })
    assert.equal(math.mininteger, signature.parse_result(one, "-9223372036854775808"))
  end)

  it("refuse a wrong number of components, and non-canonical components", function()
    assert.equal("arity", code_of(signature.parse_result, sig, "true"))
    assert.equal("arity", code_of(signature.parse_result, sig, "true,1,2"))
    assert.equal("syntax", code_of(signature.parse_result, sig, "true, 1"))
    assert.equal("syntax", code_of(signature.parse_result, sig, "1,1"))
    assert.equal("range", code_of(signature.parse_result, sig, "true,4294967296"))
  end)

  it("are checked exactly: a list of the declared length, each component of its type", function()
    assert.is_true(signature.check_result(sig, { true, 7 }))
    assert.equal("range", code_of(signature.check_result, sig, { true }))
    assert.equal("range", code_of(signature.check_result, sig, { true, 7, 8 }))
    assert.equal("range", code_of(signature.check_result, sig, { 1, 7 }))
    assert.equal("range", code_of(signature.check_result, sig, { true, -1 }))
    assert.equal("range", code_of(signature.check_result, sig, 7))
    assert.equal("range", code_of(signature.check_result, sig, { true, 7, x = 1 }))
  end)
end)
