local vkit = require "vkit"
local t = require "tests.support.run"
local hash = vkit.hash

describe("vkit.hash", function()
  -- FIPS 180-2 / NIST CAVP example vectors.
  local vectors = {
    { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
    { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
    { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
    { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
    { ("a"):rep(1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
  }

  it("matches the NIST SHA-256 vectors", function()
    for _, v in ipairs(vectors) do assert.equal(v[2], hash.sha256(v[1])) end
  end)

  it("hashes incrementally to the same digest, whatever the split", function()
    local msg = vectors[3][1]
    for split = 0, #msg do
      local h = hash.new()
      h:update(msg:sub(1, split)):update(msg:sub(split + 1))
      assert.equal(vectors[3][2], h:hexdigest())
    end
  end)

  it("can read a digest and keep updating", function()
    local h = hash.new():update "ab"
    assert.equal(hash.sha256 "ab", h:hexdigest())
    h:update "c"
    assert.equal(vectors[2][2], h:hexdigest())
  end)

  it("refuses a closed hasher", function()
    local h = hash.new()
    getmetatable(h).__close(h)
    assert.has_error(function() h:update "x" end, "attempt to use a closed hasher")
  end)

  describe("file()", function()
    local dir, cleanup
    before_each(function() dir, cleanup = t.tempdir() end)
    after_each(function() cleanup() end)

    it("streams a file to the digest of its bytes and reports its size", function()
      local bytes = ("0123456789"):rep(300000) -- 3 MB: several read chunks
      t.write(dir .. "/f", bytes)
      local hex, size = hash.file(dir .. "/f")
      assert.equal(hash.sha256(bytes), hex)
      assert.equal(#bytes, size)
    end)

    it("names a missing file", function()
      local ok, msg, code = hash.file(dir .. "/missing")
      assert.is_nil(ok)
      assert.equal("ENOENT", code)
      assert.matches("missing", msg)
    end)

    it("refuses directories and FIFOs without blocking", function()
      assert.equal("not-a-regular-file", select(3, hash.file(dir)))
      assert(vkit.fs.mkfifo(dir .. "/fifo"))
      assert.equal("not-a-regular-file", select(3, hash.file(dir .. "/fifo")))
    end)
  end)

  describe("is_digest()", function()
    it("takes exactly 64 lowercase hex digits, each byte judged at the first, a middle and the last place", function()
      local hex = ("0123456789abcdef"):rep(4)
      assert.is_true(hash.is_digest(hex))
      assert.is_true(hash.is_digest(hash.sha256 "")) -- what this module writes
      for b = 0, 255 do
        local c = string.char(b)
        local want = c:find "^[0-9a-f]$" ~= nil
        for _, at in ipairs { 1, 32, 64 } do
          local v = hex:sub(1, at - 1) .. c .. hex:sub(at + 1)
          assert.equal(want, hash.is_digest(v), ("byte %d at %d"):format(b, at))
        end
      end
      for _, v in ipairs { "", hex:sub(2), hex .. "0", hex:rep(2), hex:upper() } do
        assert.is_false(hash.is_digest(v), v)
      end
      -- other types are not coerced: a number is not its decimal text
      for _, v in ipairs { 1e63, 0, true, {}, hash.is_digest } do assert.is_false(hash.is_digest(v)) end
      assert.is_false(hash.is_digest())
    end)
  end)

  describe("evidence_digest()", function()
    local a = ("a"):rep(64)
    local b = ("b"):rep(64)

    it("hashes sorted path NUL hash LF records", function()
      local expected = hash.sha256("proof.bin\0" .. b .. "\n" .. "z/out.txt\0" .. a .. "\n")
      assert.equal(expected, hash.evidence_digest { { path = "z/out.txt", sha256 = a }, { path = "proof.bin", sha256 = b } })
    end)

    it("does not depend on the order given", function()
      local x = hash.evidence_digest { { path = "a", sha256 = a }, { path = "b", sha256 = b } }
      local y = hash.evidence_digest { { path = "b", sha256 = b }, { path = "a", sha256 = a } }
      assert.equal(x, y)
    end)

    it("sorts by bytes, not by locale", function()
      local expected = hash.sha256("B\0" .. a .. "\n" .. "a\0" .. b .. "\n")
      assert.equal(expected, hash.evidence_digest { { path = "a", sha256 = b }, { path = "B", sha256 = a } })
    end)

    it("is the digest of nothing for an empty set", function()
      assert.equal(hash.sha256 "", hash.evidence_digest {})
    end)

    it("refuses duplicate paths, bad hashes and bad paths", function()
      assert.equal("duplicate-evidence-path",
        select(3, hash.evidence_digest { { path = "x", sha256 = a }, { path = "x", sha256 = b } }))
      assert.equal("invalid-sha256", select(3, hash.evidence_digest { { path = "x", sha256 = a:upper() } }))
      assert.equal("invalid-sha256", select(3, hash.evidence_digest { { path = "x", sha256 = "abc" } }))
      assert.equal("invalid-evidence-path", select(3, hash.evidence_digest { { path = "x\ny", sha256 = a } }))
      assert.equal("invalid-evidence-path", select(3, hash.evidence_digest { { path = "", sha256 = a } }))
      assert.equal("invalid-evidence-path", select(3, hash.evidence_digest { { path = "a\0b", sha256 = a } }))
    end)
  end)
end)
