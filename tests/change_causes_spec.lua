-- Issue 33 item 3: when an input could not be checked, `vkit run show` and
-- every report say why, one line per cause and side: the exception with the
-- last lines of its traceback, a value that is not a u32, a function that
-- does not exist, a build's first error lines.  Real repositories, real
-- interpreters and compilers, through `vkit change certify`.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local causes = require "vkit.change.causes"

-- Certifies `candidate` (source of the bound file) with `method`; returns
-- what `vkit run show` and `vkit run report --format md` print, a report
-- in any format, and `vkit run show --json` decoded.
local function certify(p, path, candidate, method)
  local commit = p.commit({ [path] = candidate }, p.target)
  local summary = intents.certify(p, commit, { "--method", method })
  local project = p.dir .. "/project"
  local show = t.vkit { "run", "show", "--run", summary.run_id, "--project", project }
  local md = t.vkit { "run", "report", "--run", summary.run_id, "--format", "md", "--project", project }
  local function report(format)
    return t.vkit({ "run", "report", "--run", summary.run_id, "--format", format, "--project", project }).stdout
  end
  local function show_json()
    local r = t.vkit { "run", "show", summary.run_id, "--json", "--project", project }
    return assert(json.decode(r.stdout), r.stderr .. r.stdout)
  end
  return show.stdout, md.stdout, report, show_json
end

-- A project whose binding names `fn` in `language`.
local function project(language, fn)
  local s = intents.SOURCES[language]
  local artifacts = intents.artifacts_for(language, s.path)
  if fn then
    artifacts.binding_map = { path = "verification/binding.json", bytes = json.encode { schema_version = 1,
      language = language, source = s.path, ["function"] = fn } }
  end
  local p = intents.project { artifacts = artifacts, source_path = s.path, source = s.base }
  return p, s
end

local RAISES = "def score(x):\n    if x >= 50:\n        return 1 // 0\n    return 2 * x\n"
local NEGATIVE = "def score(x):\n    if x >= 50:\n        return -1\n    return 2 * x\n"

