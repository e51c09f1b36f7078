/*
 * process.c: vkit.process, the raw process primitive.  Every limit is an
 * argument; nothing here has a default or reads a policy (vkit.proc does).
 *
 *   spawn(spec)            -> handle (always; a refused launch is a handle
 *                             whose result is already there)
 *   open_executable(path)  -> exe | nil, message, code
 *   canceller()            -> token
 *   landlock_abi()         -> N (0 when the kernel has no Landlock)
 *   isolation_available()  -> true | false, reason
 *   file_identity(path)    -> "dev:ino:size:mtime:ctime" | nil, message, code
 *   cgroup_available()     -> true | false, reason
 *   reap_stale_cgroups(kill_wait_ms) -> {{path, owner_pid, killed,
 *                             surviving, removed, error}, ...}: the cgroups
 *                             of dead vkit processes, emptied and removed
 *
 * spec (every field but stdin, pins, rlimits, sandbox, cancel is required):
 *   argv        array of strings (argv[1] becomes the child's argv[0])
 *   exe         absolute path, or an exe from open_executable
 *   env         {NAME = value}: the whole environment
 *   cwd         absolute directory
 *   stdin       bytes (nil: the child reads end-of-file at once)
 *   deadline_ms, grace_ms, output_cap, kill_wait_ms, reap_interval_ms
 *   cgroup      "off" | "auto" | "required"
 *   pins        {exe_sha256 = hex, files = {{path =, sha256 =}, ...},
 *                identities = {{path =, identity =}, ...}}
 *   rlimits     {cpu_seconds, address_space_bytes, file_size_bytes, open_files}
 *   sandbox     {read = {dirs}, write = {dirs}, optional = bool}; with
 *               isolate, the paths are in the run's own root
 *   isolate     {mounts = {{type = "bind", source =, target =, writable =,
 *               executable =, devices =} | {type = "tmpfs", target =,
 *               size_bytes =, mode =} | {type = "proc", target =} |
 *               {type = "symlink", target =, link =} | {type = "copy",
 *               source =, target =, executable =}, ...}, uid =, gid =,
 *               hostname =, exe = path in that root}: namespaces and a
 *               root of its own
 *               (process_isolate.c); cwd is then a path in that root
 *   cancel      a token from canceller()
 *
 * handle:wait([timeout_ms]) -> result, or nil while still running after
 * timeout_ms; handle:cancel() -> true when it was running; handle:pid();
 * handle:close() (also __close, __gc): kills and reaps the whole tree.
 *
 * token:cancel(), token:cancelled(), token:arm("INT", "TERM", ...) trips the
 * token from a signal handler, token:disarm() restores the dispositions.
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROCESS "vkit.process"
#define EXE "vkit.process.exe"
#define TOKEN "vkit.process.canceller"

enum { UV_STDIN = 1, UV_TOKEN, UV_RESULT };

/* ---- cancel tokens ------------------------------------------------------ */

/* Signals a token can be armed with.  The handler can only reach static
 * storage: one hit counter per signal and a self-pipe that wakes a wait. */
static const struct {
  const char *name;
  int sig;
} catchable[] = {{"INT", SIGINT}, {"TERM", SIGTERM}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
                 {"USR2", SIGUSR2}};
#define NCATCH (int)(sizeof catchable / sizeof catchable[0])

static volatile sig_atomic_t sig_hits[NCATCH];
static int sig_pipe[2] = {-1, -1};
static int sig_refs[NCATCH];
static struct sigaction sig_prev[NCATCH];

typedef struct Token {
  int cancelled;
  int armed[NCATCH];
  sig_atomic_t seen[NCATCH];
} Token;

static void on_signal(int sig) {
  int saved = errno;
  for (int i = 0; i < NCATCH; i++)
    if (catchable[i].sig == sig) sig_hits[i]++;
  if (write(sig_pipe[1], "x", 1) < 0) { /* full: a wake-up is pending anyway */ }
  errno = saved;
}

static int token_cancelled(const Token *t) {
  if (!t) return 0;
  if (t->cancelled) return 1;
  for (int i = 0; i < NCATCH; i++)
    if (t->armed[i] && sig_hits[i] != t->seen[i]) return 1;
  return 0;
}

static int token_armed(const Token *t) {
  for (int i = 0; t && i < NCATCH; i++)
    if (t->armed[i]) return 1;
  return 0;
}

static Token *checktoken(lua_State *L, int i) { return luaL_checkudata(L, i, TOKEN); }

static int t_new(lua_State *L) {
  Token *t = lua_newuserdatauv(L, sizeof *t, 0);
  memset(t, 0, sizeof *t);
  luaL_setmetatable(L, TOKEN);
  return 1;
}

static int t_cancel(lua_State *L) {
  checktoken(L, 1)->cancelled = 1;
  return 0;
}

static int t_cancelled(lua_State *L) {
  lua_pushboolean(L, token_cancelled(checktoken(L, 1)));
  return 1;
}

static int t_arm(lua_State *L) {
  Token *t = checktoken(L, 1);
  int top = lua_gettop(L);
  for (int a = 2; a <= top; a++) {
    const char *name = luaL_checkstring(L, a);
    int i = 0;
    while (i < NCATCH && strcmp(catchable[i].name, name) != 0) i++;
    if (i == NCATCH) return luaL_argerror(L, a, "not a signal a token can catch (INT TERM HUP QUIT USR1 USR2)");
    if (t->armed[i]) continue;
    if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      return vkit_fail_errno(L, errno, "cannot create the signal pipe");
    if (sig_refs[i]++ == 0) {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = on_signal;
      sa.sa_flags = SA_RESTART;
      sigemptyset(&sa.sa_mask);
      sigaction(catchable[i].sig, &sa, &sig_prev[i]);
    }
    t->seen[i] = sig_hits[i];
    t->armed[i] = 1;
  }
  lua_settop(L, 1);
  return 1;
}

