-- vkit.pg, the thin libpq binding, against a real PostgreSQL: parameters
-- travel apart from the statement, failures carry their SQLSTATE, a server
-- that stops answering is a timeout (never a hang), NOTIFY is delivered.
local vkit = require "vkit"
local t = require "tests.support.run"
local postgres = require "tests.support.postgres"
local pg = require "vkit.pg"

describe("vkit.pg", function()
  it("parses libpq URLs and refuses malformed ones", function()
    local o = assert(pg.parse "postgresql://u@h:5433/db?sslmode=require&application_name=x")
    assert.same({ "u", "h", "5433", "db", "require" }, { o.user, o.host, o.port, o.dbname, o.sslmode })
    assert.equal("bad-conninfo", select(3, pg.parse "postgresql://h/db?bogus=1"))
  end)

  it("reports a server it cannot reach as connection-failed", function()
    local conn, message, code = pg.connect "host=/nonexistent-dir port=1 connect_timeout=2"
    assert.is_nil(conn)
    assert.equal("connection-failed", code)
    assert.truthy(message:find("nonexistent", 1, true), message)
  end)

  if not postgres.available() then
    pending("PostgreSQL 15 is not installed")
    return
  end

  local server, conn
  setup(function()
    server = postgres.start()
    conn = assert(pg.connect(("host=%s port=%d user=postgres dbname=postgres"):format(server.socket, server.port)))
  end)
  teardown(function()
    if conn then conn:close() end
    server:stop()
  end)

  it("binds parameters of every type as values, NULL included", function()
    local r = assert(conn:exec("SELECT $1::text AS s, $2::int AS i, $3::float8 AS f, $4::bool AS b, $5::text AS n",
      { "it's; DROP TABLE x; --", 42, 2.5, true, pg.null, n = 5 }))
    assert.same({ "s", "i", "f", "b", "n" }, r.columns)
    assert.same({ s = "it's; DROP TABLE x; --", i = "42", f = "2.5", b = "t" }, r.rows[1])
    assert.is_nil(r.rows[1].n)
    assert.has_error(function() conn:exec("SELECT $1::text", { {} }) end)
    assert.has_error(function() conn:exec("SELECT $1::text", { "a\0b" }) end)
    assert.equal(3, assert(conn:exec("SELECT generate_series(1, 3)")).affected)
  end)

  it("runs one statement per call: a second one is refused, not run", function()
    local r, message, code = conn:exec("SELECT 1; SELECT 2", {})
    assert.is_nil(r)
    assert.equal("42601", code, message)
  end)

  it("returns the server's SQLSTATE and keeps the connection usable", function()
    local r, message, code = conn:exec("SELECT * FROM no_such_table")
    assert.is_nil(r)
    assert.equal("42P01", code)
    assert.matches("no_such_table", message)
    assert.is_true(conn:ok())
    assert.equal("1", conn:exec("SELECT 1 AS one").rows[1].one)
  end)

  it("gives up on a statement after its timeout and closes the connection", function()
    local c = assert(pg.connect(("host=%s port=%d user=postgres dbname=postgres"):format(server.socket, server.port)))
    local t0 = vkit.sys.monotonic_ms()
    local r, _, code = c:exec("SELECT pg_sleep(60)", nil, 300)
    assert.is_nil(r)
    assert.equal("timeout", code)
    assert.is_true(vkit.sys.monotonic_ms() - t0 < 30000)
    assert.is_false(c:ok())
    assert.equal("connection-lost", select(3, c:exec "SELECT 1"))
    c:close()
  end)

  it("delivers NOTIFY to a listening session, and times out without one", function()
    assert(conn:exec "LISTEN spec_channel")
    assert.is_false(conn:wait_notify(50))
    local other = assert(pg.connect(("host=%s port=%d user=postgres dbname=postgres"):format(server.socket, server.port)))
    assert(other:exec("SELECT pg_notify('spec_channel', $1)", { "hello" }))
    other:close()
    local channel, payload = conn:wait_notify(30000)
    assert.equal("spec_channel", channel)
    assert.equal("hello", payload)
  end)

  it("reports a server that went away as connection-lost", function()
    local c = assert(pg.connect(("host=%s port=%d user=postgres dbname=postgres"):format(server.socket, server.port)))
    local pid = c:backend_pid()
    assert(conn:exec("SELECT pg_terminate_backend($1)", { pid }))
    assert.is_true(t.wait_for(function()
      return conn:exec("SELECT 1 FROM pg_stat_activity WHERE pid = $1", { pid }).rows[1] == nil
    end, 60))
    local r, _, code = c:exec "SELECT 1"
    assert.is_nil(r)
    assert.equal("connection-lost", code)
    c:close()
  end)
end)
