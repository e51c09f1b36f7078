/*
 * main.c: the vkit entry point.
 *
 * Creates one Lua state, preloads every vkit C module and lua-cjson, finds
 * the Lua library and policies, and hands argv to lua/vkit/cli.lua, whose
 * return value is the exit status.  Nothing here knows a subcommand.
 *
 * The library root is the executable's own directory when it holds
 * lua/vkit/init.lua (a build tree), else <exe dir>/../share/vkit (an
 * installed tree), so vkit works from any working directory; only the
 * executable's own location decides (find_root), never the working
 * directory, argv[0] or the environment, and vkit's own modules (the
 * names vkit and vkit.*) load only from that root (add_library_searchers).
 * vkit.git, vkit.term and vkit.pg are shared objects (find_root says
 * where), loaded on first require.
 */
#include "vkit.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "lua-cjson.h"
#include "lua_alloc.h"
#include "luabc.h"

#define VKIT_MODULE(name) int luaopen_vkit_##name(lua_State *L);
#define VKIT_SHARED_MODULE(name)
#include "modules.inc"
#undef VKIT_MODULE
#undef VKIT_SHARED_MODULE

static void preload(lua_State *L, const char *name, lua_CFunction open) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static int file_exists(const char *dir, const char *rel) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path) return 0;
  return access(path, R_OK) == 0;
}

static int holds_library(const char *dir) { return file_exists(dir, "lua/vkit/init.lua"); }

/* root := <dir>/<rel> made canonical, when it holds the library. */
static int library_at(const char *dir, const char *rel, char root[PATH_MAX]) {
  char path[PATH_MAX];
  return snprintf(path, sizeof path, "%s/%s", dir, rel) < (int)sizeof path && realpath(path, root) &&
         holds_library(root);
}

/* Lua's garbage-collector pause, in percent (Lua's default is 200). */
#define VKIT_GC_PAUSE 400

/* The directory of the shared modules in a build tree, relative to the
 * root (the Makefile gives ./vkit and ./vkit-asan each their own). */
#ifndef VKIT_SHARED_BUILD_DIR
#define VKIT_SHARED_BUILD_DIR "build/lib"
#endif

/* The executable's absolute path: /proc/self/exe's target is already
 * canonical (one readlink, where realpath reads every component of both
 * paths).  When the
 * file has been removed since (a rebuild or a reinstall while it runs) the
 * target ends in " (deleted)": without it, it names where the file was,
 * in the directory the library is looked for.  When /proc is absent, the
 * path the kernel executed (AT_EXECFN, relative to the working directory
 * of the exec, which is this one).  Never argv[0]: whoever starts vkit
 * sets that to anything, and a bare name resolved against the working
 * directory would take the library from there. */
static int find_exe(char exe[PATH_MAX]) {
  ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
  static const char deleted[] = " (deleted)";
  if (n > 0 && exe[0] == '/') {
    exe[n] = '\0';
    size_t m = sizeof deleted - 1;
    if ((size_t)n > m && strcmp(exe + n - m, deleted) == 0) exe[n - m] = '\0';
    return 1;
  }
  const char *execfn = (const char *)getauxval(AT_EXECFN);
  return execfn && realpath(execfn, exe) != NULL;
}

/* Fills exe, root and lib (the directory of the shared modules); returns
 * 0 when the library cannot be found.  Only the executable's own location
 * decides, never the working directory or the environment; the
 * executable is one of:
 *   <root>/vkit, <root>/vkit-asan  a build tree's (lib: <root>/VKIT_SHARED_BUILD_DIR)
 *   <prefix>/bin/vkit              an installed one (root: <prefix>/share/vkit,
 *                                  lib: <prefix>/lib/vkit) */
static int find_root(char exe[PATH_MAX], char root[PATH_MAX], char lib[PATH_MAX]) {
  if (!find_exe(exe)) return 0;
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", exe);
  char *slash = strrchr(dir, '/');
  if (!slash) return 0;
  *slash = '\0';
  if (holds_library(dir)) {
    snprintf(root, PATH_MAX, "%s", dir);
    return snprintf(lib, PATH_MAX, "%s/" VKIT_SHARED_BUILD_DIR, dir) < PATH_MAX;
  }
  if (library_at(dir, "../share/vkit", root)) return snprintf(lib, PATH_MAX, "%s/../lib/vkit", dir) < PATH_MAX;
  return 0;
}