static int t_disarm(lua_State *L) {
  Token *t = checktoken(L, 1);
  for (int i = 0; i < NCATCH; i++) {
    if (!t->armed[i]) continue;
    if (sig_hits[i] != t->seen[i]) t->cancelled = 1; /* a hit stays a hit */
    t->armed[i] = 0;
    if (--sig_refs[i] == 0) sigaction(catchable[i].sig, &sig_prev[i], NULL);
  }
  return 0;
}

/* ---- executable handles ------------------------------------------------- */

typedef struct Exe {
  int fd;
  char path[PATH_MAX];
} Exe;

static Exe *checkexe(lua_State *L, int i) {
  Exe *e = luaL_checkudata(L, i, EXE);
  if (e->fd < 0) luaL_error(L, "attempt to use a closed executable");
  return e;
}

static int e_open(lua_State *L) {
  size_t len;
  const char *path = luaL_checklstring(L, 1, &len);
  Refusal why;
  int fd;
  if (strlen(path) != len || len >= PATH_MAX) return vkit_fail(L, "exe-unavailable", "exe path is not a valid path");
  if (open_exe(path, &fd, &why) != 0) return vkit_fail(L, why.error, "%s", why.message);
  Exe *e = lua_newuserdatauv(L, sizeof *e, 0);
  e->fd = fd;
  memcpy(e->path, path, len + 1);
  luaL_setmetatable(L, EXE);
  return 1;
}

static int e_sha256(lua_State *L) {
  Exe *e = checkexe(L, 1);
  char hex[65];
  int err = hash_fd_hex(e->fd, hex);
  if (err) return vkit_fail_errno(L, err, e->path);
  lua_pushstring(L, hex);
  return 1;
}

static int e_path(lua_State *L) {
  lua_pushstring(L, checkexe(L, 1)->path);
  return 1;
}

static int e_close(lua_State *L) {
  Exe *e = luaL_checkudata(L, 1, EXE);
  if (e->fd >= 0) close(e->fd);
  e->fd = -1;
  return 0;
}

/* ---- spec parsing (misuse raises) --------------------------------------- */

static const char *const spec_keys[] = {"argv", "exe", "env", "cwd", "stdin", "deadline_ms", "grace_ms",
                                        "output_cap", "kill_wait_ms", "reap_interval_ms", "cgroup", "pins",
                                        "rlimits", "sandbox", "isolate", "cancel", NULL};
static const char *const pins_keys[] = {"exe_sha256", "files", "identities", NULL};
static const char *const file_keys[] = {"path", "sha256", NULL};
static const char *const identity_keys[] = {"path", "identity", NULL};
static const char *const isolate_keys[] = {"mounts", "uid", "gid", "hostname", "exe", NULL};
static const char *const mount_keys[] = {"type", "source", "target", "writable", "executable", "devices",
                                         "size_bytes", "mode", "link", NULL};
static const char *const sandbox_keys[] = {"read", "write", "optional", NULL};
static const char *const rlimit_keys[] = {"cpu_seconds", "address_space_bytes", "file_size_bytes", "open_files",
                                          NULL};

static void check_keys(lua_State *L, int t, const char *what, const char *const *allowed) {
  t = lua_absindex(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    int ok = 0;
    if (lua_type(L, -2) == LUA_TSTRING)
      for (const char *const *k = allowed; *k && !ok; k++) ok = strcmp(*k, lua_tostring(L, -2)) == 0;
    if (!ok) luaL_error(L, "%s: unknown field '%s'", what, lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?");
    lua_pop(L, 1);
  }
}

static lua_Integer need_int(lua_State *L, int t, const char *k, lua_Integer min) {
  int isnum;
  lua_getfield(L, t, k);
  lua_Integer v = lua_tointegerx(L, -1, &isnum);
  if (!isnum || v < min) luaL_error(L, "spec.%s must be an integer >= %d", k, (int)min);
  lua_pop(L, 1);
  return v;
}

/* The table at spec[k] (pushed), or 0 and nothing pushed when absent. */
static int opt_table(lua_State *L, int t, const char *k, const char *what) {
  int type = lua_getfield(L, t, k);
  if (type == LUA_TTABLE) return 1;
  if (type != LUA_TNIL) luaL_error(L, "%s must be a table", what);
  lua_pop(L, 1);
  return 0;
}

static int valid_sha256(const char *s, size_t len) {
  if (len != 64) return 0;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

/* An array of strings (the table on top) as a NULL-terminated vector in a
 * new userdata (left on the stack); *nul set when an element holds a NUL. */
/* Raises unless the table at t is a sequence: keys 1..n and nothing else. */
static size_t check_array(lua_State *L, int t, const char *what) {
  size_t n = lua_rawlen(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_Integer i = lua_isinteger(L, -2) ? lua_tointeger(L, -2) : 0;
    if (i < 1 || (size_t)i > n) luaL_error(L, "%s must be an array", what);
    lua_pop(L, 1);
  }
  return n;
}

static const char **string_array(lua_State *L, const char *what, size_t *count, int *nul) {
  int t = lua_gettop(L);
  size_t n = check_array(L, t, what);
  const char **v = lua_newuserdatauv(L, (n + 1) * sizeof *v, 0);
  for (size_t i = 0; i < n; i++) {
    size_t len;
    if (lua_rawgeti(L, t, (lua_Integer)i + 1) != LUA_TSTRING) luaL_error(L, "%s[%d] must be a string", what, (int)i + 1);
    v[i] = lua_tolstring(L, -1, &len);
    if (strlen(v[i]) != len) *nul = 1;
    lua_pop(L, 1); /* the string stays alive in the table */
  }
  v[n] = NULL;
  *count = n;
  return v;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* env {NAME = value} as a sorted "NAME=value" vector; 0, or -1 when a name
 * or value cannot be expressed (empty name, '=' or NUL in it, NUL in value). */
static int build_env(lua_State *L, int t, char ***out, Refusal *why) {
  size_t n = 0, bytes = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "spec.env must map strings to strings");
    n++;
    bytes += lua_rawlen(L, -2) + lua_rawlen(L, -1) + 2;
    lua_pop(L, 1);
  }
  char **v = lua_newuserdatauv(L, (n + 1) * sizeof *v + bytes, 0);
  char *p = (char *)(v + n + 1);
  size_t i = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    size_t klen, vlen;
    const char *k = lua_tolstring(L, -2, &klen), *val = lua_tolstring(L, -1, &vlen);
    if (klen == 0 || strlen(k) != klen || strchr(k, '=') || strlen(val) != vlen) {
      refuse(why, "launch-failed", "env-invalid", 0,
             "environment variable '%s' cannot be passed: names must be non-empty without '=' or NUL, values "
             "without NUL",
             k);
      lua_pop(L, 2);
      return -1;
    }
    v[i++] = p;
    memcpy(p, k, klen);
    p[klen] = '=';
    memcpy(p + klen + 1, val, vlen + 1);
    p += klen + vlen + 2;
    lua_pop(L, 1);
  }
  v[n] = NULL;
  qsort(v, n, sizeof *v, cmp_str);
  *out = v;
  return 0;
}

