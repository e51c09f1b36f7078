-- Issue 34 (foundation): accepted inputs as a product of per-parameter
-- sets, their size and enumeration, the text syntax of sets, domains, boxes
-- and standing requirements, and grouping inputs into boxes.
local signature = require "vkit.change.signature"
local domain = require "vkit.change.domain"
local policy = require("vkit.policy").signatures

local function sig_of(params, returns)
  local p = {}
  for i, spec in ipairs(params) do
    local name, t = spec:match "^(%w+):(%w+)$"
    p[i] = { name = name, type = t }
  end
  return assert(signature.parse { params = p, returns = returns })
end

local function code_of(f, ...)
  local ok, msg, code = f(...)
  assert.is_nil(ok, "expected a refusal")
  assert.is_string(msg)
  return code
end

describe("sets", function()
  it("have one canonical form and text, whatever the spelling", function()
    local a = assert(domain.parse_set("i32", "5|0..3|4|10..12|11"))
    local b = assert(domain.set("i32", { { from = 10, to = 12 }, { from = 0, to = 5 } }))
    assert.same(a, b)
    assert.equal("0..5|10..12", domain.set_text(a))
    assert.same(a, domain.parse_set("i32", domain.set_text(a)))
    assert.equal("-5..-1", domain.set_text(assert(domain.parse_set("i8", " -5 .. -1 "))))
    assert.equal("*", domain.set_text(assert(domain.parse_set("bool", "true|false"))))
    assert.equal("true", domain.set_text(assert(domain.parse_set("bool", "true"))))
    assert.equal("*", domain.set_text(assert(domain.parse_set("u8", "0..255"))))
  end)

  it("hold every type's extremes, u64 in unsigned order", function()
    local top = assert(domain.parse_set("u64", "9223372036854775807..18446744073709551615"))
    assert.equal("too-large", code_of(domain.set_size, top, math.maxinteger))  -- 2^63 + 1 values
    assert.equal(7, domain.set_size(assert(domain.parse_set("u64", "9223372036854775805..9223372036854775811")), 7))
    assert.equal(6, domain.set_size(assert(domain.parse_set("u64", "18446744073709551610..18446744073709551615")), 6))
    assert.is_true(domain.set_contains(top, -1))
    assert.is_true(domain.set_contains(top, math.mininteger))
    assert.is_true(domain.set_contains(top, math.maxinteger))
    assert.is_false(domain.set_contains(top, 0))
    local edges = assert(domain.parse_set("i64", "-9223372036854775808|9223372036854775807"))
    assert.equal(2, domain.set_size(edges, 10))
    assert.equal("-9223372036854775808|9223372036854775807", domain.set_text(edges))
    assert.equal("*", domain.set_text(assert(domain.parse_set("i64", "-9223372036854775808..9223372036854775807"))))
    assert.equal("*", domain.set_text(assert(domain.parse_set("u64", "0..9223372036854775807|9223372036854775808..18446744073709551615"))))
  end)

  it("count values without overflow, up to a cap", function()
    assert.equal(256, domain.set_size(domain.whole "u8", 256))
    assert.equal("too-large", code_of(domain.set_size, domain.whole "u8", 255))
    assert.equal("too-large", code_of(domain.set_size, domain.whole "u64", policy.exhaustive_inputs))
    assert.equal("too-large", code_of(domain.set_size, domain.whole "i64", policy.exhaustive_inputs))
    assert.equal(2, domain.set_size(domain.whole "bool", 2))
    local two = assert(domain.parse_set("u32", "0..9|100..109"))
    assert.equal(20, domain.set_size(two, 20))
    assert.equal("too-large", code_of(domain.set_size, two, 19))
  end)

  it("name syntax errors and values outside the type", function()
    assert.equal("syntax", code_of(domain.parse_set, "u8", ""))
    assert.equal("syntax", code_of(domain.parse_set, "u8", "1,2"))
    assert.equal("syntax", code_of(domain.parse_set, "u8", "1|"))
    assert.equal("syntax", code_of(domain.parse_set, "u8", "1...3"))
    assert.equal("syntax", code_of(domain.parse_set, "u8", "1..2..3"))
    assert.equal("syntax", code_of(domain.parse_set, "u8", "{1,5,9}"))
    assert.equal("syntax", code_of(domain.parse_set, "bool", "1"))
    assert.equal("range", code_of(domain.parse_set, "u8", "0..256"))
    assert.equal("range", code_of(domain.parse_set, "u8", "-1"))
    assert.equal("empty-range", code_of(domain.parse_set, "i8", "5..-5"))
    assert.equal("empty-range", code_of(domain.parse_set, "bool", "true..false"))
    assert.equal("unknown-type", code_of(domain.parse_set, "u128", "1"))
    assert.equal("empty-set", code_of(domain.set, "u8", {}))
    assert.equal("range", code_of(domain.set, "u8", { 1.0 }))
    assert.equal("range", code_of(domain.set, "u8", { true }))
    assert.equal("item", code_of(domain.set, "u8", { { from = 1, upto = 3 } }))
  end)
end)

