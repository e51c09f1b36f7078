/*
 * fs_dir.c: vkit.fs directory handles, for writing into a tree that other
 * processes can also write (a run directory a producer or checker knows).
 *
 *   opendir(path)                      -> dir   (path itself: a directory, not a link)
 *   dir:path()                         -> the path it was opened as
 *   dir:sub(rel)                       -> dir   (a subdirectory beneath)
 *   dir:mkdir(rel [, mode])            -> true  (EEXIST when anything is there)
 *   dir:mkdirs(rel [, mode])           -> true  (what exists must be directories)
 *   dir:write_atomic(rel, bytes [, mode]) -> true
 *   dir:append(rel, bytes)             -> true  (created 0644 when missing; a
 *                                         regular file with one link, never a
 *                                         symbolic or hard link, a FIFO)
 *   dir:read(rel, max_bytes)           -> bytes (a regular file, never a link)
 *   dir:sha256(rel)                    -> hex, size (streamed; a regular file)
 *   dir:lstat(rel)                     -> {kind, type, mode, size, nlink, mtime, target?}
 *   dir:rename(from, to)               -> true  (never replaces: EEXIST)
 *   dir:remove(rel)                    -> true  (a regular file: never a link,
 *                                         a directory or anything else)
 *   dir:rmdir(rel)                     -> true  (an empty directory, never a
 *                                         link: ENOTEMPTY when it holds anything)
 *   dir:at_path()                      -> true | nil, msg, "moved" (the path no
 *                                         longer names this directory)
 *   dir:close()
 *
 * Every rel is resolved beneath the handle's descriptor one component at a
 * time with O_NOFOLLOW, so a link anywhere on the way is refused, never
 * followed, and renaming the handle's own directory does not redirect it.
 * rel must be relative and normal (no empty, "." or ".." component): a bad
 * one raises.  Failures return nil, message, code, where code is
 * link-in-path (a component is a symbolic link), not-a-directory (a
 * component is something else), not-a-regular-file, hard-link (append),
 * too-large, or an errno name.
 */
#include "fs.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h> /* RENAME_NOREPLACE */
#include <stdio.h>
#include <unistd.h>

#define DIR_HANDLE "vkit.fs.dir"

typedef struct {
  int fd;
  char path[PATH_MAX];
} Dir;

static Dir *check_dir(lua_State *L) {
  Dir *d = luaL_checkudata(L, 1, DIR_HANDLE);
  if (d->fd < 0) luaL_error(L, "vkit.fs: the directory handle is closed");
  return d;
}

/* Copies rel into buf after checking it is relative and normal. */
static void check_rel(lua_State *L, int arg, const char *rel, char buf[PATH_MAX]) {
  size_t n = strlen(rel);
  luaL_argcheck(L, n > 0 && n < PATH_MAX && rel[0] != '/', arg, "a relative path is required");
  memcpy(buf, rel, n + 1);
  for (const char *c = buf; *c;) {
    const char *end = strchr(c, '/');
    size_t len = end ? (size_t)(end - c) : strlen(c);
    int dots = (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.');
    luaL_argcheck(L, len > 0 && !dots, arg, "the path must be normal (no empty, '.' or '..' component)");
    c += len + (end ? 1 : 0);
    luaL_argcheck(L, !end || *c, arg, "the path must be normal (no trailing '/')");
  }
}

/* Pushes the failure of reaching `component` (the prefix of rel that ends
 * at it) in the directory dfd. */
static int fail_component(lua_State *L, Dir *d, int dfd, const char *component, const char *prefix, int err) {
  struct stat st;
  if ((err == ELOOP || err == ENOTDIR) && fstatat(dfd, component, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode))
      return vkit_fail(L, "link-in-path", "%s/%s: is a symbolic link", d->path, prefix);
    if (!S_ISDIR(st.st_mode))
      return vkit_fail(L, "not-a-directory", "%s/%s: is not a directory", d->path, prefix);
  }
  char what[PATH_MAX + 2];
  snprintf(what, sizeof what, "%s/%s", d->path, prefix);
  return vkit_fail_errno(L, err, what);
}

