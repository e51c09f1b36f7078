--- One attempt of an external check, and its replay (seed 000).
--
-- run_dir (the attempt directory) holds everything retained:
--   job.json               the job record whose digest is the job key
--   snapshot/              the frozen inputs, captured from the exact commit
--   capture.json           the capture identity (commit, tree, inventory digest)
--   identity.json          identity(check) as built before launch
--   producer-request.json  the producer's request ({{request}})
--   evidence/              the producer's declared artifacts
--   checker/request.json   the fresh checker request
--   checker/receipt.json   the checker's receipt ({{receipt}})
--   logs/<role>.stdout|stderr|json   captured output and process records
--   result.json            outcome, reason, artifact digests, evidence digest
--
-- Sequence: freeze inputs, validate job digest / identity / input digest /
-- snapshot, run the producer in the snapshot, hash exactly the declared
-- artifacts, generate a fresh checker request, run the checker, validate
-- the receipt, re-check snapshot, identity and evidence, retain everything.
-- Any deviation is BLOCKED with a named reason; only a valid accepting
-- receipt is PASS.
local json = require "vkit.json"
local hash = require "vkit.hash"
local fs = require "vkit.fs"
local git = require "vkit.git"
local manifest = require "vkit.protocol.manifest"
local identity_mod = require "vkit.protocol.identity"
local placeholders = require "vkit.protocol.placeholders"
local receipt = require "vkit.protocol.receipt"
local evidence_mod = require "vkit.protocol.evidence"
local tables = require "vkit.tables"
local policy = require("vkit.policy").protocol

local M = {}

local function write_json(path, value)
  assert(fs.write_atomic(path, json.encode(value, { indent = 2 }) .. "\n"))
end

local function blocked(reason, fmt, ...)
  return { outcome = "BLOCKED", reason = reason, message = fmt:format(...) }
end

--- Resolves the accepted component and check at an exact commit.
--  Returns {commit, check, check_digest, inputs, pins} or nil, message, code.
function M.resolve(repo, commit_id, component, check_id)
  local commit, message, code = repo:commit(commit_id)
  if not commit then return nil, message, code end
  local cap = policy.caps.document_bytes
  local blob
  blob, message, code = repo:read(commit.id, policy.layout.manifest, cap)
  if not blob then
    return nil, ("the commit has no readable %s: %s"):format(policy.layout.manifest, message), "manifest-missing"
  end
  local m
  m, message, code = manifest.parse_manifest(blob.bytes)
  if not m then return nil, message, code end
  local entry
  entry, message, code = manifest.component(m, component)
  if not entry then return nil, message, code end
  local docs = {}
  for _, which in ipairs { "policy", "package" } do
    local pin = entry[which]
    local b, bmessage = repo:read(commit.id, pin.path, cap)
    if not b then return nil, ("component %s: %s %s: %s"):format(component, which, pin.path, bmessage), "pin-mismatch" end
    local actual = hash.sha256(b.bytes)
    if actual ~= pin.sha256 then
      return nil, ("component %s: %s %s: pinned sha256 %s, actual %s"):format(component, which, pin.path, pin.sha256, actual),
        "pin-mismatch"
    end
    docs[which] = b.bytes
  end
  local component_policy, package
  component_policy, message, code = manifest.parse_policy(docs.policy, component, entry.policy.path)
  if not component_policy then return nil, message, code end
  package, message, code = manifest.parse_package(docs.package, component, entry.package.path)
  if not package then return nil, message, code end
  local resolved = { commit = commit, component = component, pins = { policy = entry.policy, package = entry.package },
                     policy = component_policy }
  if check_id then
    local check = component_policy.by_id[check_id]
    if not check then return nil, ("component %s has no check %s"):format(component, check_id), "unknown-check" end
    resolved.check = check
    resolved.check_digest = manifest.check_digest(check)
    resolved.inputs = manifest.inputs(package, check)
  end
  return resolved