/* ---- results ------------------------------------------------------------ */

static void push_common(lua_State *L, const char *status) {
  lua_createtable(L, 0, 20);
  vkit_setfield_str(L, "status", status);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "truncated");
  vkit_setfield_str(L, "stdout", "");
  vkit_setfield_str(L, "stderr", "");
  vkit_setfield_int(L, "wall_ms", 0);
  vkit_setfield_int(L, "user_ms", 0);
  vkit_setfield_int(L, "sys_ms", 0);
  vkit_setfield_int(L, "max_rss_kb", 0);
  vkit_setfield_int(L, "descendants_killed", 0);
  vkit_setfield_int(L, "descendants_surviving", 0);
  vkit_setfield_str(L, "sandbox", "none");
  vkit_setfield_str(L, "isolation", "none");
  vkit_setfield_str(L, "containment", "none");
}

static void push_refusal(lua_State *L, const Refusal *why) {
  push_common(L, why->status);
  vkit_setfield_str(L, "error", why->error);
  vkit_setfield_str(L, "message", why->message);
  if (why->err) vkit_setfield_str(L, "errno", vkit_errno_name(why->err));
  if (why->pin_path[0]) {
    lua_createtable(L, 0, 3);
    vkit_setfield_str(L, "path", why->pin_path);
    vkit_setfield_str(L, "expected", why->expected);
    if (why->actual[0]) vkit_setfield_str(L, "actual", why->actual);
    lua_setfield(L, -2, "pin");
  }
}

static lua_Integer tv_ms(struct timeval tv) { return (lua_Integer)tv.tv_sec * 1000 + tv.tv_usec / 1000; }

static void push_result(lua_State *L, const Run *r) {
  static const char *const reasons[] = {NULL, "timeout", "cancelled", "output-capped"};
  const char *status = reasons[r->end_reason];
  if (!status) status = r->truncated ? "output-capped" : r->sig ? "signaled" : "exited";
  push_common(L, status);
  if (r->waited && !r->sig) vkit_setfield_int(L, "code", r->code);
  if (r->sig) vkit_setfield_int(L, "signal", r->sig);
  lua_pushlstring(L, r->out.p ? r->out.p : "", r->out.n);
  lua_setfield(L, -2, "stdout");
  lua_pushlstring(L, r->err.p ? r->err.p : "", r->err.n);
  lua_setfield(L, -2, "stderr");
  lua_pushboolean(L, r->truncated);
  lua_setfield(L, -2, "truncated");
  vkit_setfield_int(L, "wall_ms", r->end - r->start);
  vkit_setfield_int(L, "user_ms", tv_ms(r->ru.ru_utime));
  vkit_setfield_int(L, "sys_ms", tv_ms(r->ru.ru_stime));
  vkit_setfield_int(L, "max_rss_kb", r->ru.ru_maxrss);
  vkit_setfield_int(L, "descendants_killed", r->descendants_killed);
  vkit_setfield_int(L, "descendants_surviving", r->descendants_surviving);
  vkit_setfield_str(L, "exe_sha256", r->exe_sha256);
  vkit_setfield_str(L, "sandbox", r->sandbox);
  if (r->isolated) {
    lua_createtable(L, 0, 5);
    vkit_setfield_str(L, "namespaces", r->iso_user_ns ? "mount pid network ipc uts cgroup user" : "mount pid network ipc uts cgroup");
    vkit_setfield_str(L, "root", "private");
    vkit_setfield_str(L, "syscalls", isolate_filter_name());
    vkit_setfield_int(L, "uid", r->iso_uid);
    vkit_setfield_int(L, "gid", r->iso_gid);
    lua_setfield(L, -2, "isolation");
  }
  vkit_setfield_int(L, "pid", r->pid);
}

/* ---- running ------------------------------------------------------------ */

static Run *checkrun(lua_State *L) { return luaL_checkudata(L, 1, PROCESS); }

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static int buf_reserve(Buf *b, size_t extra) {
  if (b->cap - b->n >= extra) return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->n < extra) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p, b->cap = cap;
  return 0;
}

enum { PUMP_EOF, PUMP_AGAIN, PUMP_CAPPED };

/* Reads what fd holds into b without ever keeping more than the cap of
 * stdout and stderr together; one byte past the cap proves the overflow. */