/* Opens the directory that holds rel's last component, beneath d, creating
 * the missing ones when `create`.  Returns its descriptor (d->fd itself for
 * a single component: close it only when it differs) with *last pointing at
 * the last component in buf; or pushes the failure and returns -1. */
static int parent_of(lua_State *L, Dir *d, char buf[PATH_MAX], const char **last, int create, mode_t mode) {
  int fd = d->fd;
  char *c = buf;
  for (char *slash; (slash = strchr(c, '/')) != NULL; c = slash + 1) {
    *slash = '\0';
    if (create && mkdirat(fd, c, mode) != 0 && errno != EEXIST) {
      int err = errno;
      fail_component(L, d, fd, c, buf, err);
      if (fd != d->fd) close(fd);
      return -1;
    }
    int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      int err = errno;
      fail_component(L, d, fd, c, buf, err);
      if (fd != d->fd) close(fd);
      return -1;
    }
    if (fd != d->fd) close(fd);
    fd = next;
    *slash = '/';
  }
  *last = c;
  return fd;
}

static void release(Dir *d, int fd) {
  if (fd >= 0 && fd != d->fd) close(fd);
}

static Dir *new_dir(lua_State *L) {
  Dir *d = lua_newuserdatauv(L, sizeof *d, 0);
  d->fd = -1;
  d->path[0] = '\0';
  luaL_setmetatable(L, DIR_HANDLE);
  return d;
}

int vkit_fs_opendir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_argcheck(L, strlen(path) < PATH_MAX, 1, "path too long");
  Dir *d = new_dir(L);
  snprintf(d->path, sizeof d->path, "%s", path);
  d->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d->fd >= 0) return 1;
  int err = errno;
  struct stat st;
  if ((err == ELOOP || err == ENOTDIR) && lstat(path, &st) == 0) {
    if (S_ISLNK(st.st_mode)) return vkit_fail(L, "link-in-path", "%s: is a symbolic link", path);
    if (!S_ISDIR(st.st_mode)) return vkit_fail(L, "not-a-directory", "%s: is not a directory", path);
  }
  return vkit_fail_errno(L, err, path);
}

static int dir_sub(lua_State *L) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX];
  const char *rel = luaL_checkstring(L, 2), *last;
  check_rel(L, 2, rel, buf);
  Dir *sub = new_dir(L);
  int pfd = parent_of(L, d, buf, &last, 0, 0);
  if (pfd < 0) return 3;
  if (snprintf(sub->path, sizeof sub->path, "%s/%s", d->path, rel) >= (int)sizeof sub->path) {
    release(d, pfd);
    return vkit_fail_errno(L, ENAMETOOLONG, rel);
  }
  sub->fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int err = errno;
  if (sub->fd < 0) fail_component(L, d, pfd, last, rel, err);
  release(d, pfd);
  return sub->fd < 0 ? 3 : 1;
}

static int dir_mkdir_common(lua_State *L, int create_parents) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX];
  const char *rel = luaL_checkstring(L, 2), *last;
  mode_t mode = (mode_t)luaL_optinteger(L, 3, 0755);
  check_rel(L, 2, rel, buf);
  int pfd = parent_of(L, d, buf, &last, create_parents, mode);
  if (pfd < 0) return 3;
  int rc = mkdirat(pfd, last, mode), err = errno;
  if (rc != 0 && create_parents && err == EEXIST) {
    int fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    err = errno;
    if (fd >= 0) close(fd), rc = 0;
  }
  if (rc != 0) {
    if (err == EEXIST) {
      char what[PATH_MAX + 2];
      snprintf(what, sizeof what, "%s/%s", d->path, rel);
      vkit_fail_errno(L, err, what);
    } else {
      fail_component(L, d, pfd, last, rel, err);
    }
  }
  release(d, pfd);
  if (rc != 0) return 3;
  lua_pushboolean(L, 1);
  return 1;
}

