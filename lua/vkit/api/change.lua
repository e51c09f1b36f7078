--- Change certification (seed 001): author an intent, accept it, build a
-- request, preflight it, certify a candidate with a method and read the result.
--
-- The flow a script follows (`docs/tutorial.md` does it from the shell):
--
--    local files, digest, revision = vkit.change.revision { requirement = ..., contract = ..., artifacts = {
--      binding_map = { path = "verification/f/binding.json", bytes = vkit.change.binding_map { ... } }, ... } }
--    -- (commit `files` for review; the acceptance commit adds the list:)
--    local path, bytes = vkit.change.accept { digest }
--    local request = vkit.change.request(target, candidate, digest, vkit.change.claim(revision))
--    local store = assert(vkit.store.open(project))
--    local id = assert(vkit.change.certify(store, { request = request, trusted_target = target }))
--    local result = vkit.change.result(store, store:wait(id, 600))
--    print(result.outcome, result.coverage.statement)
--
-- Nothing here is a proof or an approval: every result says `source_proof:
-- false` and `approval_authority: false`.  Exit statuses and outcomes:
-- `docs/change.md`.
-- @module vkit.change
local json = require "vkit.json"
local authoring = require "vkit.change.authoring"
local scaffold = require "vkit.change.scaffold"
local host_tools = require "vkit.change.host_tools"
local contract = require "vkit.change.contract"
local library = require "vkit.change.library"
local handles = require "vkit.api.handles"

local M = {}

--- The certification methods `certify` accepts: `auto`, `finite_paired`,
-- `exhaustive`, `rust_exhaustive`, `rust_kani`.
-- @table METHODS
M.METHODS = {}
for i, name in ipairs(require("vkit.change.methods").NAMES) do M.METHODS[i] = name end

--- Authoring
-- @section authoring

--- The bytes of a binding map: which function of which source file an intent is about.
-- @tparam table spec `{language = "rust"|"python"|"typescript", source = <repository path>, ["function"] = name}`
-- @treturn string the artifact's bytes (strict JSON)
-- @raise when the binding does not fit the paired-execution profile
function M.binding_map(spec)
  local bytes = json.encode({ schema_version = 1, language = spec.language, source = spec.source,
                              ["function"] = spec["function"] }, { indent = 2 }) .. "\n"
  assert(require("vkit.change.artifacts").parse("binding_map", bytes))
  return bytes
end

--- The bytes of the codec: four little-endian input bytes, one decimal u32 output line;
-- with a signature, the multi-parameter profile's codec of it (issue 34).
-- @tparam[opt] table signature `{params = {{name =, type =},...}, returns = TYPE | {TYPE,...}}`
-- @treturn string
-- @raise when the signature is not one of the profile's
function M.codec(signature)
  if signature then
    local mcodec = require "vkit.change.multi.codec"
    local bytes = json.encode(mcodec.document(signature), { indent = 2 }) .. "\n"
    assert(require("vkit.change.artifacts").parse("codec", bytes))
    return bytes
  end
  return json.encode({ schema_version = 1, input = "u32-le", output = "decimal-u32-line" }, { indent = 2 }) .. "\n"
end

--- The bytes of an observation policy.
-- @tparam[opt] table settings `{repetitions = 2, selection = "spread"|"ascending",
-- max_inputs = 12, shrink_limit = 8, process_deadline_ms = 10000}` (these are the defaults)
-- @treturn string
-- @raise on an unknown setting or a value out of range
function M.observation_policy(settings)
  local doc = { schema_version = 1 }
  for k, v in pairs(scaffold.OBSERVATION_DEFAULTS) do doc[k] = v end
  for k, v in pairs(settings or {}) do
    if scaffold.OBSERVATION_DEFAULTS[k] == nil then error(("unknown observation policy setting %q"):format(tostring(k)), 2) end
    doc[k] = v
  end
  local bytes = json.encode(doc, { indent = 2 }) .. "\n"
  assert(require("vkit.change.artifacts").parse("observation_policy", bytes))
  return bytes
