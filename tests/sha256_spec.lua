-- SHA-256 is OpenSSL's (libcrypto's EVP, csrc/util.c), linked into the
-- executable: checked against the FIPS 180-4 examples, against sha256sum
-- at every length around the block edges, fed in random pieces, and for
-- where it comes from (the executable's own symbols, `vkit version`), with
-- no configuration file able to change it.
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

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read "a"
  local ok = p:close()
  return ok, out
end

describe("vkit.hash SHA-256", function()
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

  it("computes the same digest however the bytes are fed, and a hasher read midway goes on", function()
    math.randomseed(20261202)
    for _ = 1, 40 do
      local n = math.random(0, 3000)
      local b = {}
      for i = 1, n do b[i] = string.char(math.random(0, 255)) end
      local s = table.concat(b)
      local h = hash.new()
      local at, half = 1, n // 2
      while at <= n do
        local piece = math.random(1, 130)
        h:update(s:sub(at, at + piece - 1))
        at = at + piece
        if half and at > half then
          assert.equal(hash.sha256(s:sub(1, at - 1)), h:hexdigest())
          half = nil
        end
      end
      assert.equal(sha256sum(s), h:hexdigest())
      assert.equal(sha256sum(s), hash.sha256(s))
    end
  end)

  it("hashes a file larger than a read as sha256sum does", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local path = dir .. "/big"
    local f = assert(io.open(path, "wb"))
    for i = 1, 30000 do f:write(("%07d "):format(i):rep(10)) end
    f:close()
    local want = io.popen("sha256sum " .. path):read "a":match "^(%x+)"
    local got, size = hash.file(path)
    assert.equal(want, got)
    assert.equal(2400000, size)
  end)

  it("is a closed hasher's error to use, not a digest", function()
    local h = hash.new()
    h:update "abc"
    do local closing <close> = h end
    assert.has_error(function() h:hexdigest() end, "attempt to use a closed hasher")
    assert.equal("vkit.hasher (closed)", tostring(h))
  end)

  it("comes from OpenSSL's libcrypto inside the executable, whose symbols it keeps private", function()
    assert.is_nil(vkit.fs.lstat(vkit.root .. "/csrc/sha256.c"))
    local ok, symbols = sh("nm " .. t.quote(vkit.exe))
    assert.is_true(ok, symbols)
    for _, name in ipairs { "EVP_MD_fetch", "EVP_DigestInit_ex2", "EVP_DigestUpdate", "EVP_DigestFinal_ex" } do
      assert.matches("\n%x+ t " .. name .. "\n", symbols, nil, nil, name .. " linked in")
    end
    local dynamic
    ok, dynamic = sh("nm -D --defined-only " .. t.quote(vkit.exe))
    assert.is_true(ok, dynamic)
    assert.is_nil(dynamic:match "EVP_", "libcrypto's symbols are not exported")
    assert.is_nil(dynamic:match "OPENSSL_", "libcrypto's symbols are not exported")
  end)

  it("names OpenSSL's version in `vkit version`", function()
    assert.matches("^OpenSSL 3%.", vkit.versions.openssl)
    local ok, out = sh(t.quote(vkit.exe) .. " version")
    assert.is_true(ok, out)
    local release = vkit.versions.openssl:match "^OpenSSL (%S+)"
    assert.matches("\nOpenSSL " .. release:gsub("%p", "%%%0") .. " %(libcrypto, linked statically: SHA%-256%)\n", out)
    ok, out = sh(t.quote(vkit.exe) .. " version --json")
    assert.is_true(ok, out)
    assert.equal(release, vkit.json.decode(out).OpenSSL.version)
  end)

  -- Which SHA-256 vkit computes is not for a configuration file to change:
  -- OPENSSL_CONF naming a file that loads a provider (code, run inside the
  -- verifier) changes nothing; read, it would fail the digest's fetch (the
  -- module is not there), with diagnostics on or off.
  it("reads no OpenSSL configuration, whatever OPENSSL_CONF names", function()
    local dir, cleanup = t.tempdir()
    finally(cleanup)
    local provider = { "openssl_conf = init", "[init]", "providers = provs", "[provs]", "evil = evil_sect",
      "[evil_sect]", "module = " .. dir .. "/evil.so", "activate = 1", "" }
    t.write(dir .. "/provider.cnf", table.concat(provider, "\n"))
    t.write(dir .. "/diagnostics.cnf", "config_diagnostics = 1\n" .. table.concat(provider, "\n"))
    t.write(dir .. "/s.lua", 'print(require("vkit.hash").sha256 "abc")')
    for _, conf in ipairs { "provider.cnf", "diagnostics.cnf" } do
      local ok, out = sh(("OPENSSL_CONF=%s %s script %s"):format(t.quote(dir .. "/" .. conf), t.quote(vkit.exe),
        t.quote(dir .. "/s.lua")))
      assert.is_true(ok, out)
      assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n", out, conf)
    end
  end)
end)
