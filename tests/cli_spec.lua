-- End to end: the built vkit binary as a user runs it.
local t = require "tests.support.run"
local vkit = require "vkit"

describe("vkit (the binary)", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  local function script(body, ...)
    t.write(dir .. "/s.lua", body)
    return t.vkit({ "script", dir .. "/s.lua", ... })
  end

  describe("script", function()
    it("sets arg as the lua interpreter does and passes ... to the chunk", function()
      local r = script('print(arg[0], #arg, arg[1], arg[2], select("#", ...), ...)', "one", "two")
      assert.equal(0, r.code)
      assert.equal(dir .. "/s.lua\t2\tone\ttwo\t2\tone\ttwo\n", r.stdout)
    end)

    it("offers vkit as a global and as require 'vkit', the same table", function()
      local r = script 'print(vkit == require "vkit", type(vkit.hash.sha256), type(vkit.json.decode))'
      assert.equal("true\tfunction\tfunction\n", r.stdout)
    end)

    it("prints a traceback on stderr and exits 1 on an uncaught error", function()
      local r = script "local function inner() error('kaboom') end\ninner()"
      assert.equal(1, r.code)
      assert.matches("kaboom", r.stderr)
      assert.matches("stack traceback", r.stderr)
      assert.matches("in local 'inner'", r.stderr)
    end)

    it("shows only the script's own frames in a traceback, never vkit's dispatcher", function()
      local r = script "local function inner() error('kaboom') end\ninner()"
      local frames = r.stderr:match "stack traceback:\n(.*)$"
      assert.is_string(frames, r.stderr)
      assert.equal("\t[C]: in function 'error'\n\t" .. dir .. "/s.lua:1: in local 'inner'\n\t" .. dir
        .. "/s.lua:2: in main chunk\n", frames)
    end)

    it("reads the script from standard input with -, arguments and arg as for a file", function()
      local r = t.vkit({ "script", "-", "one", "two" }, 'print(arg[0], #arg, ...)\nerror("from stdin")\n')
      assert.equal(1, r.code)
      assert.equal("-\t2\tone\ttwo\n", r.stdout)
      assert.matches("vkit: stdin:2: from stdin\nstack traceback:\n\t%[C%]: in function 'error'\n\tstdin:2: in main chunk\n$",
        r.stderr)
    end)

    it("exits with os.exit's status", function()
      assert.equal(7, script("os.exit(7)").code)
      assert.equal(0, script("os.exit(true)").code)
      assert.equal(1, script("os.exit(false)").code)
    end)

    it("reports a syntax error with exit 1", function()
      local r = script "this is not lua"
      assert.equal(1, r.code)
      assert.matches("s.lua:1:", r.stderr)
    end)

    it("works from any directory", function()
      t.write(dir .. "/s.lua", 'print(vkit.hash.sha256 "")')
      local r = t.vkit({ "script", "s.lua" }, nil, { cd = dir })
      assert.equal(0, r.code)
      assert.equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n", r.stdout)
    end)

    it("is a usage error without a readable file", function()
      assert.equal(2, t.vkit({ "script" }).code)
      local r = t.vkit { "script", dir .. "/missing.lua" }
      assert.equal(2, r.code)
      assert.matches("cannot open", r.stderr)
    end)
  end)

  describe("help, version and usage errors", function()
    it("lists every subcommand with --help", function()
      local r = t.vkit { "--help" }
      assert.equal(0, r.code)
      for _, name in ipairs { "script", "repl", "version" } do
        assert.matches("\n  " .. name .. " +%S", r.stdout)
      end
    end)

    it("prints the versions of everything embedded", function()
      local r = t.vkit { "version" }
      assert.equal(0, r.code)
      assert.matches("^vkit %d+%.%d+%.%d+\nLua 5%.4%.%d+\nlua%-cjson 2%.%d[%.%d]*\nOpenSSL 3%.%d+%.%d+ %(libcrypto, linked statically: SHA%-256%)\nlibgit2 1%.%d+%.%d+\n"
        .. "tree%-sitter 0%.%d+%.%d+ %(npm tree%-sitter, language ABI %d+, oldest compatible %d+%)\n"
        .. "tree%-sitter%-rust 0%.%d+%.%d+ %(npm tree%-sitter%-rust, ABI %d+%)\n$", r.stdout)
      local as_json = vkit.json.decode(t.vkit({ "version", "--json" }).stdout)
      assert.equal(require("vkit.ts").identity().runtime.version, as_json["tree-sitter"].version)
      assert.equal(require("vkit.ts").identity().grammar.version, as_json["tree-sitter-rust"].version)
      assert.equal(vkit.version, as_json.vkit.version)
    end)

    it("answers an unknown subcommand with one line and exit 2", function()
      local r = t.vkit { "frobnicate" }
      assert.equal(2, r.code)
      assert.matches('^vkit: unknown subcommand "frobnicate"\n', r.stderr)
      assert.equal("", r.stdout)
    end)

    -- load_command opens a command's file once (require) and looks it up
    -- again only when require fails: a file that is there but cannot load
    -- says why, never "unknown subcommand".  Commands load only from vkit's
    -- own library (tests/cli_loading_spec.lua), so the broken one is put in
    -- a copy of it.
    it("tells a command that cannot load from an unknown one", function()
      local cli = require "vkit.cli"
      assert.is_true(os.execute(("cp %s %s/vkit && cp -r %s %s && ln -s %s %s"):format(t.quote(vkit.exe), t.quote(dir),
        t.quote(vkit.root .. "/lua"), t.quote(dir), t.quote(vkit.root .. "/policies"), t.quote(dir))))
      t.write(dir .. "/lua/vkit/commands/broken_for_spec.lua", 'error("the module itself fails")\n')
      local r = vkit.proc.run { exe = dir .. "/vkit", argv = { "vkit", "broken_for_spec" }, cwd = dir, deadline_ms = 60000 }
      assert.equal(3, r.code, r.stderr)
      assert.matches("the module itself fails", r.stderr, 1, true)
      assert.is_nil(r.stderr:find("unknown subcommand", 1, true))
      assert.is_nil(cli.load_command "no_such_command_for_spec")
      assert.is_nil(cli.load_command "../vkit/cli")
      assert.equal(require "vkit.commands.vac", cli.load_command "vac")
    end)

    it("takes a number option only as a plain decimal", function()
      local args = require "vkit.args"
      local spec = { options = { wait = "number" } }
      assert.equal(16, args.parse({ "--wait", "16" }, spec).wait)
      assert.equal(2.5, args.parse({ "--wait=2.5" }, spec).wait)
      assert.equal(-1, args.parse({ "--wait", "-1" }, spec).wait, "a range check names it out of range")
      for _, bad in ipairs { "0x10", "1e1", " 5", "5 ", "inf", "nan", "+5", ".5", "5.", "" } do
        local opts, message = args.parse({ "--wait", bad }, spec)
        assert.is_nil(opts, bad)
        assert.matches("needs a decimal number", message)
      end
      local r = t.vkit { "run", "wait", "--run", "r-20260101T000000Z-abcdefabcdef", "--wait", "0x10", "--project", dir }
      assert.equal(2, r.code)
      assert.matches('--wait needs a decimal number, got "0x10"', r.stderr, 1, true)
    end)

    it("answers bad arguments with exit 2", function()
      assert.equal(2, t.vkit({ "version", "extra" }).code)
      assert.equal(2, t.vkit({ "repl", "--bogus" }).code)
      assert.equal(2, t.vkit({}).code)
    end)
  end)

  describe("repl over a pipe", function()
    it("prints expression values without prompt noise", function()
      local r = t.vkit({ "repl" }, '1 + 1\n"s"\nvkit.json.decode("[1,2.5]")\n')
      assert.equal(0, r.code)
      assert.equal('2\n"s"\n[ 1, 2.5 ]\n', r.stdout)
    end)

    it("keeps state between lines and reads multi-line chunks", function()
      local r = t.vkit({ "repl" }, "x = 40\nfunction f(a)\n  return a + 2\nend\nf(x)\n")
      assert.equal("42\n", r.stdout)
    end)

    it("marks cycles when pretty-printing nested tables", function()
      local r = t.vkit({ "repl" }, "t = {a = {b = {}}}\nt.a.b.back = t\nt\n")
      assert.matches("{ a = { b = { back = <cycle: table: 0x%x+> } } }", r.stdout)
    end)

    it("reports errors on stderr, carries on, and exits 1", function()
      local r = t.vkit({ "repl" }, "error('first')\n1 + nil\n3\n")
      assert.equal(1, r.code)
      assert.equal("3\n", r.stdout)
      assert.matches("first", r.stderr)
      assert.matches("arithmetic", r.stderr)
    end)

    it("refuses an unfinished chunk at end of input", function()
      local r = t.vkit({ "repl" }, "function f()\n")
      assert.equal(1, r.code)
      assert.matches("unfinished", r.stderr)
    end)
  end)
end)