end

--- An environment model declaring the tools of the given languages, each pinned
-- by SHA-256 (the real binaries, never a rustup proxy or a pyenv shim), and a
-- closed environment.  With a toolchain root, every tool is found under it
-- and named by its path there, so the model holds on every machine that
-- installs the same toolchain bytes at that path (the layout: `docs/change.md`).
-- @tparam {string,...} languages any of `rust`, `python`, `typescript`
-- @tparam[opt] table opts `{toolchain_root = "/opt/..."}`
-- @treturn table the document (encode it with `vkit.json.encode`)
-- @return nil, message (no such toolchain, a file leading out of the root)
function M.environment_model(languages, opts)
  return host_tools.environment_model(languages, opts)
end

--- A contract document: the finite domain bound to the artifact hashes.
-- @tparam table spec `{inputs = SET, observations = SET, requirements = {{inputs = SET, outputs = SET},...}}`;
-- a SET is an array of u32 integers and `{from =, to =}` ranges.  For the
-- multi-parameter profile (issue 34): `{signature = {params, returns}, inputs =
-- {name = set text}, observations = {set text per component}, requirements =
-- {{inputs = {name = set text}, outputs = {set text,...}},...}}` (docs/change.md)
-- @tparam table hashes `{codec =, observation_policy =, environment_model =}` (SHA-256 hex of their bytes)
-- @treturn table the contract (`signature = "u32 -> u32"`, `domain`, `observations`, `requirements`)
function M.contract(spec, hashes)
  return authoring.contract(spec, hashes)
end

--- An intent revision and its four artifacts, and its digest.
-- @tparam table spec `{requirement = {source = <citation label>, statement = <literal text>},
-- contract = {inputs, observations, requirements}, artifacts = {binding_map =
-- {path, bytes}, codec = ..., observation_policy = ..., environment_model = ...}}`
-- @treturn table files `{[path] = bytes}`: the revision
-- (`verification/change-intents/<digest>.v1.json`) and the four artifacts
-- @treturn string the revision digest
-- @treturn table the parsed revision (`requirement`, `contract`, `artifacts`, `digest`)
-- @return nil, message, code: `empty-intent-domain`, `domain-too-large`,
-- `unsatisfiable-intent`, `intent-revision-invalid`, ...
function M.revision(spec)
  return authoring.try_revision(spec)
end

--- Everything `vkit change intent init` writes, without writing it: the
-- artifacts and revision of a proposed intent, and the acceptance list that
-- would accept it.  Never accepts anything.
-- @tparam table spec `{language, source, ["function"], domain = SET, observations = SET,
-- requirements = {...}?, requirement = {source, statement}?, dir = "verification/<function>"?,
-- observation = {settings}?, environment_model = <document>, accepted = <current
-- accepted-list bytes>?}`
-- @treturn table `{files = {{path, bytes, role},...}, digest, revision_path,
-- accepted = {path, bytes}, notes = {sentences}}`
-- @return nil, message, code: `unknown-language`, `invalid-path`,
-- `source-language-mismatch`, `invalid-function`, `empty-intent-domain`, ...
function M.scaffold(spec)
  return scaffold.intent(spec)
end

--- The acceptance list accepting these digests (what the acceptance commit writes).
-- @tparam {string,...} digests
-- @treturn string the path, `verification/change-intents/accepted.v1.json`
-- @treturn string the bytes
function M.accept(digests)
  return require("vkit.policy").change.layout.accepted_list, authoring.accepted(digests)
end

--- A target difference policy: approved guards where the candidate may differ from the base.
-- @string digest the intent digest
-- @tparam {table,...} guards `{name, inputs = SET, outputs = SET}`
-- @treturn string the path, `verification/change-intents/differences/<digest>.v1.json`
-- @treturn string the bytes
function M.difference_policy(digest, guards)
  return authoring.difference_policy(digest, guards)
end