static int pump(Run *r, int fd, Buf *b) {
  for (;;) {
    size_t used = r->out.n + r->err.n, room = r->cap > used ? r->cap - used : 0;
    size_t want = room < 65535 ? room + 1 : 65536;
    if (buf_reserve(b, want) != 0) want = b->cap - b->n; /* out of memory: read less */
    if (want == 0) return r->truncated = 1, PUMP_CAPPED;
    ssize_t n = read(fd, b->p + b->n, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return PUMP_AGAIN;
    if (n <= 0) return PUMP_EOF;
    if ((size_t)n > room) {
      b->n += room;
      r->truncated = 1;
      return PUMP_CAPPED;
    }
    b->n += (size_t)n;
  }
}

/* Writes pending stdin bytes; SIGPIPE is held back so a child that exits
 * without reading cannot kill us. */
static void feed(Run *r) {
  while (r->in_fd >= 0) {
    if (r->in_off >= r->in_len) break;
    size_t chunk = r->in_len - r->in_off > 65536 ? 65536 : r->in_len - r->in_off;
    sigset_t set, old, pending;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &set, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    ssize_t n = write(r->in_fd, r->in_p + r->in_off, chunk);
    int err = errno;
    if (n < 0 && err == EPIPE && !was_pending) {
      struct timespec zero = {0, 0};
      sigtimedwait(&set, NULL, &zero);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (n > 0) {
      r->in_off += (size_t)n;
      continue;
    }
    if (n < 0 && err == EINTR) continue;
    if (n < 0 && err == EAGAIN) return;
    break; /* EPIPE: the child will not read the rest */
  }
  close_fd(&r->in_fd);
}

static void kill_now(Run *r) {
  tree_signal_group(r, SIGKILL);
  if (r->cg) cg_kill(r->cg); /* when it fails, the group kill still applies */
  r->kill_sent = 1;
  r->phase = PHASE_TERMINATING;
}

static void terminate(Run *r, int reason, ms_t now) {
  if (r->end_reason == END_NONE) r->end_reason = reason;
  if (r->phase != PHASE_RUNNING) return;
  r->phase = PHASE_TERMINATING;
  if (r->grace <= 0) {
    kill_now(r);
    return;
  }
  tree_signal_group(r, SIGTERM);
  r->kill_at = now + r->grace;
}

static void capped(Run *r) {
  if (r->end_reason == END_NONE) r->end_reason = END_CAP;
  /* SIGKILL first: a writer then dies of it, not of SIGPIPE from the close. */
  if (!r->kill_sent) kill_now(r);
  close_fd(&r->out_fd);
  close_fd(&r->err_fd);
}

static void drain(Run *r) {
  if (r->out_fd >= 0 && pump(r, r->out_fd, &r->out) == PUMP_CAPPED) capped(r);
  if (r->err_fd >= 0 && pump(r, r->err_fd, &r->err) == PUMP_CAPPED) capped(r);
}

/* The root has exited (or been killed): end the tree, take the last output,
 * reap, and store the result. */
static void finish(lua_State *L, int h, Run *r) {
  if (!r->end) r->end = proc_now_ms();
  run_collect(r);
  drain(r); /* the writers are gone: what is left is all there is */
  close_fd(&r->in_fd);
  close_fd(&r->out_fd);
  close_fd(&r->err_fd);
  r->phase = PHASE_DONE;
  push_result(L, r);
  /* "cgroup" only when the cgroup held the whole tree to the end */
  vkit_setfield_str(L, "containment", r->cg_used && !r->escaped ? "cgroup" : "best-effort");
  lua_setiuservalue(L, h, UV_RESULT);
  free(r->out.p);
  free(r->err.p);
  r->out.p = r->err.p = NULL;
  r->out.n = r->err.n = 0;
}

/* Runs the supervision loop until the root exits (1) or `until` (0). */
static int step(Run *r, ms_t until) {
  for (;;) {
    ms_t now = proc_now_ms();
    if (r->phase == PHASE_RUNNING) {
      /* an interactive interrupt (vkit.h) cancels like a token */
      if (token_cancelled(r->token) || vkit_interrupt_requested) terminate(r, END_CANCEL, now);
      else if (now >= r->deadline) terminate(r, END_TIMEOUT, now);
    }
    if (r->phase == PHASE_TERMINATING && !r->kill_sent && now >= r->kill_at) kill_now(r);
    if (now >= r->next_reap) {
      tree_reap_orphans();
      r->next_reap = now + r->reap_interval;
    }
    struct pollfd p[5];
    int n = 0, ipid = n, iout = -1, ierr = -1, iin = -1, isig = -1;
    p[n++] = (struct pollfd){r->pidfd, POLLIN, 0};
    if (r->out_fd >= 0) iout = n, p[n++] = (struct pollfd){r->out_fd, POLLIN, 0};
    if (r->err_fd >= 0) ierr = n, p[n++] = (struct pollfd){r->err_fd, POLLIN, 0};
    if (r->in_fd >= 0) iin = n, p[n++] = (struct pollfd){r->in_fd, POLLOUT, 0};
    if (token_armed(r->token)) isig = n, p[n++] = (struct pollfd){sig_pipe[0], POLLIN, 0};
    ms_t wake = r->next_reap;
    if (r->phase == PHASE_RUNNING && r->deadline < wake) wake = r->deadline;
    if (r->phase == PHASE_TERMINATING && !r->kill_sent && r->kill_at < wake) wake = r->kill_at;
    if (until >= 0 && until < wake) wake = until;
    int timeout = wake > now ? (int)(wake - now) : 0;
    if (poll(p, (nfds_t)n, timeout) > 0) {
      if (iout >= 0 && p[iout].revents) {
        int got = pump(r, r->out_fd, &r->out);
        if (got == PUMP_EOF) close_fd(&r->out_fd);
        if (got == PUMP_CAPPED) capped(r);
      }
      if (ierr >= 0 && p[ierr].revents && r->err_fd >= 0) {
        int got = pump(r, r->err_fd, &r->err);
        if (got == PUMP_EOF) close_fd(&r->err_fd);
        if (got == PUMP_CAPPED) capped(r);
      }
      if (iin >= 0 && p[iin].revents) feed(r);
      if (isig >= 0 && p[isig].revents) {
        char junk[64];
        while (read(sig_pipe[0], junk, sizeof junk) > 0) {}
      }
      if (p[ipid].revents) {
        r->end = proc_now_ms();
        return 1;
      }
    }
    if (until >= 0 && proc_now_ms() >= until) return 0;
  }
}

static int r_wait(lua_State *L) {
  Run *r = checkrun(L);
  lua_Integer timeout = luaL_optinteger(L, 2, -1);
  if (r->phase != PHASE_DONE) {
    ms_t until = timeout < 0 ? -1 : proc_now_ms() + timeout;
    if (!step(r, until)) {
      lua_pushnil(L);
      return 1;
    }
    finish(L, 1, r);
  }
  lua_getiuservalue(L, 1, UV_RESULT);
  return 1;
}

static int r_cancel(lua_State *L) {
  Run *r = checkrun(L);
  int running = r->phase == PHASE_RUNNING || r->phase == PHASE_TERMINATING;
  if (running) terminate(r, END_CANCEL, proc_now_ms());
  lua_pushboolean(L, running);
  return 1;
}

static int r_pid(lua_State *L) {
  Run *r = checkrun(L);
  if (r->pid > 0) lua_pushinteger(L, r->pid);
  else lua_pushnil(L);
  return 1;
}

/* close / __close: a run still going is killed now (no grace) and its
 * result says "cancelled"; __gc does the same without making a result. */
static void abandon(Run *r) {
  if (r->phase == PHASE_DONE) return;
  if (r->end_reason == END_NONE) r->end_reason = END_CANCEL;
  kill_now(r);
}

static int r_close(lua_State *L) {
  Run *r = checkrun(L);
  if (r->phase != PHASE_DONE) {
    abandon(r);
    finish(L, 1, r);
  }
  return 0;
}

static int r_gc(lua_State *L) {
  Run *r = checkrun(L);
  if (r->phase != PHASE_DONE) {
    abandon(r);
    if (!r->end) r->end = proc_now_ms();
    run_collect(r);
    close_fd(&r->in_fd);
    close_fd(&r->out_fd);
    close_fd(&r->err_fd);
    r->phase = PHASE_DONE;
  }
  free(r->out.p);
  free(r->err.p);
  r->out.p = r->err.p = NULL;
  return 0;
}

/* ---- spawn -------------------------------------------------------------- */

static int refused(lua_State *L, int h, const Refusal *why) {
  push_refusal(L, why);
  lua_setiuservalue(L, h, UV_RESULT);
  lua_settop(L, h);
  return 1;
}

static void parse_pins(lua_State *L, int spec, LaunchSpec *s) {
  if (!opt_table(L, spec, "pins", "spec.pins")) return;
  int t = lua_gettop(L);
  check_keys(L, t, "spec.pins", pins_keys);
  size_t len;
  if (lua_getfield(L, t, "exe_sha256") != LUA_TNIL) {
    const char *h = lua_tolstring(L, -1, &len);
    if (!lua_isstring(L, -1) || !valid_sha256(h, len)) luaL_error(L, "spec.pins.exe_sha256 must be 64 lowercase hex digits");
    s->exe_sha256 = h; /* kept alive by the spec table */
  }
  lua_pop(L, 1);
  if (opt_table(L, t, "files", "spec.pins.files")) {
    int f = lua_gettop(L);
    size_t n = check_array(L, f, "spec.pins.files");
    const char **paths = lua_newuserdatauv(L, (n + 1) * sizeof *paths, 0);
    const char **hashes = lua_newuserdatauv(L, (n + 1) * sizeof *hashes, 0);
    for (size_t i = 0; i < n; i++) {
      if (lua_rawgeti(L, f, (lua_Integer)i + 1) != LUA_TTABLE) luaL_error(L, "spec.pins.files[%d] must be a table", (int)i + 1);
      check_keys(L, -1, "spec.pins.files[]", file_keys);
      lua_getfield(L, -1, "path");
      lua_getfield(L, -2, "sha256");
      const char *hash = lua_tolstring(L, -1, &len);
      if (lua_type(L, -2) != LUA_TSTRING || strlen(lua_tostring(L, -2)) != lua_rawlen(L, -2))
        luaL_error(L, "spec.pins.files[%d].path must be a string without NUL", (int)i + 1);
      if (lua_type(L, -1) != LUA_TSTRING || !valid_sha256(hash, len))
        luaL_error(L, "spec.pins.files[%d].sha256 must be 64 lowercase hex digits", (int)i + 1);
      paths[i] = lua_tostring(L, -2);
      hashes[i] = hash;
      lua_pop(L, 3);
    }
    s->file_paths = paths;
    s->file_sha256 = hashes;
    s->nfiles = n;
  }
  if (opt_table(L, t, "identities", "spec.pins.identities")) {
    int f = lua_gettop(L);
    size_t n = check_array(L, f, "spec.pins.identities");
    const char **paths = lua_newuserdatauv(L, (n + 1) * sizeof *paths, 0);
    const char **ids = lua_newuserdatauv(L, (n + 1) * sizeof *ids, 0);
    for (size_t i = 0; i < n; i++) {
      if (lua_rawgeti(L, f, (lua_Integer)i + 1) != LUA_TTABLE)
        luaL_error(L, "spec.pins.identities[%d] must be a table", (int)i + 1);
      check_keys(L, -1, "spec.pins.identities[]", identity_keys);
      lua_getfield(L, -1, "path");
      lua_getfield(L, -2, "identity");
      if (lua_type(L, -2) != LUA_TSTRING || strlen(lua_tostring(L, -2)) != lua_rawlen(L, -2))
        luaL_error(L, "spec.pins.identities[%d].path must be a string without NUL", (int)i + 1);
      if (lua_type(L, -1) != LUA_TSTRING || lua_rawlen(L, -1) == 0 || lua_rawlen(L, -1) >= 128)
        luaL_error(L, "spec.pins.identities[%d].identity must be a file identity", (int)i + 1);
      paths[i] = lua_tostring(L, -2);
      ids[i] = lua_tostring(L, -1);
      lua_pop(L, 3);
    }
    s->identity_paths = paths;
    s->identities = ids;
    s->nidentities = n;
  }
}

/* spec.isolate -> s->isolate (in a userdata on the stack; strings kept
 * alive by the spec table).  Misuse raises. */
static void parse_isolate(lua_State *L, int spec, LaunchSpec *s) {
  if (!opt_table(L, spec, "isolate", "spec.isolate")) return;
  int t = lua_gettop(L);
  check_keys(L, t, "spec.isolate", isolate_keys);
  if (lua_getfield(L, t, "mounts") != LUA_TTABLE) luaL_error(L, "spec.isolate.mounts must be an array of mounts");
  int mt = lua_gettop(L);
  size_t n = check_array(L, mt, "spec.isolate.mounts");
  Isolation *iso = lua_newuserdatauv(L, sizeof *iso + (n + 1) * sizeof(IsoMount), 0);
  memset(iso, 0, sizeof *iso + (n + 1) * sizeof(IsoMount));
  IsoMount *mounts = (IsoMount *)(iso + 1);
  static const char *const types[] = {"bind", "tmpfs", "proc", "symlink", "copy", NULL};
  for (size_t i = 0; i < n; i++) {
    IsoMount *m = &mounts[i];
    if (lua_rawgeti(L, mt, (lua_Integer)i + 1) != LUA_TTABLE) luaL_error(L, "spec.isolate.mounts[%d] must be a table", (int)i + 1);
    int e = lua_gettop(L);
    check_keys(L, e, "spec.isolate.mounts[]", mount_keys);
    lua_getfield(L, e, "type");
    m->type = -1;
    for (int k = 0; types[k] && lua_type(L, -1) == LUA_TSTRING; k++)
      if (strcmp(types[k], lua_tostring(L, -1)) == 0) m->type = k;
    if (m->type < 0) luaL_error(L, "spec.isolate.mounts[%d].type must be bind, copy, tmpfs, proc or symlink", (int)i + 1);
    lua_pop(L, 1);
    const char *const strings[] = {"target", "source", "link"};
    const char **fields[] = {&m->target, &m->source, &m->link};
    for (int k = 0; k < 3; k++) {
      int ty = lua_getfield(L, e, strings[k]);
      if (ty == LUA_TSTRING && strlen(lua_tostring(L, -1)) == lua_rawlen(L, -1)) *fields[k] = lua_tostring(L, -1);
      else if (ty != LUA_TNIL) luaL_error(L, "spec.isolate.mounts[%d].%s must be a string without NUL", (int)i + 1, strings[k]);
      lua_pop(L, 1);
    }
    if (!m->target) luaL_error(L, "spec.isolate.mounts[%d].target is required", (int)i + 1);
    if ((m->type == ISO_BIND || m->type == ISO_COPY) && !m->source)
      luaL_error(L, "spec.isolate.mounts[%d]: a bind or a copy needs a source", (int)i + 1);
    if (m->type == ISO_SYMLINK && !m->link) luaL_error(L, "spec.isolate.mounts[%d]: a symlink needs a link", (int)i + 1);
    const char *const flags[] = {"writable", "executable", "devices"};
    int *values[] = {&m->writable, &m->executable, &m->devices};
    for (int k = 0; k < 3; k++) {
      int ty = lua_getfield(L, e, flags[k]);
      if (ty != LUA_TNIL && ty != LUA_TBOOLEAN) luaL_error(L, "spec.isolate.mounts[%d].%s must be a boolean", (int)i + 1, flags[k]);
      *values[k] = lua_toboolean(L, -1);
      lua_pop(L, 1);
    }
    if (m->type == ISO_TMPFS) {
      lua_Integer size = vkit_optintfield(L, e, "size_bytes", -1), mode = vkit_optintfield(L, e, "mode", 0755);
      if (size < 4096) luaL_error(L, "spec.isolate.mounts[%d].size_bytes must be an integer >= 4096", (int)i + 1);
      if (mode < 0 || mode > 07777) luaL_error(L, "spec.isolate.mounts[%d].mode must be a permission mode", (int)i + 1);
      snprintf(m->options, sizeof m->options, "mode=%o,size=%lld", (unsigned)mode, (long long)size);
    }
    lua_pop(L, 1);
  }
  lua_Integer uid = vkit_optintfield(L, t, "uid", -1), gid = vkit_optintfield(L, t, "gid", -1);
  if ((uid < 0) != (gid < 0)) luaL_error(L, "spec.isolate: uid and gid go together");
  if (uid > 0xfffffffe || gid > 0xfffffffe) luaL_error(L, "spec.isolate: uid and gid must be ids");
  iso->has_ids = uid >= 0;
  iso->uid = (unsigned)(uid < 0 ? 0 : uid);
  iso->gid = (unsigned)(gid < 0 ? 0 : gid);
  int ht = lua_getfield(L, t, "hostname");
  if (ht == LUA_TSTRING) {
    size_t len;
    iso->hostname = lua_tolstring(L, -1, &len);
    if (len == 0 || len > 64 || strlen(iso->hostname) != len) luaL_error(L, "spec.isolate.hostname must be 1 to 64 bytes");
  } else if (ht != LUA_TNIL) {
    luaL_error(L, "spec.isolate.hostname must be a string");
  }
  lua_pop(L, 1);
  int xt = lua_getfield(L, t, "exe");
  if (xt == LUA_TSTRING) {
    iso->exe = lua_tostring(L, -1);
    if (iso->exe[0] != '/' || strlen(iso->exe) != lua_rawlen(L, -1)) luaL_error(L, "spec.isolate.exe must be an absolute path");
  } else if (xt != LUA_TNIL) {
    luaL_error(L, "spec.isolate.exe must be a string");
  }
  lua_pop(L, 1);
  iso->nmounts = n;
  iso->mounts = mounts;
  s->isolate = iso;
}

static void parse_rlimits(lua_State *L, int spec, LaunchSpec *s) {
  if (!opt_table(L, spec, "rlimits", "spec.rlimits")) return;
  int t = lua_gettop(L);
  check_keys(L, t, "spec.rlimits", rlimit_keys);
  for (int i = 0; i < RL_COUNT; i++) {
    if (lua_getfield(L, t, rlimit_keys[i]) != LUA_TNIL) {
      int isnum;
      lua_Integer v = lua_tointegerx(L, -1, &isnum);
      if (!isnum || v < 0) luaL_error(L, "spec.rlimits.%s must be an integer >= 0", rlimit_keys[i]);
      s->has_rlimit[i] = 1;
      s->rlimit[i] = (rlim_t)v;
    }
    lua_pop(L, 1);
  }
}

static int parse_sandbox(lua_State *L, int spec, LaunchSpec *s, Refusal *why) {
  if (!opt_table(L, spec, "sandbox", "spec.sandbox")) return 0;
  int t = lua_gettop(L), nul = 0;
  check_keys(L, t, "spec.sandbox", sandbox_keys);
  s->sandbox = 1;
  lua_getfield(L, t, "optional");
  if (!lua_isnil(L, -1) && !lua_isboolean(L, -1)) luaL_error(L, "spec.sandbox.optional must be a boolean");
  s->sandbox_optional = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (opt_table(L, t, "write", "spec.sandbox.write")) s->write_paths = string_array(L, "spec.sandbox.write", &s->nwrite, &nul);
  if (opt_table(L, t, "read", "spec.sandbox.read")) {
    s->read_paths = string_array(L, "spec.sandbox.read", &s->nread, &nul);
    s->sandbox_read = 1;
  }
  if (nul) refuse(why, "launch-failed", "sandbox-path-unavailable", 0, "a sandbox path contains a NUL byte");
  return nul ? -1 : 0;
}

static int p_spawn(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  check_keys(L, 1, "spec", spec_keys);
  Run *r = lua_newuserdatauv(L, sizeof *r, 3);
  memset(r, 0, sizeof *r);
  r->phase = PHASE_DONE; /* until launched: nothing for __gc to do */
  r->pidfd = r->in_fd = r->out_fd = r->err_fd = -1;
  luaL_setmetatable(L, PROCESS);
  const int h = 2;

  LaunchSpec s;
  Refusal why, later; /* the first data refusal found is the one reported */
  memset(&s, 0, sizeof s);
  memset(&why, 0, sizeof why);
  memset(&later, 0, sizeof later);
  s.exe_fd = -1;
  int refuse_now = 0, nul = 0;
#define FIRST (refuse_now ? &later : &why)

  /* limits first: all required, all explicit */
  lua_Integer deadline = need_int(L, 1, "deadline_ms", 0), grace = need_int(L, 1, "grace_ms", 0);
  lua_Integer cap = need_int(L, 1, "output_cap", 0), kill_wait = need_int(L, 1, "kill_wait_ms", 0);
  lua_Integer reap = need_int(L, 1, "reap_interval_ms", 1);
  static const char *const cg_modes[] = {"off", "auto", "required"};
  lua_getfield(L, 1, "cgroup");
  const char *mode = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
  s.cgroup_mode = -1;
  for (int i = 0; i < 3; i++)
    if (strcmp(mode, cg_modes[i]) == 0) s.cgroup_mode = i;
  if (s.cgroup_mode < 0) luaL_error(L, "spec.cgroup must be \"off\", \"auto\" or \"required\"");
  lua_pop(L, 1);

  /* argv */
  if (lua_getfield(L, 1, "argv") != LUA_TTABLE) luaL_error(L, "spec.argv must be an array of strings");
  size_t argc;
  s.argv = (char *const *)string_array(L, "spec.argv", &argc, &nul);
  if (argc == 0) refuse(&why, "launch-failed", "argv-empty", 0, "argv is empty: it needs at least argv[0]"), refuse_now = 1;
  else if (nul) refuse(&why, "launch-failed", "argv-nul-byte", 0, "an argv element contains a NUL byte, which exec cannot pass"), refuse_now = 1;

  /* exe */
  int et = lua_getfield(L, 1, "exe");
  Exe *exe = et == LUA_TUSERDATA ? luaL_testudata(L, -1, EXE) : NULL;
  if (exe) {
    if (exe->fd < 0) luaL_error(L, "spec.exe is a closed executable");
    s.exe_fd = exe->fd;
    s.exe_path = exe->path;
  } else if (et == LUA_TSTRING) {
    size_t len;
    s.exe_path = lua_tolstring(L, -1, &len);
    if (!refuse_now && strlen(s.exe_path) != len)
      refuse(&why, "launch-failed", "exe-unavailable", 0, "the exe path contains a NUL byte"), refuse_now = 1;
    else if (!refuse_now && s.exe_path[0] != '/')
      refuse(&why, "launch-failed", "exe-not-absolute", 0, "exe '%s' is not an absolute path", s.exe_path), refuse_now = 1;
  } else {
    luaL_error(L, "spec.exe must be an absolute path or an executable from open_executable");
  }

  /* environment, directory, stdin */
  if (lua_getfield(L, 1, "env") != LUA_TTABLE) luaL_error(L, "spec.env must be a table");
  char **envp = NULL;
  if (build_env(L, lua_gettop(L), &envp, FIRST) != 0) refuse_now = 1;
  s.envp = envp;
  if (lua_getfield(L, 1, "cwd") != LUA_TSTRING) luaL_error(L, "spec.cwd must be a string");
  size_t cwdlen;
  s.cwd = lua_tolstring(L, -1, &cwdlen);
  if (!refuse_now && (s.cwd[0] != '/' || strlen(s.cwd) != cwdlen))
    refuse(&why, "launch-failed", "cwd-not-absolute", 0, "cwd '%s' is not an absolute path", s.cwd), refuse_now = 1;
  int it = lua_getfield(L, 1, "stdin");
  if (it != LUA_TNIL && it != LUA_TSTRING) luaL_error(L, "spec.stdin must be a string or nil");
  if (it == LUA_TSTRING) {
    r->in_p = lua_tolstring(L, -1, &r->in_len);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, h, UV_STDIN);
  }
  int ct = lua_getfield(L, 1, "cancel");
  if (ct != LUA_TNIL) {
    r->token = luaL_testudata(L, -1, TOKEN);
    if (!r->token) luaL_error(L, "spec.cancel must be a token from canceller()");
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, h, UV_TOKEN);
  }
  parse_pins(L, 1, &s);
  parse_rlimits(L, 1, &s);
  parse_isolate(L, 1, &s);
  if (parse_sandbox(L, 1, &s, FIRST) != 0) refuse_now = 1;
#undef FIRST
  if (refuse_now) return refused(L, h, &why);

  r->cap = (size_t)cap;
  r->grace = grace;
  r->kill_wait = kill_wait;
  r->reap_interval = reap;
  if (launch(&s, r, &why) != 0) return refused(L, h, &why);
  r->cg_used = r->cg != NULL;
  r->phase = PHASE_RUNNING;
  r->deadline = r->start + deadline;
  r->next_reap = r->start + reap;
  feed(r);
  lua_settop(L, h);
  return 1;
}

