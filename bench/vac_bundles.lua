--- Generated VAC bundles of any size, honest by construction: a fleet
--  bundle (fleet-board-v1 over raw_results.jsonl) and a crashkit bundle
--  (crashkit-battery-v1 over eval_run.json).  bench/vac.lua times them;
--  tests/vac_tally_differential_spec.lua tampers with them.
local vkit = require "vkit"
local number = require "vkit.vac.number"
local json, fs, hash = vkit.json, vkit.fs, vkit.hash

local M = {}

local COMMIT = "1111111111111111111111111111111111111111"

function M.write_manifest(root, checks, hashes, files)
  local evidence = json.array {}
  for _, path in ipairs(files) do
    evidence[#evidence + 1] = json.object { path = path, sha256 = (assert(hash.file(root .. "/" .. path))) }
  end
  hashes.placeholder = hashes.placeholder or "x"
  local m = json.object {
    vac_version = "0.1",
    claim = json.object { capability = "benchmark", scope = "generated rows",
      limitations = json.array { "generated for timing only" } },
    subject = json.object { kind = "agent", id = "bench", version = json.object { seed = 1 } },
    protocol = json.object { issuer = "bench/bench", issuer_commit = COMMIT, task = "bench", hashes = hashes,
      grading = "deterministic", control_policy = "none" },
    evidence = evidence,
    results = json.object { summary = json.object {}, checks = checks },
    replay = json.object { issuer_commit = COMMIT, commands = json.array { "true" }, expected = "exit 0" },
  }
  assert(fs.write_atomic(root .. "/vac.json", json.encode(m, { indent = 1 })))
end

function M.fleet(root, n)
  assert(fs.mkdirs(root))
  local f = assert(io.open(root .. "/raw_results.jsonl", "wb"))
  local groups, order = {}, {}
  local buf = {}
  for i = 0, n - 1 do
    local suite, member = "suite-" .. (i % 20), "member-" .. (i // 20 % 50)
    local df, cp = i % 3 ~= 0, i % 7 ~= 0
    local key = suite .. "/" .. member
    local g = groups[key]
    if not g then
      g = { suite = suite, member = member, n = 0, det = 0, fa = 0 }
      groups[key] = g
      order[#order + 1] = g
    end
    g.n = g.n + 1
    if df and cp then g.det = g.det + 1 end
    if not cp then g.fa = g.fa + 1 end
    buf[#buf + 1] = ('{"suite":"%s","member":"%s","i":%d,"defective_failed":%s,"clean_passed":%s,"detected":%s}\n')
      :format(suite, member, i, df, cp, df and cp)
    if #buf == 10000 then
      f:write(table.concat(buf))
      buf = {}
    end
  end
  f:write(table.concat(buf))
  f:close()
  local rows = json.array {}
  for _, g in ipairs(order) do
    rows[#rows + 1] = json.object { suite = g.suite, member = g.member, n = g.n, detected = g.det,
      false_alarms = g.fa, detection_rate = number.round(g.det / g.n, 3), false_alarm_rate = number.round(g.fa / g.n, 3) }
  end
  assert(fs.write_atomic(root .. "/results.json", json.encode(json.object { fleet_commit = COMMIT, rows = rows })))
  M.write_manifest(root, json.array { json.object { profile = "fleet-board-v1", aggregate = "results.json",
    raw = "raw_results.jsonl", expect = json.object { rows = #rows } } }, json.object { fleet_commit = COMMIT },
    { "raw_results.jsonl", "results.json" })
end

local SEV = { "none", "low", "med", "high", "critical" }
local W = { none = 0, low = 1, med = 2, high = 4, critical = 8 }

function M.crashkit(root, n)
  assert(fs.mkdirs(root))
  local cases = json.array {}
  local graded, passed_graded, truncs, errors, flagged, total_w, failed_w = 0, 0, 0, 0, 0, 0, 0
  local kinds = {}
  for i = 1, n do
    local kind = "kind-" .. (i % 12)
    local passed, truncated = i % 4 ~= 0, i % 97 == 0
    local sev = SEV[i % 5 + 1]
    local grader = i % 89 == 0 and "error" or "regex"
    local c = json.object { id = "case-" .. i, kind = kind, severity = sev, grader = grader, passed = passed,
      truncated = truncated, flagged = not passed and not truncated, note = "generated case " .. i }
    cases[i] = c
    if truncated then truncs = truncs + 1 else
      graded = graded + 1
      total_w = total_w + W[sev]
      kinds[kind] = kinds[kind] or { 0, 0 }
      kinds[kind][2] = kinds[kind][2] + 1
      if passed then
        passed_graded = passed_graded + 1
        kinds[kind][1] = kinds[kind][1] + 1
      else
        failed_w = failed_w + W[sev]
      end
    end
    if grader == "error" then errors = errors + 1 end
    if not passed and not truncated then flagged = flagged + 1 end
  end
  local acc = number.round(passed_graded / graded, 4)
  local per_kind = json.object {}
  for k, v in pairs(kinds) do per_kind[k] = number.round(v[1] / v[2], 4) end
  local doc = json.object {
    git_sha = "bench01", cases = cases, per_kind = per_kind,
    metrics = json.object { faithfulness = acc, ["precision@k"] = acc, ["recall@k"] = acc, citation_rate = acc,
      vulnerability_score = number.round(failed_w / total_w, 4), flagged_cases = flagged + 0.0, n_cases = n + 0.0,
      truncations = truncs + 0.0, reliability = number.round((n - errors - truncs) / n, 4) },
  }
  assert(fs.write_atomic(root .. "/eval_run.json", json.encode(doc)))
  M.write_manifest(root, json.array { json.object { profile = "crashkit-battery-v1", artifact = "eval_run.json",
    battery_hash_key = "battery", expect = json.object { n_cases = n } } }, json.object { battery = "bench01" },
    { "eval_run.json" })
end


--- Rewrites root/vac.json so that every listed artifact is pinned to the
--  bytes it holds now (a tamper re-hashed honestly).
function M.rehash(root)
  local m = assert(json.decode(assert(fs.read(root .. "/vac.json", 1 << 24))))
  for _, e in ipairs(m.evidence) do e.sha256 = assert(hash.file(root .. "/" .. e.path)) end
  assert(fs.write_atomic(root .. "/vac.json", json.encode(m, { indent = 1 })))
end

return M
