-- The pure-function profiles of Python and TypeScript candidates (issue 29):
-- allow-lists over tree-sitter's nodes, names and operators.  Every rule of
-- each profile has a case here that it alone refuses, and the candidates
-- the demo certifies are admitted.  The cases run through the profile
-- directly and, for a sample, through the separate admission process.
local vkit = require "vkit"
local ts = require "vkit.ts"
local syntax = require "vkit.admission.syntax"
local admission = require "vkit.change.admission"
local limits = vkit.policies.limits.admission

local function read(path) return assert(vkit.fs.read(path, 1 << 20)) end

local CASES = {
  python = {
    admitted = {
      "# -*- coding: utf-8 -*-\ndef level(points):\r\n    return min(points // 100, 10)\r\n",
      read(vkit.root .. "/examples/demo/python/base.py"),
      read(vkit.root .. "/examples/demo/python/conforming.py"),
      read(vkit.root .. "/examples/demo/python/one_input.py"),
      read(vkit.root .. "/examples/demo/python/violating.py"),
      '"""Levels."""\nimport math\nfrom math import gcd\nLIMIT: int = 10\nPAIR = (1, -2)\n'
        .. 'def level(points: int) -> int:\n    """Doc."""\n    a, b = divmod(points, 100)\n'
        .. '    for i in range(0, 3):\n        a += i\n        if a > 5:\n            break\n'
        .. '    while a > LIMIT and not b:\n        a -= 1\n'
        .. '    x = min(a, 10) if a >= 0 else math.floor(-1.5)\n    return helper(x) ** 2 // 3 + gcd(a, 4)\n'
        .. 'def helper(v):\n    return v % 3\n',
    },
    refused = {
      { "global", "N = 0\ndef level(p):\n    global N\n    N += 1\n    return p\n" },
      { "constant", "C = []\ndef level(p):\n    return p\n" },
      { "module_code", "def level(p):\n    return p\nif __name__ == '__main__':\n    pass\n" },
      { "import", "import os\ndef level(p):\n    return p\n" },
      { "import", "from math import floor as f\ndef level(p):\n    return p\n" },
      { "signature", "def level(p, cache={}):\n    return p\n" },
      { "signature", "def level(p, q):\n    return p\n" },
      { "dunder", "def level(p):\n    return __file__\n" },
      { "name", "def level(p):\n    return x\n" },
      { "statement", "def level(p):\n    min(p, 2)\n    return p\n" },
      { "statement", "def level(p):\n    try:\n        return p\n    except Exception:\n        return 1\n" },
      { "attribute", "import math\ndef level(p):\n    return math.random(p)\n" },
      { "attribute", "def level(p):\n    return p.bit_length()\n" },
      { "expression", "def level(p):\n    return [p][0]\n" },
      { "expression", "def level(p):\n    return (y := p)\n" },
      { "nested_function", "def level(p):\n    def f():\n        return 1\n    return p\n" },
      { "nested_function", "def level(p):\n    f = lambda: 1\n    return p\n" },
      { "decorator", "@x\ndef level(p):\n    return p\n" },
      { "class", "class A:\n    pass\ndef level(p):\n    return p\n" },
      { "annotation", "def level(p: print('x')) -> int:\n    return p\n" },
      { "no_function", "def other(p):\n    return p\n" },
      { "operator", "def level(p):\n    return p is None\n" },
      { "shadowing", "def level(p):\n    min = 3\n    return p\n" },
      { "assignment", "def level(p):\n    level.x = 3\n    return p\n" },
      { "call", "def level(p):\n    return min(p, key=abs)\n" },
      { "call", "def level(p):\n    return eval('1')\n" },
      { "call", "def level(p):\n    return getattr(p, 'real')\n" },
      { "async", "async def level(p):\n    return p\n" },
      { "rebinding", "def level(p):\n    return p\nlevel = 3\n" },
      { "syntax_error", "def level(p):\n    return (\n" },
      { "for_range", "def level(p):\n    for i in (1, 2):\n        p += i\n    return p\n" },
      -- code that CPython runs but the parser reads as a comment (a lone CR ends CPython's line)
      { "characters", "def level(x):\n    # note\r    import os\r    return 99\n    return min(2 * x, 100)\n" },
      { "characters", "def level(x):\n\treturn x\n" },
      { "characters", "def level(x):\n    return x\f\n" },
      -- a UTF-7 declaration: +AAo- is a newline to CPython, a comment to the parser
      { "encoding", "# coding: utf-7\ndef level(x):\n    # +AAo-    return 99\n    return min(2 * x, 100)\n" },
      { "encoding", "#!/usr/bin/env python3\n# -*- coding: latin-1 -*-\ndef level(x):\n    return x\n" },
      -- an f-string is no docstring: its interpolations run
      { "docstring", "BIAS = 0\ndef level(x):\n    f\"{globals().__setitem__('BIAS', 1)}\"\n    return x - BIAS\n" },
      { "docstring", "f\"{print(1)}\"\ndef level(x):\n    return x\n" },
      -- CPython reads this name as min (NFKC); the profile would not
      { "name", "def level(x):\n    \239\189\141in = 3\n    return x\n" },
    },
  },
  typescript = {
    admitted = {
      read(vkit.root .. "/examples/demo/typescript/base.ts"),
      read(vkit.root .. "/examples/demo/typescript/conforming.ts"),
      read(vkit.root .. "/examples/demo/typescript/one_input.ts"),
      read(vkit.root .. "/examples/demo/typescript/violating.ts"),
      "const LIMIT = 10;\nexport const K: number = -2;\nexport function level(points: number): number {\n"
        .. "  const hundreds = Math.trunc(points / 100);\n  let a: number = 0;\n"
        .. "  for (let i = 0; i < 3; i++) { a += i; }\n  while (a > 0 && !(a === 2)) a--;\n"
        .. "  if (points === 1337) return 3; else { a = a | 1; }\n"
        .. "  return hundreds > LIMIT ? helper(a) : hundreds + K;\n}\n"
        .. "function helper(x: number): number { return x % 3; }\n",
      "export function level(x: number): number {\n  let t = 0;\n  for (let i = 0; i < 3; i++) { let t2 = i; t += t2; }\n"
        .. "  { const t2 = 5; t += t2; }\n  return x + t;\n}\n",
    },
    refused = {
      { "constant", "let calls = 0;\nexport function level(p: number): number { return p; }\n" },
      { "constant", "const calls = [0];\nexport function level(p: number): number { return p; }\n" },
      { "assignment", "const C = 0;\nexport function level(p: number): number { C = 1; return p; }\n" },
      { "member", "export function level(p: number): number { return process.argv.length; }\n" },
      { "member", "export function level(p: number): number { return Math.random(); }\n" },
      { "member", "export function level(p: number): number { return (p).constructor.length; }\n" },
      { "import", "import * as fs from 'fs';\nexport function level(p: number): number { return p; }\n" },
      { "module_code", "export function level(p: number): number { return p; }\nconsole.log(1);\n" },
      { "module_code", "declare const process: any;\nexport function level(p: number): number { return p; }\n" },
      { "nested_function", "export function level(p: number): number { const f = () => 1; return p; }\n" },
      { "no_function", "function level(p: number): number { return p; }\n" },
      { "signature", "export function level(p: any): number { return p; }\n" },
      { "signature", "export function level(p: number = 3): number { return p; }\n" },
      { "operator", "export function level(p: number): number { return typeof p === 'number' ? 1 : 0; }\n" },
      { "class", "class A {}\nexport function level(p: number): number { return p; }\n" },
      { "statement", "export function level(p: number): number { try { return p; } catch (e) { return 0; } }\n" },
      { "statement", "export function level(p: number): number { Math.floor(p); return p; }\n" },
      { "declaration", "export function level(p: number): number { var x = 1; return p + x; }\n" },
      { "call", "export function level(p: number): number { return eval('1'); }\n" },
      { "shadowing", "const Math = 1;\nexport function level(p: number): number { return p; }\n" },
      { "expression", "export function level(p: number): number { return [p][0]; }\n" },
      { "expression", "export function level(p: number): number { return 'x' === 'y' ? 1 : p; }\n" },
      { "async", "export async function level(p: number): number { return p; }\n" },
      { "name", "export function level(p: number): number { return q; }\n" },
      { "rebinding", "export function level(p: number): number { return p; }\nconst level = 1;\n" },
      { "syntax_error", "export function level(p: number): number { return (; }\n" },
      -- a name declared in a block that has ended is a global outside it
      { "name", "// x\nexport function level(x: number): number {\n  { let escape = 0; }\n"
        .. "  const first = escape !== 7;\n  return first ? x : 0;\n}\n" },
      { "assignment", "export function level(x: number): number {\n  { let escape = 0; }\n  escape = 7;\n  return x;\n}\n" },
      { "assignment", "export function level(x: number): number {\n  const c = 1;\n  c++;\n  return x;\n}\n" },
      { "directive", "// @ts-nocheck\nexport function level(x: number): number {\n  return x;\n}\n" },
      { "directive", "/// <reference path=\"x.d.ts\" />\nexport function level(x: number): number {\n  return x;\n}\n" },
      -- an escape names Math to the engine
      { "name", "export function level(x: number): number {\n  { let \\u004dath = 0; }\n  return x;\n}\n" },
      { "declaration", "export function level(x: number): number {\n  let a = 1;\n  let a = 2;\n  return x;\n}\n" },
    },
  },
}

for language, cases in pairs(CASES) do
  local profile = require("vkit.admission." .. language)
  describe("the pure-function profile of " .. language, function()
    for i, source in ipairs(cases.admitted) do
      it(("admits candidate %d"):format(i), function()
        local r = profile.admit(ts, source, limits, { expected_function = "level" })
        assert.is_true(r.admitted, r.message)
        assert.equal("level", r["function"])
      end)
    end
    for _, case in ipairs(cases.refused) do
      it(("refuses %s: %s"):format(case[1], case[2]:gsub("\n", " "):sub(1, 60)), function()
        local r = profile.admit(ts, case[2], limits, { expected_function = "level" })
        assert.is_false(r.admitted, "admitted")
        assert.equal(case[1], r.reason, r.message)
        assert.is_string(profile.reasons[r.reason])
        assert.is_true(r.line >= 1 and r.column >= 1)
      end)
    end
    it("names a refusal for every rule it has (each rule is exercised by a case above)", function()
      local seen = {}
      for _, case in ipairs(cases.refused) do seen[case[1]] = true end
      for reason in pairs(profile.reasons) do
        if not syntax.LIMIT_REASONS[reason] or reason == "syntax_error" then
          assert.is_true(seen[reason] == true, "no case for the rule " .. reason)
        end
      end
    end)
    it("refuses a source past the size limit before parsing it", function()
      local r = profile.admit(ts, ("#"):rep(limits.max_source_bytes + 1), limits, { expected_function = "level" })
      assert.equal("too_large", r.reason)
    end)
  end)
end

describe("admission in the separate process", function()
  it("admits and refuses through `vkit ts_admit --language`, naming the rule and the line", function()
    local ok = admission.admit("python", "src/level.py", CASES.python.admitted[1], "level")
    assert.is_true(ok.admitted)
    assert.equal("vkit.pure-admission.v1", ok.schema)
    assert.equal("tree-sitter-python", ok.parser.grammar.package)
    local refused = admission.admit("typescript", "src/level.ts", CASES.typescript.refused[1][2], "level")
    assert.is_false(refused.admitted)
    assert.equal("admission-constant", refused.refusal.rule)
    assert.equal("src/level.ts:1", refused.refusal.at)
    assert.matches("outside the pure profile %(admission%-constant, src/level.ts:1%)", admission.not_established(refused))
  end)
  it("never admits when the process fails", function()
    local r = admission.admit("python", "src/x.py", "def level(p):\n    return p\n", "level",
      { launcher = { exe = "/bin/false", argv = { "false" } } })
    assert.is_false(r.admitted)
    assert.equal("failed", r.outcome)
    assert.equal("admission-failed", r.refusal.rule)
  end)
end)