/*
 * Shared modules.  vkit.git (with libgit2) and vkit.term (with readline)
 * are shared objects loaded when first required: linked into the
 * executable, their libraries made every command load their dependency
 * trees at exec (mbedTLS, krb5, libssh2, pcre2, ncurses...: milliseconds,
 * more than a whole `vkit vac verify`).  RTLD_NOW makes an object built for
 * another vkit fail here, its missing symbol named, not later; RTLD_LOCAL
 * keeps their libraries out of the global namespace.  An object is never
 * closed (libgit2 keeps process-wide state until exit); dlopen counts
 * references, so each load after the first is a lookup, and nothing is kept
 * outside the Lua state.  Raises, naming the module and the object, when
 * the object cannot be loaded or lacks the symbol.
 */
static void *shared_symbol(lua_State *L, const char *lib, const char *module, const char *name) {
  const char *path = lua_pushfstring(L, "%s/vkit_%s.so", lib, module);
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) luaL_error(L, "vkit.%s is unavailable: %s", module, dlerror());
  void *symbol = dlsym(handle, name);
  if (!symbol) luaL_error(L, "vkit.%s is unavailable: %s does not define %s", module, path, name);
  lua_pop(L, 1);
  return symbol;
}

/* The preload of a shared module; upvalues: the directory, the module's
 * short name.  vkit.git initialises libgit2 itself (csrc/git.c). */
static int open_shared(lua_State *L) {
  const char *module = lua_tostring(L, lua_upvalueindex(2));
  lua_CFunction open = (lua_CFunction)shared_symbol(L, lua_tostring(L, lua_upvalueindex(1)), module,
                                                    lua_pushfstring(L, "luaopen_vkit_%s", module));
  lua_pop(L, 1);
  return open(L);
}

static void preload_shared(lua_State *L, const char *lib, const char *module) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushfstring(L, "vkit.%s", module);
  lua_pushstring(L, lib);
  lua_pushstring(L, module);
  lua_pushcclosure(L, open_shared, 2);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

/* vkit.boot.libgit2, computed when first read (by `vkit version` and
 * lua/vkit/init.lua), so that commands that never read it never load
 * libgit2.  Upvalue 1 is the directory of the shared modules. */
static int boot_index(lua_State *L) {
  if (strcmp(luaL_checkstring(L, 2), "libgit2") != 0) return 0;
  int major, minor, rev;
  void (*version)(int *, int *, int *) = (void (*)(int *, int *, int *))shared_symbol(
      L, lua_tostring(L, lua_upvalueindex(1)), "git", "git_libgit2_version");
  version(&major, &minor, &rev);
  lua_pushfstring(L, "%d.%d.%d", major, minor, rev);
  lua_pushvalue(L, -1);
  lua_setfield(L, 1, "libgit2");
  return 1;
}

/* `vkit.boot`: facts only the host knows, read by lua/vkit/init.lua: exe,
 * root, lib (the shared modules' directory), shared (their short names),
 * version, lua, openssl and, when first read, libgit2. */
static void push_boot(lua_State *L, const char *exe, const char *root, const char *lib) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushstring(L, lib);
  lua_pushcclosure(L, boot_index, 1);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_pushstring(L, exe);
  lua_setfield(L, -2, "exe");
  lua_pushstring(L, root);
  lua_setfield(L, -2, "root");
  lua_pushstring(L, lib);
  lua_setfield(L, -2, "lib");
  lua_newtable(L); /* the short names of the shared modules, in lib */
