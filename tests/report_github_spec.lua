-- `vkit run report --format github`: GitHub Actions workflow commands
-- (`::error file=…,line=…,title=…::message`) that annotate the changed
-- function in the pull request's diff, escaped as GitHub's runner reads
-- them so run-supplied text can neither end a property nor start a command.
local report = require "vkit.report"
local github = require "vkit.report.github"
local reports = require "tests.support.reports"

-- A workflow command line as GitHub's runner splits it: the command, its
-- properties (split at commas, each at its first "=") and the message,
-- each unescaped.
local function parse(line)
  local command, props, message = line:match "^::(%a+) ([^:]*)::(.*)$"
  if not command then command, message = line:match "^::(%a+)::(.*)$" end
  assert(command, "not a workflow command: " .. line)
  local function unescape(s)
    return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
  end
  local p = {}
  for item in (props or ""):gmatch "[^,]+" do
    local k, v = item:match "^([^=]+)=(.*)$"
    p[k] = unescape(v)
  end
  return { command = command, props = p, message = unescape(message) }
end

describe("GitHub annotations", function()
  it("escape the message's %, CR and LF, and a property's : and , too", function()
    assert.equal("100%25 a%0D%0Ab: c, d", github.data "100% a\r\nb: c, d")
    assert.equal("100%25 a%0D%0Ab%3A c%2C d", github.property "100% a\r\nb: c, d")
  end)

  it("keep hostile run-supplied text inside one annotation", function()
    local model = { kind = "change-certify", run_id = "r-1", status = "done", outcome = "unknown", passing = false,
                    reason = "x", message = "oops\n::error file=evil.py::forged 50%, \27[31mred",
                    methods = {}, target = { file = "src/a,b:c.py", line = 7 } }
    local out = report.render(model, "github")
    local lines = {}
    for l in out:gmatch "[^\n]+" do lines[#lines + 1] = l end
    assert.equal(1, #lines, "a line break in the text cannot start a second command")
    assert.is_nil(out:find("\27", 1, true))
    local a = parse(lines[1])
    assert.same({ "error", "src/a,b:c.py", "7", "vkit unknown" }, { a.command, a.props.file, a.props.line, a.props.title })
    assert.equal("oops\n::error file=evil.py::forged 50%, \\x1b[31mred.", a.message)
  end)

  it("show an escape sequence or a bidi control in the file name, never emit it raw", function()
    -- the file comes from a binding map's source: run-supplied text like the message
    local model = { kind = "change-certify", run_id = "r-1", status = "done", outcome = "unknown", passing = false,
                    reason = "x", message = "m", methods = {},
                    target = { file = "src/\27[31ma\u{202E}b.py", line = 7 } }
    local out = report.render(model, "github")
    assert.is_nil(out:find("\27", 1, true), out)
    assert.is_nil(out:find("\u{202E}", 1, true), out)
    assert.equal("src/\\x1b[31ma\\u202eb.py", parse((out:gsub("\n$", ""))).props.file)
  end)

  it("say a passing run once, as a notice", function()
    local model = { kind = "change-certify", run_id = "r-2", status = "done", outcome = "all_inputs_conform",
                    passing = true, headline = "all_inputs_conform r-2", methods = {},
                    target = { file = "src/score.rs", line = 1 } }
    assert.equal("::notice file=src/score.rs,line=1,title=vkit all_inputs_conform::all_inputs_conform r-2\n",
      report.render(model, "github"))
  end)

  describe("of a certification wrong at inputs 4000..4095", function()
    local ctx
    setup(function() ctx = reports.violation_run() end)
    teardown(function() if ctx then ctx.finish() end end)

    it("annotate the function's line with the range, its rule and the methods that saw it", function()
      local out = ctx.report "github"
      local lines = {}
      for l in out:gmatch "[^\n]+" do lines[#lines + 1] = l end
      assert.equal(1, #lines, out)
      local a = parse(lines[1])
      assert.same({ "error", "src/score.py", "4", "vkit observed_violation: 4000..4095 (96 inputs)" },
        { a.command, a.props.file, a.props.line, a.props.title })
      assert.matches("^4000%.%.4095 %(96 inputs%): standing%-requirement — at input 4000: the candidate returned 200, "
        .. "which the accepted intent does not allow %(seen by finite_paired %(%d of 96%), exhaustive%)%.$", a.message)
    end)
  end)
end)
