--- A real PostgreSQL 15 from Debian for the specs, in a temporary
--  directory: initdb and pg_ctl under the unprivileged `postgres` user
--  (runuser), listening on a Unix socket in that directory only (no TCP
--  port, so parallel sessions never collide), stopped and removed by
--  :stop().
--
--   local pg = require "tests.support.postgres"
--   if pg.available() then
--     local server = pg.start()
--     local db = server:database()   -- a fresh database, migrated
--     db.url (vkit_client's login), db.owner_url, db.evidence_root,
--     db.submitter_url, db.worker_url, db.other_worker_url, db.nobody_url
--     server:restart() / server:stop()
--   end
--
-- Roles: postgres (superuser, trusted on the socket: the spec's own
-- administration), vkit_owner (owns each database and migrates it),
-- vkit_worker (a member of vkit_client: submits and works, what the
-- commands and their on-demand workers use), ci_submitter (a member of
-- vkit_submitters only), ci_worker_a and ci_worker_b (each a member of
-- vkit_workers only: two workers' own logins) and ci_nobody (a login in
-- no vkit role).  Each logs in with a scram-sha-256 password kept in a
-- passfile the URLs name (passfile=...), so no password is in any URL or
-- environment.
local vkit = require "vkit"
local pgmod = require "vkit.pg"
local t = require "tests.support.run"

local M = {}
local Server = {}
Server.__index = Server

M.BIN = "/usr/lib/postgresql/15/bin"

function M.available()
  return vkit.fs.lstat(M.BIN .. "/initdb") ~= nil and vkit.fs.lstat(M.BIN .. "/pg_ctl") ~= nil
end

--- Where PostgreSQL is missing, declares the spec file's describe `title`
--  as pending (saying what installs it) and returns true: the file then
--  returns before declaring its tests.
function M.missing(title)
  if M.available() then return false end
  describe(title, function()
    pending("PostgreSQL 15 is not installed (scripts/debian-packages installs it)")
  end)
  return true
end

local function sh(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read "a"
  local ok, _, code = p:close()
  if not ok then error(("command failed (%s): %s\n%s"):format(tostring(code), cmd, out), 2) end
  return out
end
M.sh = sh

local function as_postgres(args)
  return sh("runuser -u postgres -- " .. args)
end

local function pg_ctl(self, args)
  return as_postgres(("%s/pg_ctl -D %s -l %s %s"):format(M.BIN, t.quote(self.data), t.quote(self.log), args))
end

function Server:start_server()
  pg_ctl(self, ("-w -t 60 -o %s start"):format(t.quote(("-k %s -c listen_addresses='' -p %d -c fsync=off "
    .. "-c max_connections=200"):format(self.socket, self.port))))
end

--- Starts a fresh server.
function M.start()
  local dir = assert(vkit.fs.mkdtemp "/tmp/vkit-pg-")
  local self = setmetatable({ dir = dir, data = dir .. "/data", socket = dir .. "/sock", log = dir .. "/server.log",
                              port = 20000 + tonumber(vkit.sys.random_hex(2), 16) % 30000, databases = 0 }, Server)
  assert(vkit.fs.mkdirs(self.socket))
  assert(vkit.fs.mkdirs(self.data))
  sh(("chmod 755 %s && chown postgres:postgres %s %s && chmod 700 %s"):format(t.quote(dir), t.quote(self.socket),
    t.quote(self.data), t.quote(self.data)))
  as_postgres(("%s/initdb -D %s -U postgres -A trust --no-sync"):format(M.BIN, t.quote(self.data)))
  -- Only postgres is trusted (on the socket); every other role needs its password.
  as_postgres(("sh -c %s"):format(t.quote(("printf 'local all postgres trust\\nlocal all all scram-sha-256\\n' > %s/pg_hba.conf")
    :format(self.data))))
  sh(("touch %s && chown postgres:postgres %s"):format(t.quote(self.log), t.quote(self.log)))
  self:start_server()
  self.passfile = dir .. "/pgpass"
  local lines = {}
  self.secrets = {}
  for _, login in ipairs(M.LOGINS) do
    local secret = vkit.sys.random_hex(12)
    lines[#lines + 1] = ("*:*:*:%s:%s\n"):format(login, secret)
    self.secrets[#self.secrets + 1] = secret
    self:admin(("CREATE ROLE %s LOGIN %sPASSWORD '%s'"):format(login, login == "vkit_owner" and "CREATEROLE " or "",
      secret))
  end
  t.write(self.passfile, table.concat(lines))
  assert(vkit.fs.chmod(self.passfile, tonumber("600", 8)))
  return self
end

--- The login roles every server has, and the vkit group role each is
--  granted once a database is migrated (the groups are made by migrating).
M.LOGINS = { "vkit_owner", "vkit_worker", "ci_submitter", "ci_worker_a", "ci_worker_b", "ci_nobody" }
M.GROUPS = { vkit_worker = "vkit_client", ci_submitter = "vkit_submitters", ci_worker_a = "vkit_workers",
             ci_worker_b = "vkit_workers" }

--- The libpq URL of a role on a database.
function Server:url(user, db)
  return ("postgresql:///%s?host=%s&port=%d&user=%s&passfile=%s"):format(db, self.socket, self.port, user, self.passfile)
end

--- Runs SQL as the superuser on database db (default postgres).
function Server:admin(sql, db)
  local conn = assert(pgmod.connect(("host=%s port=%d user=postgres dbname=%s"):format(self.socket, self.port,
    db or "postgres")))
  local result, message = conn:exec(sql)
  conn:close()
  return assert(result, message)
end

--- A fresh database owned by vkit_owner, migrated by `vkit store migrate`,
--  with an evidence root: {name, url, owner_url, evidence_root,
--  submitter_url, worker_url, other_worker_url, nobody_url}.
function Server:database()
  self.databases = self.databases + 1
  local name = ("vkit_%d_%s"):format(self.databases, vkit.sys.random_hex(3))
  self:admin(("CREATE DATABASE %s OWNER vkit_owner"):format(name))
  local db = { name = name, url = self:url("vkit_worker", name), owner_url = self:url("vkit_owner", name),
               submitter_url = self:url("ci_submitter", name), worker_url = self:url("ci_worker_a", name),
               other_worker_url = self:url("ci_worker_b", name), nobody_url = self:url("ci_nobody", name),
               evidence_root = self.dir .. "/evidence-" .. name }
  local r = t.vkit { "store", "migrate", "--store", db.owner_url, "--evidence-root", db.evidence_root }
  assert(r.code == 0, r.stderr .. r.stdout)
  self:grant_groups()
  return db
end

--- Grants each login its vkit group role (once the groups exist).
function Server:grant_groups()
  for _, login in ipairs(M.LOGINS) do
    if M.GROUPS[login] then self:admin(("GRANT %s TO %s"):format(M.GROUPS[login], login)) end
  end
end

--- Stops the server at once (as a crash would) and starts it again.
function Server:restart()
  pg_ctl(self, "-m immediate stop")
  self:start_server()
end

function Server:stop_server()
  pg_ctl(self, "-m immediate stop")
end

function Server:stop()
  pcall(pg_ctl, self, "-m immediate stop")
  vkit.fs.remove_tree(self.dir)
end

return M
