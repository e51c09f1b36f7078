--- A real Git repository with an accepted intent, for the change specs.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local authoring = require "vkit.change.authoring"

local host_tools = require "vkit.change.host_tools"

local M = {}

M.artifacts = {
  binding_map = { path = "verification/binding.json",
                  bytes = '{"schema_version":1,"language":"python","source":"src/score.py","function":"score"}\n' },
  codec = { path = "verification/codec.json",
            bytes = '{"schema_version":1,"input":"u32-le","output":"decimal-u32-line"}\n' },
  observation_policy = { path = "verification/observation.json",
    bytes = '{"schema_version":1,"repetitions":2,"selection":"spread","max_inputs":16,"shrink_limit":6,"process_deadline_ms":10000}\n' },
  environment_model = { path = "verification/environment.json",
                        bytes = '{"schema_version":1,"env":{"LC_ALL":"C"},"toolchains":{}}\n' },
}

-- score(x) = min(2x, 100) over inputs 0..99; inputs 0..49 must double.
M.contract = {
  inputs = { { from = 0, to = 99 } },
  observations = { { from = 0, to = 200 } },
  requirements = {},
}
for x = 0, 49 do M.contract.requirements[#M.contract.requirements + 1] = { inputs = { x }, outputs = { 2 * x } } end
M.contract.requirements[#M.contract.requirements + 1] = { inputs = { { from = 50, to = 99 } }, outputs = { { from = 100, to = 200 } } }

M.source = "def score(x):\n    return min(2 * x, 100)\n"

--- Artifacts for a language, with this host's tools pinned in the
--  environment model.  observation: fields overriding the default policy.
function M.artifacts_for(language, source, observation)
  local policy = { schema_version = 1, repetitions = 2, selection = "spread", max_inputs = 6, shrink_limit = 6,
                   process_deadline_ms = 10000 }
  for k, v in pairs(observation or {}) do policy[k] = v end
  local env = assert(host_tools.environment_model { language })
  return {
    binding_map = { path = "verification/binding.json", bytes = json.encode { schema_version = 1, language = language,
                    source = source, ["function"] = "score" } },
    codec = M.artifacts.codec,
    observation_policy = { path = "verification/observation.json", bytes = json.encode(policy) },
    environment_model = { path = "verification/environment.json", bytes = json.encode(env, { indent = 2 }) },
  }
end

--- Builds the repository; returns a context table:
--  {repo, dir, cleanup, files, digest, target, revision, commit(files, parent)}
function M.project(opts)
  opts = opts or {}
  local dir, cleanup = t.tempdir()
  local repo = assert(vkit.git.init(dir .. "/project"))
  -- opts.revision: files, digest, revision of another profile's intent
  -- (tests/support/multi.lua), with opts.claim its request's claim
  local files, digest, revision
  if opts.revision then
    files, digest, revision = opts.revision()
  else
    files, digest, revision = authoring.revision {
      requirement = { source = "ISSUE-42", statement = "score doubles small inputs and caps at 100" },
      contract = opts.contract or M.contract,
      artifacts = opts.artifacts or M.artifacts,
    }
  end
  files["verification/change-intents/accepted.v1.json"] = authoring.accepted { digest }
  files[opts.source_path or "src/score.py"] = opts.source or M.source
  for k, v in pairs(opts.extra or {}) do files[k] = v end
  local ctx = { repo = repo, dir = dir, files = files, digest = digest, revision = revision }
  function ctx.commit(changes, parent, removals)
    local merged = {}
    for k, v in pairs(ctx.files) do merged[k] = v end
    for k, v in pairs(changes or {}) do merged[k] = v end
    for _, k in ipairs(removals or {}) do merged[k] = nil end
    local entries = {}
    for path, bytes in pairs(merged) do entries[#entries + 1] = { path = path, bytes = bytes } end
    local tree = assert(repo:write_tree(entries))
    return assert(repo:commit_tree { tree = tree, parents = parent and { parent } or json.array(), message = "commit\n" })
  end
  ctx.target = ctx.commit()
  function ctx.cleanup()
    repo:close()
    cleanup()
  end
  --- The request bytes for a candidate (claim = the intent's contract by default).
  function ctx.request(candidate, claim, base)
    return authoring.request(base or ctx.target, candidate, digest,
      claim or opts.claim or authoring.contract(opts.contract or M.contract, {
        codec = revision.artifacts.codec.sha256,
        observation_policy = revision.artifacts.observation_policy.sha256,
        environment_model = revision.artifacts.environment_model.sha256 }))
  end
  return ctx
end

-- score() in each language: the base, a conforming refactor, a candidate
-- that breaks inputs 30..49, and one wrong at input 77 only (a spread
-- selection of 6 inputs over 0..99 runs 0, 19, 39, 59, 79, 99).
M.SOURCES = {
  python = { path = "src/score.py",
             base = "def score(x):\n    return min(2 * x, 100)\n",
             good = "def score(x):\n    return min(x + x, 100)\n",
             bad = "def score(x):\n    return 100 if x >= 30 else 2 * x\n",
             one_input = "def score(x):\n    if x == 77:\n        return 99\n    return min(x + x, 100)\n" },
  rust = { path = "src/score.rs",
           base = "pub fn score(x: u32) -> u32 {\n    if x >= 50 {\n        return 100;\n    }\n    x * 2\n}\n",
           good = "pub fn score(x: u32) -> u32 {\n    let doubled: u32 = x * 2;\n    if doubled > 100 { 100 } else { doubled }\n}\n",
           bad = "pub fn score(x: u32) -> u32 {\n    if x >= 30 {\n        return 100;\n    }\n    x * 2\n}\n",
           one_input = "pub fn score(x: u32) -> u32 {\n    if x == 77 {\n        return 99;\n    }\n    if x >= 50 { 100 } else { x * 2 }\n}\n" },
  typescript = { path = "src/score.ts",
                 base = "export function score(x: number): number {\n  return Math.min(2 * x, 100);\n}\n",
                 good = "export function score(x: number): number {\n  const d = x + x;\n  return d > 100 ? 100 : d;\n}\n",
                 bad = "export function score(x: number): number {\n  return x >= 30 ? 100 : 2 * x;\n}\n",
                 one_input = "export function score(x: number): number {\n  return x === 77 ? 99 : Math.min(2 * x, 100);\n}\n" },
}

--- A project whose binding is score() in `language`, at its base source.
function M.language_project(language, observation)
  local s = M.SOURCES[language]
  return M.project { artifacts = M.artifacts_for(language, s.path, observation), source_path = s.path, source = s.base }
end

-- Two functions of one Python file, each bound by its own accepted intent
-- (the same contract): score(x) = min(2x, 100) and bonus(x) = min(2x, 100)
-- through a helper, cap().
M.TWO = {
  path = "src/score.py",
  base = "def cap(v):\n    return min(v, 100)\n\n\ndef score(x):\n    return min(2 * x, 100)\n\n\n"
    .. "def bonus(x):\n    return cap(2 * x)\n",
}

--- A project whose accepted list holds two intents on two functions of
--  src/score.py: p.digest binds score, p.bonus_digest binds bonus.
function M.two_functions_project()
  local artifacts = M.artifacts_for("python", M.TWO.path)
  local bonus_artifacts = {}
  for k, v in pairs(artifacts) do bonus_artifacts[k] = v end
  bonus_artifacts.binding_map = { path = "verification/binding-bonus.json", bytes = json.encode {
    schema_version = 1, language = "python", source = M.TWO.path, ["function"] = "bonus" } }
  local files, digest = authoring.revision {
    requirement = { source = "ISSUE-43", statement = "bonus doubles small inputs and caps at 100" },
    contract = M.contract, artifacts = bonus_artifacts,
  }
  -- M.project's own revision (ISSUE-42 on score), accepted beside bonus's
  local _, first = authoring.revision { requirement = { source = "ISSUE-42",
    statement = "score doubles small inputs and caps at 100" }, contract = M.contract, artifacts = artifacts }
  files["verification/change-intents/accepted.v1.json"] = authoring.accepted { first, digest }
  local p = M.project { artifacts = artifacts, source_path = M.TWO.path, source = M.TWO.base, extra = files }
  assert(p.digest == first)
  p.bonus_digest = digest
  return p
end

--- Ends a spec's project: stops its job-store workers, removes it.
function M.finish(p)
  if not p then return end
  t.kill_workers(p.dir)
  p.cleanup()
end

-- Runs `vkit change certify` (text, or --json with as_json) on the request
-- file.  When the run is still pending after the command's 60 s wait (a
-- loaded machine), waits for it with `vkit run wait` and renders the
-- command's answer from the finished run with the functions the command
-- itself calls, so no spec depends on the machine's speed.
-- Returns r = {code, stdout, stderr}.
function M.certify_cli(p, request_path, extra, as_json)
  local project = p.dir .. "/project"
  local argv = { "change", "certify", "--project", project, "--request", request_path, "--trusted-target", p.target,
                 "--wait", "60" }
  if as_json then argv[#argv + 1] = "--json" end
  for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
  local r = t.vkit(argv)
  if r.code ~= 4 then return r end
  local id = as_json and json.decode(r.stdout).run_id or r.stdout:match "^run (%S+):"
  local store = require("vkit.store").open(project)
  local change_runs = require "vkit.runs.change"
  local run = assert(store:get(id))
  for _ = 1, 20 do
    if require("vkit.store").TERMINAL[run.state.status] then break end
    t.vkit { "run", "wait", "--run", id, "--project", project, "--wait", "60" }
    run = assert(store:get(id))
  end
  local shadow = change_runs.shadow(store, run)
  if as_json then
    r.stdout = json.encode(shadow, { indent = 2 }) .. "\n"
  else
    -- a finished run prints what it established (vkit change certify does)
    local report = require "vkit.report"
    r.stdout = report.render(assert(report.model(store, run)), "text")
  end
  r.code = require("vkit.cli.exit").change_exit(run)
  return r
end

--- Runs `vkit change certify --json` on a candidate of project p; returns
--  the decoded summary and the process result.
function M.certify(p, candidate, extra)
  t.write(p.dir .. "/request.json", p.request(candidate))
  local r = M.certify_cli(p, p.dir .. "/request.json", extra, true)
  return json.decode(r.stdout), r
end

return M
