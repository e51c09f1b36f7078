--- scripts/check_change_witness.lua: the change-witness qualification.
--
--   vkit script scripts/check_change_witness.lua --output DIR
--
-- Creates disposable Git target/candidate revisions (a Rust `scale` whose
-- accepted intent is the one fixtures/kani/harness-spec.json describes, and
-- a candidate that changes an unguarded output), runs actual preflight and
-- Rust relational preparation (admission in a separate process), imports
-- the labelled Kani transcript fixtures/kani/failed_assertion (CONSTRUCTED
-- to Kani 0.68.0's documented formats: Kani is not run here) and decodes it
-- against the prepared harness, compiles and runs the captured u32 sources
-- with the pinned rustc, retains the runtime identity, writes
-- DIR/witness.v1.json, and verifies the serialised witness again against a
-- binding derived anew.  It grants no approval and proves nothing about the
-- source: it checks that the witness machinery binds what it claims.
local vkit = require "vkit"
local json = vkit.json
local args = require "vkit.args"
local authoring = require "vkit.change.authoring"
local host_tools = require "vkit.change.host_tools"
local witness = require "vkit.change.witness"
local prepare = require "vkit.relational.prepare"
local kani_result = require "vkit.relational.kani_result"
local exhaustive = require "vkit.relational.exhaustive"
local proc = require "vkit.proc"

local opts, err = args.parse({ ... }, { options = { output = "string" } })
if not opts or not opts.output then
  io.stderr:write("usage: vkit script scripts/check_change_witness.lua --output DIR\n", err and (err .. "\n") or "")
  os.exit(2)
end
local out = opts.output
if vkit.fs.lstat(out) then
  io.stderr:write("check_change_witness: ", out, " already exists; give a fresh directory\n")
  os.exit(2)
end
assert(vkit.fs.mkdirs(out))
local function step(fmt, ...) io.stdout:write(fmt:format(...), "\n") end

-- 1. Disposable target and candidate revisions.
local FIXTURE = vkit.root .. "/fixtures/kani"
local spec = assert(json.decode(assert(vkit.fs.read(FIXTURE .. "/harness-spec.json", 1 << 20))))
local env = assert(host_tools.environment_model { "rust" })
local artifacts = {
  binding_map = { path = "verification/binding.json",
                  bytes = json.encode { schema_version = 1, language = "rust", source = "src/lib.rs", ["function"] = "scale" } },
  codec = { path = "verification/codec.json", bytes = '{"schema_version":1,"input":"u32-le","output":"decimal-u32-line"}\n' },
  observation_policy = { path = "verification/observation.json", bytes = json.encode { schema_version = 1,
    repetitions = 1, selection = "ascending", max_inputs = 16, shrink_limit = 0, process_deadline_ms = 10000 } },
  environment_model = { path = "verification/environment.json", bytes = json.encode(env) },
}
local files, digest = authoring.revision {
  requirement = { source = "QUALIFICATION-1", statement = "scale(x) = 2x + 7 on 0..15; inputs 14 and 15 may rise to 39" },
  contract = { inputs = spec.inputs, observations = spec.observations, requirements = spec.standing },
  artifacts = artifacts,
}
files["verification/change-intents/accepted.v1.json"] = authoring.accepted { digest }
local policy_path, policy_bytes = authoring.difference_policy(digest, { { name = "raise-top", inputs = spec.guards[1].inputs,
                                                                          outputs = spec.guards[1].outputs } })
files[policy_path] = policy_bytes
files["src/lib.rs"] = "pub fn scale(x: u32) -> u32 {\n    x * 2 + 7\n}\n"
local repo = assert(vkit.git.init(out .. "/repo"))
local function commit(tree_files, parent)
  local entries = {}
  for path, bytes in pairs(tree_files) do entries[#entries + 1] = { path = path, bytes = bytes } end
  return assert(repo:commit_tree { tree = assert(repo:write_tree(entries)), parents = parent and { parent } or json.array(),
                                   message = "qualification\n" })
end
local target = commit(files)
files["src/lib.rs"] = "pub fn scale(x: u32) -> u32 {\n    if x == 5 {\n        return 19;\n    }\n    x * 2 + 7\n}\n"
local candidate = commit(files, target)
local request = authoring.request(target, candidate, digest, authoring.contract(
  { inputs = spec.inputs, observations = spec.observations, requirements = spec.standing },
  { codec = vkit.hash.sha256(artifacts.codec.bytes), observation_policy = vkit.hash.sha256(artifacts.observation_policy.bytes),
    environment_model = vkit.hash.sha256(artifacts.environment_model.bytes) }))
step("target %s, candidate %s", target, candidate)

-- 2. Actual preflight and preparation.
local bound = assert(vkit.change.preflight(repo, request, target))
step("preflight bound the request (scope %s, digest %s)", require("vkit.change.bound").to_json(bound).scope, bound.digest)
local program = assert(prepare.from_bound(repo, bound, "kani"))
step("both modules admitted; harness %s with %d assertions", program.harness.sha256:sub(1, 16), #program.harness.assertions)

-- 3. Import and decode the labelled transcript against the prepared harness.
local meta = assert(json.decode(assert(vkit.fs.read(FIXTURE .. "/failed_assertion/meta.json", 1 << 20))))
assert(meta.label == "constructed" or meta.label == "recorded", "the transcript must say how it was made")
local retained = out .. "/retained"
assert(vkit.fs.mkdirs(retained .. "/kani"))
for _, name in ipairs { "export.json", "stdout.txt", "meta.json" } do
  assert(vkit.fs.copy_file(FIXTURE .. "/failed_assertion/" .. name, retained .. "/kani/" .. name))
end
assert(vkit.fs.write_atomic(retained .. "/kani/vkit_harness.rs", program.harness.bytes))
local decoded = kani_result.decode {
  export = assert(vkit.fs.read(retained .. "/kani/export.json", 2 << 20)),
  stdout = assert(vkit.fs.read(retained .. "/kani/stdout.txt", 1 << 20)),
  exit_code = meta.exit_code,
  harness = { file = "vkit_harness.rs", ["function"] = program.harness.harness_function, assertions = program.harness.assertions },
}
step("transcript (%s): decoded as %s (%s)", meta.label, decoded.outcome, tostring(decoded.reason))
assert(decoded.outcome == "proof_rejected", "the failed-assertion transcript must decode as proof_rejected")

-- 4. Compile and run the captured sources natively; measure the runtime.
local never = function() return false end
local native_dir = out .. "/native"
assert(vkit.fs.mkdirs(native_dir))
local native = exhaustive.run(bound, { repo = repo, dir = native_dir, deadline_at = vkit.sys.monotonic_ms() + 300000,
  ctx = { cancelled = never, run_process = function(s) return proc.run_cancellable(s, never) end } })
local native_report = assert(json.decode(assert(vkit.fs.read(native_dir .. "/" .. native.report, 1 << 22))))
step("native run of the captured sources: %s %s", native.status, native_report.message ~= json.null and native_report.message or "")
assert(vkit.fs.copy_file(native_dir .. "/" .. native.report, retained .. "/native-report.json"))

local function runtime_identity()
  return { rustc = native_report.rustc, harness_binary = native_report.harness_binary }
end
local function runner_identity()
  local code = {}
  for _, m in ipairs { "change/witness", "relational/kani_result", "relational/harness", "relational/prepare" } do
    code[m] = assert(vkit.hash.file(vkit.root .. "/lua/vkit/" .. m .. ".lua"))
  end
  return { vkit_version = vkit.version, vkit_exe_sha256 = assert(vkit.hash.file(vkit.exe)), code = code }
end

-- 5. The witness: a proof rejection, no native playback attached.
local function artifact(role, rel, media)
  return { role = role, path = rel, sha256 = assert(vkit.hash.file(retained .. "/" .. rel)), media_type = media }
end
local w = {
  schema_version = 1,
  kind = "proof_rejected",
  binding = witness.binding(bound, runner_identity(), runtime_identity()),
  reason = ("Kani transcript (%s, not a real run) rejects %s: %s"):format(meta.label, tostring(decoded.reason),
    meta.scenario),
  engine = { name = "kani", version = meta.kani_version, toolchain_digest = json.digest(meta) },
  counterexample = json.null,
  native_playback = json.null,
  artifacts = json.array {
    artifact("engine_input", "kani/vkit_harness.rs", "text/x-rust"),
    artifact("engine_export", "kani/export.json", "application/json"),
    artifact("engine_output", "kani/stdout.txt", "text/plain"),
    artifact("transcript_label", "kani/meta.json", "application/json"),
    artifact("native_run", "native-report.json", "application/json"),
  },
}
assert(vkit.fs.write_atomic(out .. "/witness.v1.json", assert(witness.serialize(w))))

-- 6. Verify the serialised witness again, against a binding derived anew.
local again = assert(vkit.change.preflight(repo, request, target))
local expected = witness.binding(again, runner_identity(), runtime_identity())
local imported, message, code = witness.import_file(out .. "/witness.v1.json", retained, expected)
if not imported then
  io.stderr:write("check_change_witness: the serialised witness does not verify: ", message, " (", code, ")\n")
  os.exit(1)
end
step("witness.v1.json verified again: kind %s, %d artifacts, binding %s", imported.kind, #imported.artifacts,
  json.digest(imported.binding):sub(1, 16))
step("not established: a Kani proof (no engine ran), native compiler correspondence, approval")