--- The claim that claims exactly what a revision's contract says (the
-- strongest claim that binds).
-- @tparam table revision the parsed revision `revision` returned
-- @treturn table a contract document
function M.claim(revision)
  return contract.to_document(revision.contract)
end

--- A finite request's bytes.
-- @string base the trusted target commit (full id)
-- @string candidate the candidate commit (full id)
-- @string digest the accepted intent digest
-- @tparam table claim a contract document (`claim`)
-- @treturn string strict JSON
function M.request(base, candidate, digest, claim)
  return authoring.request(base, candidate, digest, claim)
end

--- A finite request whose claim is exactly the intent revision's contract (the
-- strongest claim that binds), read from the base commit's Git objects
-- (what `vkit change request` prints).
-- @tparam string|Repository project a path or an open `vkit.git` repository
-- @tparam table spec `{base = <full commit id>, candidate = <full commit id>, intent = <digest>}`
-- @treturn string strict JSON
-- @return nil, message, code: `intent-revision-missing`, `intent-revision-invalid`,
-- `intent-digest-mismatch`, `not-an-exact-commit`, `not-a-repository`, ...
function M.request_for(project, spec)
  local repo = project
  if type(project) == "string" then
    local message, code
    repo, message, code = require("vkit.git").open(project)
    if not repo then return nil, message, code end
  end
  local bytes, message, code = scaffold.request(repo, spec)
  if repo ~= project then repo:close() end
  return bytes, message, code
end

--- Preflight and library runs
-- @section runs

--- Binds a request to the accepted intent at the exact trusted target, reading
-- captured Git objects only and executing nothing.
-- @tparam string|Repository project a path or an open `vkit.git` repository
-- @tparam string|table request JSON text or a decoded request
-- @string trusted_target the host's exact target commit
-- @treturn table the BoundChangeRequest (`digest`, `request`, `intent`,
-- `target`, `candidate`, `policy_blobs`, `scope = "request_preflight"`,
-- `candidate_behavior_checked = false`)
-- @return nil, message, code: `not-an-exact-commit`, `base-not-target`,
-- `target-not-ancestor`, `intent-not-accepted`, `accepted-list-changed`,
-- `artifact-changed-in-candidate`, `claim-excludes-legal-behavior`, ... (`docs/change.md`)
function M.preflight(project, request, trusted_target)
  return require("vkit.change.preflight").preflight(project, request, trusted_target)
end

--- The stable JSON projection of a BoundChangeRequest (what its digest covers).
-- @tparam table bound what `preflight` returned
-- @treturn table
function M.bound_json(bound)
  return require("vkit.change.bound").to_json(bound)
end

--- Paired execution (seed 001): its own preflight, then the base and the
-- candidate on the same sampled accepted inputs, each repeated.
-- @param project a path or an open repository
-- @param request JSON text or a decoded request
-- @string trusted_target
-- @tparam table opts `{dir = <fresh absolute directory> (required), deadline_ms =
-- 1..300000, cancelled = function, progress = function(line), max_invocations = 1..128}`
-- @treturn table the paired-execution report (`status`: `samples_within_contract`,
-- `observed_violation`, `unknown`, `infrastructure_failure`)
-- @treturn table the BoundChangeRequest
-- @return nil, message, code: a preflight refusal (nothing runs, no directory is made)
-- @raise on misuse: a missing or existing dir, a deadline or budget above the seed's
function M.run_paired_execution(project, request, trusted_target, opts)
  return library.run_paired_execution(project, request, trusted_target, opts)
end

--- Change analysis: paired execution, then every observation judged against the
-- standing intent and the target's difference policy.
-- @param project
-- @param request
-- @string trusted_target
-- @tparam table opts as for `run_paired_execution`
-- @treturn table the analysis (`status`: `observed_conformance`, `observed_violation`, `unknown`; `coverage`, `findings`)
-- @treturn table the paired-execution report
-- @treturn table the BoundChangeRequest
-- @return nil, message, code: a preflight refusal
function M.run_change_analysis(project, request, trusted_target, opts)
  return library.run_change_analysis(project, request, trusted_target, opts)
