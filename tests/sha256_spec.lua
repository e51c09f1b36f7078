-- vkit's SHA-256 (csrc/sha256.c): both engines against the FIPS 180-4
-- examples, against sha256sum at every length around the block edges, and
-- against each other on random bytes fed in random pieces.
local vkit = require "vkit"
local hash = vkit.hash
local t = require "tests.support.run"

local function sha256sum(bytes)
  local path = os.tmpname()
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
  local out = io.popen("sha256sum " .. path):read "a"
  os.remove(path)
  return out:match "^(%x+)"
end

local engines = { "portable" }
if pcall(hash.engine, "sha-ni") then engines[2] = "sha-ni" end
local original = hash.engine()

describe("vkit.hash SHA-256", function()
  after_each(function() hash.engine(original) end)

  it("refuses an unknown engine by name", function()
    assert.has_error(function() hash.engine "md5" end, "no SHA-256 engine md5 on this processor")
  end)

  for _, engine in ipairs(engines) do
    describe("with the " .. engine .. " engine", function()
      before_each(function() assert.equal(engine, hash.engine(engine)) end)

      it("gives the FIPS 180-4 examples' digests", function()
        assert.equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hash.sha256 "")
        assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hash.sha256 "abc")
        assert.equal("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
          hash.sha256 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
        assert.equal("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", hash.sha256(("a"):rep(1000000)))
      end)

      it("agrees with sha256sum at every length from 0 to 200 and around 4 KiB", function()
        local lengths = {}
        for n = 0, 200 do lengths[#lengths + 1] = n end
        for n = 4090, 4100 do lengths[#lengths + 1] = n end
        local bytes = {}
        for i = 1, 4100 do bytes[i] = string.char((i * 131 + 7) % 256) end
        bytes = table.concat(bytes)
        for _, n in ipairs(lengths) do
          local s = bytes:sub(1, n)
          assert.equal(sha256sum(s), hash.sha256(s), "length " .. n)
        end
      end)
    end)
  end

  it("computes the same digest with either engine, however the bytes are fed", function()
    math.randomseed(20261202)
    for _ = 1, 40 do
      local n = math.random(0, 3000)
      local b = {}
      for i = 1, n do b[i] = string.char(math.random(0, 255)) end
      local s = table.concat(b)
      local digests = {}
      for _, engine in ipairs(engines) do
        hash.engine(engine)
        local h = hash.new()
        local at = 1
        while at <= n do
          local piece = math.random(1, 130)
          h:update(s:sub(at, at + piece - 1))
          at = at + piece
        end
        digests[#digests + 1] = h:hexdigest()
        digests[#digests + 1] = hash.sha256(s)
      end
      for i = 2, #digests do assert.equal(digests[1], digests[i]) end
      assert.equal(sha256sum(s), digests[1])
    end
  end)

  it("hashes a file larger than a read alike with either engine", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local path = dir .. "/big"
    local f = assert(io.open(path, "wb"))
    for i = 1, 3000 do f:write(("%07d "):format(i):rep(100)) end
    f:close()
    local want = io.popen("sha256sum " .. path):read "a":match "^(%x+)"
    for _, engine in ipairs(engines) do
      hash.engine(engine)
      assert.equal(want, (hash.file(path)))
    end
  end)
end)