#define VKIT_MODULE(name)
#define VKIT_SHARED_MODULE(name) \
  lua_pushliteral(L, #name);     \
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
#include "modules.inc"
#undef VKIT_MODULE
#undef VKIT_SHARED_MODULE
  lua_setfield(L, -2, "shared");
  lua_pushstring(L, VKIT_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushstring(L, LUA_RELEASE);
  lua_setfield(L, -2, "lua");
  lua_pushstring(L, vkit_crypto_version());
  lua_setfield(L, -2, "openssl");
}

/* LeakSanitizer reads this from the executable (it is inert otherwise), so
 * it lives here, not in vkit_git.so.  libgit2 1.5's pcre2 regexp wrapper
 * never frees the match data of a non-match, and git_repository_open_ext
 * matches every config key of a repository with repositoryformatversion 1
 * against "^extensions\.", so opening such a repository leaks inside pcre2.
 * pcre2 has no other user in vkit, so only its allocations are suppressed
 * (by module: its frames have no symbols for the default fast unwinder). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libpcre2-8.so\n"; }

static int boot_module(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  return 1;
}

static int msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/*
 * vkit's own modules: the namespace "vkit" (the name itself and every
 * "vkit.<...>") loads only from the library root, <root>/lua/<name>.lua or
 * <root>/lua/<name>/init.lua, the two files Lua's own searcher would try
 * there (every "." of the name a "/", so no name leaves the root).  Not
 * from package.path or package.cpath, whatever LUA_PATH, LUA_CPATH or the
 * working directory (Lua's default "./?.lua" and "./?.so") make of them:
 * a mistyped subcommand, a module name read from a bundle or a store,
 * is never found in a cloned repository.  Other names are the script's
 * own, looked up as the lua interpreter would (`vkit script`).
 *
 * package.searchers (add_library_searchers): the preloads (the C modules,
 * lua-cjson, the shared modules); the precompiled searcher; the library
 * searcher; then Lua's Lua, C and C-root searchers, each refusing the vkit
 * namespace.
 *
 * The precompiled searcher (luabc.h): a module whose file holds, byte for
 * byte, the source its table entry was compiled from runs the entry's
 * bytecode, loaded under the file's name ("@<file>", as luaL_loadfile
 * names it), so messages and tracebacks read the same.  Anything else (an
 * edited file, a table from another Lua release) is left to the library
 * searcher, which compiles the file: the source on disk is what runs.
 * Policies are never in the table (mk/luabc.mk): vkit.policy reads them
 * as text.
 */
static int luabc_compare(const void *path, const void *entry) {
  return strcmp(path, ((const VkitLuabc *)entry)->path);
}

/* Lua 5.4's dump header and upvalue count take 32 bytes; the main
 * function's source name follows, "=" as the table was compiled. */
#define DUMP_NAME_AT 32

/* Does the open file fd hold exactly e's source?  Read in pieces into a
 * buffer on the stack and compared as they come, to the end of the file
 * (a read that returns 0): a read may return fewer bytes than asked before
 * the end (a FIFO, FUSE, NFS), so a short read is never taken for the end,
 * and a file longer than the source is seen by its first extra byte. */
#define SOURCE_PIECE 16384
static int luabc_current(int fd, const VkitLuabc *e) {
  unsigned char piece[SOURCE_PIECE];
  size_t got = 0;
  for (;;) {
    ssize_t n = read(fd, piece, sizeof piece);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 0;
    if (n == 0) return got == e->source_len;
    if ((size_t)n > e->source_len - got) return 0; /* longer than the source */
    if (memcmp(piece, e->source + got, (size_t)n) != 0) return 0;
    got += (size_t)n;
  }
}

/* The table entry of file, a path under root, when it is well formed. */
static const VkitLuabc *luabc_entry(const char *file, const char *root, size_t root_len) {
  if (strncmp(file, root, root_len) != 0 || file[root_len] != '/') return NULL;
  const VkitLuabc *e =
      bsearch(file + root_len + 1, vkit_luabc, vkit_luabc_count, sizeof *vkit_luabc, luabc_compare);
  if (!e || e->bytecode_len <= DUMP_NAME_AT + 2 || e->bytecode[DUMP_NAME_AT] != 0x82 ||
      e->bytecode[DUMP_NAME_AT + 1] != '=')
    return NULL;
  return e;
}

/* lua_load's reader over an entry's bytecode with its source name
 * replaced, in place, without copying the chunk: the header, the new
 * name's size (written as a dump writes sizes: 7-bit groups, most
 * significant first, 0x80 on the last), the name, the rest. */
typedef struct {
  const VkitLuabc *e;
  const char *name;
  unsigned char size[16];
  size_t size_len;
  int piece;
} LuabcReader;

static const char *luabc_read(lua_State *L, void *data, size_t *len) {
  (void)L;
  LuabcReader *r = data;
  switch (r->piece++) {
    case 0: *len = DUMP_NAME_AT; return (const char *)r->e->bytecode;
    case 1: *len = r->size_len; return (const char *)r->size + sizeof r->size - r->size_len;
    case 2: *len = strlen(r->name); return r->name;
    case 3: *len = r->e->bytecode_len - DUMP_NAME_AT - 2; return (const char *)r->e->bytecode + DUMP_NAME_AT + 2;
    default: *len = 0; return NULL;
  }
}

/* Loads e's chunk as "@<file>" and pushes the loader and file (as Lua's
 * searcher returns them); 0 when it does not load. */
static int luabc_load(lua_State *L, const VkitLuabc *e, const char *file) {
  const char *chunkname = lua_pushfstring(L, "@%s", file);
  LuabcReader r = {e, chunkname, {0}, 0, 0};
  size_t size = strlen(chunkname) + 1;
  do {
    r.size[sizeof r.size - ++r.size_len] = size & 0x7f;
    size >>= 7;
  } while (size);
  r.size[sizeof r.size - 1] |= 0x80;
  if (lua_load(L, luabc_read, &r, chunkname, "b") != LUA_OK) return 0;
  lua_pushstring(L, file); /* the second argument of the loader, as Lua's searcher gives it */
  return 2;
}

/* Opens candidate (root/lua/<name>.lua or .../init.lua) as
 * package.searchpath tests it.  1: it opened and was loaded; -1: it opened
 * but is not current (the source must run); 0: it does not open. */
static int luabc_try(lua_State *L, const char *file, const char *root, size_t root_len) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const VkitLuabc *e = luabc_entry(file, root, root_len);
  int ok = e && luabc_current(fd, e);
  close(fd);
  return ok && luabc_load(L, e, file) ? 1 : -1;
}

