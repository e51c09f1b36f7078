/*
 * process_common.c: what every layer of vkit.process shares, at the bottom
 * of them: the refusal (why a launch did not happen, pin mismatches
 * included), the hash a pin is compared with, and moving a descriptor above
 * 2.  The layers, each calling only those below it:
 *
 *   process.c          the Lua module
 *   process_launch.c   from a launch spec to a started run
 *   process_keeper.c   the keeper: a subreaper process per run without a cgroup
 *   process_start.c    the clone, the child's set-up, the hold, the exe's hash
 *   process_tree.c     containment: pid sets, cgroups, the chase, collection
 *   process_isolate.c  namespaces and the run's own root
 *   process_landlock.c the Landlock sandbox
 *   process_common.c   this file
 *
 * The tree reports upward to the keepers through callbacks (KeeperHooks,
 * process.h), never by name; scripts/c-call-graph.lua checks the rest.
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void refuse(Refusal *why, const char *status, const char *error, int err, const char *fmt, ...) {
  va_list ap;
  why->status = status;
  why->error = error;
  why->err = err;
  va_start(ap, fmt);
  vsnprintf(why->message, sizeof why->message, fmt, ap);
  va_end(ap);
}

/* Moves fd to a number >= 3 (so dup3 onto 0-2 in the child cannot clobber
 * it); close-on-exec.  Returns the new fd, or -1 with errno. */
int fd_above_2(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int err = errno;
  close(fd);
  errno = err;
  return moved;
}

int hash_fd_hex(int fd, char hex[65]) {
  unsigned char md[32];
  if (lseek(fd, 0, SEEK_SET) < 0) return errno;
  int err = vkit_sha256_fd(fd, md, NULL);
  if (err) return err;
  vkit_hex(md, 32, hex);
  return 0;
}

void pin_mismatch(Refusal *why, const char *error, const char *what, const char *path,
                         const char *expected, const char *actual) {
  refuse(why, "pin-mismatch", error, 0, "%s %s: pinned sha256 %s, found %s", what, path, expected, actual);
  snprintf(why->pin_path, sizeof why->pin_path, "%s", path);
  snprintf(why->expected, sizeof why->expected, "%s", expected);
  snprintf(why->actual, sizeof why->actual, "%s", actual);
}
