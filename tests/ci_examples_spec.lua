-- The CI examples (issue 33 item 2): examples/ci/github-actions.yml and
-- examples/ci/gitlab-ci.yml are real workflows (parsed here by PyYAML, as
-- the CI services parse YAML), and every vkit command in them is run
-- verbatim, by the shell, on a local repository built by the spec the way
-- each service presents a pull/merge request: the base branch under
-- origin/, the candidate checked out, the service's variables set.  A
-- conforming change passes the certify step; a violating one fails it;
-- the report steps write their files either way.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"

local ROOT = vkit.fs.realpath(".")

-- The parsed workflow, as JSON through /usr/bin/python3.11 and PyYAML.
local function parse(path)
  local tmp, cleanup = t.tempdir()
  local ok = os.execute(("/usr/bin/python3.11 -c %s %s > %s"):format(t.quote(
    "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)"), t.quote(path),
    t.quote(tmp .. "/out.json")))
  local doc = ok and json.decode(t.slurp(tmp .. "/out.json"))
  cleanup()
  return assert(doc, path .. " is not YAML PyYAML reads")
end

-- The vkit command lines of a list of shell scripts, in order.
local function vkit_lines(scripts)
  local out = {}
  for _, script in ipairs(scripts) do
    for line in (script .. "\n"):gmatch "([^\n]*)\n" do
      local command = line:match "^%s*(vkit .*)$"
      if command then out[#out + 1] = command end
    end
  end
  return out
end

local SERVICES = {
  github = {
    file = "examples/ci/github-actions.yml",
    -- the steps' `run` scripts; the certify step is the one that runs `vkit change certify`
    scripts = function(doc)
      local job = doc.jobs.certify
      assert.equal("debian:12", job.container)
      -- PyYAML reads the key `on` as YAML 1.1's boolean true; GitHub as "on"
      local on = doc.on or doc["true"]
      assert.truthy(on and on.pull_request ~= nil, "runs on pull requests")
      local scripts = {}
      for _, step in ipairs(job.steps) do
        if step.uses == "actions/checkout@v4" then assert.equal(0, step.with["fetch-depth"], "the whole history") end
        if step.run then scripts[#scripts + 1] = step.run end
      end
      return scripts
    end,
    env = function(dir) return { GITHUB_BASE_REF = "main", GITHUB_STEP_SUMMARY = dir .. "/summary.md" } end,
    files = { "vkit-report.md", "vkit-report.html", "vkit-junit.xml" },
  },
  gitlab = {
    file = "examples/ci/gitlab-ci.yml",
    scripts = function(doc)
      local job = doc["vkit-certify"]
      assert.equal("debian:12", job.image)
      assert.equal("0", job.variables.GIT_DEPTH)
      assert.equal("vkit-junit.xml", job.artifacts.reports.junit)
      local scripts = {}
      for _, part in ipairs { "before_script", "script", "after_script" } do
        for _, line in ipairs(job[part]) do scripts[#scripts + 1] = line end
      end
      return scripts
    end,
    env = function() return { CI_MERGE_REQUEST_TARGET_BRANCH_NAME = "main" } end,
    files = { "vkit-report.html", "vkit-junit.xml" },
  },
}

local function git(project, args)
  assert(os.execute(("git -C %s %s >/dev/null 2>&1"):format(t.quote(project), args)), "git " .. args)
end

for name, service in pairs(SERVICES) do
  describe(service.file, function()
    local p
    after_each(function() intents.finish(p) end)

    it("is a workflow whose vkit commands certify a conforming change and fail a violating one", function()
      local lines = vkit_lines(service.scripts(parse(ROOT .. "/" .. service.file)))
      local certify_lines = 0
      for _, line in ipairs(lines) do
        if line:match "^vkit change certify " then certify_lines = certify_lines + 1 end
      end
      assert.equal(1, certify_lines, name .. ": one certify command")
      assert.truthy(#lines > 1, name .. ": and report commands")

      local S = intents.SOURCES.python
      p = intents.language_project "python"
      local project = p.dir .. "/project"
      local candidates = { good = p.commit({ [S.path] = S.good }, p.target), bad = p.commit({ [S.path] = S.bad }, p.target) }
      git(project, "update-ref refs/remotes/origin/main " .. p.target)
      for _, case in ipairs { { "good", 0 }, { "bad", 1 } } do
        git(project, "update-ref --no-deref HEAD " .. candidates[case[1]])
        for _, f in ipairs(service.files) do os.remove(project .. "/" .. f) end
        local env = { "PATH=" .. t.quote(vkit.fs.realpath(vkit.exe):match "^(.*)/" .. ":" .. os.getenv "PATH") }
        for k, v in pairs(service.env(p.dir)) do env[#env + 1] = k .. "=" .. t.quote(v) end
        table.sort(env)
        for _, line in ipairs(lines) do
          local cmd = ("cd %s && env %s sh -c %s > %s/out 2>&1"):format(t.quote(project), table.concat(env, " "),
            t.quote(line), t.quote(p.dir))
          local _, _, code = os.execute(cmd)
          local expected = line:match "^vkit change certify " and case[2] or 0
          assert.equal(expected, code, ("%s %s: %s\n%s"):format(name, case[1], line, t.slurp(p.dir .. "/out")))
        end
        for _, f in ipairs(service.files) do
          assert.truthy(vkit.fs.lstat(project .. "/" .. f), name .. ": " .. f .. " written")
        end
        local junit = t.slurp(project .. "/vkit-junit.xml")
        assert.matches(case[1] == "good" and "all_inputs_conform" or "observed_violation", junit)
      end
    end)
  end)
end
