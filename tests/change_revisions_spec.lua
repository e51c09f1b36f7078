-- Git revisions on the command line (issue 33 item 1): wherever a command
-- asks for a commit, HEAD, a branch or tag name, main~1 and a unique
-- abbreviated id name it, resolved once by the command line to the full
-- id the request and the run record; a revision naming nothing, or an
-- abbreviation of several objects, is a named usage error.  The request
-- format keeps the seed's rule: a short id inside a request file is still
-- refused.  The repositories are real, built by the spec; abbreviations
-- are resolved both from loose objects (vkit's own bounded loose reader)
-- and from a pack.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"

local function git(project, args)
  local ok = os.execute(("git -C %s -c user.name=t -c user.email=t@example.invalid %s >/dev/null 2>&1")
    :format(t.quote(project), args))
  assert(ok, "git " .. args)
end

describe("Git revisions", function()
  local p, project, first, second
  before_each(function()
    p = intents.project()
    project = p.dir .. "/project"
    -- target <- first <- second; main is second, v1 (annotated) first
    first = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x, 100)\n" }, p.target)
    second = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x * 2, 100)\n" }, first)
    git(project, "update-ref refs/heads/main " .. second)
    git(project, "symbolic-ref HEAD refs/heads/main")
    git(project, "update-ref refs/heads/base " .. p.target)
    git(project, "tag -a -m v1 v1 " .. first)
    vkit.fs.mkdirs(project .. "/src/deeper")
  end)
  after_each(function() intents.finish(p) end)

  -- `vkit change request` on two revisions: the decoded request, or r.
  local function request(base, candidate, cd)
    local argv = { "change", "request", "--intent", p.digest, "--base", base, "--candidate", candidate }
    if not cd then
      argv[#argv + 1] = "--project"
      argv[#argv + 1] = project
    end
    local r = t.vkit(argv, nil, { cd = cd })
    return r.code == 0 and json.decode(r.stdout) or nil, r
  end

  it("names commits by HEAD, branch, tag, main~1, a unique prefix and the full id, recorded as full ids", function()
    for _, case in ipairs {
      { "base", "HEAD", p.target, second },
      { "base", "main", p.target, second },
      { "base", "v1", p.target, first },
      { "base", "main~1", p.target, first },
      { "HEAD~2", "HEAD^", p.target, first },
      { p.target:sub(1, 12), second:sub(1, 7), p.target, second },
      { p.target, second, p.target, second },
    } do
      local req, r = request(case[1], case[2])
      assert.equal(0, r.code, case[1] .. " " .. case[2] .. ": " .. r.stderr)
      assert.equal(case[3], req.base, case[1])
      assert.equal(case[4], req.candidate, case[2])
    end
  end)

  it("finds the repository upward from a subdirectory", function()
    local req, r = request("base", "HEAD", project .. "/src/deeper")
    assert.equal(0, r.code, r.stderr)
    assert.equal(p.target, req.base)
    assert.equal(second, req.candidate)
  end)

  it("names a revision that names nothing, or not a commit, with the repository", function()
    local real = vkit.fs.realpath(project)
    for _, case in ipairs {
      { "HEAD~9", "--base HEAD~9: no such revision in " .. real },
      { "nosuch", "--base nosuch: no such revision in " .. real },
      { "abc", "--base abc: no such revision in " .. real },
      { ("f"):rep(40), "no such revision" },
      { "HEAD^{tree}", "--base HEAD^{tree}: names no commit in " .. real },
      { "main..v1", "--base main..v1: not a revision in " .. real },
    } do
      local _, r = request(case[1], "HEAD")
      assert.equal(2, r.code, case[1])
      assert.matches(case[2], r.stderr, 1, true)
    end
    local _, r = request("base", "")
    assert.equal(2, r.code)
    r = t.vkit({ "change", "request", "--intent", p.digest, "--base", "HEAD", "--candidate", "HEAD" }, nil,
      { cd = p.dir })
    assert.equal(7, r.code, "outside any repository")
    assert.matches("is not a Git repository", r.stderr, 1, true)
  end)

  it("refuses an abbreviation of several objects, loose or packed", function()
    -- Blobs until two ids share their first 4 hex digits (birthday bound:
    -- a few hundred; deterministic, since a blob's id is its content's).
    local seen, prefix = {}, nil
    for i = 1, 5000 do
      local id = p.repo:write_blob("blob " .. i .. "\n")
      local four = id:sub(1, 4)
      if seen[four] then
        prefix = four
        break
      end
      seen[four] = id
    end
    assert.truthy(prefix)
    local _, r = request(prefix, "HEAD")
    assert.equal(2, r.code)
    assert.matches("--base " .. prefix .. ": ambiguous in ", r.stderr, 1, true)
    assert.matches("type more digits", r.stderr, 1, true)
    git(project, "gc -q")
    assert.is_nil(vkit.fs.lstat(("%s/.git/objects/%s/%s"):format(project, second:sub(1, 2), second:sub(3))),
      "the commits are packed now")
    _, r = request(prefix, "HEAD")
    assert.equal(2, r.code)
    assert.matches("ambiguous", r.stderr, 1, true)
    local req
    req, r = request(p.target:sub(1, 10), second:sub(1, 8))
    assert.equal(0, r.code, r.stderr)
    assert.equal(p.target, req.base)
    assert.equal(second, req.candidate)
  end)

  it("refuses a hex word that names a ref: a tag pushed under a commit's short id cannot move it", function()
    -- git takes the ref over the abbreviation; a tag named like the base's
    -- short id, pointing at the candidate, would make the base anything
    local short = p.target:sub(1, 8)
    git(project, ("tag %s %s"):format(short, second))
    local _, r = request(short, "HEAD")
    assert.equal(2, r.code, r.stderr)
    assert.matches("--base " .. short .. ": ambiguous in ", r.stderr, 1, true)
    assert.matches("the ref refs/tags/" .. short .. " is named so", r.stderr, 1, true)
    -- a branch too, and the candidate's side as well
    git(project, ("branch %s %s"):format(first:sub(1, 10), p.target))
    _, r = request("base", first:sub(1, 10))
    assert.equal(2, r.code, r.stderr)
    assert.matches("--candidate " .. first:sub(1, 10) .. ": ambiguous", r.stderr, 1, true)
    -- a ref named like a full id whose commit is not there (a shallow
    -- clone): Git would take the ref
    local absent = ("0123456789abcdef"):rep(3):sub(1, 40)
    git(project, ("tag %s %s"):format(absent, second))
    _, r = request(absent, "HEAD")
    assert.equal(2, r.code, r.stderr)
    assert.matches("--base " .. absent .. ": ambiguous in ", r.stderr, 1, true)
    -- the full ref name, or a longer abbreviation, or the full id, are unambiguous
    local req
    req, r = request("refs/tags/" .. short, p.target:sub(1, 9))
    assert.equal(0, r.code, r.stderr)
    assert.equal(second, req.base)
    assert.equal(p.target, req.candidate)
    req, r = request(p.target, first)
    assert.equal(0, r.code, r.stderr)
    assert.equal(first, req.candidate)
  end)

  it("refuses a name that denotes several refs: a tag origin/main cannot stand in for the remote branch", function()
    -- Git's rules try refs/tags/ before refs/remotes/: whoever may push a
    -- tag would otherwise choose the trusted target
    git(project, "update-ref refs/remotes/origin/main " .. second)
    git(project, "tag origin/main " .. p.target)
    local _, r = request("origin/main~1", "HEAD")
    assert.equal(2, r.code, r.stderr)
    assert.matches("--base origin/main~1: ambiguous in ", r.stderr, 1, true)
    assert.matches("origin/main names 2 refs (refs/tags/origin/main, refs/remotes/origin/main); give the full ref "
      .. "name", r.stderr, 1, true)
    t.write(p.dir .. "/request.json", p.request(second))
    r = t.vkit { "change", "certify", "--project", project, "--request", p.dir .. "/request.json",
                 "--trusted-target", "origin/main" }
    assert.equal(2, r.code, r.stderr)
    assert.matches("--trusted-target origin/main: ambiguous", r.stderr, 1, true)
    assert.same({}, vkit.fs.list(project .. "/.vkit/runs") or {}, "nothing was queued")
    -- a tag and a branch of one name too
    git(project, "tag main " .. p.target)
    _, r = request("base", "main")
    assert.equal(2, r.code, r.stderr)
    assert.matches("main names 2 refs (refs/tags/main, refs/heads/main)", r.stderr, 1, true)
    -- the full names are not ambiguous
    local req
    req, r = request("refs/tags/main", "refs/remotes/origin/main")
    assert.equal(0, r.code, r.stderr)
    assert.equal(p.target, req.base)
    assert.equal(second, req.candidate)
  end)

  it("keeps refusing a branch name or a short id inside a request file", function()
    local req = assert(request("base", "HEAD"))
    for _, field in ipairs { "base", "candidate" } do
      for _, bad in ipairs { "main", req[field]:sub(1, 12) } do
        local doc = json.decode(json.encode(req))
        doc[field] = bad
        t.write(p.dir .. "/request.json", json.encode(doc))
        local r = t.vkit { "change", "certify", "--project", project, "--request", p.dir .. "/request.json",
                           "--trusted-target", "base" }
        assert.equal(2, r.code, field .. " " .. bad)
        assert.matches(field .. ": expected a full lowercase commit id", r.stderr, 1, true)
        assert.same({}, vkit.fs.list(project .. "/.vkit/runs") or {}, "nothing was queued")
      end
    end
    -- and the library API keeps the seed's rule for the trusted target
    local store = require("vkit.store").open(project, { create = true })
    t.write(p.dir .. "/request.json", p.request(second))
    local id = assert(require("vkit.runs.change").submit(store, { request = json.decode(p.request(second)),
                                                                   trusted_target = "base" }))
    local run = require("vkit.runs.change").wait(store, id, 60)
    t.kill_workers(project)
    assert.equal("blocked", run.state.outcome)
  end)
end)

describe("change certify --request with revisions", function()
  local p
  after_each(function() intents.finish(p) end)

  it("resolves --trusted-target and certifies against the full id it names", function()
    p = intents.language_project "python"
    local project = p.dir .. "/project"
    local good = p.commit({ [intents.SOURCES.python.path] = intents.SOURCES.python.good }, p.target)
    git(project, "update-ref refs/heads/main " .. p.target)
    t.write(p.dir .. "/request.json", p.request(good))
    local r = t.vkit { "change", "certify", "--project", project, "--request", p.dir .. "/request.json",
                       "--trusted-target", "main", "--timeout", "10m", "--json" }
    assert.equal(0, r.code, r.stderr)
    local shadow = json.decode(r.stdout)
    assert.equal("all_inputs_conform", shadow.outcome)
    assert.equal(p.target, shadow.target.commit or shadow.target)
  end)
end)
