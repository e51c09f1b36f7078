--- One attempt of an external check, and its replay (seed 000).
--
-- run_dir (the attempt directory) holds everything retained:
--   job.json               the job record whose digest is the job key
--   snapshot/              the frozen inputs, captured from the exact commit
--   capture.json           the capture identity (commit, tree, inventory digest)
--   identity.json          identity(check) as built before launch
--   producer-request.json  the producer's request ({{request}})
--   producer/home, /tmp    the producer's HOME and TMPDIR, made empty for it
--   producer/receipt.json  the producer's {{receipt}}, ignored
--   evidence/              the producer's declared artifacts
--   checker/snapshot/      the checker's own capture of the inputs ({{snapshot}})
--   checker/evidence/      its own copy of the declared artifacts ({{evidence}})
--   checker/home, /tmp     its HOME and TMPDIR
--   checker/request.json   the fresh checker request
--   checker/receipt.json   the checker's receipt ({{receipt}})
--   logs/<role>.stdout|stderr|json   captured output and process records
--   tampered/              anything found where vkit was about to write
--   result.json            outcome, reason, artifact digests, evidence digest
--
-- Sequence: freeze inputs, validate job digest / identity / input digest /
-- snapshot, run the producer in the snapshot, verify the snapshot it ran
-- in, hash exactly the declared artifacts, give the checker inputs the
-- producer never saw (a fresh capture, verified, and a copy of exactly the
-- declared artifacts, re-hashed, in checker/, which vkit creates after the
-- producer is gone), generate a fresh checker request, run the checker,
-- validate the receipt, re-check both snapshots, the identity, the evidence
-- and every file vkit retained, then write the result.  Any deviation is
-- BLOCKED with a named reason; only a valid accepting receipt is PASS.
-- Where the kernel has Landlock, each command can write only its own part
-- of the run directory (policies/protocol.lua sandbox).
-- Every retained file is written beneath a directory handle (vkit.run_dir):
-- a link planted by a producer or checker is never followed, and what was
-- planted is kept in tampered/ and BLOCKs the run (run-dir-tampered).
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
local run_dir_mod = require "vkit.run_dir"
local policy = require("vkit.policy").protocol

local M = {}

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


-- The process record retained in logs/<role>.json.
local RECORD_FIELDS = { "status", "code", "signal", "truncated", "wall_ms", "user_ms", "sys_ms", "max_rss_kb",
                        "descendants_killed", "descendants_surviving", "exe_sha256", "sandbox", "containment", "error",
                        "message" }

local function retain_process(rd, role, result)
  rd:write(("logs/%s.stdout"):format(role), result.stdout or "")
  rd:write(("logs/%s.stderr"):format(role), result.stderr or "")
  local record = {}
  for _, k in ipairs(RECORD_FIELDS) do record[k] = result[k] end
  rd:write_json(("logs/%s.json"):format(role), record)
end

