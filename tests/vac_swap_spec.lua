-- Issue 14 item 2: the bytes hashed are the bytes judged.  A bundle whose
-- pinned artifact does not support its claims must never pass because a
-- file that supports them is served on a later read.  Each tampered
-- fixture below pins a cooked artifact (re-hashed honestly, so only
-- recomputation names the lie); the valid bundle's artifact supports the
-- claims.  The swap replaces the file (a new inode, as a filesystem that
-- serves other bytes on the next open) after the k-th time any vkit.fs,
-- vkit.hash or vkit.json function touches its path, for every k up to past
-- the last touch, and once more by a concurrent writer.
local vkit = require "vkit"
local t = require "tests.support.run"
local fs, json = vkit.fs, vkit.json

local FIXTURES = vkit.root .. "/fixtures/vac"

-- tampered fixture -> the artifact it cooked (each read by another reader:
-- JSON Lines, a streamed array, a whole document, document key order, text)
local CASES = {
  ["raw-aggregate-fleet-line"] = "evidence/raw_results.jsonl",
  ["raw-aggregate-crashkit-case"] = "evidence/eval_run.json",
  ["raw-aggregate-evalmut-row"] = "evidence/evalmut_run.json",
  ["raw-aggregate-modeldrift-control-moved"] = "evidence/metrics.json",
  ["raw-aggregate-modeldrift-results-md"] = "evidence/RESULTS.md",
}

local copy_tree = require("tests.vac_support").copy_tree

-- Run in a vkit process of its own: wraps every path-taking function of the
-- three modules before the verifier is loaded, swaps after touch `k` (0:
-- before the first), verifies, prints the verdict, the reasons and the
-- number of touches.
local DRIVER = [[
local vkit = require "vkit"
local bundle, rel, good, k = ...
k = tonumber(k)
local target = bundle .. "/" .. rel
local touches = 0
local function swap()
  local tmp = target .. ".swap"
  assert(vkit.fs.copy_file(good, tmp))
  assert(os.rename(tmp, target))
end
if k == 0 then swap() end
for _, name in ipairs { "vkit.fs", "vkit.hash", "vkit.json" } do
  local m = require(name)
  for fname, f in pairs(m) do
    if type(f) == "function" then
      m[fname] = function(p, ...)
        if type(p) ~= "string" or p ~= target then return f(p, ...) end
        local r = table.pack(f(p, ...))
        touches = touches + 1
        if touches == k then swap() end
        return table.unpack(r, 1, r.n)
      end
    end
  end
end
local result = assert(vkit.vac.verify(bundle))
print(result.verdict, table.concat(result.failures:names(), ","), touches)
]]

local function run_driver(driver, bundle, rel, good, k)
  local r = t.vkit { "script", driver, bundle, rel, good, tostring(k) }
  assert.equal(0, r.code, r.stderr)
  local verdict, reasons, touches = r.stdout:match "^(%S+)\t(%S*)\t(%d+)"
  assert(verdict, r.stdout)
  return verdict, reasons, tonumber(touches)
end

-- Runs the shell loop `writer` (it stops once the file `stop` exists)
-- while bundle is verified n times: every verification must fail.  The
-- writer is then stopped and waited for, so the directory can go (a bound
-- only a hang reaches: a loaded machine may take a while).  A zombie counts
-- as stopped: the writer's parent shell is gone, so it is reparented to
-- this process (a subreaper), which reaps it later.
local function verify_while_writing(writer, stop, pidfile, bundle, n)
  os.execute(("sh -c %s > /dev/null 2>&1 & echo $! > %s"):format(t.quote(writer), t.quote(pidfile)))
  local ok, err = pcall(function()
    for i = 1, n do
      local r = t.vkit { "vac", "verify", "--json", bundle }
      local doc = json.decode(r.stdout)
      assert(doc, r.stdout .. r.stderr)
      assert.equal("fail", doc.verdict, ("verification %d passed a cooked bundle"):format(i))
    end
  end)
  t.write(stop, "")
  local pid = t.slurp(pidfile):match "%d+"
  local function running()
    local stat = io.open("/proc/" .. pid .. "/stat")
    local state = stat and stat:read("a"):match "^%d+ %b() (%a)"
    if stat then stat:close() end
    return state ~= nil and state ~= "Z"
  end
  local deadline = vkit.sys.monotonic_ms() + 60000
  while running() and vkit.sys.monotonic_ms() < deadline do vkit.sys.sleep(0.01) end
  assert.is_false(running(), "the writer stopped")
  -- a shell's children (cp/mv/dd) outlive nothing: the loop checks stop each round
  assert(ok, err)
end

