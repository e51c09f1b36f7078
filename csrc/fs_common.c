/*
 * fs_common.c: what both faces of vkit.fs share, below them: the stat
 * record that fs.c's lstat and walk and fs_dir.c's dir:lstat push, and the
 * atomic replacement behind fs.write_atomic and dir:write_atomic.  Neither
 * face calls the other (fs.c registers fs_dir.c's class): each calls here.
 */
#include "fs.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *kind_of(mode_t m, const char **type) {
  *type = NULL;
  if (S_ISREG(m)) return "file";
  if (S_ISDIR(m)) return "dir";
  if (S_ISLNK(m)) return "link";
  if (S_ISFIFO(m)) *type = "fifo";
  else if (S_ISSOCK(m)) *type = "socket";
  else if (S_ISCHR(m)) *type = "char";
  else if (S_ISBLK(m)) *type = "block";
  return "other";
}

/* Pushes the stat record; for links, the target read relative to dirfd. */
void vkit_fs_push_stat(lua_State *L, const struct stat *st, int dirfd, const char *name) {
  const char *type;
  const char *kind = kind_of(st->st_mode, &type);
  lua_createtable(L, 0, 6);
  lua_pushstring(L, kind);
  lua_setfield(L, -2, "kind");
  lua_pushstring(L, type ? type : kind);
  lua_setfield(L, -2, "type");
  lua_pushinteger(L, st->st_mode & 07777);
  lua_setfield(L, -2, "mode");
  lua_pushinteger(L, (lua_Integer)st->st_size);
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, (lua_Integer)st->st_nlink);
  lua_setfield(L, -2, "nlink");
  lua_pushinteger(L, (lua_Integer)st->st_mtim.tv_sec);
  lua_setfield(L, -2, "mtime");
  if (S_ISLNK(st->st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(dirfd, name, target, sizeof target);
    if (n >= 0) {
      lua_pushlstring(L, target, (size_t)n);
      lua_setfield(L, -2, "target");
    }
  }
}

/* Temp file beside the target in dirfd, fsync, rename over it, fsync the
 * directory: a reader sees the old bytes or the new bytes, never a mixture.
 * The temp file is created O_EXCL | O_NOFOLLOW and renamed within dirfd, so
 * a link at name is replaced, never followed.  0 or errno. */
int vkit_fs_write_atomic_at(int dirfd, const char *name, const char *bytes, size_t len, mode_t mode) {
  char tmp[NAME_MAX + 1];
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (snprintf(tmp, sizeof tmp, ".%.200s.tmp-%d-%ld", name, (int)getpid(), ts.tv_nsec) >= (int)sizeof tmp)
    return ENAMETOOLONG;
  int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return errno;
  int err = vkit_write_all(fd, bytes, len);
  if (!err && fchmod(fd, mode) != 0) err = errno;
  if (!err && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && renameat(dirfd, tmp, dirfd, name) != 0) err = errno;
  if (err) {
    unlinkat(dirfd, tmp, 0);
    return err;
  }
  return fsync(dirfd) == 0 ? 0 : errno;
}
