/*
 * pg.c: vkit.pg, a thin libpq binding with real parameter binding.  No SQL
 * of its own, no policy: statements and their parameters come from Lua, and
 * every parameter travels apart from the statement (PQsendQueryParams), so
 * a value can never become SQL.
 *
 *   connect(conninfo)            -> conn | nil, message, code
 *   parse(conninfo)              -> {keyword = value, ...} | nil, message, "bad-conninfo"
 *   null                         the SQL NULL parameter (a light userdata)
 *
 *   conn:exec(sql, params [, timeout_ms]) -> result | nil, message, code
 *       params: an array (params.n, when given, counts trailing NULLs) of
 *       strings, integers, numbers, booleans or pg.null; every value is
 *       sent as text.  timeout_ms (default 10000) bounds the whole exchange
 *       on the client side, so a server that stops answering (a network
 *       partition) is a `timeout`, never a hang; the connection is then
 *       closed (its protocol state is unknown).
 *       result: {columns = {name...}, rows = {{name = text...}...},
 *       affected = n | nil}; a NULL column is absent from its row.
 *   conn:wait_notify(timeout_ms) -> channel, payload | false (timed out)
 *       | nil, message, code: the next NOTIFY on a channel this session
 *       LISTENs to.
 *   conn:ok()                    -> whether the connection is usable
 *   conn:backend_pid()           -> the server process serving it
 *   conn:close()
 *
 * Codes: connection-failed (connect), connection-lost (the server went
 * away, or the connection is closed), timeout, and for an error the server
 * reports, its five-character SQLSTATE ("40001", "23505", "42501" ...).
 * Messages come from libpq and the server; libpq never puts a password in
 * them, and this module never reads one: libpq takes it from PGPASSWORD or
 * the passfile.
 */
#include "vkit.h"

#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((visibility("default"))) int luaopen_vkit_pg(lua_State *L);

#define CONN_MT "vkit.pg.conn"
#define DEFAULT_TIMEOUT_MS 10000

typedef struct {
  PGconn *conn; /* NULL once closed */
} Conn;

static Conn *check_conn(lua_State *L) {
  return luaL_checkudata(L, 1, CONN_MT);
}

/* The message without libpq's trailing newline. */
static int fail_msg(lua_State *L, const char *code, const char *msg) {
  size_t n = strlen(msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) n--;
  lua_pushnil(L);
  lua_pushlstring(L, msg, n);
  lua_pushstring(L, code);
  return 3;
}

static void conn_drop(Conn *c) {
  if (c->conn) PQfinish(c->conn);
  c->conn = NULL;
}

static void quiet(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

static int pg_connect(lua_State *L) {
  const char *info = luaL_checkstring(L, 1);
  Conn *c = lua_newuserdatauv(L, sizeof *c, 0);
  c->conn = NULL;
  luaL_setmetatable(L, CONN_MT);
  c->conn = PQconnectdb(info);
  if (!c->conn) return vkit_fail(L, "connection-failed", "out of memory connecting");
  if (PQstatus(c->conn) != CONNECTION_OK) {
    lua_pushstring(L, PQerrorMessage(c->conn));
    conn_drop(c);
    return fail_msg(L, "connection-failed", lua_tostring(L, -1));
  }
  /* Notices (warnings the server sends) would go to stderr by default: C
   * never prints. */
  PQsetNoticeProcessor(c->conn, quiet, NULL);
  return 1;
}

static int pg_parse(lua_State *L) {
  const char *info = luaL_checkstring(L, 1);
  char *err = NULL;
  PQconninfoOption *opts = PQconninfoParse(info, &err);
  if (!opts) {
    int n = fail_msg(L, "bad-conninfo", err ? err : "out of memory");
    PQfreemem(err);
    return n;
  }
  lua_newtable(L);
  for (PQconninfoOption *o = opts; o->keyword; o++) {
    if (!o->val) continue;
    lua_pushstring(L, o->val);
    lua_setfield(L, -2, o->keyword);
  }
  PQconninfoFree(opts);
  return 1;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until the socket is ready for `events` or the deadline passes:
 * 1 ready, 0 timed out, -1 the socket is gone.  Past the deadline the
 * socket is still looked at once: a process that was stopped (SIGSTOP, a
 * suspended machine) while the monotonic deadline ran out takes the answer
 * that arrived meanwhile instead of calling it a timeout. */
static int wait_socket(PGconn *conn, short events, long long deadline) {
  int fd = PQsocket(conn);
  if (fd < 0) return -1;
  for (;;) {
    long long left = deadline - now_ms();
    if (left < 0) left = 0;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return -1;
    if (r == 0 && left == 0) return 0;
  }
}

/* Converts the parameter at stack index idx to text in buf (or NULL). */
static const char *param_text(lua_State *L, int idx, int i) {
  switch (lua_type(L, idx)) {
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == NULL) return NULL;
      break;
    case LUA_TBOOLEAN:
      return lua_toboolean(L, idx) ? "true" : "false";
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      if (strlen(s) != len) luaL_error(L, "vkit.pg: parameter %d holds a NUL byte", i);
      return s;
    }
    case LUA_TNUMBER:
      lua_pushvalue(L, idx);
      lua_replace(L, idx);
      return lua_tostring(L, idx); /* converts in place: "3" or "2.5" */
    default:
      break;
  }
  luaL_error(L, "vkit.pg: parameter %d must be a string, number, boolean or vkit.pg.null, not %s", i,
             luaL_typename(L, idx));
  return NULL;
}

