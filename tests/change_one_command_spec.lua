-- The one command for CI (issue 33 item 2): `vkit change certify --base
-- REV --candidate REV [--timeout T]` finds the accepted intent whose bound
-- source the change touches (or takes --intent), builds the request in
-- memory, binds it with the resolved base as the trusted target, waits up
-- to T, prints the verdict in words and exits with the outcome's status.
-- Real repositories, real certification runs of a Python function.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"

-- Whether text ends with the line `last`.
local function ends_with_line(text, last)
  return text:sub(-(#last + 2)) == "\n" .. last .. "\n"
end

local function git(project, args)
  assert(os.execute(("git -C %s %s >/dev/null 2>&1"):format(t.quote(project), args)), "git " .. args)
end

describe("vkit change certify --base --candidate", function()
  local p, project, good, bad, unrelated
  local S = intents.SOURCES.python
  before_each(function()
    p = intents.language_project "python"
    project = p.dir .. "/project"
    good = p.commit({ [S.path] = S.good }, p.target)
    bad = p.commit({ [S.path] = S.bad }, p.target)
    unrelated = p.commit({ ["README"] = "words\n" }, p.target)
    git(project, "update-ref refs/heads/main " .. p.target)
    git(project, "update-ref refs/heads/good " .. good)
    git(project, "update-ref refs/heads/bad " .. bad)
    git(project, "update-ref refs/heads/unrelated " .. unrelated)
    git(project, "symbolic-ref HEAD refs/heads/good")
    vkit.fs.mkdirs(project .. "/src/deeper")
  end)
  after_each(function() intents.finish(p) end)

  local function certify(argv, cd)
    local full = { "change", "certify" }
    for _, a in ipairs(argv) do full[#full + 1] = a end
    return t.vkit(full, nil, { cd = cd or project })
  end

  it("certifies a conforming change from a subdirectory: exit 0 and the verdict in words", function()
    local r = certify({ "--base", "main", "--candidate", "HEAD", "--timeout", "10m" }, project .. "/src/deeper")
    assert.equal(0, r.code, r.stdout .. r.stderr)
    assert.truthy(ends_with_line(r.stdout, "verdict: all_inputs_conform: every accepted input checked natively and "
      .. "conforming; the candidate is inside the pure-function profile (exit 0)"), r.stdout)
    assert.matches("vkit: intent " .. p.digest:sub(1, 12) .. " (ISSUE-42, score in src/score.py)", r.stderr, 1, true)
    -- the run recorded full ids, the trusted target being the base
    local shown = t.vkit({ "run", "show", "latest", "--json" }, nil, { cd = project .. "/src" })
    assert.equal(0, shown.code, shown.stderr)
    local store = require("vkit.store").open(project)
    local run = assert(store:get(json.decode(shown.stdout).run_id))
    assert.equal(p.target, run.job.payload.trusted_target)
    assert.equal(p.target, run.job.payload.request.base)
    assert.equal(good, run.job.payload.request.candidate)
  end)

  it("exits 1 on a violation, with the verdict in words", function()
    local r = certify { "--base", "main", "--candidate", "bad", "--timeout", "10m" }
    assert.equal(1, r.code, r.stdout .. r.stderr)
    assert.truthy(ends_with_line(r.stdout, "verdict: observed_violation: a method observed a violation (exit 1)"),
      r.stdout)
  end)

  it("exits 4 when the timeout ends first, and run wait goes on waiting beyond 60 s", function()
    local r = certify { "--base", "main", "--candidate", "good", "--timeout", "0" }
    assert.equal(4, r.code, r.stdout .. r.stderr)
    local id = r.stdout:match "^run (r%-%S+):"
    assert.truthy(id, r.stdout)
    assert.matches("verdict: still %a+ after 0s; `vkit run wait " .. id:gsub("%-", "%%-")
      .. " %-%-timeout 30m` goes on waiting %(exit 4%)", r.stdout)
    r = t.vkit({ "run", "wait", id:sub(-12), "--timeout", "10m" }, nil, { cd = project .. "/src" })
    assert.equal(0, r.code, r.stdout .. r.stderr)
  end)

  it("takes --intent, by digest or revision file, and says when no accepted intent binds the change", function()
    local r = certify { "--base", "main", "--candidate", "unrelated", "--timeout", "10m" }
    assert.equal(2, r.code)
    assert.matches("no accepted intent binds a source the change touches (accepted: " .. p.digest
      .. " (score in src/score.py)); name one with --intent", r.stderr, 1, true)
    r = certify { "--base", "main", "--candidate", "good", "--intent", p.digest, "--timeout", "10m", "--json" }
    assert.equal(0, r.code, r.stderr)
    assert.equal(p.digest, json.decode(r.stdout).intent_digest)
    local path = ("%s/revision.json"):format(p.dir)
    t.write(path, p.files[("verification/change-intents/%s.v1.json"):format(p.digest)])
    r = certify { "--base", "main", "--candidate", "good", "--intent", path, "--timeout", "10m" }
    assert.equal(0, r.code, r.stderr)
    r = certify { "--base", "main", "--candidate", "good", "--intent", ("e"):rep(64), "--timeout", "10m" }
    assert.equal(1, r.code, "a digest the base does not hold")
    assert.matches("has no intent revision", r.stderr, 1, true)
  end)

  it("refuses malformed options before anything is queued", function()
    for _, case in ipairs {
      { { "--base", "main" }, "--base and --candidate go together" },
      { { "--base", "main", "--candidate", "good", "--wait", "5" }, "--wait belongs to --request" },
      { { "--base", "main", "--candidate", "good", "--timeout", "7h" }, "at most 6h" },
      { { "--base", "main", "--candidate", "good", "--request", "x.json" }, "not both" },
      { { "--base", "nosuch", "--candidate", "good" }, "--base nosuch: no such revision in" },
      { { "--candidate", "good", "--base", "main", "--intent", "nope" }, "neither a digest" },
      { { "--request", "x.json", "--trusted-target", "main", "--intent", p.digest }, "--intent belongs to --base" },
    } do
      local r = certify(case[1])
      assert.equal(2, r.code, table.concat(case[1], " ") .. ": " .. r.stderr)
      assert.matches(case[2], r.stderr, 1, true)
    end
    assert.same({}, vkit.fs.list(project .. "/.vkit/runs") or {}, "nothing was queued")
    local outside = t.vkit({ "change", "certify", "--base", "main", "--candidate", "good" }, nil, { cd = p.dir })
    assert.equal(7, outside.code)
  end)
end)
