--- examples/external/demo.lua: an external solver/checker pair through the
-- protocol of seed 000 (what `make demo-external` runs).
--
--   vkit script examples/external/demo.lua [--dir DIR]
--
-- Builds a Git project (examples/external/project.lua) whose accepted
-- manifest entry pins a producer (z3 decides three laws of 32-bit addition
-- and writes results.json and z3.log) and an independent checker (cvc5
-- re-decides each law and writes the bound receipt), then, through the job
-- store as `vkit verify` does:
--
--   1. verifies the component: PASS, every obligation accepted;
--   2. replays that run: the retained evidence, the pinned checker, a fresh
--      receipt (the stored status and receipt are never consulted): PASS;
--   3. commits a specification with a false law (x + x = x): z3 finds a
--      model, the checker cannot accept it: BLOCKED, never PASS (and not a
--      counterexample verdict: the protocol has none).
--
-- Exits 0 only when each outcome is the one expected.  Everything it calls
-- is the public Lua API (docs/api.md).
local vkit = require "vkit"
local json = vkit.json

local project = dofile(vkit.root .. "/examples/external/project.lua")

local WAIT_SECONDS = 600

local function say(fmt, ...) io.stdout:write(fmt:format(...), "\n") end

local function dir_of(argv)
  if argv[1] == "--dir" and argv[2] then return argv[2] end
  if #argv > 0 then
    io.stderr:write("usage: vkit script examples/external/demo.lua [--dir DIR]\n")
    os.exit(2)
  end
  local build = vkit.fs.lstat(vkit.root .. "/build")
  if build and build.kind == "dir" then return vkit.root .. "/build/demo-external" end
  return assert(vkit.fs.mkdtemp((os.getenv "TMPDIR" or "/tmp") .. "/vkit-demo-external-"))
end

-- Waits for a run and prints what it established; returns its outcome.
local function show(store, id, label)
  local run = assert(store:wait(id, WAIT_SECONDS))
  local s = run.state
  say("== %s  (run %s)", label, id)
  if s.status ~= "done" then
    say("   the job is %s: %s", s.status, tostring(s.error))
    return s.status
  end
  say("   %s: %s", s.outcome, tostring(s.summary.message))
  for _, r in ipairs(assert(store:reports(id))) do
    if r.name == "checker/receipt.json" and r.document then
      for _, o in ipairs(r.document.obligations) do
        say("   obligation %-18s %-9s evidence %s", o.name, o.result, table.concat(o.evidence, ", "))
      end
      say("   receipt sha256 %s", r.sha256)
    end
  end
  return s.outcome
end

local function main(argv)
  local dir = dir_of(argv)
  if vkit.fs.lstat(dir) then assert(vkit.fs.remove_tree(dir)) end
  assert(vkit.fs.mkdirs(dir))
  io.stderr:write("building the external-backend project in ", dir, "\n")
  local p = project.build(dir)
  local store = assert(vkit.store.open(p.path))
  local outcomes, expected = {}, {}

  local ids = assert(vkit.protocol.verify(store, project.COMPONENT))
  outcomes[1], expected[1] = show(store, ids[1], "verify " .. project.COMPONENT), "PASS"

  local replay = assert(vkit.protocol.replay(store, ids[1]))
  outcomes[2], expected[2] = show(store, replay, "replay " .. ids[1]), "PASS"

  local files = project.files()
  files["spec/bvadd.smt2"] = files["spec/bvadd.smt2"]:gsub("%(bvadd x %(bvneg x%)%) #x00000000", "(bvadd x x) x")
  project.commit(p.repo, files, p.head)
  ids = assert(vkit.protocol.verify(store, project.COMPONENT))
  outcomes[3], expected[3] = show(store, ids[1], "verify a false law (x + x = x)"), "BLOCKED"

  say("")
  local ok = true
  for i, o in ipairs(outcomes) do
    ok = ok and o == expected[i]
    say("%d. %-8s %s", i, tostring(o), o == expected[i] and "as expected" or ("UNEXPECTED (expected " .. expected[i] .. ")"))
  end
  say("%s", vkit.protocol.ESTABLISHES)
  say("%s", vkit.protocol.DOES_NOT_ESTABLISH)
  say("runs are kept in %s/.vkit/runs (vkit run show --run ID --project %s)", p.path, p.path)
  return ok and 0 or 1
end

os.exit(main({ ... }))
