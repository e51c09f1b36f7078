-- The exhaustive method's pure parts: batches that fit the output cap, the
-- orders each batch runs in, and the batch drivers' output protocol.
local vkit = require "vkit"
local batches = require "vkit.change.batches"
local batch_drivers = require "vkit.change.batch_drivers"
local drivers = require "vkit.change.drivers"
local limits = vkit.policies.limits.paired
local cfg = vkit.policies.change.exhaustive

local function sorted_copy(list)
  local out = {}
  for i, x in ipairs(list) do out[i] = x end
  table.sort(out)
  return out
end

describe("exhaustive batches", function()
  it("hold as many inputs as the longest possible output lines fit under the cap, less the stderr reserve", function()
    -- inputs up to 4095: "4095 4294967295\n" is 16 bytes, so (65536 - 4096) / 16 = 3840 per batch
    local domain = { { 0, 4095 } }
    assert.equal(3840, batches.size(domain, limits.output_cap, cfg.stderr_reserve_bytes))
    local planned = batches.plan(domain, limits.output_cap, cfg.stderr_reserve_bytes)
    assert.equal(2, #planned)
    assert.equal(3840, #planned[1].inputs)
    assert.equal(256, #planned[2].inputs)
    assert.same({ 0, 3839, 3840, 4095 }, { planned[1].inputs[1], planned[1].inputs[3840], planned[2].inputs[1],
                                           planned[2].inputs[256] })
    -- every planned batch's largest output fits the cap with the reserve to spare
    for _, b in ipairs(planned) do
      local worst = #b.inputs * batch_drivers.line_bound(#tostring(b.inputs[#b.inputs]))
      assert.is_true(worst <= limits.output_cap - cfg.stderr_reserve_bytes)
    end
  end)

  it("split at the cap by the size of the largest input, one invocation each", function()
    -- 5-digit inputs: 17-byte lines, 3614 per batch: 4096 inputs need two
    local planned = batches.plan({ { 10000, 14095 } }, limits.output_cap, cfg.stderr_reserve_bytes)
    assert.equal(2, #planned)
    assert.equal(3614, #planned[1].inputs)
    -- a small domain is one batch; a domain of one input is one batch
    assert.equal(1, #batches.plan({ { 0, 99 } }, limits.output_cap, cfg.stderr_reserve_bytes))
    assert.equal(1, #batches.plan({ { 7, 7 } }, limits.output_cap, cfg.stderr_reserve_bytes))
    -- gaps in the domain are skipped
    local gappy = batches.plan({ { 1, 2 }, { 10, 11 } }, limits.output_cap, cfg.stderr_reserve_bytes)
    assert.same({ 1, 2, 10, 11 }, gappy[1].inputs)
  end)

  it("halve a batch whose run reached the cap", function()
    local a, b = batches.halves { index = 3, inputs = { 1, 2, 3, 4, 5 } }
    assert.same({ 1, 2 }, a.inputs)
    assert.same({ 3, 4, 5 }, b.inputs)
    assert.equal("3a", a.index)
    assert.equal("3b", b.index)
  end)
end)

describe("exhaustive orders", function()
  local inputs = {}
  for x = 0, 499 do inputs[#inputs + 1] = x end

  it("are ascending in pass 1", function()
    assert.same(inputs, batches.order(inputs, "r-1", 1, 1))
  end)

  it("are a permutation derived from the run id in later passes, the same for anyone with the run id", function()
    local p2 = batches.order(inputs, "r-20260101T000000Z-abc", 1, 2)
    assert.same(inputs, sorted_copy(p2))
    assert.are_not.same(inputs, p2)
    assert.same(p2, batches.order(inputs, "r-20260101T000000Z-abc", 1, 2))
    assert.are_not.same(p2, batches.order(inputs, "r-20260101T000000Z-abd", 1, 2))
    assert.are_not.same(p2, batches.order(inputs, "r-20260101T000000Z-abc", 2, 2))
    assert.are_not.same(p2, batches.order(inputs, "r-20260101T000000Z-abc", 1, 3))
  end)
end)

describe("the batch driver protocol", function()
  it("reads one line per input in the order given: a value or a marker", function()
    local got = assert(batch_drivers.parse("5 10\n3 !raise\n9 !range\n0 4294967295\n", { 5, 3, 9, 0 }))
    assert.same({ { value = 10 }, { marker = "raise" }, { marker = "range" }, { value = 4294967295 } }, got)
  end)

  it("refuses missing, extra, reordered and malformed lines", function()
    local function refused(out, inputs, pattern)
      local ok, why = batch_drivers.parse(out, inputs)
      assert.is_nil(ok, out)
      assert.matches(pattern, why)
    end
    refused("5 10\n", { 5, 3 }, "1 lines for 2 inputs")
    refused("5 10\n3 6\n", { 5 }, "beyond the 1 inputs")
    refused("3 6\n5 10\n", { 5, 3 }, "names input 3 where input 5")
    refused("5 010\n", { 5 }, "not a canonical")
    refused("5 4294967296\n", { 5 }, "not a canonical")
    refused("5 -1\n", { 5 }, "not a canonical")
    refused("5 !boom\n", { 5 }, "not a canonical")
    refused("5 10", { 5 }, "no newline")
    refused("05 10\n", { 5 }, "names input 05")
    refused("debug\n5 10\n", { 5 }, "names input nil")
  end)

  it("gets exactly the encoding of its inputs on stdin", function()
    local bytes = drivers.encode_inputs { 1, 0xFFFFFFFF, 0 }
    assert.equal("\1\0\0\0\255\255\255\255\0\0\0\0", bytes)
    assert.is_true(drivers.inputs_match(bytes, { 1, 0xFFFFFFFF, 0 }))
    assert.is_false(drivers.inputs_match(bytes, { 1, 0xFFFFFFFF }))
    assert.is_false(drivers.inputs_match(bytes, { 0xFFFFFFFF, 1, 0 }))
    assert.is_false(drivers.inputs_match(bytes .. "\0", { 1, 0xFFFFFFFF, 0 }))
  end)
end)
