/*
 * fs.c: vkit.fs, filesystem primitives that never follow a link by accident.
 *
 *   lstat(path)                -> {kind, type, mode, size, nlink, target?}
 *   walk(root)                 -> sorted array of {path, kind, type, mode, size, target?}
 *   read(path, max_bytes [, {nofollow = true}])  -> bytes
 *   write_atomic(path, bytes [, mode])           -> true
 *   copy_file(src, dst [, mode])                 -> true  (regular files only)
 *   mkdirs(path [, mode]), mkdtemp(prefix), list(dir), remove_tree(root)
 *   realpath(path), cwd(), chmod(path, mode), chown(path, uid, gid) (never
 *   following a link), symlink(target, path),
 *   mkfifo(path), lock(path [, {wait = true}]) -> lock handle
 *   opendir(path) -> directory handle (fs_dir.c)
 *
 * kind is "file", "dir", "link" or "other" (type then says "fifo",
 * "socket", "char" or "block"); mode is the permission bits (07777).
 * Failures return nil, message, code: an errno name, or too-large,
 * not-a-regular-file, root-is-link, too-deep, locked.
 */
#include "vkit.h"
#include "fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK "vkit.fs.lock"
/* Directory nesting a walk refuses beyond; policies/api.lua's
 * walk_max_depth says the same (exported as max_walk_depth, held equal by
 * tests/c_limits_spec.lua). */
#define MAX_WALK_DEPTH 256

static int fs_lstat(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct stat st;
  if (lstat(path, &st) != 0) return vkit_fail_errno(L, errno, path);
  vkit_fs_push_stat(L, &st, AT_FDCWD, path);
  return 1;
}

/* ---- walk --------------------------------------------------------------- */

typedef struct { lua_State *L; int out; lua_Integer n; char path[PATH_MAX]; int err; const char *code; } Walk;

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entry names of an open directory (excluding . and ..). */
static char **read_names(int dfd, size_t *count, int *err) {
  int dup_fd = dup(dfd);
  DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  if (!d) {
    *err = errno;
    if (dup_fd >= 0) close(dup_fd);
    return NULL;
  }
  size_t n = 0, cap = 16;
  char **names = malloc(cap * sizeof *names);
  struct dirent *e;
  errno = 0;
  while (names && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (n == cap) {
      char **grown = realloc(names, (cap *= 2) * sizeof *names);
      if (!grown) break;
      names = grown;
    }
    names[n++] = strdup(e->d_name);
  }
  *err = errno;
  closedir(d);
  if (names) qsort(names, n, sizeof *names, cmp_names);
  *count = n;
  return names;
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Appends the entries under dfd (whose relative path is w->path) in order. */
static int walk_dir(Walk *w, int dfd, size_t plen, int depth) {
  if (depth > MAX_WALK_DEPTH) {
    w->code = "too-deep";
    return -1;
  }
  size_t n;
  int err = 0;
  char **names = read_names(dfd, &n, &err);
  if (!names || err) {
    w->err = err ? err : ENOMEM;
    if (names) free_names(names, n);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    size_t len = strlen(names[i]);
    if (plen + len + 2 >= sizeof w->path) {
      w->err = ENAMETOOLONG;
      rc = -1;
      break;
    }
    if (plen) w->path[plen] = '/';
    memcpy(w->path + plen + (plen ? 1 : 0), names[i], len + 1);
    size_t sub = plen + (plen ? 1 : 0) + len;
    struct stat st;
    if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
      w->err = errno;
      rc = -1;
      break;
    }
    lua_State *L = w->L;
    vkit_fs_push_stat(L, &st, dfd, names[i]);
    lua_pushlstring(L, w->path, sub);
    lua_setfield(L, -2, "path");
    lua_rawseti(L, w->out, ++w->n);
    if (S_ISDIR(st.st_mode)) {
      int child = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) {
        w->err = errno;
        rc = -1;
        break;
      }
      rc = walk_dir(w, child, sub, depth + 1);
      close(child);
    }
    w->path[plen] = '\0';
  }
  free_names(names, n);
  return rc;
}

static int fs_walk(lua_State *L) {
  const char *root = luaL_checkstring(L, 1);
  int dfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {
      struct stat st;
      if (lstat(root, &st) == 0 && S_ISLNK(st.st_mode))
        return vkit_fail(L, "root-is-link", "%s: the walk root is a symbolic link", root);
    }
    return vkit_fail_errno(L, errno, root);
  }
  lua_newtable(L);
  Walk *w = lua_newuserdatauv(L, sizeof *w, 0);
  memset(w, 0, sizeof *w);
  w->L = L;
  w->out = lua_gettop(L) - 1;
  int rc = walk_dir(w, dfd, 0, 0);
  close(dfd);
  if (rc != 0) {
    if (w->code) return vkit_fail(L, w->code, "%s: directory nesting deeper than %d", root, MAX_WALK_DEPTH);
    return vkit_fail(L, vkit_errno_name(w->err), "%s/%s: %s", root, w->path, strerror(w->err));
  }
  lua_pop(L, 1);
  return 1;
}

