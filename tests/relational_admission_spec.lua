-- Rust source admission: the profile over the corpus in fixtures/relational,
-- the generated size/node/depth refusals, and the separate admission
-- process with its failure modes (real crashing, hanging, flooding and
-- lying processes).
local vkit = require "vkit"
local t = require "tests.support.run"
local profile = require "vkit.admission.rust"
local admission = require "vkit.relational.admission"

local DIR = vkit.root .. "/fixtures/relational/admission/"
local LIMITS = vkit.policies.limits.admission

local function cases()
  return assert(vkit.json.decode(assert(vkit.fs.read(DIR .. "cases.json", 1 << 20))))
end

local function source_of(case)
  return assert(vkit.fs.read(DIR .. case.file, 1 << 20))
end

local function admit(source, opts)
  return profile.admit(require "vkit.ts", source, LIMITS, opts)
end

local function has_proc()
  local ok, proc = pcall(require, "vkit.proc")
  return ok and type(proc) == "table" and type(proc.run) == "function"
end

-- A valid function padded to n bytes with a trailing comment.
local function padded(n)
  local head = "pub fn f(x: u32) -> u32 {\n    x\n}\n// "
  return head .. ("p"):rep(n - #head)
end

describe("the Rust admission profile", function()
  it("has a corpus of at least 40 snippets, each refusal named at a byte offset", function()
    local list = cases()
    assert.is_true(#list >= 40, #list .. " cases")
    local refused = 0
    for _, c in ipairs(list) do
      if not c.admitted then
        refused = refused + 1
        assert.is_truthy(profile.reasons[c.reason], c.file)
        assert.equal("integer", math.type(c.offset), c.file)
        if c.at then
          local src = source_of(c)
          assert.equal(c.at, src:sub(c.offset + 1, c.offset + #c.at), c.file)
        end
      end
    end
    assert.is_true(refused >= 30)
  end)

  it("decides every corpus case as recorded", function()
    for _, c in ipairs(cases()) do
      local r = admit(source_of(c))
      assert.equal(c.admitted, r.admitted, c.file .. ": " .. tostring(r.message))
      if c.admitted then
        assert.equal(c["function"], r["function"], c.file)
        assert.is_true(r.nodes <= LIMITS.max_nodes and r.depth <= LIMITS.max_depth)
      else
        assert.equal(c.reason, r.reason, c.file .. ": " .. r.message)
        assert.equal(c.offset, r.offset, c.file .. ": " .. r.message)
        local line, column = profile.position(source_of(c), c.offset)
        assert.same({ line, column }, { r.line, r.column })
        assert.matches(("at byte %d,"):format(c.offset), r.message, 1, true)
      end
    end
  end)

  it("exercises every refusal reason in the corpus or below", function()
    local seen = { too_large = true, too_many_nodes = true, too_deep = true, function_name = true }
    for _, c in ipairs(cases()) do
      if c.reason then seen[c.reason] = true end
    end
    for reason in pairs(profile.reasons) do
      assert.is_true(seen[reason] == true, "no case for " .. reason)
    end
  end)

  it("refuses a source over 64 KiB before parsing, at the first byte past the limit", function()
    local r = admit(padded(LIMITS.max_source_bytes + 1))
    assert.equal("too_large", r.reason)
    assert.equal(LIMITS.max_source_bytes, r.offset)
    assert.is_nil(r.nodes)
    local at_limit = admit(padded(LIMITS.max_source_bytes))
    assert.is_true(at_limit.admitted, at_limit.message)
  end)

  it("refuses more than 3,000 nodes, naming the first node past the limit", function()
    -- Flat, not deep: 600 typed locals of 7 nodes each.
    local lets = {}
    for i = 1, 600 do lets[i] = ("    let v%d: u32 = x;\n"):format(i) end
    local src = "pub fn f(x: u32) -> u32 {\n" .. table.concat(lets) .. "    x\n}\n"
    local r = admit(src)
    assert.equal("too_many_nodes", r.reason)
    assert.is_true(r.nodes > LIMITS.max_nodes)
    local tree = assert(require("vkit.ts").parse(src, { max_bytes = LIMITS.max_source_bytes }))
    assert.equal(tree:stats({ max_nodes = LIMITS.max_nodes, max_depth = 1000 }).nodes_exceeded_at, r.offset)
    assert.is_true(r.offset > 0 and r.offset < #src)
  end)

  it("refuses nesting deeper than 64, at the first node too deep", function()
    local src = "pub fn f(x: u32) -> u32 {\n    " .. ("("):rep(70) .. "x" .. (")"):rep(70) .. "\n}\n"
    local r = admit(src)
    assert.equal("too_deep", r.reason)
    -- source_file, function_item and block are depths 1-3; the k-th
    -- parenthesised expression is at depth 3 + k and its "(" token at 4 + k,
    -- so the first node at depth 65 is the "(" of the 61st.
    local first = src:find("((", 1, true) - 1
    assert.equal(first + LIMITS.max_depth - 4, r.offset)
    local shallow = "pub fn f(x: u32) -> u32 {\n    " .. ("("):rep(20) .. "x" .. (")"):rep(20) .. "\n}\n"
    assert.is_true(admit(shallow).admitted)
  end)

  it("refuses a function whose name differs from the binding's", function()
    local r = admit("pub fn g(x: u32) -> u32 {\n    x\n}\n", { expected_function = "f" })
    assert.equal("function_name", r.reason)
    assert.equal(7, r.offset)
    assert.is_true(admit("pub fn f(x: u32) -> u32 { x }", { expected_function = "f" }).admitted)
  end)

  it("admits only one function even when the second is valid", function()
    local r = admit "pub fn f(x: u32) -> u32 { x }\npub fn f2(x: u32) -> u32 { x }\n"
    assert.equal("multiple_functions", r.reason)
  end)
end)

describe("vkit ts_admit (the admission process)", function()
  it("answers one JSON line with the source hash and the parser identity", function()
    local src = "pub fn f(x: u32) -> u32 {\n    x\n}\n"
    local r = t.vkit({ "ts_admit", "--function", "f" }, src)
    assert.equal(0, r.code)
    assert.equal("", r.stderr)
    assert.matches("^[^\n]+\n$", r.stdout)
    local response = assert(vkit.json.decode(r.stdout:sub(1, -2)))
    assert.equal("vkit.ts-admit.v1", response.schema)
    assert.is_true(response.admitted)
    assert.equal("f", response["function"])
    assert.equal("x", response.parameter)
    assert.equal(vkit.hash.sha256(src), response.source_sha256)
    assert.same(require("vkit.ts").identity(), response.parser)
  end)

  it("reports a refusal with its reason and offset, still exiting 0", function()
    local r = t.vkit({ "ts_admit" }, "pub fn f(x: u32) -> u32 {\n    loop {}\n}\n")
    assert.equal(0, r.code)
    local response = assert(vkit.json.decode(r.stdout:sub(1, -2)))
    assert.is_false(response.admitted)
    assert.equal("loop", response.reason)
    assert.equal(30, response.offset)
  end)

  it("is listed by --help as an internal command and rejects stray arguments", function()
    assert.matches("\n  ts_admit +internal: ", t.vkit({ "--help" }).stdout)
    assert.equal(2, t.vkit({ "ts_admit", "extra" }).code)
  end)
end)

describe("admission through the separate process", function()
  -- Until vkit.proc is merged these are reported as pending, not passed.
  local it = has_proc() and it or function(name) pending(name .. " (needs vkit.proc)") end

  it("admits and refuses the corpus exactly as the profile does, with a full record", function()
    local code = admission.code_identity()
    local exe_sha = vkit.hash.file(vkit.exe)
    for _, c in ipairs(cases()) do
      local src = source_of(c)
      local record = admission.admit(src)
      assert.equal(c.admitted and "admitted" or "rejected", record.outcome, c.file .. ": " .. vkit.json.encode(record.failure))
      if c.admitted then
        assert.equal(c["function"], record["function"])
      else
        assert.equal(c.reason, record.rejection.reason, c.file)
        assert.equal(c.offset, record.rejection.offset, c.file)
      end
      assert.equal(vkit.hash.sha256(src), record.source.sha256)
      assert.equal(exe_sha, record.native_modules.vkit_binary.sha256)
      assert.equal(require("vkit.ts").identity().grammar.object_sha256, record.native_modules.grammar_object_sha256)
      assert.equal(15, record.grammar_abi)
      assert.equal(require("vkit.ts").identity().grammar.version, record.packages["tree-sitter-rust"])
      assert.equal(code.sha256, record.admission_code.sha256)
      assert.equal(10000, record.limits.deadline_ms)
      assert.equal(65536, record.limits.output_cap)
    end
  end)

  it("hashes the admission code: the digest of the profile, process and orchestration files", function()
    local code = admission.code_identity()
    assert.equal(5, #code.files)
    local files = {}
    for _, rel in ipairs(admission.code_files) do
      files[#files + 1] = { path = rel, sha256 = vkit.hash.file(vkit.root .. "/" .. rel) }
    end
    assert.equal(vkit.hash.evidence_digest(files), code.sha256)
  end)

  it("refuses an oversize source without starting a process", function()
    local record = admission.admit(padded(LIMITS.max_source_bytes + 1), { launcher = { exe = "/nonexistent", argv = { "x" } } })
    assert.equal("rejected", record.outcome)
    assert.equal("too_large", record.rejection.reason)
  end)

  local src = "pub fn f(x: u32) -> u32 {\n    x\n}\n"
  local function through(script, opts)
    opts = opts or {}
    opts.launcher = { exe = "/bin/sh", argv = { "/bin/sh", "-c", script } }
    return admission.admit(src, opts)
  end

  it("fails admission when the process crashes", function()
    local r = through "kill -SEGV $$"
    assert.equal("failed", r.outcome)
    assert.is_false(r.admitted)
    assert.equal("admission_crashed", r.failure.reason)
  end)

  it("fails admission at the deadline", function()
    local started = vkit.sys.monotonic_ms()
    local r = through("exec sleep 30", { deadline_ms = 300 })
    assert.equal("admission_timeout", r.failure.reason)
    assert.is_true(vkit.sys.monotonic_ms() - started < 5000)
  end)

  it("fails admission when the output cap is exceeded", function()
    local r = through "exec yes admitted"
    assert.equal("admission_output_capped", r.failure.reason)
  end)

  it("fails admission on a malformed response", function()
    for _, script in ipairs {
      "echo not-json",
      "printf '{\"schema\":\"vkit.ts-admit.v1\"}'",
      "echo '{}'; echo '{}'",
      "cat >/dev/null; echo '{\"admitted\":true}'",
    } do
      local r = through(script)
      assert.equal("admission_malformed_response", r.failure.reason, script)
    end
  end)

  it("fails admission on a failure exit or any stderr output", function()
    assert.equal("admission_exit_status", through("exit 3").failure.reason)
    local r = through(("cat >/dev/null; %s ts_admit < /dev/null >/dev/null; echo noise >&2"):format(t.quote(vkit.exe)))
    assert.equal("admission_malformed_response", r.failure.reason)
  end)

  it("fails admission when the answer is for other bytes", function()
    -- A real vkit answering for a different source than the one sent.
    local other = ("printf 'pub fn f(x: u32) -> u32 { x + 1 }' | %s ts_admit"):format(t.quote(vkit.exe))
    local r = through("cat >/dev/null; " .. other)
    assert.equal("admission_source_mismatch", r.failure.reason)
  end)

  -- A digest is 64 lowercase hex digits wherever vkit reads one: an answer
  -- whose source_sha256 is the right digest in capitals is malformed, not
  -- an answer about other bytes (the same pipeline unchanged is admitted).
  it("refuses a source_sha256 that is not 64 lowercase hex digits as malformed", function()
    local admit = ("%s ts_admit"):format(t.quote(vkit.exe))
    assert.equal("admitted", through(admit .. " | sed -E 's/x/x/'").outcome)
    for _, edit in ipairs {
      [[s/("source_sha256":")([0-9a-f]{64})/\1\U\2/]], -- upper case
      [[s/("source_sha256":")([0-9a-f]{63})[0-9a-f]/\1\2/]], -- 63 digits
      [[s/("source_sha256":")([0-9a-f]{64})/\1\20/]], -- 65 digits
      [[s/("source_sha256":")[0-9a-f]([0-9a-f]{63})/\1g\2/]], -- not hex
    } do
      local r = through(("%s | sed -E '%s'"):format(admit, edit))
      assert.equal("admission_malformed_response", r.failure and r.failure.reason, edit)
      assert.matches("source_sha256 is not a SHA-256", r.failure.message, 1, true)
    end
  end)

  it("fails admission when vkit.proc cannot launch the program", function()
    local r = admission.admit(src, { launcher = { exe = "/nonexistent/vkit", argv = { "vkit" } } })
    assert.equal("admission_launch_failed", r.failure.reason)
  end)
end)