static int dir_mkdir(lua_State *L) { return dir_mkdir_common(L, 0); }
static int dir_mkdirs(lua_State *L) { return dir_mkdir_common(L, 1); }

static int dir_write_atomic(lua_State *L) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX];
  const char *rel = luaL_checkstring(L, 2), *last;
  size_t len;
  const char *bytes = luaL_checklstring(L, 3, &len);
  mode_t mode = (mode_t)luaL_optinteger(L, 4, 0644);
  check_rel(L, 2, rel, buf);
  int pfd = parent_of(L, d, buf, &last, 0, 0);
  if (pfd < 0) return 3;
  int err = vkit_fs_write_atomic_at(pfd, last, bytes, len, mode);
  if (err) {
    char what[PATH_MAX + 2];
    snprintf(what, sizeof what, "%s/%s", d->path, rel);
    struct stat st;
    if (err == EISDIR || (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)))
      vkit_fail(L, "EISDIR", "%s: is a directory", what);
    else
      vkit_fail_errno(L, err, what);
  }
  release(d, pfd);
  if (err) return 3;
  lua_pushboolean(L, 1);
  return 1;
}

static int dir_append(lua_State *L) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX], what[PATH_MAX + 2];
  const char *rel = luaL_checkstring(L, 2), *last;
  size_t len;
  const char *bytes = luaL_checklstring(L, 3, &len);
  check_rel(L, 2, rel, buf);
  snprintf(what, sizeof what, "%s/%s", d->path, rel);
  int pfd = parent_of(L, d, buf, &last, 0, 0);
  if (pfd < 0) return 3;
  /* O_NONBLOCK: a FIFO put in its place must not hold the writer */
  int fd = openat(pfd, last, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  int err = fd < 0 ? errno : 0;
  struct stat st;
  int lnk = fd < 0 && err == ELOOP && fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  release(d, pfd);
  if (lnk) return vkit_fail(L, "link-in-path", "%s: is a symbolic link", what);
  if (fd < 0 && err == EISDIR) return vkit_fail(L, "not-a-regular-file", "%s: is a directory", what);
  if (fd < 0) return vkit_fail_errno(L, err, what);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return vkit_fail(L, "not-a-regular-file", "%s: is not a regular file", what);
  }
  /* a hard link planted in its place would have the bytes land in the file
   * it names, wherever that is (write_atomic replaces; an append cannot) */
  if (st.st_nlink != 1) {
    close(fd);
    return vkit_fail(L, "hard-link", "%s: has %d links (a hard link to another file)", what, (int)st.st_nlink);
  }
  for (size_t off = 0; off < len && !err;) {
    ssize_t n = write(fd, bytes + off, len - off);
    if (n > 0) off += (size_t)n;
    else if (n < 0 && errno != EINTR) err = errno;
  }
  if (close(fd) != 0 && !err) err = errno;
  if (err) return vkit_fail_errno(L, err, what);
  lua_pushboolean(L, 1);
  return 1;
}

static int dir_read(lua_State *L) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX], what[PATH_MAX + 2];
  const char *rel = luaL_checkstring(L, 2), *last;
  lua_Integer max = luaL_checkinteger(L, 3);
  luaL_argcheck(L, max >= 0, 3, "max_bytes must be >= 0");
  check_rel(L, 2, rel, buf);
  snprintf(what, sizeof what, "%s/%s", d->path, rel);
  int pfd = parent_of(L, d, buf, &last, 0, 0);
  if (pfd < 0) return 3;
  VkitFileBytes *bytes = vkit_read_file_at(L, pfd, last, what, max, 1);
  release(d, pfd);
  if (!bytes) return 3;
  lua_pushlstring(L, bytes->data, bytes->len);
  vkit_file_bytes_release(bytes);
  return 1;
}