-- The role's closed environment: the policy's, with HOME and TMPDIR in
-- directories vkit made empty for this role (a producer cannot leave a
-- ~/.local or a temp file that the checker's interpreter would read).
local function environment(rd, private)
  local env = tables.copy(policy.env)
  env.HOME = rd:path(private .. "/home")
  env.TMPDIR = rd:path(private .. "/tmp")
  return env
end

-- Makes the role's private directory and its home/ and tmp/.
local function make_private(rd, private)
  rd:mkdir(private, true)
  rd:mkdir(private .. "/home", true)
  rd:mkdir(private .. "/tmp", true)
end

-- What the role may write under Landlock: evidence/ (the producer's) and
-- the role's own directory, and the policy's host files.
local function writable(rd, role)
  local paths = { rd:path(role) }
  if role == "producer" then paths[#paths + 1] = rd:path "evidence" end
  for _, p in ipairs(policy.sandbox.writable) do paths[#paths + 1] = p end
  return { write = paths, optional = policy.sandbox.optional }
end

-- applied[role] records what confined the role's process (result.json's
-- sandbox and containment).
local function launch(ctx, resolved, role, values, rd, cwd, private, applied)
  local command = resolved.check[role]
  local spec = {
    sandbox = writable(rd, private),
    exe = command.executable.path,
    argv = placeholders.expand(command.argv, values),
    env = environment(rd, private),
    cwd = cwd,
    deadline_ms = command.deadline_ms,
    grace_ms = policy.caps.grace_ms,
    output_cap = policy.caps.output_cap,
    pins = identity_mod.launch_pins(resolved.check, role, cwd),
  }
  local result = ctx.run_process(spec)
  retain_process(rd, role, result)
  applied.sandbox[role] = result.sandbox or "none"
  applied.containment[role] = result.containment or "none"
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

-- Captures the declared inputs into rel (a new directory) and verifies the
-- copy against its input digest; returns the capture identity, or nil and
-- the blocked verdict.
local function capture_inputs(repo, resolved, rd, rel)
  local capture, message, code = repo:capture(resolved.commit.id, rd:path(rel), resolved.inputs)
  if not capture then return nil, blocked("snapshot-failed", "cannot capture the declared inputs: %s (%s)", message, code) end
  local verified, vmessage = git.verify_capture(rd:path(rel), capture)
  if not verified then
    return nil, blocked("snapshot-changed", "the copied snapshot does not match its input digest: %s", vmessage)
  end
  return capture
end

-- Freezes inputs and validates the job digest, the copied snapshot and its
-- complete input digest, and the current identity before the first launch.
local function freeze(repo, resolved, rd, job_key)
  local job = M.job_record(resolved)
  rd:write_json("job.json", job)
  if json.digest(job) ~= job_key then
    return nil, blocked("job-digest-mismatch", "the job resolved now (%s) is not the job that was queued (%s)",
      json.digest(job), tostring(job_key))
  end
  local capture, refusal = capture_inputs(repo, resolved, rd, "snapshot")
  if not capture then return nil, refusal end
  rd:write_json("capture.json", capture)
  local snapshot = rd:path "snapshot"
  local identity, message, code = identity_mod.build(resolved.check, snapshot)
  if not identity then return nil, blocked(code, "%s", message) end
  rd:write_json("identity.json", identity)
  local spec_digest = assert(hash.file(snapshot .. "/" .. resolved.check.claim.specification))
  return { snapshot = snapshot, capture = capture, job = job, job_key = job_key, identity = identity,
           spec_digest = spec_digest, input_digest = capture.inventory_digest,
           applied = { sandbox = json.object(), containment = json.object() } }
end

-- The checker's inputs, made after the producer is gone and beyond its
-- reach: its own capture of the declared inputs (verified; the identity
-- rebuilt from it must be the frozen one) and a copy of exactly the
-- declared artifacts, whose digest must be the one just computed.
local function checker_inputs(repo, resolved, frozen, rd, evidence)
  make_private(rd, "checker")
  local capture, refusal = capture_inputs(repo, resolved, rd, "checker/snapshot")
  if not capture then return nil, refusal end
  if capture.inventory_digest ~= frozen.input_digest then
    return nil, blocked("snapshot-changed", "the checker's capture (%s) is not the frozen input (%s)",
      capture.inventory_digest, frozen.input_digest)
  end
  local snapshot = rd:path "checker/snapshot"
  local identity, message, code = identity_mod.build(resolved.check, snapshot)
  if not identity then return nil, blocked(code, "%s", message) end
  if not tables.json_equal(identity, frozen.identity) then
    return nil, blocked("pin-mismatch", "the identity built in the checker's snapshot is not the frozen identity")
  end
  local copied, cmessage, ccode = evidence_mod.copy_declared(rd:path "evidence", rd:path "checker/evidence",
    resolved.check.evidence)
  if not copied then return nil, blocked(ccode, "%s", cmessage) end
  local copy = evidence_mod.hash_declared(rd:path "checker/evidence", resolved.check.evidence)
  if not copy or copy.digest ~= evidence.digest then
    return nil, blocked("evidence-changed", "the checker's copy of the evidence is not the evidence that was hashed")
  end
  return { snapshot = snapshot, capture = capture, evidence = rd:path "checker/evidence" }
end

-- The receipt file as judge() takes it: its bytes, nil when there is none,
-- or {reason, message} when something is there that cannot be a receipt.
local function read_receipt(rd, rel)
  local st, message, code = rd:lstat(rel)
  if not st then
    if code == "ENOENT" then return nil end
    return { reason = "receipt-unreadable", message = ("the receipt cannot be examined: %s"):format(message) }
  end
  if st.kind == "link" then
    return { reason = "receipt-is-link", message = ("the receipt is a symbolic link (to %s), not a file"):format(
      tostring(st.target)) }
  end
  if st.kind ~= "file" then
    return { reason = "receipt-not-regular", message = ("the receipt is a %s, not a regular file"):format(
      st.type == "dir" and "directory" or st.type) }
  end
  if st.size > policy.caps.receipt_bytes then
    return { reason = "receipt-too-large", message = ("the receipt has %d bytes; the limit is %d"):format(
      st.size, policy.caps.receipt_bytes) }
  end
  local bytes, rmessage, rcode = rd:read(rel, policy.caps.receipt_bytes)
  if bytes then return bytes end
  if rcode == "too-large" then
    return { reason = "receipt-too-large", message = ("the receipt grew past the %d-byte limit"):format(
      policy.caps.receipt_bytes) }
  end
  return { reason = "receipt-unreadable", message = ("the receipt cannot be read: %s"):format(rmessage) }
end

-- The post-run checks of a PASS: ordinary tool, snapshot, evidence or
-- retained-file changes during the checker's run.  The first change found
-- BLOCKs.
local function post_run(resolved, frozen, inputs, rd, evidence)
  for _, s in ipairs { { frozen.snapshot, frozen.capture }, { inputs.snapshot, inputs.capture } } do
    local still, message = git.verify_capture(s[1], s[2])
    if not still then return blocked("snapshot-changed", "the snapshot changed during the run: %s", message) end
  end
  for _, dir in ipairs { rd:path "evidence", inputs.evidence } do
    local again = evidence_mod.hash_declared(dir, resolved.check.evidence)
    if not again or again.digest ~= evidence.digest then
      return blocked("evidence-changed", "the evidence changed while the checker ran")
    end
  end
  local now, message = identity_mod.build(resolved.check, inputs.snapshot)
  if not now then return blocked("pin-mismatch", "after the run: %s", message) end
end

-- Runs the checker against evidence already in run_dir/evidence.
local function check_evidence(ctx, repo, resolved, frozen, rd, run_id)
  local evidence, message, code = evidence_mod.hash_declared(rd:path "evidence", resolved.check.evidence)
  if not evidence then return blocked(code, "%s", message) end
  local inputs, refusal = checker_inputs(repo, resolved, frozen, rd, evidence)
  if not inputs then return refusal, evidence end
  local paths = { snapshot = inputs.snapshot, run_dir = rd:path(), evidence = inputs.evidence,
                  request = rd:path "checker/request.json", receipt = rd:path "checker/receipt.json" }
  local job = { job_id = frozen.job_key, run_id = run_id }
  rd:write_json("checker/request.json",
    M.checker_request(resolved, job, paths, frozen.spec_digest, frozen.identity, evidence))
  local result = launch(ctx, resolved, "checker", {
    python = resolved.check.checker.executable.path, snapshot = paths.snapshot, run_dir = paths.run_dir,
    request = paths.request, evidence = paths.evidence, receipt = paths.receipt,
  }, rd, inputs.snapshot, "checker", frozen.applied)
  if result.status == "pin-mismatch" then return process_failure("checker", result), evidence end
  rd:audit "the checker had run"
  local verdict = receipt.judge(result, read_receipt(rd, "checker/receipt.json"), {
    job_id = frozen.job_key, run_id = run_id, check_id = resolved.check.id, check_digest = resolved.check_digest,
    specification_digest = frozen.spec_digest, identity = frozen.identity, evidence_digest = evidence.digest,
    obligations = resolved.check.claim.obligations, evidence = resolved.check.evidence,
  })
  if verdict.outcome == "PASS" then verdict = post_run(resolved, frozen, inputs, rd, evidence) or verdict end
  return verdict, evidence
end

-- A run whose directory was tampered with is BLOCKED, whatever the verdict
-- said; the verdict it replaced stays in the message.
local function tampered(rd, verdict)
  local found = rd:tampering()
  if #found == 0 or verdict.reason == "run-dir-tampered" then return verdict end
  local first = found[1]
  local what
  if first.kind == "changed" then
    what = ("%s was changed after vkit wrote it (found when %s: %s)"):format(first.path, first.found_when, first.error)
  elseif first.kind == "moved" then
    what = ("the attempt directory was moved away (found when %s: %s)"):format(first.found_when, first.error)
  else
    what = ("%s was a %s when vkit was %s (kept as %s)"):format(first.path, first.kind, first.found_when,
      tostring(first.moved_to))
  end
  return blocked("run-dir-tampered", "the run directory was tampered with: %s%s", what,
    verdict.reason and ("; the verdict before: %s %s"):format(verdict.outcome, verdict.reason) or "")
end

local function finish(rd, resolved, frozen, verdict, evidence, extra)
  local function result_of(v)
    local result = {
      schema_version = 1,
      outcome = v.outcome,
      reason = v.reason,
      message = v.message,
      checker_verdict = v.checker_verdict or json.null,
      component = resolved.component,
      check_id = resolved.check.id,
      commit = resolved.commit.id,
      job_id = frozen and frozen.job_key or json.null,
      input_digest = frozen and frozen.input_digest or json.null,
      specification_digest = frozen and frozen.spec_digest or json.null,
      evidence = evidence and evidence.files or json.array(),
      evidence_digest = evidence and evidence.digest or json.null,
      tampering = rd:tampering(),
      sandbox = frozen and frozen.applied.sandbox or json.object(),
      containment = frozen and frozen.applied.containment or json.object(),
    }
    for k, v2 in pairs(extra or {}) do result[k] = v2 end
    return result
  end
  verdict = tampered(rd, verdict)
  local written_before = #rd:tampering()
  rd:write_json("result.json", result_of(verdict))
  if #rd:tampering() > written_before then
    -- result.json itself was in the way: it is kept aside now; say so.
    verdict = tampered(rd, verdict)
    rd:write_json("result.json", result_of(verdict))
  end
  rd:close()
  return result_of(verdict)
end

-- The attempt directory's handle.
local function open_run_dir(ctx)
  return assert(run_dir_mod.open(ctx.attempt_dir))
end

-- The payload's repository and its check resolved at the payload's commit;
-- or nil and the finished blocked result naming why it does not resolve.
local function resolve_payload(payload, rd, extra)
  local repo = assert(git.open(payload.project))
  local resolved, message, code = M.resolve(repo, payload.commit, payload.component, payload.check_id)
  if resolved then return repo, resolved end
  local named = { component = payload.component, check = { id = payload.check_id }, commit = { id = payload.commit } }
  return nil, finish(rd, named, nil, blocked(code, "%s", message), nil, extra)
end

--- Runs one attempt of a check job.
--  payload = {project, component, check_id, commit, job_key}.
function M.run_check(payload, ctx, run_id)
  local rd = open_run_dir(ctx)
  local repo, resolved = resolve_payload(payload, rd)
  if not repo then return resolved end -- the blocked result
  local frozen, refusal = freeze(repo, resolved, rd, payload.job_key)
  if not frozen then return finish(rd, resolved, nil, refusal) end
  rd:mkdir("evidence", true)
  make_private(rd, "producer")
  rd:write_json("producer-request.json", {
    schema_version = 1, role = "producer", job_id = frozen.job_key, run_id = run_id, check_id = resolved.check.id,
    check_digest = resolved.check_digest, specification = { path = resolved.check.claim.specification, sha256 = frozen.spec_digest },
    obligations = resolved.check.claim.obligations, evidence = resolved.check.evidence,
    paths = { snapshot = frozen.snapshot, run_dir = rd:path(), evidence = rd:path "evidence" },
  })
  local produced = launch(ctx, resolved, "producer", {
    python = resolved.check.producer.executable.path, snapshot = frozen.snapshot, run_dir = rd:path(),
    request = rd:path "producer-request.json", evidence = rd:path "evidence",
    receipt = rd:path "producer/receipt.json",
  }, rd, frozen.snapshot, "producer", frozen.applied)
  if produced.status == "cancelled" then return finish(rd, resolved, frozen, blocked("cancelled", "cancelled")) end
  local failed = process_failure("producer", produced)
  if failed then return finish(rd, resolved, frozen, failed) end
  rd:audit "the producer had run"
  -- A directory tampered with by the producer is no place to check in.
  if #rd:tampering() > 0 then return finish(rd, resolved, frozen, { outcome = "BLOCKED" }) end
  -- The snapshot the producer ran in must be exactly the frozen input: a
  -- file it added there (a package directory, a __pycache__) must never
  -- reach the checker, and changing its inputs is a changed run.
  local still, smessage = git.verify_capture(frozen.snapshot, frozen.capture)
  if not still then
    return finish(rd, resolved, frozen, blocked("snapshot-changed", "the producer changed the snapshot: %s", smessage))
  end
  local verdict, evidence = check_evidence(ctx, repo, resolved, frozen, rd, run_id)
  return finish(rd, resolved, frozen, verdict, evidence)
end

--- Replays a retained run: copies its declared evidence into this fresh
--  attempt and runs the currently pinned checker against the current
--  accepted specification, job, obligations and identity, on its own
--  capture and its own copy of the evidence, as a first run does.  The
--  stored status and receipt are never consulted.
--  payload = {project, of_run, evidence_dir, component, check_id, commit}.
function M.replay(payload, ctx, run_id)
  local rd = open_run_dir(ctx)
  local extra = { replay_of = payload.of_run }
  local repo, resolved = resolve_payload(payload, rd, extra)
  if not repo then return resolved end -- the blocked result
  local frozen, refusal = freeze(repo, resolved, rd, M.job_key(resolved))
  if not frozen then return finish(rd, resolved, nil, refusal, nil, extra) end
  rd:mkdir("evidence", true)
  local copied, cmessage, ccode = evidence_mod.copy_declared(payload.evidence_dir, rd:path "evidence",
    resolved.check.evidence)
  if not copied then
    return finish(rd, resolved, frozen, blocked(ccode, "%s", cmessage), nil, extra)
  end
  local verdict, evidence = check_evidence(ctx, repo, resolved, frozen, rd, run_id)
  return finish(rd, resolved, frozen, verdict, evidence, extra)
end

return M