end

--- The exhaustive method: every accepted input, batch drivers, each side twice in two orders.
-- @param project
-- @param request
-- @string trusted_target
-- @tparam table opts as for `run_paired_execution`, plus `run_id` (seeds the
-- orders) and `sampled` (a paired report to cross-check against)
-- @treturn table the exhaustive report (`status`: `all_inputs_conform`,
-- `observed_violation`, `unknown`, `infrastructure_failure`; `coverage`, `violations`)
-- @treturn table the BoundChangeRequest
-- @return nil, message, code: a preflight refusal
function M.run_exhaustive(project, request, trusted_target, opts)
  return library.run_exhaustive(project, request, trusted_target, opts)
end

--- The WitnessBinding a change witness must carry, derived from actual
-- preflight and independently measured identities.
-- @tparam table bound a BoundChangeRequest
-- @param runner_identity a JSON value
-- @param runtime_identity a JSON value
-- @treturn table
function M.witness_binding(bound, runner_identity, runtime_identity)
  return require("vkit.change.witness").binding(bound, runner_identity, runtime_identity)
end

--- Imports a retained change witness (`witness.v1.json`) whose artifacts live under dir.
-- @string bytes the witness
-- @string dir where its artifacts are
-- @tparam table expected_binding `witness_binding`'s
-- @treturn table the decoded witness
-- @return nil, message, code: `witness-invalid`, `witness-binding-mismatch`,
-- `witness-artifact-changed`, `witness-artifact-link`, `model-witness-playback`, ...
function M.import_witness(bytes, dir, expected_binding)
  return require("vkit.change.witness").import(bytes, dir, expected_binding)
end

--- Certification through the job store
-- @section certify

--- Queues a certification (as `vkit change certify` does) and makes sure a worker runs it.
-- @tparam Store store `vkit.store.open`'s
-- @tparam table fields `{request = <table or JSON text>, trusted_target = <full commit id>,
-- method = "auto" (default)|"finite_paired"|"exhaustive"|"rust_exhaustive"|"rust_kani",
-- kani_toolchain = <closed-format pin table>?, trust_candidate_code = true?}`
-- (`trust_candidate_code`: the host's `--trust-candidate-code`, accepting a candidate outside the
-- pure-function profile at `all_inputs_conform_trusted`; a request cannot set it)
-- @treturn string the run id
-- @return nil, message, code: `unknown-method`, `request-invalid`,
-- `trusted-target-missing`, `kani-pin-invalid` (a request that does not bind is
-- a blocked run, not a refusal here)
function M.certify(store, fields)
  return store:submit("change-certify", fields)
end

--- What a certification run established: the compact shadow summary.
-- @tparam Store store
-- @tparam table run `store:get`'s or `store:wait`'s
-- @treturn table `{run_id, status, outcome, outcome_meaning, coverage = {method, checked,
-- accepted, scope, statement}, requirement = {source, statement}, intent_digest,
-- methods = {{method, result, reason, report, report_sha256, coverage, cuts, budget},...},
-- blocked, target, candidate, source_proof = false, approval_authority = false}`
function M.result(store, run)
  return require("vkit.runs.change").shadow(handles.internal(store), run)
end

--- The exit status `vkit change certify` gives a run: 0 only when every accepted
-- input was checked and conforms (or Kani verified), 1 violation / unknown /
-- blocked / cancelled, 3 infrastructure, 4 still pending, 5 only sampled inputs checked.
-- @tparam table run
-- @treturn integer
function M.exit_code(run)
  return require("vkit.cli.exit").change_exit(run)
end

--- A cut in words: "max_inputs 301 cut to 26 by the 128-invocation budget".
-- @tparam table cut one of a method's `cuts` (`{setting, requested, applied, limit, limit_value}`)
-- @treturn string
function M.cut_sentence(cut)
  return require("vkit.change.coverage").cut_sentence(cut)
end

return M