end

--- The job record: what is being verified, content-addressed.  Its
--  digest is the job key, computed when the job is queued and validated
--  again before anything runs.
function M.job_record(resolved)
  return {
    schema_version = 1,
    component = resolved.component,
    check_id = resolved.check.id,
    commit = resolved.commit.id,
    tree = resolved.commit.tree,
    check_digest = resolved.check_digest,
    component_policy_sha256 = resolved.pins.policy.sha256,
    package_sha256 = resolved.pins.package.sha256,
    inputs = resolved.inputs,
  }
end

function M.job_key(resolved)
  return json.digest(M.job_record(resolved))
end

local function retain_process(run_dir, role, result)
  fs.mkdirs(run_dir .. "/logs")
  assert(fs.write_atomic(("%s/logs/%s.stdout"):format(run_dir, role), result.stdout or ""))
  assert(fs.write_atomic(("%s/logs/%s.stderr"):format(run_dir, role), result.stderr or ""))
  local record = {}
  for _, k in ipairs { "status", "code", "signal", "truncated", "wall_ms", "user_ms", "sys_ms", "max_rss_kb",
                       "descendants_killed", "exe_sha256", "sandbox", "error", "message" } do
    record[k] = result[k]
  end
  write_json(("%s/logs/%s.json"):format(run_dir, role), record)
end

local function launch(ctx, resolved, role, values, run_dir, snapshot)
  local command = resolved.check[role]
  local spec = {
    exe = command.executable.path,
    argv = placeholders.expand(command.argv, values),
    env = tables.copy(policy.env),
    cwd = snapshot,
    deadline_ms = command.deadline_ms,
    grace_ms = policy.caps.grace_ms,
    output_cap = policy.caps.output_cap,
    pins = identity_mod.launch_pins(resolved.check, role, snapshot),
  }
  local result = ctx.run_process(spec)
  retain_process(run_dir, role, result)
  return result
end

local function process_failure(role, result)
  if result.status == "pin-mismatch" then
    return blocked("pin-mismatch", "%s refused before launch: %s", role, result.message or "a pin changed")
  end
  if result.status ~= "exited" then
    return blocked(role .. "-" .. result.status, "the %s did not finish normally (%s)", role, result.status)
  end
  if result.code ~= 0 then return blocked(role .. "-exit-nonzero", "the %s exited with status %d", role, result.code) end
end

--- The fresh checker request: built from the accepted manifest and the
--  current job only, never from anything the producer wrote.
function M.checker_request(resolved, job, paths, spec_digest, identity, evidence)
  local claim = resolved.check.claim
  return {
    schema_version = 1,
    role = "checker",
    job_id = job.job_id,
    run_id = job.run_id,
    check_id = resolved.check.id,
    check_digest = resolved.check_digest,
    specification = { path = claim.specification, sha256 = spec_digest },
    specification_digest = spec_digest,
    obligations = claim.obligations,
    assumptions = claim.assumptions,
    model_scope = claim.model_scope,
    assurance = resolved.check.assurance,
    identity = identity,
    evidence = evidence.files,
    evidence_digest = evidence.digest,
    paths = paths,
  }
end