describe("domains", function()
  local sig = sig_of({ "x:i8", "flag:bool", "n:u64" }, "u32")

  it("are products enumerated in order, the last parameter fastest, index and tuple inverse", function()
    local d = assert(domain.parse(sig, "x=-1..0, flag=*, n=18446744073709551614..18446744073709551615|7"))
    assert.equal(2 * 2 * 3, d.size)
    assert.equal("x=-1..0,flag=*,n=7|18446744073709551614..18446744073709551615", domain.text(d))
    assert.same({ -1, false, 7 }, domain.at(d, 0))
    assert.same({ -1, false, -2 }, domain.at(d, 1))
    assert.same({ -1, false, -1 }, domain.at(d, 2))
    assert.same({ -1, true, 7 }, domain.at(d, 3))
    assert.same({ 0, true, -1 }, domain.at(d, 11))
    for i = 0, d.size - 1 do assert.equal(i, domain.index(d, domain.at(d, i))) end
    assert.is_nil(domain.index(d, { 1, true, 7 }))
    assert.is_nil(domain.index(d, { 0, true, 8 }))
    assert.is_nil(domain.index(d, { 0, 1, 7 }))
    assert.has_error(function() domain.at(d, d.size) end)
    assert.has_error(function() domain.at(d, -1) end)
  end)

  it("sample by index: any position maps to its input", function()
    local big = sig_of({ "a:u16", "b:u8", "c:bool" }, "u8")
    local d = assert(domain.parse(big, "a=0..2047,b=0..255,c=*"))
    assert.equal(policy.exhaustive_inputs, d.size)
    for _, i in ipairs { 0, 1, 511, 512, 12345, 777777, d.size - 1 } do
      local tuple = domain.at(d, i)
      assert.equal(i, domain.index(d, tuple))
      assert.same({ i // 512, (i // 2) % 256, i % 2 == 1 }, tuple)
    end
  end)

  it("are capped at policies/signatures.lua exhaustive_inputs (2^20): at the cap, and one past", function()
    assert.equal(1 << 20, policy.exhaustive_inputs)
    local two = sig_of({ "a:u32", "b:u32" }, "u32")
    assert.equal(1 << 20, assert(domain.parse(two, "a=0..1023,b=0..1023")).size)
    assert.equal("too-large", code_of(domain.parse, two, "a=0..1023,b=0..1024"))
    assert.equal("too-large", code_of(domain.parse, two, "a=0..1048576,b=0"))
    -- four whole u64 sets: refused without overflowing
    local four = sig_of({ "a:u64", "b:u64", "c:u64", "d:u64" }, "u64")
    assert.equal("too-large", code_of(domain.parse, four, "a=*,b=*,c=*,d=*"))
    assert.equal("too-large", code_of(domain.parse, four, "a=0..1023,b=0..1023,c=0..1,d=0"))
    assert.equal(1 << 20, assert(domain.parse(four, "a=0..1023,b=0..1023,c=0,d=18446744073709551615")).size)
  end)

  it("name every parameter exactly once", function()
    assert.equal("missing-param", code_of(domain.parse, sig, "x=0,flag=true"))
    assert.equal("unknown-param", code_of(domain.parse, sig, "x=0,flag=true,n=1,m=2"))
    assert.equal("duplicate-param", code_of(domain.parse, sig, "x=0,x=1,flag=true,n=1"))
    assert.equal("syntax", code_of(domain.parse, sig, "x=0;flag=true;n=1"))
    assert.equal("syntax", code_of(domain.parse, sig, "x 0,flag=true,n=1"))
    assert.equal("syntax", code_of(domain.parse, sig, ""))
    assert.equal("range", code_of(domain.parse, sig, "x=0..128,flag=true,n=1"))
    assert.equal("duplicate-param", code_of(domain.product, sig, { domain.whole "i8", x = domain.whole "i8",
                                                                   flag = domain.whole "bool", n = domain.whole "u64" }))
    assert.equal("type-mismatch", code_of(domain.product, sig, { x = domain.whole "u8", flag = domain.whole "bool",
                                                                 n = domain.whole "u64" }))
    local d = assert(domain.product(sig, { x = domain.whole "i8", flag = domain.whole "bool",
                                           n = assert(domain.set("u64", { 1, 2 })) }))
    assert.equal(256 * 2 * 2, d.size)
  end)
end)

describe("boxes and standing requirements", function()
  local sig = sig_of({ "x:i32", "flag:bool" }, { "bool", "u32" })

  it("read a box: an omitted parameter is its whole type, * is every input", function()
    local box = assert(domain.parse_box(sig, "x=0..9"))
    assert.is_true(domain.box_contains(box, { 5, true }))
    assert.is_true(domain.box_contains(box, { 5, false }))
    assert.is_false(domain.box_contains(box, { 10, false }))
    assert.equal("x=0..9", domain.box_text(sig, box))
    assert.equal("*", domain.box_text(sig, assert(domain.parse_box(sig, " * "))))
    assert.equal("x=-3,flag=false", domain.box_text(sig, assert(domain.parse_box(sig, "flag=false,x=-3"))))
  end)

  it("read `box -> set; set`: one allowed set per result component", function()
    local req = assert(domain.parse_requirement(sig, "x=0..9,flag=true -> true; 0..5"))
    assert.equal("x=0..9,flag=true -> true; 0..5", domain.requirement_text(sig, req))
    assert.is_true(domain.allows(sig, req.outputs, { true, 5 }))
    assert.is_false(domain.allows(sig, req.outputs, { true, 6 }))
    assert.is_false(domain.allows(sig, req.outputs, { false, 0 }))
    assert.is_false(domain.allows(sig, req.outputs, { true }))
    local any = assert(domain.parse_requirement(sig, "* -> *; 7|9"))
    assert.equal("* -> *; 7|9", domain.requirement_text(sig, any))
    -- a negative bound next to the arrow has one reading
    local neg = assert(domain.parse_requirement(sig, "x=-1->false;0"))
    assert.equal("x=-1 -> false; 0", domain.requirement_text(sig, neg))
    local one = sig_of({ "year:u16" }, "bool")
    assert.equal("year=1900|2100 -> false", domain.requirement_text(one, assert(domain.parse_requirement(one,
      "year=2100|1900 -> false"))))
  end)

  it("read an observation universe: one set per result component", function()
    local universe = assert(domain.parse_outputs(sig, "*;0..100|4294967295"))
    assert.equal("*; 0..100|4294967295", domain.outputs_text(universe))
    assert.is_true(domain.allows(sig, universe, { false, 4294967295 }))
    assert.is_false(domain.allows(sig, universe, { false, 101 }))
    assert.equal("arity", code_of(domain.parse_outputs, sig, "*"))
    assert.equal("range", code_of(domain.parse_outputs, sig, "*; 4294967296"))
  end)

  it("name what is wrong in a requirement", function()
    assert.equal("syntax", code_of(domain.parse_requirement, sig, "x=0..9 true; 0..5"))
    assert.equal("syntax", code_of(domain.parse_requirement, sig, "x=0 -> true -> 1"))
    assert.equal("arity", code_of(domain.parse_requirement, sig, "x=0..9 -> true"))
    assert.equal("arity", code_of(domain.parse_requirement, sig, "x=0..9 -> true; 1; 2"))
    assert.equal("range", code_of(domain.parse_requirement, sig, "x=0..9 -> true; -1"))
    assert.equal("syntax", code_of(domain.parse_requirement, sig, "x=0..9 -> 1; 1"))
    assert.equal("unknown-param", code_of(domain.parse_requirement, sig, "y=0 -> true; 1"))
    assert.equal("syntax", code_of(domain.parse_requirement, sig, "x=0..9 -> ; 1"))
  end)
end)

describe("grouping inputs into boxes", function()
  local sig = sig_of({ "a:u8", "b:i8", "c:bool" }, "u8")

  -- Every input the boxes hold, as sorted keys.
  local function expand(boxes)
    local keys = {}
    for _, box in ipairs(boxes) do
      local d = assert(domain.product(sig, box, math.maxinteger))
      for i = 0, d.size - 1 do keys[#keys + 1] = signature.tuple_text({ "u8", "i8", "bool" }, domain.at(d, i)) end
    end
    table.sort(keys)
    return keys
  end

  local function keys_of(tuples)
    local keys, seen = {}, {}
    for _, t in ipairs(tuples) do
      local k = signature.tuple_text({ "u8", "i8", "bool" }, t)
      if not seen[k] then seen[k] = true keys[#keys + 1] = k end
    end
    table.sort(keys)
    return keys
  end

  local function texts(boxes)
    local out = {}
    for i, b in ipairs(boxes) do out[i] = domain.box_text(sig, b) end
    return out
  end

  it("merge along the last parameter, then upward, into maximal boxes", function()
    local tuples = {}
    for a = 10, 12 do
      for b = -2, 3 do
        tuples[#tuples + 1] = { a, b, true }
        tuples[#tuples + 1] = { a, b, false }
      end
    end
    assert.same({ "a=10..12,b=-2..3" }, texts(assert(domain.group(sig, tuples))))
    assert.same({ "a=5,b=0,c=true" }, texts(assert(domain.group(sig, { { 5, 0, true } }))))
    assert.same({}, assert(domain.group(sig, {})))
  end)

  it("keep gaps, and stay exact and disjoint (the union is exactly the inputs given)", function()
    local tuples = { { 1, 0, true }, { 1, 1, true }, { 1, 3, true }, { 2, 0, true }, { 2, 1, true }, { 2, 3, true },
                     { 9, -128, false }, { 9, 127, false }, { 1, 0, true } }
    local boxes = assert(domain.group(sig, tuples))
    assert.same({ "a=1..2,b=0..1,c=true", "a=1..2,b=3,c=true", "a=9,b=-128,c=false", "a=9,b=127,c=false" }, texts(boxes))
    assert.same(keys_of(tuples), expand(boxes))
    -- a pseudo-random scatter: exact and disjoint
    local scatter, seed = {}, 7
    for _ = 1, 400 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      scatter[#scatter + 1] = { seed % 6, (seed // 8) % 5 - 2, (seed // 64) % 2 == 0 }
    end
    local grouped = assert(domain.group(sig, scatter))
    local keys = expand(grouped)
    assert.same(keys_of(scatter), keys)
    assert.is_true(#grouped < #keys)
  end)

  it("never join across a type's ends (u64 2^63-1 and 2^63 are adjacent; i64 max and min are not)", function()
    local wide = sig_of({ "n:u64", "m:i64" }, "u8")
    local boxes = assert(domain.group(wide, { { math.maxinteger, 0 }, { math.mininteger, 0 },
                                              { 0, math.maxinteger }, { 0, math.mininteger } }))
    local out = {}
    for i, b in ipairs(boxes) do out[i] = domain.box_text(wide, b) end
    assert.same({ "n=0,m=-9223372036854775808", "n=0,m=9223372036854775807",
                  "n=9223372036854775807..9223372036854775808,m=0" }, out)
    assert.equal("range", code_of(domain.group, wide, { { 1.5, 0 } }))
  end)
end)