static int dir_sha256(lua_State *L) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX], what[PATH_MAX + 2];
  const char *rel = luaL_checkstring(L, 2), *last;
  check_rel(L, 2, rel, buf);
  snprintf(what, sizeof what, "%s/%s", d->path, rel);
  int pfd = parent_of(L, d, buf, &last, 0, 0);
  if (pfd < 0) return 3;
  struct stat st;
  int fd = vkit_open_regular_at(L, pfd, last, what, 1, &st);
  release(d, pfd);
  if (fd < 0) return 3;
  unsigned char digest[32];
  long long size = 0;
  int err = vkit_sha256_fd(fd, digest, &size);
  close(fd);
  if (err) return vkit_fail_errno(L, err, what);
  char hex[65];
  vkit_hex(digest, 32, hex);
  lua_pushstring(L, hex);
  lua_pushinteger(L, (lua_Integer)size);
  return 2;
}

static int dir_lstat(lua_State *L) {
  Dir *d = check_dir(L);
  char buf[PATH_MAX];
  const char *rel = luaL_checkstring(L, 2), *last;
  check_rel(L, 2, rel, buf);
  int pfd = parent_of(L, d, buf, &last, 0, 0);
  if (pfd < 0) return 3;
  struct stat st;
  int rc = fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW), err = errno;
  if (rc == 0) vkit_fs_push_stat(L, &st, pfd, last);
  else fail_component(L, d, pfd, last, rel, err);
  release(d, pfd);
  return rc == 0 ? 1 : 3;
}

static int dir_rename(lua_State *L) {
  Dir *d = check_dir(L);
  char from_buf[PATH_MAX], to_buf[PATH_MAX];
  const char *from = luaL_checkstring(L, 2), *to = luaL_checkstring(L, 3), *from_last, *to_last;
  check_rel(L, 2, from, from_buf);
  check_rel(L, 3, to, to_buf);
  int from_fd = parent_of(L, d, from_buf, &from_last, 0, 0);
  if (from_fd < 0) return 3;
  int to_fd = parent_of(L, d, to_buf, &to_last, 0, 0);
  if (to_fd < 0) {
    release(d, from_fd);
    return 3;
  }
  int rc = renameat2(from_fd, from_last, to_fd, to_last, RENAME_NOREPLACE), err = errno;
  if (rc != 0) {
    char what[2 * PATH_MAX + 8];
    snprintf(what, sizeof what, "%s/%s -> %s", d->path, from, to);
    vkit_fail_errno(L, err, what);
  }
  release(d, from_fd);
  release(d, to_fd);
  if (rc != 0) return 3;
  lua_pushboolean(L, 1);
  return 1;
}

/* The start of dir:remove and dir:rmdir: the handle, rel checked into buf,
 * the path to name in messages, and the directory that holds rel's last
 * component (see parent_of); -1 with the failure pushed. */
static int removal_parent(lua_State *L, Dir **d, char buf[PATH_MAX], char what[PATH_MAX + 2], const char **last) {
  *d = check_dir(L);
  const char *rel = luaL_checkstring(L, 2);
  check_rel(L, 2, rel, buf);
  snprintf(what, PATH_MAX + 2, "%s/%s", (*d)->path, rel);
  return parent_of(L, *d, buf, last, 0, 0);
}

/* dir:remove(rel): unlinks the regular file rel.  What stands there is
 * looked at (fstatat, no link followed) and then unlinked in the same
 * directory descriptor: another process that swaps a name in between can
 * only have that name removed, in a directory beneath the handle, never
 * what it points to (unlinkat removes a link, not its target, and refuses
 * a directory). */
