--- Builds the demo repository for examples/certify.lua: one accepted
-- intent per language (Rust, Python, TypeScript) over the same contract,
-- a base commit, and three candidates per language: one conforming, one
-- with a planted violation (rounding instead of flooring) that sampling
-- finds, and one wrong at a single input (1337) that the spread sample
-- never runs and only the exhaustive method finds.
--
--   local demo = dofile(vkit.root .. "/examples/demo/build.lua").build(dir)
--   demo.path, demo.target, demo.requests[language][variant] (request file)
--
-- build_suite(dir, suite) is the same for another function (the
-- multi-parameter demo, examples/demo/multi.lua): suite = {dir (its
-- sources, <language>/<variant>.<ext>), function, statement, contract,
-- codec (bytes)}.
local vkit = require "vkit"
local json = vkit.json

local M = {}

local HERE = vkit.root .. "/examples/demo"
M.LANGUAGES = { "rust", "python", "typescript" }
M.VARIANTS = { "conforming", "violating", "one_input" }
local EXT = { rust = "rs", python = "py", typescript = "ts" }

-- level(points) = min(points / 100, 10) on 0..2047 (integer division).
function M.contract()
  local requirements = {}
  for k = 0, 9 do
    requirements[#requirements + 1] = { inputs = { { from = 100 * k, to = 100 * k + 99 } }, outputs = { k } }
  end
  requirements[#requirements + 1] = { inputs = { { from = 1000, to = 2047 } }, outputs = { 10 } }
  return { inputs = { { from = 0, to = 2047 } }, observations = { { from = 0, to = 10 } }, requirements = requirements }
end

local function source(suite, language, variant)
  return assert(vkit.fs.read(("%s/%s/%s.%s"):format(suite.dir, language, variant, EXT[language]), 1 << 20))
end

function M.build_suite(dir, suite)
  assert(vkit.fs.mkdirs(dir .. "/requests"))
  local repo = assert(vkit.git.init(dir .. "/project"))
  local env = assert(vkit.change.environment_model(M.LANGUAGES))
  local shared = {
    codec = { path = "verification/codec.json", bytes = suite.codec },
    observation_policy = { path = "verification/observation.json", bytes = vkit.change.observation_policy {
      repetitions = 2, selection = "spread", max_inputs = 8, shrink_limit = 4, process_deadline_ms = 10000 } },
    environment_model = { path = "verification/environment.json", bytes = json.encode(env, { indent = 2 }) .. "\n" },
  }
  local files, digests, revisions = {}, {}, {}
  for _, language in ipairs(M.LANGUAGES) do
    local path = ("src/%s.%s"):format(suite["function"], EXT[language])
    files[path] = source(suite, language, "base")
    local artifacts = {
      binding_map = { path = ("verification/%s-binding.json"):format(language),
                      bytes = vkit.change.binding_map { language = language, source = path, ["function"] = suite["function"] } },
      codec = shared.codec, observation_policy = shared.observation_policy, environment_model = shared.environment_model,
    }
    local revision_files, digest, revision = assert(vkit.change.revision {
      requirement = { source = "DEMO-1", statement = suite.statement },
      contract = suite.contract, artifacts = artifacts,
    })
    for k, v in pairs(revision_files) do files[k] = v end
    digests[language], revisions[language] = digest, revision
  end
  local accepted_path, accepted_bytes = vkit.change.accept { digests.rust, digests.python, digests.typescript }
  files[accepted_path] = accepted_bytes
  local function commit(tree_files, parent, message)
    local entries = {}
    for path, bytes in pairs(tree_files) do entries[#entries + 1] = { path = path, bytes = bytes } end
    return assert(repo:commit_tree { tree = assert(repo:write_tree(entries)), message = message,
                                     parents = parent and { parent } or json.array() })
  end
  local target = commit(files, nil, suite["function"] .. ": accepted intent and base implementation\n")
  assert(repo:set_ref("refs/heads/main", target))
  local demo = { path = dir .. "/project", repo = repo, target = target, requests = {}, candidates = {} }
  for _, language in ipairs(M.LANGUAGES) do
    demo.requests[language], demo.candidates[language] = {}, {}
    local claim = vkit.change.claim(revisions[language])
    for _, variant in ipairs(M.VARIANTS) do
      local changed = {}
      for k, v in pairs(files) do changed[k] = v end
      changed[("src/%s.%s"):format(suite["function"], EXT[language])] = source(suite, language, variant)
      local candidate = commit(changed, target, ("%s (%s): %s candidate\n"):format(suite["function"], language,
        variant))
      local request_path = ("%s/requests/%s-%s.json"):format(dir, language, variant)
      assert(vkit.fs.write_atomic(request_path, vkit.change.request(target, candidate, digests[language], claim)))
      demo.requests[language][variant] = request_path
      demo.candidates[language][variant] = candidate
    end
  end
  return demo
end

function M.build(dir)
  return M.build_suite(dir, { dir = HERE, ["function"] = "level", contract = M.contract(), codec = vkit.change.codec(),
                              statement = "level(points) is the number of whole hundreds in points, at most 10" })
end

return M
