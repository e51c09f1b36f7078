local select_mod = require "vkit.change.select"
local drivers = require "vkit.change.drivers"

describe("input selection", function()
  local domain = { { 0, 9 }, { 100, 109 } }

  it("takes the smallest inputs when ascending", function()
    local picked, omitted = select_mod.select(domain, "ascending", 3)
    assert.same({ 0, 1, 2 }, picked)
    assert.equal(17, omitted)
  end)

  it("spreads over the whole domain, ends included", function()
    local picked, omitted = select_mod.select(domain, "spread", 4)
    assert.same({ 0, 6, 102, 109 }, picked)
    assert.equal(16, omitted)
  end)

  it("takes everything when the budget allows", function()
    local picked, omitted = select_mod.select({ { 5, 7 } }, "spread", 10)
    assert.same({ 5, 6, 7 }, picked)
    assert.equal(0, omitted)
  end)
end)

describe("shrinking", function()
  -- Every input >= 37 violates; 0 was seen conforming; 90 violating.
  local domain = { { 0, 99 } }
  local function run(limit)
    local next_input, tried, smallest = select_mod.shrinker(domain, 90, 0, limit)
    local last
    while true do
      local v = next_input(last)
      if not v then break end
      last = v >= 37
    end
    return smallest(), tried
  end

  it("bisects to the smallest violating input within its limit", function()
    local smallest, tried = run(16)
    assert.equal(37, smallest)
    assert.is_true(#tried <= 7)
    for _, v in ipairs(tried) do assert.is_true(v < 90) end
  end)

  it("stops at its limit and records what it tried", function()
    local smallest, tried = run(2)
    assert.equal(2, #tried)
    assert.same({ 45, 22 }, tried)
    assert.equal(45, smallest)
  end)
end)

describe("driver output", function()
  it("accepts exactly one canonical decimal u32 line", function()
    assert.equal(0, drivers.parse_output "0\n")
    assert.equal(4294967295, drivers.parse_output "4294967295\n")
    for _, bad in ipairs { "", "0", "01\n", "-1\n", "4294967296\n", "1 \n", "1\n2\n", "+1\n", "1e3\n", "0x10\n", "12345678901\n" } do
      assert.is_nil(drivers.parse_output(bad), bad)
    end
  end)

  it("encodes inputs as four little-endian bytes", function()
    assert.equal("\1\0\0\0", drivers.encode_input(1))
    assert.equal("\255\255\255\255", drivers.encode_input(0xFFFFFFFF))
  end)
end)
