-- The command line helps a person who mistypes or asks (issue 33 item 6):
-- "did you mean" for a mistyped command, action or option, `vkit help X [ACTION]`
-- printing exactly `vkit X [ACTION] --help`, and `-V` as `--version`.
local t = require "tests.support.run"
local suggest = require "vkit.cli.suggest"

describe("vkit.cli.suggest", function()
  it("measures insertions, deletions, substitutions and swaps of neighbours as one edit each", function()
    assert.equal(0, suggest.distance("run", "run"))
    assert.equal(1, suggest.distance("shwo", "show"), "a swap is one edit")
    assert.equal(1, suggest.distance("rn", "run"))
    assert.equal(1, suggest.distance("verifyy", "verify"))
    assert.equal(1, suggest.distance("chenge", "change"))
    assert.equal(2, suggest.distance("chnaeg", "change"))
    assert.equal(3, suggest.distance("", "run"))
  end)

  it("suggests the nearest names only, or none when nothing is near", function()
    local names = { "cancel", "list", "replay", "report", "show", "wait", "worker" }
    assert.same({ "show" }, suggest.closest("shwo", names))
    assert.same({ "report" }, suggest.closest("reprot", names))
    assert.same({ "replay", "report" }, suggest.closest("rep", names), "a start shared by two: both")
    assert.same({}, suggest.closest("x", names))
    assert.same({}, suggest.closest("frobnicate", names))
    assert.equal("; did you mean 'show'?", suggest.hint("shwo", names))
    assert.equal("", suggest.hint("zzz", names))
  end)
end)

describe("the command line", function()
  it("answers a mistyped command or action with the nearest names, exit 2", function()
    for _, case in ipairs {
      { { "chnage" }, "unknown subcommand \"chnage\"; did you mean 'change'?", "vkit --help" },
      { { "verfiy", "x" }, "did you mean 'verify'?", "vkit --help" },
      { { "run", "shwo", "--run", "x" }, "unknown action \"shwo\" of vkit run; did you mean 'show'?", "vkit run --help" },
      { { "change", "certfy" }, "did you mean 'certify'?", "vkit change --help" },
      { { "vac", "verfy" }, "did you mean 'verify'?", "vkit vac --help" },
      { { "change", "intent", "inti" }, "did you mean 'init'?", "vkit change intent init --help" },
      { { "run", "show", "--projet", "x" }, "unknown option --projet; did you mean '--project'?", "vkit run show --help" },
      { { "change", "intent", "init", "--langauge", "rust" }, "did you mean '--language'?",
        "vkit change intent init --help" },
      { { "help", "rnu" }, "did you mean 'run'?", "vkit --help" },
    } do
      local r = t.vkit(case[1])
      local what = table.concat(case[1], " ")
      assert.equal(2, r.code, what)
      assert.equal("", r.stdout, what)
      assert.matches(case[2], r.stderr, 1, true)
      assert.matches("See '" .. case[3] .. "'", r.stderr, 1, true)
    end
    local far = t.vkit { "frobnicate" }
    assert.equal(2, far.code)
    assert.equal("vkit: unknown subcommand \"frobnicate\"\nSee 'vkit --help'.\n", far.stderr, "no guess when nothing is near")
  end)

  it("prints with `vkit help X [ACTION]` exactly what `vkit X [ACTION] --help` prints", function()
    assert.equal(t.vkit({ "--help" }).stdout, t.vkit({ "help" }).stdout)
    for _, words in ipairs { { "change" }, { "change", "certify" }, { "change", "intent", "init" }, { "run" },
                             { "run", "wait" }, { "vac" }, { "vac", "verify" }, { "verify" }, { "version" } } do
      local asked = t.vkit { "help", table.unpack(words) }
      local flagged = { table.unpack(words) }
      flagged[#flagged + 1] = "--help"
      local direct = t.vkit(flagged)
      local what = "help " .. table.concat(words, " ")
      assert.equal(0, asked.code, what)
      assert.equal(direct.stdout, asked.stdout, what)
      assert.matches("^%s*usage: vkit " .. words[1], asked.stdout, nil, what)
    end
  end)

  it("takes -V for --version", function()
    local long, short = t.vkit { "--version" }, t.vkit { "-V" }
    assert.equal(0, short.code)
    assert.equal(long.stdout, short.stdout)
    assert.matches("^vkit %d", short.stdout)
  end)
end)