static int p_landlock_abi(lua_State *L) {
  lua_pushinteger(L, landlock_abi());
  return 1;
}

static int p_isolation_available(lua_State *L) {
  char reason[256];
  int ok = isolate_available(reason, sizeof reason);
  lua_pushboolean(L, ok);
  if (ok) return 1;
  lua_pushstring(L, reason);
  return 2;
}

static int p_file_identity(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char id[128];
  int err = file_identity(path, id, sizeof id);
  if (err) return vkit_fail_errno(L, err, path);
  lua_pushstring(L, id);
  return 1;
}

static int p_cgroup_available(lua_State *L) {
  char reason[512];
  int ok = cg_available(reason, sizeof reason);
  lua_pushboolean(L, ok);
  if (ok) return 1;
  lua_pushstring(L, reason);
  return 2;
}

/* reap_stale_cgroups(kill_wait_ms) -> {{path =, owner_pid =, killed =,
 * surviving =, removed =, error =}, ...} */
static void push_stale(void *ctx, const StaleCgroup *cg) {
  lua_State *L = ctx;
  lua_createtable(L, 0, 6);
  vkit_setfield_str(L, "path", cg->path);
  vkit_setfield_int(L, "owner_pid", cg->owner);
  vkit_setfield_int(L, "killed", cg->killed);
  vkit_setfield_int(L, "surviving", cg->surviving);
  lua_pushboolean(L, cg->removed);
  lua_setfield(L, -2, "removed");
  if (cg->error[0]) vkit_setfield_str(L, "error", cg->error);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
}

