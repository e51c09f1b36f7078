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
  local files, digest, revision = authoring.revision {
    requirement = { source = "ISSUE-42", statement = "score doubles small inputs and caps at 100" },
    contract = opts.contract or M.contract,
    artifacts = opts.artifacts or M.artifacts,
  }
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
      claim or authoring.contract(opts.contract or M.contract, {
        codec = revision.artifacts.codec.sha256,
        observation_policy = revision.artifacts.observation_policy.sha256,
        environment_model = revision.artifacts.environment_model.sha256 }))
  end
  return ctx
end

--- Runs `vkit change certify` on a candidate of project p; returns the
--  decoded --json summary and the process result.
function M.certify(p, candidate, extra)
  t.write(p.dir .. "/request.json", p.request(candidate))
  local argv = { "change", "certify", "--project", p.dir .. "/project", "--request", p.dir .. "/request.json",
                 "--trusted-target", p.target, "--wait", "60", "--json" }
  for _, a in ipairs(extra or {}) do argv[#argv + 1] = a end
  local r = t.vkit(argv)
  return json.decode(r.stdout), r
end

return M