static void push_result(lua_State *L, PGresult *res) {
  int nf = PQnfields(res), nt = PQntuples(res);
  lua_createtable(L, 0, 3);
  lua_createtable(L, nf, 0);
  for (int f = 0; f < nf; f++) {
    lua_pushstring(L, PQfname(res, f));
    lua_rawseti(L, -2, f + 1);
  }
  lua_setfield(L, -2, "columns");
  lua_createtable(L, nt, 0);
  for (int t = 0; t < nt; t++) {
    lua_createtable(L, 0, nf);
    for (int f = 0; f < nf; f++) {
      if (PQgetisnull(res, t, f)) continue;
      lua_pushlstring(L, PQgetvalue(res, t, f), (size_t)PQgetlength(res, t, f));
      lua_setfield(L, -2, PQfname(res, f));
    }
    lua_rawseti(L, -2, t + 1);
  }
  lua_setfield(L, -2, "rows");
  const char *affected = PQcmdTuples(res);
  if (affected && *affected) {
    lua_pushinteger(L, strtoll(affected, NULL, 10));
    lua_setfield(L, -2, "affected");
  }
}

/* The failure of a connection that is no longer usable: it is closed. */
static int lost(lua_State *L, Conn *c, const char *code, const char *what) {
  lua_pushfstring(L, "%s: %s", what, c->conn ? PQerrorMessage(c->conn) : "the connection is closed");
  conn_drop(c);
  return fail_msg(L, code, lua_tostring(L, -1));
}

static int conn_exec(lua_State *L) {
  Conn *c = check_conn(L);
  const char *sql = luaL_checkstring(L, 2);
  int has_params = !lua_isnoneornil(L, 3);
  if (has_params) luaL_checktype(L, 3, LUA_TTABLE);
  lua_Integer timeout = luaL_optinteger(L, 4, DEFAULT_TIMEOUT_MS);
  luaL_argcheck(L, timeout > 0, 4, "the timeout must be positive");
  if (!c->conn) return vkit_fail(L, "connection-lost", "the connection is closed");

  int n = 0;
  if (has_params) {
    lua_getfield(L, 3, "n");
    n = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : (int)lua_rawlen(L, 3);
    lua_pop(L, 1);
    luaL_argcheck(L, n >= 0 && n <= 65535, 3, "at most 65535 parameters");
  }
  const char **values = n ? lua_newuserdatauv(L, sizeof(char *) * (size_t)n, 0) : NULL;
  int base = lua_gettop(L);
  luaL_checkstack(L, n + 8, "too many parameters");
  for (int i = 0; i < n; i++) lua_rawgeti(L, 3, i + 1);
  for (int i = 0; i < n; i++) {
    int idx = base + 1 + i;
    values[i] = lua_isnil(L, idx) ? NULL : param_text(L, idx, i + 1);
  }

  long long deadline = now_ms() + timeout;
  /* Non-blocking before sending: in blocking mode libpq's send waits
   * without a bound for socket space once a statement exceeds what the
   * socket buffers hold (a peer that stopped reading: a stalled proxy or
   * host), so a large statement (a progress publication) hung a worker past
   * every timeout.  Non-blocking, the statement is buffered and the flush
   * loop below waits under the deadline. */
  if (PQsetnonblocking(c->conn, 1) != 0) return lost(L, c, "connection-lost", "sending");
  if (!PQsendQueryParams(c->conn, sql, n, NULL, values, NULL, NULL, 0))
    return lost(L, c, "connection-lost", "sending");
  int flushed;
  while ((flushed = PQflush(c->conn)) == 1) {
    int w = wait_socket(c->conn, POLLOUT | POLLIN, deadline);
    if (w == 0) return lost(L, c, "timeout", "no answer within the timeout");
    if (w < 0 || !PQconsumeInput(c->conn)) return lost(L, c, "connection-lost", "sending");
  }
  if (flushed < 0) return lost(L, c, "connection-lost", "sending");

  PGresult *last = NULL, *error = NULL;
  for (;;) {
    while (PQisBusy(c->conn)) {
      int w = wait_socket(c->conn, POLLIN, deadline);
      if (w == 0 || w < 0 || !PQconsumeInput(c->conn)) {
        PQclear(last);
        PQclear(error);
        if (w == 0) return lost(L, c, "timeout", "no answer within the timeout");
        return lost(L, c, "connection-lost", "waiting for the answer");
      }
    }
    PGresult *r = PQgetResult(c->conn);
    if (!r) break;
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE || st == PGRES_NONFATAL_ERROR) {
      if (!error) error = r;
      else PQclear(r);
    } else {
      PQclear(last);
      last = r;
    }
  }
  PQsetnonblocking(c->conn, 0);
  if (error) {
    PQclear(last);
    const char *sqlstate = PQresultErrorField(error, PG_DIAG_SQLSTATE);
    char state[8];
    snprintf(state, sizeof state, "%s", sqlstate ? sqlstate : "");
    lua_pushstring(L, PQresultErrorMessage(error));
    PQclear(error);
    const char *msg = lua_tostring(L, -1);
    if (PQstatus(c->conn) == CONNECTION_BAD) {
      conn_drop(c);
      return fail_msg(L, "connection-lost", msg);
    }
    return fail_msg(L, state[0] ? state : "server-error", msg);
  }
  if (!last) {
    if (PQstatus(c->conn) == CONNECTION_BAD) return lost(L, c, "connection-lost", "waiting for the answer");
    return vkit_fail(L, "server-error", "the server sent no result");
  }
  push_result(L, last);
  PQclear(last);
  return 1;
}