describe("vac: a file swapped between reads", function()
  local dir, cleanup
  before_each(function() dir, cleanup = t.tempdir() end)
  after_each(function() cleanup() end)

  for case, rel in pairs(CASES) do
    it(("never passes %s with the supporting %s served on a later read"):format(case, rel), function()
      local driver = dir .. "/driver.lua"
      t.write(driver, DRIVER)
      -- untouched, the tampered bundle fails
      local bundle = dir .. "/b0"
      copy_tree(FIXTURES .. "/tampered/" .. case, bundle)
      local verdict, reasons, touches = run_driver(driver, bundle, rel, FIXTURES .. "/valid/v01/" .. rel, -1)
      assert.equal("fail", verdict)
      assert.equal("raw-aggregate-mismatch", reasons)
      assert.is_true(touches >= 1)
      for k = 0, touches + 1 do
        bundle = dir .. "/b" .. (k + 1)
        copy_tree(FIXTURES .. "/tampered/" .. case, bundle)
        verdict, reasons = run_driver(driver, bundle, rel, FIXTURES .. "/valid/v01/" .. rel, k)
        assert.equal("fail", verdict, ("swapped after touch %d of %d: %s"):format(k, touches, reasons))
        -- either the pinned bytes were judged, or the other bytes were caught
        assert.is_truthy(reasons == "raw-aggregate-mismatch" or reasons:find("sha256-mismatch", 1, true),
          ("swapped after touch %d: %s"):format(k, reasons))
      end
    end)
  end

  it("never passes while a concurrent writer flips the artifact (40 verifications)", function()
    local case, rel = "raw-aggregate-crashkit-case", "evidence/eval_run.json"
    local bundle = dir .. "/b"
    copy_tree(FIXTURES .. "/tampered/" .. case, bundle)
    local cooked, good = dir .. "/cooked", FIXTURES .. "/valid/v01/" .. rel
    assert(fs.copy_file(bundle .. "/" .. rel, cooked))
    local target = bundle .. "/" .. rel
    local stop = dir .. "/stop"
    -- the writer runs until the spec creates `stop`; every rename is atomic
    local writer = ("while [ ! -e %s ]; do cp %s %s.a && mv %s.a %s; cp %s %s.b && mv %s.b %s; done"):format(
      t.quote(stop), t.quote(good), t.quote(target), t.quote(target), t.quote(target), t.quote(cooked),
      t.quote(target), t.quote(target), t.quote(target))
    verify_while_writing(writer, stop, dir .. "/writer.pid", bundle, 40)
  end)
  -- A large streamed artifact is read in chunks that a second thread
  -- hashes while the rows are scanned (json.read's tally): a file
  -- rewritten in place as it is read yields a mixture of its versions, and
  -- the mixture must be what is both hashed and judged.
  it("never passes a large artifact rewritten in place while it is read in chunks (30 verifications)", function()
    local bundles = require "bench.vac_bundles"
    local rel = "eval_run.json"
    local bundle = dir .. "/big"
    bundles.crashkit(bundle, 20000) -- about 3 MB: read in chunks
    local target = bundle .. "/" .. rel
    local honest = t.slurp(target)
    -- the lie: case 16 (failed) moved from kind-4 to kind-5, the same length
    local cooked, n = honest:gsub('"id":"case%-16","kind":"kind%-4"', '"id":"case-16","kind":"kind-5"', 1)
    assert.equal(1, n)
    assert.equal(#honest, #cooked)
    t.write(dir .. "/honest", honest)
    t.write(dir .. "/cooked", cooked)
    local r = t.vkit { "vac", "verify", "--json", bundle }
    assert.equal("pass", json.decode(r.stdout).verdict, r.stdout .. r.stderr)
    -- pin the cooked bytes, honestly hashed: only recomputation names the lie
    local manifest = t.slurp(bundle .. "/vac.json")
    local pinned, m = manifest:gsub(vkit.hash.sha256(honest), vkit.hash.sha256(cooked))
    assert.equal(1, m)
    t.write(bundle .. "/vac.json", pinned)
    t.write(target, cooked)
    r = t.vkit { "vac", "verify", "--json", bundle }
    local doc = json.decode(r.stdout)
    assert.equal("fail", doc.verdict, r.stdout)
    assert.matches("raw%-aggregate%-mismatch", r.stdout)
    -- the writer rewrites the same inode, 64 KiB at a time, with the honest
    -- and the cooked bytes in turn, until the spec creates `stop`
    local stop, pidfile = dir .. "/stop", dir .. "/writer.pid"
    local writer = ("while [ ! -e %s ]; do dd if=%s of=%s bs=64k conv=notrunc status=none; dd if=%s of=%s bs=64k conv=notrunc status=none; done")
      :format(t.quote(stop), t.quote(dir .. "/honest"), t.quote(target), t.quote(dir .. "/cooked"), t.quote(target))
    verify_while_writing(writer, stop, pidfile, bundle, 30)
  end)
end)
