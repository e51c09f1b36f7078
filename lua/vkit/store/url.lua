--- Which store a command talks to: `--store URL`, else VKIT_STORE, else the
-- file store of the project directory.  Pure: no connection is made here.
--
--   parse(text) -> {backend = "files", dir = DIR}
--                | {backend = "postgresql", conninfo = text, display = text, options = {...}}
--                | nil, message, code
--
-- A postgresql:// (or postgres://) URL is libpq's own syntax, passed to
-- libpq unchanged (host, port, dbname, user, sslmode, passfile, ... as
-- libpq reads them).  It must not carry a password (`password-in-url`): a
-- URL appears in process listings, shell history, worker command lines and
-- logs, so the password comes from PGPASSWORD or a passfile (PGPASSFILE,
-- ~/.pgpass), which libpq reads itself and vkit never sees.  `display` is
-- the URL as vkit prints it.
--
-- file:DIR or file:///DIR (or a plain path) names the file store of the
-- project in DIR (its .vkit/).
local M = {}

M.ENV = "VKIT_STORE"

local function decode(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

local function postgresql(text)
  local ok, pg = pcall(require, "vkit.pg")
  if not ok then return nil, "this vkit was built without vkit.pg: " .. tostring(pg), "no-postgresql" end
  local options, message = pg.parse(text)
  if not options then return nil, ("the store URL is not a libpq URL: %s"):format(message), "bad-store-url" end
  -- libpq also takes a password from the URL's user info or a query
  -- parameter; both are refused, whatever their spelling.
  local userinfo = text:match "^[%a]+://([^/?#]*)@"
  if options.password or (userinfo and decode(userinfo):find(":", 1, true)) then
    return nil, "the store URL must not carry a password: give it in PGPASSWORD or a passfile (PGPASSFILE, ~/.pgpass)",
      "password-in-url"
  end
  return { backend = "postgresql", conninfo = text, display = text, options = options }
end

function M.parse(text)
  if type(text) ~= "string" or text == "" then return nil, "the store URL is empty", "bad-store-url" end
  if text:match "^postgres://" or text:match "^postgresql://" then return postgresql(text) end
  local path = text:match "^file://(/.*)$" or text:match "^file:(.+)$"
  if path then return { backend = "files", dir = decode(path) } end
  if text:match "^%a[%w+.-]*:" and not text:match "^/" then
    return nil, ("unknown store URL scheme in %s (postgresql://... or file:DIR)"):format(text), "bad-store-url"
  end
  return { backend = "files", dir = text }
end

--- The store a command uses: the --store value, else VKIT_STORE, else the
--  file store of `project` (default ".").
function M.choose(store_option, project)
  local text = store_option or os.getenv(M.ENV)
  if text == nil or text == "" then return { backend = "files", dir = project or "." } end
  return M.parse(text)
end

return M