static int conn_wait_notify(lua_State *L) {
  Conn *c = check_conn(L);
  lua_Integer timeout = luaL_checkinteger(L, 2);
  if (!c->conn) return vkit_fail(L, "connection-lost", "the connection is closed");
  long long deadline = now_ms() + (timeout > 0 ? timeout : 0);
  for (;;) {
    if (!PQconsumeInput(c->conn)) return lost(L, c, "connection-lost", "reading notifications");
    PGnotify *note = PQnotifies(c->conn);
    if (note) {
      lua_pushstring(L, note->relname);
      lua_pushstring(L, note->extra ? note->extra : "");
      PQfreemem(note);
      return 2;
    }
    int w = wait_socket(c->conn, POLLIN, deadline);
    if (w == 0) {
      lua_pushboolean(L, 0);
      return 1;
    }
    if (w < 0) return lost(L, c, "connection-lost", "reading notifications");
  }
}

static int conn_ok(lua_State *L) {
  Conn *c = check_conn(L);
  lua_pushboolean(L, c->conn && PQstatus(c->conn) == CONNECTION_OK);
  return 1;
}

static int conn_backend_pid(lua_State *L) {
  Conn *c = check_conn(L);
  if (!c->conn) return vkit_fail(L, "connection-lost", "the connection is closed");
  lua_pushinteger(L, PQbackendPID(c->conn));
  return 1;
}

static int conn_close(lua_State *L) {
  conn_drop(check_conn(L));
  return 0;
}

static int conn_tostring(lua_State *L) {
  Conn *c = check_conn(L);
  lua_pushstring(L, c->conn ? "vkit.pg.conn (open)" : "vkit.pg.conn (closed)");
  return 1;
}

static const luaL_Reg conn_methods[] = {
    {"exec", conn_exec}, {"wait_notify", conn_wait_notify}, {"ok", conn_ok},
    {"backend_pid", conn_backend_pid}, {"close", conn_close}, {NULL, NULL}};

static const luaL_Reg conn_meta[] = {
    {"__gc", conn_close}, {"__close", conn_close}, {"__tostring", conn_tostring}, {NULL, NULL}};

static const luaL_Reg pg_funcs[] = {{"connect", pg_connect}, {"parse", pg_parse}, {NULL, NULL}};

int luaopen_vkit_pg(lua_State *L) {
  vkit_newclass(L, CONN_MT, conn_methods, conn_meta);
  luaL_newlib(L, pg_funcs);
  lua_pushlightuserdata(L, NULL);
  lua_setfield(L, -2, "null");
  return 1;
}
