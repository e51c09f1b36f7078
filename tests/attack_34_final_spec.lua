-- Adversarial review of issue 34's last changes (attack 34, final).
-- Cause lines are a diagnosis written by (or mimicked by) candidate code:
-- what they say must be checked before it is shown and must never break a
-- report.
local vkit = require "vkit"
local json = vkit.json
local causes = require "vkit.change.causes"

local sig_of = require("tests.support.multi").parsed

local function batch_record(stderr)
  return { { n = 1, label = "batch 1 pass 1 candidate", status = "exited", code = 0, stderr = stderr } }
end

describe("attack 34: a cause line's FIRST under a multi-parameter signature", function()
  it("is validated against the signature even when it is a bare number", function()
    local two = sig_of({ { "x", "u8" }, { "on", "bool" } }, "u8")
    local found = causes.of_records(batch_record "vkit driver: raise 2 5 ValueError: x\n", { signature = two })
    assert.equal(1, #found)
    -- "5" is no input of (u8, bool): nothing is shown, as for any other look-alike
    assert.is_nil(found[1].first)
    local one = sig_of({ { "x", "u8" } }, "u8")
    found = causes.of_records(batch_record "vkit driver: raise 1 300 ValueError: x\n", { signature = one })
    assert.is_nil(found[1].first)  -- outside u8
    found = causes.of_records(batch_record "vkit driver: raise 1 3 ValueError: x\n", { signature = one })
    assert.equal("x=3", found[1].first)  -- named like every multi-parameter input
    -- the seed's profile (no signature) keeps its u32
    found = causes.of_records(batch_record "vkit driver: range 3 59 -1\n")
    assert.equal(59, found[1].first)
  end)
end)

describe("attack 34: a cause's text", function()
  local function check(found)
    assert.is_true(#found > 0)
    for _, c in ipairs(found) do
      assert.is_truthy(utf8.len(c.text), c.text)
      assert.is_nil(c.text:find "%c", c.text)
      assert.is_nil(c.text:find("\u{202E}", 1, true))
      assert.is_nil(c.text:find("\u{9B}", 1, true))
      local line = require("vkit.report.causes").line(c)
      assert.is_truthy(utf8.len(line))
      -- every JSON front (run show --json, MCP run_get, the JSON report) encodes it
      local ok, err = pcall(json.encode, { causes = json.array { c }, line = line })
      assert.is_true(ok, tostring(err))
    end
  end
  it("carries no control character and no byte that is not UTF-8 from a driver line's detail", function()
    local two = sig_of({ { "x", "u8" }, { "on", "bool" } }, "u8")
    local stderr = "vkit driver: raise 1 3,true E: \255\254 \27[2J\27]0;pwned\7 \u{202E}evil \u{9B}31m\n"
      .. "vkit driver: range 1 3,true type \255\n"
      .. "vkit driver: missing 1 3,true f\0\127\n"
    check(causes.of_records(batch_record(stderr), { signature = two }))
    check(causes.of_records(batch_record(stderr:gsub("3,true", "7"))))
  end)
  it("carries none from a failed run's stderr tail cut inside a UTF-8 character", function()
    -- a stderr tail read from its file starts wherever the byte count says
    local tail = ("\u{e9}"):rep(10):sub(2) .. "\nValueError: \u{e9}\27[31m\255\n"
    check(causes.of_records({ { n = 1, label = "run candidate input 7 rep 1", status = "exited", code = 1,
                                stderr = tail } }))
    assert.is_truthy(causes.exception(tail):find("\\x1b", 1, true))
  end)
end)
