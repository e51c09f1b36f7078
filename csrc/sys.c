/*
 * sys.c: vkit.sys, clocks and facts about the running process and host.
 *
 *   monotonic_ms() -> integer milliseconds on CLOCK_MONOTONIC (for deadlines)
 *   time()         -> float seconds since the epoch (for records)
 *   sleep(seconds) -- interrupted sleeps resume until the time has passed
 *                     (but for an interactive interrupt: vkit.h)
 *   pid()          -> this process's id
 *   euid()         -> this process's effective user id
 *   isatty(fd)     -> whether fd is a terminal (one ioctl: no readline)
 *   uname()        -> {sysname, release, machine}
 *   alive(pid)     -> whether a process with that id exists
 *   random_hex(n)  -> n random bytes from the kernel, as hex
 *   spawn_detached{exe, argv, env, cwd, log} -> pid
 *                     a daemon: double fork, setsid, stdin /dev/null,
 *                     stdout+stderr appended to `log`, every other fd
 *                     closed, environment exactly `env` plus
 *                     VKIT_DETACHED=1.  It is not supervised (that is
 *                     vkit.proc's job): it exists so a job-store worker can
 *                     outlive the command that queued the job.  The pid
 *                     returned is the daemon's.  An orphan is re-parented
 *                     to the nearest subreaper, which may be another vkit
 *                     (one that ran `vkit verify` through os.execute): the
 *                     variable tells that vkit the daemon is no run's.
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int sys_monotonic_ms(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushinteger(L, (lua_Integer)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
  return 1;
}

static int sys_time(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + ts.tv_nsec / 1e9);
  return 1;
}

static int sys_sleep(lua_State *L) {
  double s = luaL_checknumber(L, 1);
  luaL_argcheck(L, s >= 0, 1, "seconds must be >= 0");
  struct timespec req = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&req, &req) != 0 && errno == EINTR && !vkit_interrupt_requested) {}
  return 0;
}

static int sys_pid(lua_State *L) {
  lua_pushinteger(L, getpid());
  return 1;
}

static int sys_euid(lua_State *L) {
  lua_pushinteger(L, geteuid());
  return 1;
}

static int sys_isatty(lua_State *L) {
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

static int sys_uname(lua_State *L) {
  struct utsname u;
  if (uname(&u) != 0) return vkit_fail_errno(L, errno, "uname");
  lua_createtable(L, 0, 3);
  lua_pushstring(L, u.sysname);
  lua_setfield(L, -2, "sysname");
  lua_pushstring(L, u.release);
  lua_setfield(L, -2, "release");
  lua_pushstring(L, u.machine);
  lua_setfield(L, -2, "machine");
  return 1;
}

static int sys_alive(lua_State *L) {
  lua_Integer pid = luaL_checkinteger(L, 1);
  luaL_argcheck(L, pid > 0, 1, "pid must be positive");
  lua_pushboolean(L, kill((pid_t)pid, 0) == 0 || errno == EPERM);
  return 1;
}

static int sys_random_hex(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  luaL_argcheck(L, n > 0 && n <= 256, 1, "1..256 bytes");
  unsigned char buf[256];
  char hex[513];
  size_t got = 0;
  while (got < (size_t)n) {
    ssize_t r = getrandom(buf + got, (size_t)n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return vkit_fail_errno(L, errno, "getrandom");
    got += (size_t)r;
  }
  vkit_hex(buf, (size_t)n, hex);
  lua_pushstring(L, hex);
  return 1;
}

/* Copies an array of strings from the table field into a NULL-terminated
 * vector kept in a userdata (so an error frees it with the Lua state). */
static char **string_vector(lua_State *L, int idx, const char *field) {
  lua_getfield(L, idx, field);
  luaL_argcheck(L, lua_istable(L, -1), idx, "argv/env must be arrays of strings");
  lua_Integer n = luaL_len(L, -1);
  char **v = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(char *), 0);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, -2, i);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (!s || lua_type(L, -1) != LUA_TSTRING || strlen(s) != len) luaL_error(L, "%s[%d] must be a string without NUL", field, (int)i);
    v[i - 1] = (char *)s; /* anchored by the spec table */
    lua_pop(L, 1);
  }
  v[n] = NULL;
  lua_remove(L, -2);
  return v;
}

