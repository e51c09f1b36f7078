-- Issue 34: the parts that make the multi-parameter exhaustive method
-- fast at 2^20 inputs, checked against the plain ways they replace:
-- stdin records made per parameter value (vkit.change.multi.stdin) are
-- encode_inputs' bytes, and a verdict judged once per class of inputs
-- (vkit.change.multi.verdicts) is asked again only for a new class.
local domain = require "vkit.change.domain"
local sd = require "vkit.change.signature_drivers"
local stdin = require "vkit.change.multi.stdin"
local verdicts = require "vkit.change.multi.verdicts"

-- {{"x", "i32"}, ...} -> a checked signature
local sig_of = require("tests.support.multi").parsed

describe("stdin records by domain index", function()
  it("are encode_inputs' bytes for every input, across ranges, bools and 64-bit values", function()
    local sig = sig_of({ { "a", "i8" }, { "flag", "bool" }, { "n", "u64" } }, "u8")
    local d = assert(domain.parse(sig, "a=-128..-126|0|100..101,flag=*,n=0..2|18446744073709551614..18446744073709551615"))
    local record = stdin.new(d)
    for x = 0, d.size - 1 do
      assert.equal(sd.encode_inputs(sig, { domain.at(d, x) }), record(x), "index " .. x)
    end
    -- out of order too (pass 2 is a permutation): no state carried between calls changes a record
    for _, x in ipairs { d.size - 1, 0, 7, 6, 3 } do
      assert.equal(sd.encode_inputs(sig, { domain.at(d, x) }), record(x), "index " .. x)
    end
  end)
end)

describe("verdicts per class of inputs", function()
  local sig = sig_of({ { "x", "u8" }, { "y", "u8" } }, "u8")
  local d = assert(domain.parse(sig, "x=0..9,y=0..9"))
  local box = assert(domain.parse_box(sig, "x=2..3,y=5"))
  local other = assert(domain.parse_box(sig, "y=0..1"))

  it("judges once per boxes holding the input and pair of results, and reuses it", function()
    local verdict = verdicts.new(d, { box, other })
    local asked = {}
    local function judge(x)
      asked[#asked + 1] = x
      return { verdict = "conforms", x = x }
    end
    local classes = {}
    for x = 0, d.size - 1 do
      local j = verdict(x, "A", "A", judge)
      local t = domain.at(d, x)
      local key = tostring(domain.box_contains(box, t)) .. tostring(domain.box_contains(other, t))
      classes[key] = classes[key] or j.x
      assert.equal(classes[key], j.x, "index " .. x)  -- the class's first input was judged
    end
    assert.equal(3, #asked)  -- in box, in other, in neither (the boxes are disjoint)
    verdict(0, "A", "B", judge)
    verdict(1, "B", "A", judge)
    assert.equal(5, #asked)  -- another pair of results is another class
  end)
end)