-- Freezes inputs and validates the job digest, the copied snapshot and its
-- complete input digest, and the current identity before the first launch.
local function freeze(repo, resolved, run_dir, job_key)
  local job = M.job_record(resolved)
  write_json(run_dir .. "/job.json", job)
  if json.digest(job) ~= job_key then
    return nil, blocked("job-digest-mismatch", "the job resolved now (%s) is not the job that was queued (%s)",
      json.digest(job), tostring(job_key))
  end
  local snapshot = run_dir .. "/snapshot"
  local capture, message, code = repo:capture(resolved.commit.id, snapshot, resolved.inputs)
  if not capture then return nil, blocked("snapshot-failed", "cannot capture the declared inputs: %s (%s)", message, code) end
  write_json(run_dir .. "/capture.json", capture)
  local verified, vmessage = git.verify_capture(snapshot, capture)
  if not verified then
    return nil, blocked("snapshot-changed", "the copied snapshot does not match its input digest: %s", vmessage)
  end
  local identity
  identity, message, code = identity_mod.build(resolved.check, snapshot)
  if not identity then return nil, blocked(code, "%s", message) end
  write_json(run_dir .. "/identity.json", identity)
  local spec_digest = assert(hash.file(snapshot .. "/" .. resolved.check.claim.specification))
  return { snapshot = snapshot, capture = capture, job = job, job_key = job_key, identity = identity,
           spec_digest = spec_digest, input_digest = capture.inventory_digest }
end

-- Runs the checker against evidence already in run_dir/evidence.
local function check_evidence(ctx, resolved, frozen, run_dir, run_id)
  local evidence, message, code = evidence_mod.hash_declared(run_dir .. "/evidence", resolved.check.evidence)
  if not evidence then return blocked(code, "%s", message) end
  local checker_dir = run_dir .. "/checker"
  if fs.lstat(checker_dir) then return blocked("run-dir-tampered", "checker/ existed before the checker ran") end
  assert(fs.mkdirs(checker_dir))
  local paths = { snapshot = frozen.snapshot, run_dir = run_dir, evidence = run_dir .. "/evidence",
                  request = checker_dir .. "/request.json", receipt = checker_dir .. "/receipt.json" }
  local job = { job_id = frozen.job_key, run_id = run_id }
  local request = M.checker_request(resolved, job, paths, frozen.spec_digest, frozen.identity, evidence)
  write_json(paths.request, request)
  local result = launch(ctx, resolved, "checker", {
    python = resolved.check.checker.executable.path, snapshot = paths.snapshot, run_dir = run_dir,
    request = paths.request, evidence = paths.evidence, receipt = paths.receipt,
  }, run_dir, frozen.snapshot)
  if result.status == "pin-mismatch" then return process_failure("checker", result), evidence end
  local receipt_bytes = fs.read(paths.receipt, policy.caps.receipt_bytes, { nofollow = true })
  local verdict = receipt.judge(result, receipt_bytes, {
    job_id = frozen.job_key, run_id = run_id, check_id = resolved.check.id, check_digest = resolved.check_digest,
    specification_digest = frozen.spec_digest, identity = frozen.identity, evidence_digest = evidence.digest,
    obligations = resolved.check.claim.obligations, evidence = resolved.check.evidence,
  })
  -- Post-run checks: ordinary tool, snapshot or evidence changes.
  if verdict.outcome == "PASS" then
    local still, smessage = git.verify_capture(frozen.snapshot, frozen.capture)
    if not still then verdict = blocked("snapshot-changed", "the snapshot changed during the run: %s", smessage) end
  end
  if verdict.outcome == "PASS" then
    local again = evidence_mod.hash_declared(run_dir .. "/evidence", resolved.check.evidence)
    if not again or again.digest ~= evidence.digest then
      verdict = blocked("evidence-changed", "the evidence changed while the checker ran")
    end
  end
  if verdict.outcome == "PASS" then
    local now, imessage = identity_mod.build(resolved.check, frozen.snapshot)
    if not now then verdict = blocked("pin-mismatch", "after the run: %s", imessage) end
  end
  return verdict, evidence
end

local function finish(run_dir, resolved, frozen, verdict, evidence, extra)
  local result = {
    schema_version = 1,
    outcome = verdict.outcome,
    reason = verdict.reason,
    message = verdict.message,
    checker_verdict = verdict.checker_verdict or json.null,
    component = resolved.component,
    check_id = resolved.check.id,
    commit = resolved.commit.id,
    job_id = frozen and frozen.job_key or json.null,
    input_digest = frozen and frozen.input_digest or json.null,
    specification_digest = frozen and frozen.spec_digest or json.null,
    evidence = evidence and evidence.files or json.array(),
    evidence_digest = evidence and evidence.digest or json.null,
  }
  for k, v in pairs(extra or {}) do result[k] = v end
  write_json(run_dir .. "/result.json", result)
  return result