static int dir_remove(lua_State *L) {
  Dir *d;
  char buf[PATH_MAX], what[PATH_MAX + 2];
  const char *last;
  int pfd = removal_parent(L, &d, buf, what, &last);
  if (pfd < 0) return 3;
  struct stat st;
  int rc = fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW), err = errno;
  if (rc != 0) {
    fail_component(L, d, pfd, last, lua_tostring(L, 2), err);
  } else if (S_ISLNK(st.st_mode)) {
    rc = -1;
    vkit_fail(L, "link-in-path", "%s: is a symbolic link", what);
  } else if (!S_ISREG(st.st_mode)) {
    rc = -1;
    vkit_fail(L, "not-a-regular-file", "%s: is not a regular file", what);
  } else if ((rc = unlinkat(pfd, last, 0)) != 0) {
    vkit_fail_errno(L, errno, what);
  }
  release(d, pfd);
  if (rc != 0) return 3;
  lua_pushboolean(L, 1);
  return 1;
}

/* dir:rmdir(rel): removes the empty directory rel (unlinkat AT_REMOVEDIR,
 * which never follows a link: a link there is link-in-path). */
static int dir_rmdir(lua_State *L) {
  Dir *d;
  char buf[PATH_MAX], what[PATH_MAX + 2];
  const char *last;
  int pfd = removal_parent(L, &d, buf, what, &last);
  if (pfd < 0) return 3;
  int rc = unlinkat(pfd, last, AT_REMOVEDIR), err = errno;
  if (rc != 0) {
    if (err == ENOTEMPTY || err == EEXIST) vkit_fail(L, "ENOTEMPTY", "%s: %s", what, strerror(ENOTEMPTY));
    else fail_component(L, d, pfd, last, lua_tostring(L, 2), err);
  }
  release(d, pfd);
  if (rc != 0) return 3;
  lua_pushboolean(L, 1);
  return 1;
}

/* Whether the path the handle was opened as still names its directory (the
 * same device and inode, not through a link at the last component): a
 * directory moved elsewhere keeps its handle, so writes through it would
 * land wherever it went. */
static int dir_at_path(lua_State *L) {
  Dir *d = check_dir(L);
  struct stat here, there;
  if (fstat(d->fd, &here) != 0) return vkit_fail_errno(L, errno, d->path);
  if (lstat(d->path, &there) != 0) {
    if (errno == ENOENT) return vkit_fail(L, "moved", "%s: the directory is no longer there", d->path);
    return vkit_fail_errno(L, errno, d->path);
  }
  if (S_ISLNK(there.st_mode))
    return vkit_fail(L, "moved", "%s: is now a symbolic link, not the directory it was", d->path);
  if (here.st_dev != there.st_dev || here.st_ino != there.st_ino)
    return vkit_fail(L, "moved", "%s: now names another file than the directory it was", d->path);
  lua_pushboolean(L, 1);
  return 1;
}

static int dir_path(lua_State *L) {
  Dir *d = luaL_checkudata(L, 1, DIR_HANDLE);
  lua_pushstring(L, d->path);
  return 1;
}

static int dir_close(lua_State *L) {
  Dir *d = luaL_checkudata(L, 1, DIR_HANDLE);
  if (d->fd >= 0) close(d->fd);
  d->fd = -1;
  return 0;
}

static int dir_tostring(lua_State *L) {
  Dir *d = luaL_checkudata(L, 1, DIR_HANDLE);
  lua_pushfstring(L, "vkit.fs.dir (%s%s)", d->path, d->fd < 0 ? ", closed" : "");
  return 1;
}

static const luaL_Reg dir_methods[] = {
  {"sub", dir_sub},     {"mkdir", dir_mkdir}, {"mkdirs", dir_mkdirs}, {"write_atomic", dir_write_atomic},
  {"append", dir_append}, {"read", dir_read},   {"lstat", dir_lstat}, {"rename", dir_rename}, {"path", dir_path},
  {"at_path", dir_at_path}, {"sha256", dir_sha256}, {"remove", dir_remove}, {"rmdir", dir_rmdir},
  {"close", dir_close}, {NULL, NULL}};
static const luaL_Reg dir_meta[] = {
  {"__gc", dir_close}, {"__close", dir_close}, {"__tostring", dir_tostring}, {NULL, NULL}};

void vkit_fs_dir_register(lua_State *L) {
  vkit_newclass(L, DIR_HANDLE, dir_methods, dir_meta);
}