/* ---- reading and writing ---------------------------------------------- */

static int fs_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_checkinteger(L, 2);
  luaL_argcheck(L, max >= 0, 2, "max_bytes must be >= 0");
  int nofollow = 0;
  if (lua_istable(L, 3)) {
    lua_getfield(L, 3, "nofollow");
    nofollow = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  VkitFileBytes *bytes = vkit_read_file(L, path, max, nofollow);
  if (!bytes) return 3;
  lua_pushlstring(L, bytes->data, bytes->len);
  vkit_file_bytes_release(bytes); /* now, not when collected */
  return 1;
}

static int fs_write_atomic(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t len;
  const char *bytes = luaL_checklstring(L, 2, &len);
  mode_t mode = (mode_t)luaL_optinteger(L, 3, 0644);
  char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return vkit_fail_errno(L, ENAMETOOLONG, path);
  char *slash = strrchr(dir, '/');
  const char *name = slash ? slash + 1 : dir, *parent = ".";
  if (*name == '\0') return vkit_fail_errno(L, EISDIR, path);
  if (slash == dir) parent = "/";
  else if (slash) *slash = '\0', parent = dir;
  int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return vkit_fail_errno(L, errno, path);
  int err = vkit_fs_write_atomic_at(dfd, name, bytes, len, mode);
  close(dfd);
  if (err) return vkit_fail_errno(L, err, path);
  lua_pushboolean(L, 1);
  return 1;
}

/* Copies a regular file (never a link) to a new path (O_EXCL), with fsync. */
static int fs_copy_file(lua_State *L) {
  const char *src = luaL_checkstring(L, 1);
  const char *dst = luaL_checkstring(L, 2);
  lua_Integer asked = luaL_optinteger(L, 3, -1); /* checked before anything is open */
  struct stat st;
  int in = vkit_open_regular(L, src, 1, &st);
  if (in < 0) return 3;
  mode_t mode = asked >= 0 ? (mode_t)asked : st.st_mode & 0777;
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (out < 0) {
    int err = errno;
    close(in);
    return vkit_fail_errno(L, err, dst);
  }
  char buf[1 << 16];
  int err = 0;
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { err = errno; break; }
    if (n == 0) break;
    if ((err = vkit_write_all(out, buf, (size_t)n)) != 0) break;
  }
  if (!err && fchmod(out, mode) != 0) err = errno;
  if (!err && fsync(out) != 0) err = errno;
  close(in);
  if (close(out) != 0 && !err) err = errno;
  if (err) {
    unlink(dst);
    return vkit_fail_errno(L, err, dst);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- directories ------------------------------------------------------- */

static int fs_mkdirs(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  mode_t mode = (mode_t)luaL_optinteger(L, 2, 0755);
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return vkit_fail_errno(L, ENAMETOOLONG, path);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char saved = *p;
      *p = '\0';
      if (mkdir(buf, mode) != 0 && errno != EEXIST) return vkit_fail_errno(L, errno, buf);
      *p = saved;
      if (!saved) break;
    }
  }
  struct stat st;
  if (stat(path, &st) != 0) return vkit_fail_errno(L, errno, path);
  if (!S_ISDIR(st.st_mode)) return vkit_fail_errno(L, ENOTDIR, path);
  lua_pushboolean(L, 1);
  return 1;
}

static int fs_mkdtemp(lua_State *L) {
  const char *prefix = luaL_optstring(L, 1, "/tmp/vkit-");
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%sXXXXXX", prefix) >= (int)sizeof buf)
    return vkit_fail_errno(L, ENAMETOOLONG, prefix);
  if (!mkdtemp(buf)) return vkit_fail_errno(L, errno, buf);
  lua_pushstring(L, buf);
  return 1;
}

static int fs_list(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return vkit_fail_errno(L, errno, path);
  size_t n;
  int err = 0;
  char **names = read_names(dfd, &n, &err);
  close(dfd);
  if (!names || err) {
    if (names) free_names(names, n);
    return vkit_fail_errno(L, err ? err : ENOMEM, path);
  }
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  free_names(names, n);
  return 1;
}

/* Removes everything under dfd; entries are reached only through directory
 * descriptors opened with O_NOFOLLOW, so a link is removed, never entered. */
static int remove_under(int dfd, int depth, int *err) {
  if (depth > MAX_WALK_DEPTH) { *err = ELOOP; return -1; }
  size_t n;
  char **names = read_names(dfd, &n, err);
  if (!names || *err) {
    if (names) free_names(names, n);
    if (!*err) *err = ENOMEM;
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    struct stat st;
    if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
      *err = errno;
      rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
      int child = openat(dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) {
        *err = errno;
        rc = -1;
      } else {
        rc = remove_under(child, depth + 1, err);
        close(child);
        if (rc == 0 && unlinkat(dfd, names[i], AT_REMOVEDIR) != 0) { *err = errno; rc = -1; }
      }
    } else if (unlinkat(dfd, names[i], 0) != 0) {
      *err = errno;
      rc = -1;
    }
  }
  free_names(names, n);
  return rc;
}

