-- Attacks on the one command (`vkit change certify --base REV --candidate
-- REV`), by a candidate's author who wants a pass: intents are read from
-- the base only and the candidate's edits to them are refused by preflight;
-- a base on a side branch is refused when the host names its trusted branch
-- (--trusted-target), and said plainly when it does not; a candidate equal
-- to the base, and one that does not descend from it.  Real repositories,
-- real runs.
local vkit = require "vkit"
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local authoring = require "vkit.change.authoring"

local S = intents.SOURCES.python
local LIST = "verification/change-intents/accepted.v1.json"

describe("vkit change certify --base --candidate under attack", function()
  local p, project
  before_each(function()
    p = intents.language_project "python"
    project = p.dir .. "/project"
  end)
  after_each(function() intents.finish(p) end)

  local function certify(argv)
    local full = { "change", "certify" }
    for _, a in ipairs(argv) do full[#full + 1] = a end
    full[#full + 1] = "--timeout"
    full[#full + 1] = "10m"
    return t.vkit(full, nil, { cd = project })
  end

  -- A subject row of the latest run's report (JSON), by label.
  local function subject_row(label)
    local r = t.vkit({ "run", "report", "--run", "latest", "--format", "json" }, nil, { cd = project })
    for _, row in ipairs(vkit.json.decode(r.stdout).subject) do
      if row.label == label then return row.value end
    end
  end

  local function runs()
    return #(vkit.fs.list(project .. "/.vkit/runs") or {})
  end

  -- A lax intent on score(): any output 0..200 for every input, and a
  -- difference policy approving any difference, so the broken candidate
  -- would conform to it.
  local function lax()
    local contract = { inputs = { { from = 0, to = 99 } }, observations = { { from = 0, to = 200 } },
                       requirements = { { inputs = { { from = 0, to = 99 } }, outputs = { { from = 0, to = 200 } } } } }
    local artifacts = {}
    for k, v in pairs(p.revision.artifacts) do artifacts[k] = { path = v.path, bytes = p.files[v.path] } end
    local files, digest = authoring.revision { requirement = { source = "LAX-1", statement = "anything goes" },
                                               contract = contract, artifacts = artifacts }
    files[LIST] = authoring.accepted { digest }
    local path, bytes = authoring.difference_policy(digest,
      { { name = "anything", inputs = { { from = 0, to = 99 } }, outputs = { { from = 0, to = 200 } } } })
    files[path] = bytes
    return files, digest
  end

  it("(a) a candidate editing what binds it is blocked by preflight, the verdict naming why", function()
    local lax_files, lax_digest = lax()
    local binding = p.revision.artifacts.binding_map.path
    local observation = p.revision.artifacts.observation_policy.path
    local revision = ("verification/change-intents/%s.v1.json"):format(p.digest)
    local policy_path, policy_bytes = authoring.difference_policy(p.digest,
      { { name = "anything", inputs = { { from = 0, to = 99 } }, outputs = { 100 } } })
    for _, case in ipairs {
      { "accepted-list-changed", lax_files },  -- accepts its own lax intent beside the change
      { "accepted-list-changed", { [LIST] = authoring.accepted { p.digest, lax_digest } } },
      { "intent-revision-changed", { [revision] = p.files[revision]:gsub("ISSUE%-42", "ISSUE-43") } },
      { "artifact-changed-in-candidate", { [binding] = p.files[binding]:gsub('"score"', '"other"') } },
      { "artifact-changed-in-candidate", { [observation] = p.files[observation]:gsub('"max_inputs":6', '"max_inputs":1') } },
      { "difference-policy-added", { [policy_path] = policy_bytes } },
      { "accepted-list-deleted", {}, { LIST } },
      { "intent-revision-deleted", {}, { revision } },
    } do
      local changes = { [S.path] = S.bad }
      for k, v in pairs(case[2]) do changes[k] = v end
      local candidate = p.commit(changes, p.target, case[3])
      local r = certify { "--base", p.target, "--candidate", candidate }
      assert.equal(1, r.code, case[1] .. ": " .. r.stdout .. r.stderr)
      -- the intent came from the base, whatever the candidate accepts
      assert.matches("vkit: intent " .. p.digest:sub(1, 12), r.stderr, 1, true)
      assert.matches(case[1], r.stdout, 1, true)
      assert.matches("\nverdict: blocked", r.stdout, 1, true)
    end
  end)

  it("(b) a base off the trusted branch is refused with --trusted-target, and said plainly without it", function()
    local lax_files, lax_digest = lax()
    local side = p.commit(lax_files, p.target)       -- the author's side branch accepting a lax intent
    local changes = { [S.path] = S.bad }
    for k, v in pairs(lax_files) do changes[k] = v end
    local candidate = p.commit(changes, side)
    local r = certify { "--base", side, "--candidate", candidate, "--trusted-target", p.target }
    assert.equal(1, r.code, r.stdout .. r.stderr)
    assert.matches(("the base %s is not the trusted target %s nor in its history"):format(side:sub(1, 12),
      p.target:sub(1, 12)), r.stderr, 1, true)
    assert.matches("(base-not-in-trusted-target)", r.stderr, 1, true)
    assert.equal(0, runs(), "nothing was queued")
    -- without a trusted branch the caller's base is the trusted target: the
    -- lax intent binds and the broken candidate passes, and the output says
    -- whose base it was
    r = certify { "--base", side, "--candidate", candidate }
    assert.equal(0, r.code, r.stdout .. r.stderr)
    assert.matches("vkit: intent " .. lax_digest:sub(1, 12) .. " (LAX-1, score in src/score.py)", r.stderr, 1, true)
    assert.matches(("\ntrusted target: the base %s as the caller gave it (no --trusted-target named the trusted "
      .. "branch)\nverdict: "):format(side), r.stdout, 1, true)
    assert.equal(("the base %s as the caller gave it (no --trusted-target named the trusted branch)"):format(side),
      subject_row "trusted target")
  end)

  it("(b) a base in the trusted branch's history binds only an intent still accepted there, under the same policy", function()
    local later = p.commit({ README = "later\n" }, p.target)
    local good = p.commit({ [S.path] = S.good }, p.target)
    local r = certify { "--base", p.target, "--candidate", good, "--trusted-target", later }
    assert.equal(0, r.code, r.stdout .. r.stderr)
    assert.matches(("\ntrusted target: %s; the base %s is in its history and its intent still accepted there\n")
      :format(later, p.target), r.stdout, 1, true)
    -- the run records it, and its report names it
    assert.equal(later, subject_row "trusted target":match "^(%x+); the base")
    r = certify { "--base", p.target, "--candidate", good, "--trusted-target", p.target }
    assert.equal(0, r.code, r.stdout .. r.stderr)
    assert.matches(("\ntrusted target: %s, the base\n"):format(p.target), r.stdout, 1, true)
    local before = runs()
    -- the trusted branch withdrew the intent since the base
    local withdrawn = p.commit({ [LIST] = authoring.accepted {} }, p.target)
    r = certify { "--base", p.target, "--candidate", good, "--trusted-target", withdrawn }
    assert.equal(1, r.code, r.stdout .. r.stderr)
    assert.matches("(intent-not-accepted-at-trusted-target)", r.stderr, 1, true)
    -- the trusted branch approved a difference policy since the base
    local path, bytes = authoring.difference_policy(p.digest, { { name = "raise", inputs = { 60 }, outputs = { 120 } } })
    local tightened = p.commit({ [path] = bytes }, p.target)
    r = certify { "--base", p.target, "--candidate", good, "--trusted-target", tightened }
    assert.equal(1, r.code, r.stdout .. r.stderr)
    assert.matches("(difference-policy-differs-at-trusted-target)", r.stderr, 1, true)
    assert.equal(before, runs(), "nothing was queued")
  end)

  it("(b) the recorded trusted branch is a full commit id or nothing is queued", function()
    local store = require("vkit.store").open(project)
    local request = vkit.json.decode(p.request(p.commit({ [S.path] = S.good }, p.target)))
    local id, message, code = require("vkit.runs.change").submit(store, { request = request,
      trusted_target = p.target, trusted_branch = "main" })
    assert.is_nil(id)
    assert.equal("trusted-branch-invalid", code, message)
    assert.equal(0, runs())
  end)

  it("(c) a candidate equal to the base: nothing to find, and with --intent it conforms", function()
    local r = certify { "--base", p.target, "--candidate", p.target }
    assert.equal(2, r.code, r.stdout .. r.stderr)
    assert.matches("the candidate is the base: nothing changed; no accepted intent binds", r.stderr, 1, true)
    r = certify { "--base", p.target, "--candidate", p.target, "--intent", p.digest }
    assert.equal(0, r.code, r.stdout .. r.stderr)
  end)

  it("(d) a candidate that does not descend from the base is blocked by preflight (target-not-ancestor)", function()
    local later = p.commit({ README = "later\n" }, p.target)
    local good = p.commit({ [S.path] = S.good }, p.target)   -- a sibling of later, not its descendant
    local r = certify { "--base", later, "--candidate", good }
    assert.equal(1, r.code, r.stdout .. r.stderr)
    assert.matches("target-not-ancestor", r.stdout, 1, true)
    assert.matches("\nverdict: blocked", r.stdout, 1, true)
  end)
end)

describe("the one command's verdict line", function()
  local certify = require "vkit.commands.change.certify"

  it("keeps a failed run's error on its line: a line break cannot start a CI workflow command", function()
    local line = certify.verdict({ id = "r-1", state = { status = "failed",
      error = "boom\n::error file=src/score.py::forged\r\n\27[32mall_inputs_conform" } }, 5, 60)
    assert.is_nil(line:find("[\r\n\27]"), line)
    assert.equal("verdict: the run failed: boom\\x0a::error file=src/score.py::forged\\x0d\\x0a\\x1b[32m"
      .. "all_inputs_conform (exit 5)", line)
    line = certify.verdict({ id = "r-1", state = { status = "done", outcome = "odd\n::notice::x" } }, 5, 60)
    assert.is_nil(line:find("[\r\n]"), line)
  end)
end)
