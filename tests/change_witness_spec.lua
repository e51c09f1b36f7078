local vkit = require "vkit"
local json = vkit.json
local witness = require "vkit.change.witness"
local t = require "tests.support.run"

local function h(c) return (c):rep(64) end

local binding = {
  request_digest = h "1", intent_digest = h "2", claim_digest = h "3",
  target = { commit = ("a"):rep(40), tree = ("b"):rep(40) },
  candidate = { commit = ("c"):rep(40), tree = ("d"):rep(40) },
  codec_sha256 = h "4", observation_policy_sha256 = h "5", environment_model_sha256 = h "6",
  runner_identity = h "7", runtime_identity = h "8",
}

describe("change witnesses", function()
  local dir, cleanup
  before_each(function()
    dir, cleanup = t.tempdir()
    assert(vkit.fs.mkdirs(dir .. "/kani"))
    t.write(dir .. "/kani/input.rs", "fn harness() {}\n")
    t.write(dir .. "/kani/cex.json", '{"x": 7}\n')
    t.write(dir .. "/model.txt", "model\n")
  end)
  after_each(function() cleanup() end)

  local function artifact(role, path, media)
    return { role = role, path = path, sha256 = vkit.hash.file(dir .. "/" .. path), media_type = media or "text/plain" }
  end

  local function counterexample_witness()
    return {
      schema_version = 1, kind = "engine_counterexample", binding = binding,
      reason = "kani found an input where the candidate leaves the accepted outputs",
      engine = { name = "kani", version = "0.68.0", toolchain_digest = h "9" },
      counterexample = { input = 7, base_output = 14, candidate_output = 15 },
      native_playback = { status = "reproduced", input = 7, base_output = 14, candidate_output = 15,
                          runtime_identity = binding.runtime_identity },
      artifacts = json.array { artifact("engine_input", "kani/input.rs", "text/x-rust"),
                               artifact("counterexample", "kani/cex.json", "application/json") },
    }
  end

  local function import(w)
    local bytes = assert(witness.serialize(w))
    return witness.import(bytes, dir, binding)
  end

  local function refused(code, w)
    local bytes = json.encode(w)
    local ok, message, got = witness.import(bytes, dir, binding)
    assert.is_nil(ok)
    assert.equal(code, got, message)
    return message
  end

  it("imports a witness whose binding and retained bytes match", function()
    local w = assert(import(counterexample_witness()))
    assert.equal("engine_counterexample", w.kind)
    assert.equal(7, w.native_playback.input)
  end)

  it("round-trips through a retained witness.v1.json file", function()
    t.write(dir .. "/witness.v1.json", assert(witness.serialize(counterexample_witness())))
    assert.is_truthy(witness.import_file(dir .. "/witness.v1.json", dir, binding))
    assert(vkit.fs.symlink("witness.v1.json", dir .. "/link.json"))
    assert.equal("not-a-regular-file", select(3, witness.import_file(dir .. "/link.json", dir, binding)))
  end)

  it("refuses a changed artifact byte", function()
    local w = counterexample_witness()
    t.write(dir .. "/kani/cex.json", '{"x": 8}\n')
    refused("witness-artifact-changed", w)
  end)

  it("refuses an artifact reached through a symbolic link", function()
    local w = counterexample_witness()
    assert(os.rename(dir .. "/kani/cex.json", dir .. "/real.json"))
    assert(vkit.fs.symlink("../real.json", dir .. "/kani/cex.json"))
    refused("witness-artifact-link", w)
  end)

  it("refuses an artifact that is not a regular file, or missing", function()
    local w = counterexample_witness()
    assert(os.remove(dir .. "/kani/cex.json"))
    refused("witness-artifact-missing", w)
    assert(vkit.fs.mkfifo(dir .. "/kani/cex.json"))
    refused("witness-artifact-not-regular", w)
  end)

  it("refuses a model witness that claims native playback", function()
    local w = counterexample_witness()
    w.kind = "model_witness"
    w.artifacts = json.array { artifact("model", "model.txt"), artifact("configuration", "kani/input.rs"),
                               artifact("trace", "kani/cex.json") }
    refused("model-witness-playback", w)
    w.native_playback = json.null
    w.counterexample = json.null
    assert.is_truthy(import(w))
  end)

  it("refuses a binding mismatch, naming the field", function()
    local w = counterexample_witness()
    w.binding = {}
    for k, v in pairs(binding) do w.binding[k] = v end
    w.binding.runtime_identity = h "f"
    w.native_playback.runtime_identity = h "f"
    assert.matches("binding%.runtime_identity", refused("witness-binding-mismatch", w))
  end)

  it("enforces the kind rules", function()
    local w = counterexample_witness()
    w.native_playback = json.null
    refused("witness-invalid", w) -- a counterexample must state playback status
    w = counterexample_witness()
    w.kind = "proof_rejected"
    refused("witness-invalid", w) -- proof_rejected attaches no playback
    w = counterexample_witness()
    w.artifacts = json.array { w.artifacts[1] }
    refused("witness-invalid", w) -- the counterexample artifact is missing
    w = counterexample_witness()
    w.artifacts[2].path = "../escape.json"
    refused("witness-invalid", w)
    w = counterexample_witness()
    w.artifacts[2].path = w.artifacts[1].path
    refused("witness-invalid", w)
  end)

  it("refuses malformed and duplicate-key JSON", function()
    assert.equal("invalid-json", select(3, witness.import("{", dir, binding)))
    assert.equal("duplicate-key", select(3, witness.import('{"kind":"unknown","kind":"unknown"}', dir, binding)))
  end)
end)