/* env (a NULL-terminated vector) with DETACHED_MARK added unless present,
 * in a new userdata anchored on the stack. */
static char **with_detached_mark(lua_State *L, char **env) {
  size_t n = 0;
  for (; env[n]; n++)
    if (strcmp(env[n], DETACHED_MARK) == 0) return env;
  char **out = lua_newuserdatauv(L, (n + 2) * sizeof *out, 0);
  memcpy(out, env, n * sizeof *out);
  out[n] = (char *)DETACHED_MARK;
  out[n + 1] = NULL;
  return out;
}

static int sys_spawn_detached(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "exe");
  const char *exe = luaL_checkstring(L, -1);
  lua_getfield(L, 1, "cwd");
  const char *cwd = luaL_optstring(L, -1, "/");
  lua_getfield(L, 1, "log");
  const char *log = luaL_checkstring(L, -1);
  char **argv = string_vector(L, 1, "argv");
  char **env = with_detached_mark(L, string_vector(L, 1, "env"));
  luaL_argcheck(L, exe[0] == '/', 1, "exe must be an absolute path");
  luaL_argcheck(L, argv[0] != NULL, 1, "argv must not be empty");
  int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (logfd < 0) return vkit_fail_errno(L, errno, log);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    close(logfd);
    return vkit_fail_errno(L, errno, "pipe");
  }
  pid_t first = fork();
  if (first < 0) {
    int err = errno;
    close(logfd);
    close(pipefd[0]);
    close(pipefd[1]);
    return vkit_fail_errno(L, err, "fork");
  }
  if (first == 0) {
    /* Only async-signal-safe calls from here on. */
    setsid();
    pid_t second = fork();
    if (second != 0) {
      int rec[2] = {'P', (int)second};
      if (second > 0) (void)!write(pipefd[1], rec, sizeof rec);
      _exit(second > 0 ? 0 : 1);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0) _exit(127);
    /* fd 3 reports an exec failure to the caller; exec success closes it. */
    if (dup2(pipefd[1], 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0) _exit(127);
    syscall(SYS_close_range, 4, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
    if (chdir(cwd) != 0) _exit(127);
    execve(exe, argv, env);
    int rec[2] = {'E', errno};
    (void)!write(3, rec, sizeof rec);
    _exit(127);
  }
  close(pipefd[1]);
  close(logfd);
  /* Records of two ints, in either order: {'P', pid} from the intermediate
   * and {'E', errno} from the daemon if its exec fails.  EOF comes when
   * both have exited or exec'd (pipe writes of 8 bytes are atomic). */
  int rec[2], pid = -1, exec_err = 0;
  for (;;) {
    ssize_t got = read(pipefd[0], rec, sizeof rec);
    if (got < 0 && errno == EINTR) continue;
    if (got != (ssize_t)sizeof rec) break;
    if (rec[0] == 'P') pid = rec[1];
    else if (rec[0] == 'E') exec_err = rec[1];
  }
  close(pipefd[0]);
  int status;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {}
  if (exec_err) return vkit_fail(L, vkit_errno_name(exec_err), "%s: %s", exe, strerror(exec_err));
  if (pid <= 0) return vkit_fail(L, "spawn-failed", "could not start %s", exe);
  /* A subreaper gets the daemon back as its child once the intermediate
   * exits: it is no run's, and vkit.process must leave it alone. */
  tree_disown(pid);
  lua_pushinteger(L, pid);
  return 1;
}

static const luaL_Reg sys_funcs[] = {
  {"random_hex", sys_random_hex}, {"spawn_detached", sys_spawn_detached},
  {"monotonic_ms", sys_monotonic_ms}, {"time", sys_time}, {"sleep", sys_sleep},
  {"pid", sys_pid},  {"euid", sys_euid}, {"isatty", sys_isatty}, {"uname", sys_uname}, {"alive", sys_alive}, {NULL, NULL}};

int luaopen_vkit_sys(lua_State *L) {
  luaL_newlib(L, sys_funcs);
  return 1;
}