describe("the cause of an input that could not be checked", function()
  local p
  after_each(function() intents.finish(p) p = nil end)

  it("a Python value of -1 is 'returned -1, not a u32', in run show and the Markdown report", function()
    local s
    p, s = project("python")
    local show, md, report = certify(p, s.path, NEGATIVE, "finite_paired")
    assert.matches("cause %(candidate%): returned %-1, not a u32 %(3 inputs, first 59%)", show)
    assert.matches("cause %(candidate%): returned %-1, not a u32", md)
    assert.matches("<li>cause (candidate): returned -1, not a u32 (3 inputs, first 59)</li>", report "html", 1, true)
    local model = json.decode(report "json")
    assert.same({ { side = "candidate", text = "returned -1, not a u32", count = 3, unit = "inputs", first = 59 } },
      model.methods[1].causes)
    assert.not_matches("cause %(base%)", show)
    show = certify(p, s.path, NEGATIVE, "exhaustive")
    assert.matches("cause %(candidate%): returned %-1, not a u32 %(50 inputs, first 50%)", show)
  end)

  it("an exception is named with the last lines of its traceback (per-input) or its message (batch)", function()
    local s
    p, s = project("python")
    local show, _, _, show_json = certify(p, s.path, RAISES, "finite_paired")
    assert.matches('cause %(candidate%): File "[^"]*score%.py", line 3, in score | return 1 // 0 | '
      .. "ZeroDivisionError: integer division or modulo by zero %(3 inputs, first 59%)", show)
    -- `run show --json` carries the same causes as data, one per method and side
    local causes_json = show_json().causes
    assert.equal(1, #causes_json, json.encode(causes_json))
    local c = causes_json[1]
    assert.same({ "finite_paired", "candidate", 3, "inputs", 59 }, { c.method, c.side, c.count, c.unit, c.first })
    assert.matches('^File "[^"]*score%.py", line 3, in score | return 1 // 0 | ZeroDivisionError: integer division '
      .. "or modulo by zero$", c.text)
    show, _, _, show_json = certify(p, s.path, RAISES, "exhaustive")
    assert.matches("cause %(candidate%): raised ZeroDivisionError: integer division or modulo by zero %(50 inputs, first 50%)", show)
    assert.same({ { method = "exhaustive", side = "candidate", text = "raised ZeroDivisionError: integer division or "
      .. "modulo by zero", count = 50, unit = "inputs", first = 50 } }, show_json().causes)
    -- outside the pure profile: the fresh-module driver says the same
    show = certify(p, s.path, "import os\n" .. RAISES, "exhaustive")
    assert.matches("candidate observed fresh-module-per-input", show, 1, true)
    assert.matches("cause %(candidate%): raised ZeroDivisionError: integer division or modulo by zero %(50 inputs, first 50%)", show)
  end)

  it("a function that does not exist is named, with its file, for both sides", function()
    local s
    p, s = project("python", "nosuch")
    for _, method in ipairs { "exhaustive", "finite_paired" } do
      local show = certify(p, s.path, s.good, method)
      assert.matches("cause %(base%): no function `nosuch` in src/score%.py", show)
      assert.matches("cause %(candidate%): no function `nosuch` in src/score%.py", show)
      assert.not_matches("AttributeError", show)
    end
  end)

  it("a TypeScript value that is not a number is 'returned a string, not a u32'", function()
    local s
    p, s = project("typescript")
    local show = certify(p, s.path, "export function score(x: number): number {\n  return (x >= 50 ? 'big' : 2 * x) as any;\n}\n",
      "exhaustive")
    assert.matches("cause %(candidate%): returned a string, not a u32 %(50 inputs, first 50%)", show)
  end)

  it("a build that fails is shown by its first error lines", function()
    local s
    p, s = project("rust")
    local show = certify(p, s.path, "pub fn score(x: u32) -> u32 {\n    y\n}\n", "exhaustive")
    assert.matches("cause %(candidate%): build failed: error%[E0425%]: cannot find value `y` in this scope", show)
    assert.not_matches("cause %(base%)", show)
  end)

  it("a batch driver's cause lines are grouped and bounded to fit the stderr reserve", function()
    local limits = vkit.policies.change
    assert.is_true(limits.causes.lines * (limits.causes.line_bytes + 1) < limits.exhaustive.stderr_reserve_bytes)
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    t.write(dir .. "/cand.py", "def score(x):\n    if x % 2:\n        raise ValueError('odd ' + 'x' * 500)\n"
      .. "    return -x - 1\n")
    t.write(dir .. "/batch.py", require("vkit.change.batch_drivers").python(dir .. "/cand.py", "score"))
    local inputs = {}
    for x = 0, 39 do inputs[#inputs + 1] = string.pack("<I4", x) end
    t.write(dir .. "/in", table.concat(inputs))
    assert(os.execute(("/usr/bin/python3.11 -I -B %s < %s > %s 2> %s"):format(dir .. "/batch.py", dir .. "/in",
      dir .. "/out", dir .. "/err")))
    local stderr = assert(vkit.fs.read(dir .. "/err"))
    local lines = {}
    for line in stderr:gmatch "[^\n]+" do lines[#lines + 1] = line end
    assert.equal(limits.causes.lines, #lines)
    for _, line in ipairs(lines) do assert.is_true(#line <= limits.causes.line_bytes) end
    -- input 1 is the first odd one: 20 inputs raised the same exception
    assert.matches("^vkit driver: raise 20 1 ValueError: odd xxx", lines[2])
    assert.equal("vkit driver: more 14 0 -", lines[#lines])
    local found = causes.of_records({ { n = 1, label = "batch 1 pass 1 candidate", status = "exited", code = 0,
                                        stderr = stderr } })
    assert.equal(limits.causes.lines, #found)
    assert.same({ side = "candidate", text = "returned -1, not a u32", count = 1, unit = "inputs", first = 0 }, found[1])
    assert.equal("14 further distinct causes not listed by the driver", found[#found].text)
  end)

  it("reads the multi-parameter drivers' text-first lines: the first input named, the declared type said", function()
    local sig = assert(require("vkit.change.signature").parse { params = { { name = "x", type = "i32" },
      { name = "on", type = "bool" } }, returns = { "u8", "bool" } })
    local stderr = table.concat({
      "vkit driver: range 4 -3,true component 1: 300",
      "vkit driver: range 1 5,false component 2: type int",
      "vkit driver: range 2 7,true a tuple of 3, not 2",
      "vkit driver: range 1 8,true an array of 1, not 2",
      "vkit driver: range 1 9,true type NoneType",
      "vkit driver: crash 2 -1,false the input's process ended without an answer",
      -- a look-alike line from candidate code: its "first" is no input of
      -- the signature, so none is shown
      "vkit driver: raise 1 <script>,1 ValueError: x",
      "vkit driver: more 3 0 -",
    }, "\n") .. "\n"
    local found = causes.of_records({ { n = 1, label = "batch 1 pass 1 candidate", status = "exited", code = 0,
                                        stderr = stderr } }, { signature = sig })
    local got = {}
    for i, c in ipairs(found) do got[i] = { c.text, c.count, c.first } end
    assert.same({
      { "returned 300 as component 1, not a u8", 4, "x=-3, on=true" },
      { "returned an int as component 2, not a bool", 1, "x=5, on=false" },
      { "returned a tuple of 3, not 2", 2, "x=7, on=true" },
      { "returned an array of 1, not 2", 1, "x=8, on=true" },
      { "returned a NoneType, not a tuple (u8, bool)", 1, "x=9, on=true" },
      { "crashed: the input's process ended without an answer", 2, "x=-1, on=false" },
      { "raised ValueError: x", 1, nil },
      { "3 further distinct causes not listed by the driver", 0, nil },
    }, got)
    assert.equal("cause (candidate): returned 300 as component 1, not a u8 (4 inputs, first x=-3, on=true)",
      require("vkit.report.causes").line(found[1]))
    -- a per-input run of this profile is labelled with its call: a failed
    -- one counts that input
    found = causes.of_records({ { n = 2, label = "run candidate input f(x=1, on=true) rep 1", status = "timeout" } },
      { signature = sig })
    assert.same({ { side = "candidate", text = "timed out", count = 1, unit = "inputs", first = "x=1, on=true" } }, found)
    -- without a signature (the seed's profile) a u32 range line reads as before
    found = causes.of_records({ { n = 1, label = "batch 1 pass 1 candidate", status = "exited", code = 0,
                                  stderr = "vkit driver: range 3 59 -1\n" } })
    assert.same({ { side = "candidate", text = "returned -1, not a u32", count = 3, unit = "inputs", first = 59 } }, found)
  end)

  it("reads a Rust panic and a Node error from stderr, without the runtime's boilerplate", function()
    assert.equal("thread 'main' panicked at src/score.rs:2:5: | attempt to subtract with overflow", causes.exception(
      "\nthread 'main' panicked at src/score.rs:2:5:\nattempt to subtract with overflow\n"
      .. "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"))
    assert.equal("RangeError: too big | at score (/project/build/score.js:3:9)", causes.exception(
      "/project/build/score.js:3\n    throw new RangeError('too big');\n    ^\n\nRangeError: too big\n"
      .. "    at score (/project/build/score.js:3:9)\n    at Object.<anonymous> (/vkit/driver/driver.js:9:1)\n\nNode.js v20.20.2\n"))
  end)
end)