static int fs_remove_tree(lua_State *L) {
  const char *root = luaL_checkstring(L, 1);
  if (root[0] == '\0' || !strcmp(root, "/"))
    return luaL_error(L, "remove_tree refuses to remove '%s'", root);
  struct stat st;
  if (lstat(root, &st) != 0) return vkit_fail_errno(L, errno, root);
  if (S_ISLNK(st.st_mode)) return vkit_fail(L, "root-is-link", "%s: the root is a symbolic link", root);
  if (!S_ISDIR(st.st_mode)) return vkit_fail_errno(L, ENOTDIR, root);
  int dfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0) return vkit_fail_errno(L, errno, root);
  int err = 0;
  int rc = remove_under(dfd, 0, &err);
  close(dfd);
  if (rc != 0) return vkit_fail_errno(L, err, root);
  if (rmdir(root) != 0) return vkit_fail_errno(L, errno, root);
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- small wrappers ----------------------------------------------------- */

static int fs_realpath(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char buf[PATH_MAX];
  if (!realpath(path, buf)) return vkit_fail_errno(L, errno, path);
  lua_pushstring(L, buf);
  return 1;
}

static int fs_cwd(lua_State *L) {
  char buf[PATH_MAX];
  if (!getcwd(buf, sizeof buf)) return vkit_fail_errno(L, errno, "getcwd");
  lua_pushstring(L, buf);
  return 1;
}

static int fs_chmod(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  if (chmod(path, (mode_t)luaL_checkinteger(L, 2)) != 0) return vkit_fail_errno(L, errno, path);
  lua_pushboolean(L, 1);
  return 1;
}

/* chown(path, uid, gid): lchown, so a link is changed, never followed. */
static int fs_chown(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer uid = luaL_checkinteger(L, 2), gid = luaL_checkinteger(L, 3);
  luaL_argcheck(L, uid >= 0 && uid <= 0xfffffffe, 2, "not a uid");
  luaL_argcheck(L, gid >= 0 && gid <= 0xfffffffe, 3, "not a gid");
  if (lchown(path, (uid_t)uid, (gid_t)gid) != 0) return vkit_fail_errno(L, errno, path);
  lua_pushboolean(L, 1);
  return 1;
}

static int fs_symlink(lua_State *L) {
  const char *target = luaL_checkstring(L, 1), *path = luaL_checkstring(L, 2);
  if (symlink(target, path) != 0) return vkit_fail_errno(L, errno, path);
  lua_pushboolean(L, 1);
  return 1;
}

static int fs_mkfifo(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  if (mkfifo(path, (mode_t)luaL_optinteger(L, 2, 0644)) != 0) return vkit_fail_errno(L, errno, path);
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- advisory locks ----------------------------------------------------- */

typedef struct { int fd; } Lock;

static int fs_lock(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int wait = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "wait");
    wait = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  Lock *lk = lua_newuserdatauv(L, sizeof *lk, 0);
  lk->fd = -1;
  luaL_setmetatable(L, LOCK);
  lk->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lk->fd < 0) return vkit_fail_errno(L, errno, path);
  while (flock(lk->fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    close(lk->fd);
    lk->fd = -1;
    if (err == EWOULDBLOCK) return vkit_fail(L, "locked", "%s: held by another process", path);
    return vkit_fail_errno(L, err, path);
  }
  return 1;
}

static int lock_release(lua_State *L) {
  Lock *lk = luaL_checkudata(L, 1, LOCK);
  if (lk->fd >= 0) close(lk->fd); /* closing the descriptor drops the flock */
  lk->fd = -1;
  return 0;
}

static int lock_held(lua_State *L) {
  Lock *lk = luaL_checkudata(L, 1, LOCK);
  lua_pushboolean(L, lk->fd >= 0);
  return 1;
}

static const luaL_Reg lock_methods[] = {{"unlock", lock_release}, {"held", lock_held}, {NULL, NULL}};
static const luaL_Reg lock_meta[] = {{"__gc", lock_release}, {"__close", lock_release}, {NULL, NULL}};

static const luaL_Reg fs_funcs[] = {
  {"lstat", fs_lstat},         {"walk", fs_walk},       {"read", fs_read},
  {"write_atomic", fs_write_atomic}, {"copy_file", fs_copy_file}, {"mkdirs", fs_mkdirs},
  {"mkdtemp", fs_mkdtemp},     {"list", fs_list},       {"remove_tree", fs_remove_tree},
  {"realpath", fs_realpath},   {"cwd", fs_cwd},         {"chmod", fs_chmod},
  {"chown", fs_chown},
  {"symlink", fs_symlink},     {"mkfifo", fs_mkfifo},   {"lock", fs_lock},
  {"opendir", vkit_fs_opendir}, {NULL, NULL}};

int luaopen_vkit_fs(lua_State *L) {
  vkit_newclass(L, LOCK, lock_methods, lock_meta);
  vkit_fs_dir_register(L);
  luaL_newlib(L, fs_funcs);
  vkit_setfield_int(L, "max_walk_depth", MAX_WALK_DEPTH);
  return 1;
}