static int p_reap_stale_cgroups(lua_State *L) {
  lua_Integer kill_wait = luaL_checkinteger(L, 1);
  luaL_argcheck(L, kill_wait >= 0, 1, "kill_wait_ms must be >= 0");
  lua_newtable(L);
  cg_reap_stale(kill_wait, push_stale, L);
  return 1;
}

static const luaL_Reg run_methods[] = {
  {"wait", r_wait}, {"cancel", r_cancel}, {"pid", r_pid}, {"close", r_close}, {NULL, NULL}};
static const luaL_Reg run_meta[] = {{"__gc", r_gc}, {"__close", r_close}, {NULL, NULL}};
static const luaL_Reg exe_methods[] = {{"sha256", e_sha256}, {"path", e_path}, {"close", e_close}, {NULL, NULL}};
static const luaL_Reg exe_meta[] = {{"__gc", e_close}, {"__close", e_close}, {NULL, NULL}};
static const luaL_Reg token_methods[] = {
  {"cancel", t_cancel}, {"cancelled", t_cancelled}, {"arm", t_arm}, {"disarm", t_disarm}, {NULL, NULL}};
static const luaL_Reg token_meta[] = {{"__gc", t_disarm}, {"__close", t_disarm}, {NULL, NULL}};

static const luaL_Reg process_funcs[] = {
  {"spawn", p_spawn}, {"open_executable", e_open}, {"canceller", t_new}, {"landlock_abi", p_landlock_abi},
  {"cgroup_available", p_cgroup_available}, {"reap_stale_cgroups", p_reap_stale_cgroups},
  {"isolation_available", p_isolation_available}, {"file_identity", p_file_identity}, {NULL, NULL}};

int luaopen_vkit_process(lua_State *L) {
  vkit_newclass(L, PROCESS, run_methods, run_meta);
  vkit_newclass(L, EXE, exe_methods, exe_meta);
  vkit_newclass(L, TOKEN, token_methods, token_meta);
  luaL_newlib(L, process_funcs);
  return 1;
}