/* Is the table linked in, and compiled by this Lua release? */
static int luabc_usable(void) {
  return &vkit_luabc_count && vkit_luabc_count && &vkit_luabc_release &&
         strcmp(vkit_luabc_release, LUA_RELEASE) == 0;
}

/* Is name vkit's: "vkit" or "vkit.<...>"? */
static int in_vkit_namespace(const char *name) {
  return strncmp(name, "vkit", 4) == 0 && (name[4] == '\0' || name[4] == '.');
}

/* Pushes the two files of a vkit module under root: <root>/lua/<name>.lua
 * and <root>/lua/<name>/init.lua. */
static void push_library_files(lua_State *L, const char *root, const char *name) {
  const char *dirs = luaL_gsub(L, name, ".", "/");
  lua_pushfstring(L, "%s/lua/%s.lua", root, dirs);
  lua_pushfstring(L, "%s/lua/%s/init.lua", root, dirs);
  lua_remove(L, -3);
}

/* The precompiled searcher; upvalue: the root. */
static int search_precompiled(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (!in_vkit_namespace(name)) return 0;
  size_t root_len;
  const char *root = lua_tolstring(L, lua_upvalueindex(1), &root_len);
  push_library_files(L, root, name);
  for (int i = 0; i < 2; i++) {
    int found = luabc_try(L, lua_tostring(L, 2 + i), root, root_len);
    if (found) return found > 0 ? 2 : 0; /* not current: the library searcher compiles it */
  }
  return 0;
}

/* The library searcher: the module's file under the root, compiled (text
 * only); a file that does not load raises, as Lua's searcher does.  Upvalue:
 * the root. */
