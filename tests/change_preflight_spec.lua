-- Preflight (seed 001) on real repositories built by the test: what binds,
-- and every refusal, each with its stable name.
local vkit = require "vkit"
local json = vkit.json
local t = require "tests.support.run"
local intents = require "tests.support.intents"
local authoring = require "vkit.change.authoring"
local preflight = require("vkit.change").preflight
local bound_mod = require "vkit.change.bound"

describe("change preflight", function()
  local p
  before_each(function() p = intents.project() end)
  after_each(function() p.cleanup() end)

  local function refused(code, request, target)
    local ok, message, got = preflight(p.repo, request, target or p.target)
    assert.is_nil(ok, "expected a refusal")
    assert.equal(code, got, message)
    assert.is_string(message)
    return message
  end

  local accepted_path = "verification/change-intents/accepted.v1.json"

  describe("binds", function()
    it("a candidate that changes only application source", function()
      local candidate = p.commit({ ["src/score.py"] = "def score(x):\n    return min(x + x, 100)\n" }, p.target)
      local b = assert(preflight(p.repo, p.request(candidate), p.target))
      local projection = bound_mod.to_json(b)
      assert.equal("request_preflight", projection.scope)
      assert.is_false(projection.candidate_behavior_checked)
      assert.equal(p.digest, projection.intent.digest)
      assert.equal(candidate, projection.sources.candidate.commit)
      assert.equal(json.digest(projection), b.digest)
      assert.is_table(projection.policy_blobs.artifacts.codec)
      assert.equal(json.null, projection.policy_blobs.difference_policy)
    end)

    it("an unchanged candidate (the target itself)", function()
      assert.truthy(preflight(p.repo, p.request(p.target), p.target))
    end)

    it("a candidate adding an unaccepted proposal revision, which grants nothing", function()
      local files = authoring.revision {
        requirement = { source = "ISSUE-43", statement = "a proposal" },
        contract = { inputs = { 0 }, observations = { 0 }, requirements = {} },
        artifacts = intents.artifacts,
      }
      local candidate = p.commit(files, p.target)
      assert.truthy(preflight(p.repo, p.request(candidate), p.target))
    end)

    it("a weaker claim the intent entails", function()
      local revision = p.revision
      local weaker = authoring.contract({ inputs = { { from = 0, to = 99 } }, observations = { { from = 0, to = 300 } },
        requirements = {} }, { codec = revision.artifacts.codec.sha256,
        observation_policy = revision.artifacts.observation_policy.sha256,
        environment_model = revision.artifacts.environment_model.sha256 })
      assert.truthy(preflight(p.repo, p.request(p.target, weaker), p.target))
    end)

    it("from captured objects only, ignoring the working tree and any local approved.json", function()
      local work = p.dir .. "/project/verification/change-intents"
      assert(vkit.fs.mkdirs(work))
      t.write(work .. "/accepted.v1.json", '{"schema_version":1,"accepted":[]}')
      t.write(p.dir .. "/project/approved.json", '{"approved":"everything"}')
      assert.truthy(preflight(p.dir .. "/project", p.request(p.target), p.target))
    end)
  end)

  describe("refuses", function()
    it("a base that is not the trusted target", function()
      local other = p.commit({ ["src/other.py"] = "x = 1\n" }, p.target)
      local candidate = p.commit({}, other)
      refused("base-not-target", p.request(candidate, nil, other))
    end)

    it("a target that is not an ancestor of the candidate", function()
      local unrelated = p.commit({ ["src/score.py"] = "def score(x):\n    return 0\n" })
      refused("target-not-ancestor", p.request(unrelated))
    end)

    it("short ids and branch names, as target or in the request", function()
      assert(p.repo:set_ref("refs/heads/main", p.target))
      refused("not-an-exact-commit", p.request(p.target), "main")
      refused("not-an-exact-commit", p.request(p.target), p.target:sub(1, 12))
      refused("not-an-exact-commit", p.request(p.target), "HEAD")
      refused("request-invalid", (p.request(p.target):gsub(p.target, "main")))
      local missing = ("e"):rep(40)
      refused("not-an-exact-commit", p.request(missing))
    end)

    it("an accepted list changed, extended or deleted on the candidate side", function()
      local files, new_digest = authoring.revision { requirement = { source = "X", statement = "self-approved" },
        contract = { inputs = { 0 }, observations = { 0 }, requirements = {} }, artifacts = intents.artifacts }
      files[accepted_path] = authoring.accepted { p.digest, new_digest }
      refused("accepted-list-changed", p.request(p.commit(files, p.target)))
      refused("accepted-list-changed", p.request(p.commit({ [accepted_path] = authoring.accepted { p.digest } .. " " }, p.target)))
      refused("accepted-list-deleted", p.request(p.commit({}, p.target, { accepted_path })))
    end)

    it("the selected revision edited or deleted", function()
      local path = ("verification/change-intents/%s.v1.json"):format(p.digest)
      refused("intent-revision-changed", p.request(p.commit({ [path] = p.files[path] .. "\n" }, p.target)))
      refused("intent-revision-deleted", p.request(p.commit({}, p.target, { path })))
    end)

    it("an artifact changed in the candidate", function()
      refused("artifact-changed-in-candidate", p.request(p.commit({ ["verification/codec.json"] =
        '{"schema_version":1,"input":"u32-le","output":"decimal-u32-line"} \n' }, p.target)))
      refused("artifact-missing-in-candidate", p.request(p.commit({}, p.target, { "verification/binding.json" })))
    end)

    it("an artifact missing in the target", function()
      local q = intents.project()
      local target = q.commit({}, nil, { "verification/observation.json" })
      local ok, message, code = preflight(q.repo, q.request(target, nil, target), target)
      q.cleanup()
      assert.is_nil(ok)
      assert.equal("artifact-missing-in-target", code, message)
    end)

    it("an artifact whose bytes do not match its pin", function()
      local q = intents.project()
      local target = q.commit({ ["verification/binding.json"] = '{"schema_version":1}\n' })
      local ok, message, code = preflight(q.repo, q.request(target, nil, target), target)
      q.cleanup()
      assert.is_nil(ok)
      assert.equal("artifact-hash-mismatch", code, message)
    end)

    it("a changed domain", function()
      local r = p.revision
      local hashes = { codec = r.artifacts.codec.sha256, observation_policy = r.artifacts.observation_policy.sha256,
                       environment_model = r.artifacts.environment_model.sha256 }
      local fewer = authoring.contract({ inputs = { { from = 0, to = 98 } }, observations = { { from = 0, to = 200 } },
        requirements = {} }, hashes)
      refused("claim-domain-changed", p.request(p.target, fewer))
      hashes.codec = ("0"):rep(64)
      local recoded = authoring.contract({ inputs = { { from = 0, to = 99 } }, observations = { { from = 0, to = 200 } },
        requirements = {} }, hashes)
      refused("claim-domain-changed", p.request(p.target, recoded))
    end)

    it("a claim narrower than the intent", function()
      local r = p.revision
      local narrow = authoring.contract({ inputs = { { from = 0, to = 99 } }, observations = { { from = 0, to = 150 } },
        requirements = {} }, { codec = r.artifacts.codec.sha256, observation_policy = r.artifacts.observation_policy.sha256,
        environment_model = r.artifacts.environment_model.sha256 })
      assert.matches("input 50 .* output 151", refused("claim-excludes-legal-behavior", p.request(p.target, narrow)))
    end)

    it("an intent with an empty domain", function()
      local ok, _, code = pcall(intents.project, { contract = { inputs = {}, observations = { 0 }, requirements = {} } })
      -- authoring refuses to write it; a hand-written one is refused by preflight
      assert.is_false(ok)
      local q = intents.project()
      local revision_path = ("verification/change-intents/%s.v1.json"):format(q.digest)
      local doc = json.decode(q.files[revision_path])
      doc.contract.domain.inputs = json.array()
      doc.contract.requirements = json.array()
      local bytes = json.encode(doc)
      local target = q.commit({ [revision_path] = bytes })
      local got_ok, message, got = preflight(q.repo, q.request(target, nil, target), target)
      q.cleanup()
      assert.is_nil(got_ok)
      assert.equal("empty-intent-domain", got, message)
      assert.is_nil(code)
    end)

    it("malformed and duplicate-key requests", function()
      refused("invalid-json", "{")
      refused("duplicate-key", '{"schema_version":1,"schema_version":1}')
      refused("request-invalid", (p.request(p.target):gsub('"schema_version": 1', '"schema_version": 1, "commands": []', 1)))
    end)

    it("a revision whose digest does not match its name", function()
      local q = intents.project()
      local revision_path = ("verification/change-intents/%s.v1.json"):format(q.digest)
      local doc = json.decode(q.files[revision_path])
      doc.requirement.statement = "quietly edited"
      local target = q.commit({ [revision_path] = json.encode(doc) })
      local ok, message, code = preflight(q.repo, q.request(target, nil, target), target)
      q.cleanup()
      assert.is_nil(ok)
      assert.equal("intent-digest-mismatch", code, message)
    end)

    it("an intent that is not accepted", function()
      local request = p.request(p.target):gsub(p.digest, ("f"):rep(64))
      refused("intent-not-accepted", request)
    end)

    it("a candidate that adds, changes or deletes the difference policy", function()
      local path, bytes = authoring.difference_policy(p.digest, { { name = "raise", inputs = { 60 }, outputs = { 120 } } })
      refused("difference-policy-added", p.request(p.commit({ [path] = bytes }, p.target)))
      local q = intents.project { extra = { [path] = bytes } }
      local ok, message = preflight(q.repo, q.request(q.target), q.target)
      assert.truthy(ok, message)
      local _, changed = authoring.difference_policy(q.digest, { { name = "raise", inputs = { 60 }, outputs = { 130 } } })
      local changed_commit = q.commit({ [path] = changed }, q.target)
      local deleted_commit = q.commit({}, q.target, { path })
      local c1 = select(3, preflight(q.repo, q.request(changed_commit), q.target))
      local c2 = select(3, preflight(q.repo, q.request(deleted_commit), q.target))
      q.cleanup()
      assert.equal("difference-policy-changed", c1)
      assert.equal("difference-policy-deleted", c2)
    end)
  end)
end)
