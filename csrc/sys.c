/*
 * sys.c: vkit.sys, clocks and facts about the running process and host.
 *
 *   monotonic_ms() -> integer milliseconds on CLOCK_MONOTONIC (for deadlines)
 *   time()         -> float seconds since the epoch (for records)
 *   sleep(seconds) -- interrupted sleeps resume until the time has passed
 *   pid()          -> this process's id
 *   uname()        -> {sysname, release, machine}
 *   alive(pid)     -> whether a process with that id exists
 */
#include "vkit.h"

#include <signal.h>
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
  while (nanosleep(&req, &req) != 0 && errno == EINTR) {}
  return 0;
}

static int sys_pid(lua_State *L) {
  lua_pushinteger(L, getpid());
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

static const luaL_Reg sys_funcs[] = {
  {"monotonic_ms", sys_monotonic_ms}, {"time", sys_time}, {"sleep", sys_sleep},
  {"pid", sys_pid},  {"uname", sys_uname}, {"alive", sys_alive}, {NULL, NULL}};

int luaopen_vkit_sys(lua_State *L) {
  luaL_newlib(L, sys_funcs);
  return 1;
}