static int search_library(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (!in_vkit_namespace(name)) return 0;
  push_library_files(L, lua_tostring(L, lua_upvalueindex(1)), name);
  for (int i = 0; i < 2; i++) {
    const char *file = lua_tostring(L, 2 + i);
    int status = luaL_loadfilex(L, file, "t");
    if (status == LUA_OK) {
      lua_pushstring(L, file);
      return 2;
    }
    if (status != LUA_ERRFILE)
      return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  lua_pushfstring(L, "no file '%s'\n\tno file '%s'\n\t(vkit's own modules load only from its library)",
                  lua_tostring(L, 2), lua_tostring(L, 3));
  return 1;
}

/* One of Lua's searchers (upvalue), for every name but vkit's. */
static int search_outside_vkit(lua_State *L) {
  if (in_vkit_namespace(luaL_checkstring(L, 1))) return 0;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* package.searchers as the comment above says. */
static void add_library_searchers(lua_State *L, const char *root) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1), at = 2;
  lua_createtable(L, (int)n + 2, 0);
  lua_rawgeti(L, -2, 1); /* the preloads */
  lua_rawseti(L, -2, 1);
  if (luabc_usable()) {
    lua_pushstring(L, root);
    lua_pushcclosure(L, search_precompiled, 1);
    lua_rawseti(L, -2, at++);
  }
  lua_pushstring(L, root);
  lua_pushcclosure(L, search_library, 1);
  lua_rawseti(L, -2, at++);
  for (lua_Integer i = 2; i <= n; i++) {
    lua_rawgeti(L, -2, i);
    lua_pushcclosure(L, search_outside_vkit, 1);
    lua_rawseti(L, -2, at++);
  }
  lua_setfield(L, -3, "searchers");
  lua_pop(L, 2);
}

/* Runs require("vkit.cli").main(argv) and returns its integer result. */
static int run_cli(lua_State *L) {
  int argc = (int)lua_tointeger(L, 1);
  char **argv = lua_touserdata(L, 2);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "vkit.cli");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_createtable(L, argc, 0);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_call(L, 1, 1);
  return 1;
}

int main(int argc, char **argv) {
  char exe[PATH_MAX], root[PATH_MAX], lib[PATH_MAX];
  if (!find_root(exe, root, lib)) {
    fprintf(stderr, "vkit: cannot find the vkit Lua library (lua/vkit/init.lua) beside this executable (%s)\n",
            argv[0]);
    return 3;
  }
  lua_State *L = vkit_lua_newstate();
  if (!L) {
    fprintf(stderr, "vkit: cannot create a Lua state\n");
    return 3;
  }
  luaL_openlibs(L);
  /* A collection cycle when the heap has grown to four times what the last
   * one kept, not twice: a vkit process is mostly start-up (the modules are
   * loaded as the heap grows from nothing, and at pause 200 each doubling
   * marked them all again: 2% of a cold `vkit vac verify`'s instructions),
   * for at most twice the default's memory. */
  lua_gc(L, LUA_GCINC, VKIT_GC_PAUSE, 0, 0);
  preload(L, "cjson", luaopen_cjson);
#define VKIT_MODULE(name) preload(L, "vkit." #name, luaopen_vkit_##name);
#define VKIT_SHARED_MODULE(name) preload_shared(L, lib, #name);
#include "modules.inc"
#undef VKIT_MODULE
#undef VKIT_SHARED_MODULE
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  push_boot(L, exe, root, lib);
  lua_pushcclosure(L, boot_module, 1);
  lua_setfield(L, -2, "vkit.boot");
  lua_pop(L, 1);

  /* vkit's modules from its library alone; package.path keeps the library
   * first, then Lua's defaults or LUA_PATH (a script's own modules, Busted,
   * Penlight...), which only names outside vkit's are looked up in. */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;%s", root, root, lua_tostring(L, -1));
  lua_setfield(L, -3, "path");
  lua_pop(L, 2);
  add_library_searchers(L, root);

  lua_pushcfunction(L, msghandler);
  lua_pushcfunction(L, run_cli);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int status = 3;
  if (lua_pcall(L, 2, 1, 1) != LUA_OK) {
    fprintf(stderr, "vkit: internal error: %s\n", lua_tostring(L, -1));
  } else if (lua_isinteger(L, -1)) {
    status = (int)lua_tointeger(L, -1);
  }
  lua_close(L); /* releases libgit2 if vkit.git was opened */
  return status;
}