end

-- The payload's repository and its check resolved at the payload's commit;
-- or nil and the finished blocked result naming why it does not resolve.
local function resolve_payload(payload, run_dir, extra)
  local repo = assert(git.open(payload.project))
  local resolved, message, code = M.resolve(repo, payload.commit, payload.component, payload.check_id)
  if resolved then return repo, resolved end
  local named = { component = payload.component, check = { id = payload.check_id }, commit = { id = payload.commit } }
  return nil, finish(run_dir, named, nil, blocked(code, "%s", message), nil, extra)
end

--- Runs one attempt of a check job.
--  payload = {project, component, check_id, commit, job_key}.
function M.run_check(payload, ctx, run_id)
  local run_dir = ctx.attempt_dir
  local repo, resolved = resolve_payload(payload, run_dir)
  if not repo then return resolved end -- the blocked result
  local frozen, refusal = freeze(repo, resolved, run_dir, payload.job_key)
  if not frozen then return finish(run_dir, resolved, nil, refusal) end
  assert(fs.mkdirs(run_dir .. "/evidence"))
  local producer_request = run_dir .. "/producer-request.json"
  write_json(producer_request, {
    schema_version = 1, role = "producer", job_id = frozen.job_key, run_id = run_id, check_id = resolved.check.id,
    check_digest = resolved.check_digest, specification = { path = resolved.check.claim.specification, sha256 = frozen.spec_digest },
    obligations = resolved.check.claim.obligations, evidence = resolved.check.evidence,
    paths = { snapshot = frozen.snapshot, run_dir = run_dir, evidence = run_dir .. "/evidence" },
  })
  local produced = launch(ctx, resolved, "producer", {
    python = resolved.check.producer.executable.path, snapshot = frozen.snapshot, run_dir = run_dir,
    request = producer_request, evidence = run_dir .. "/evidence", receipt = run_dir .. "/producer-receipt.json",
  }, run_dir, frozen.snapshot)
  if produced.status == "cancelled" then return finish(run_dir, resolved, frozen, blocked("cancelled", "cancelled")) end
  local failed = process_failure("producer", produced)
  if failed then return finish(run_dir, resolved, frozen, failed) end
  local verdict, evidence = check_evidence(ctx, resolved, frozen, run_dir, run_id)
  return finish(run_dir, resolved, frozen, verdict, evidence)
end

--- Replays a retained run: copies its declared evidence into this fresh
--  attempt and runs the currently pinned checker against the current
--  accepted specification, job, obligations and identity.  The stored
--  status and receipt are never consulted.
--  payload = {project, of_run, evidence_dir, component, check_id, commit}.
function M.replay(payload, ctx, run_id)
  local run_dir = ctx.attempt_dir
  local repo, resolved = resolve_payload(payload, run_dir, { replay_of = payload.of_run })
  if not repo then return resolved end -- the blocked result
  local frozen, refusal = freeze(repo, resolved, run_dir, M.job_key(resolved))
  if not frozen then return finish(run_dir, resolved, nil, refusal, nil, { replay_of = payload.of_run }) end
  local copied, cmessage, ccode = evidence_mod.copy_declared(payload.evidence_dir, run_dir .. "/evidence", resolved.check.evidence)
  if not copied then
    return finish(run_dir, resolved, frozen, blocked(ccode, "%s", cmessage), nil, { replay_of = payload.of_run })
  end
  local verdict, evidence = check_evidence(ctx, resolved, frozen, run_dir, run_id)
  return finish(run_dir, resolved, frozen, verdict, evidence, { replay_of = payload.of_run })
end

return M
