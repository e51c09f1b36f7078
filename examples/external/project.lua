--- Builds a real Git project whose accepted manifest runs the example
-- backend: z3 produces the evidence, cvc5 re-checks it and writes the
-- receipt.  Used by examples/external/demo.lua (`make demo-external`) and
-- the specs; the manifest entry is written by vkit.protocol.manifest_entry.
--
--   local project = dofile(vkit.root .. "/examples/external/project.lua")
--   local p = project.build(dir, { overrides })   -- p.path, p.repo, p.head
--
-- overrides: producer / checker = fields replacing the command entries
-- (e.g. a different script or deadline); files = extra {path = bytes};
-- inputs = extra package inputs; checker_script = bytes replacing check.py.
local vkit = require "vkit"
local json = vkit.json

local M = {}

local HERE = vkit.root .. "/examples/external"
M.PYTHON = "/usr/bin/python3.11"
M.COMPONENT = "bvadd"
M.CHECK = "bvadd-laws"

local function read(path)
  return assert(vkit.fs.read(path, 1 << 20))
end

--- Host files the solvers run from (pinned as trusted tool dependencies).
function M.solver_pins(solver)
  if solver == "z3" then return { "/usr/bin/z3" } end
  return { "/usr/bin/cvc5", "/usr/lib/x86_64-linux-gnu/libcvc5.so.1", "/usr/lib/x86_64-linux-gnu/libcvc5parser.so.1" }
end

-- A command of the entry: a script run by the pinned Python, with the
-- solver it calls pinned as a trusted tool dependency; `extra` replaces fields.
local function command(script, solver, extra)
  local c = {
    executable = M.PYTHON,
    argv = { "{{python}}", "-I", "-B", "{{snapshot}}/" .. script, "{{request}}" },
    dependencies = { script, "verification/backend/smtlib.py" },
    trusted_tool_dependencies = M.solver_pins(solver),
    deadline_ms = 60000,
  }
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

function M.files(opts)
  opts = opts or {}
  local files = {
    ["spec/bvadd.smt2"] = read(HERE .. "/spec/bvadd.smt2"),
    ["verification/backend/smtlib.py"] = read(HERE .. "/verification/backend/smtlib.py"),
    ["verification/backend/produce.py"] = read(HERE .. "/verification/backend/produce.py"),
    ["verification/backend/check.py"] = opts.checker_script or read(HERE .. "/verification/backend/check.py"),
  }
  for k, v in pairs(opts.files or {}) do files[k] = v end
  local inputs = { "spec/bvadd.smt2", "verification/backend/check.py", "verification/backend/produce.py",
                   "verification/backend/smtlib.py" }
  for _, extra in ipairs(opts.inputs or {}) do inputs[#inputs + 1] = extra end
  local entry = assert(vkit.protocol.manifest_entry {
    component = M.COMPONENT,
    files = files,
    inputs = inputs,
    checks = { {
      id = M.CHECK,
      claim = {
        specification = "spec/bvadd.smt2",
        obligations = { "commutativity", "associativity", "negation-inverse" },
        assumptions = { "32-bit two's-complement bit-vectors (SMT-LIB QF_BV)" },
        model_scope = "all pairs and triples of 32-bit vectors",
      },
      assurance = "smt-decided-and-independently-rechecked",
      evidence = { "results.json", "z3.log" },
      producer = command("verification/backend/produce.py", "z3", opts.producer),
      checker = command("verification/backend/check.py", "cvc5", opts.checker),
    } },
  })
  for path, bytes in pairs(entry) do files[path] = bytes end
  return files
end

--- Commits files on refs/heads/main (HEAD), with `parent` if given.
function M.commit(repo, files, parent)
  local entries = {}
  for path, bytes in pairs(files) do entries[#entries + 1] = { path = path, bytes = bytes } end
  return assert(repo:commit_tree { tree = assert(repo:write_tree(entries)), parents = parent and { parent } or json.array(),
                                   message = "verification project\n", ref = "refs/heads/main" })
end

function M.build(dir, opts)
  local path = dir .. "/project"
  local repo = assert(vkit.git.init(path))
  local head = M.commit(repo, M.files(opts))
  return { path = path, repo = repo, head = head }
end

return M
