/*
 * process_landlock.c: the Landlock sandbox of a run.  The kernel's ABI
 * version, the rights a ruleset handles, the ruleset the parent makes with
 * the spec's paths (process_launch.c), and, for an isolated run, the rules
 * its child adds on the paths of its own root (process_start.c).
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Landlock, defined here because Debian 12's headers stop at ABI 2. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_REMOVE_DIR (1ULL << 4)
#define LL_REMOVE_FILE (1ULL << 5)
#define LL_MAKE_CHAR (1ULL << 6)
#define LL_MAKE_DIR (1ULL << 7)
#define LL_MAKE_REG (1ULL << 8)
#define LL_MAKE_SOCK (1ULL << 9)
#define LL_MAKE_FIFO (1ULL << 10)
#define LL_MAKE_BLOCK (1ULL << 11)
#define LL_MAKE_SYM (1ULL << 12)
#define LL_REFER (1ULL << 13)    /* ABI 2 */
#define LL_TRUNCATE (1ULL << 14) /* ABI 3 */

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net; /* ABI 4; unused: network is not restricted */
  uint64_t scoped;             /* ABI 6 */
};
struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

int landlock_abi(void) {
  /* A fact about the running kernel, asked once per process. */
  static int abi = -1;
  if (abi < 0) {
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    abi = v < 0 ? 0 : (int)v;
  }
  return abi;
}

static int add_rules(int ruleset, const char *const *paths, size_t n, uint64_t rights, Refusal *why) {
  const uint64_t file_rights = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (paths[i][0] != '/') {
      refuse(why, "launch-failed", "sandbox-path-unavailable", 0, "sandbox path '%s' is not absolute", paths[i]);
      return -1;
    }
    int fd = open(paths[i], O_PATH | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
      int err = errno;
      refuse(why, "launch-failed", "sandbox-path-unavailable", err, "sandbox path %s: %s", paths[i], strerror(err));
      if (fd >= 0) close(fd);
      return -1;
    }
    struct ll_path_beneath_attr rule = {S_ISDIR(st.st_mode) ? rights : rights & file_rights, fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
    int err = errno;
    close(fd);
    if (rc != 0) {
      refuse(why, "launch-failed", "sandbox-failed", err, "Landlock refused a rule for %s: %s", paths[i], strerror(err));
      return -1;
    }
  }
  return 0;
}

/* The filesystem rights a ruleset handles: writes always, reads when the
 * spec restricts them; rights this kernel's ABI does not know are left out. */
uint64_t landlock_read_rights(void) { return LL_EXECUTE | LL_READ_FILE | LL_READ_DIR; }

uint64_t landlock_handled(const LaunchSpec *s, int abi) {
  uint64_t write = LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_CHAR | LL_MAKE_DIR | LL_MAKE_REG |
                   LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK | LL_MAKE_SYM;
  if (abi >= 2) write |= LL_REFER;
  if (abi >= 3) write |= LL_TRUNCATE;
  return write | (s->sandbox_read ? landlock_read_rights() : 0);
}

/* A ruleset fd (>= 3), or -1 when refused; *applied names what will apply. */
int landlock_ruleset(const LaunchSpec *s, char *applied, size_t applied_len, Refusal *why) {
  int abi = landlock_abi();
  if (abi < 1) {
    if (s->sandbox_optional) return -1;
    refuse(why, "launch-failed", "sandbox-unavailable", 0, "a sandbox was requested but this kernel offers no Landlock");
    return -2;
  }
  uint64_t read = landlock_read_rights(), handled = landlock_handled(s, abi);
  /* From ABI 6 the child also cannot signal processes outside its
   * sandbox, vkit included, nor connect to an abstract unix socket made
   * outside it.  Older kernels get the fs-only prefix. */
  struct ll_ruleset_attr attr = {handled, 0, abi >= 6 ? LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX_SOCKET : 0};
  size_t attr_size = abi >= 6 ? sizeof attr : sizeof attr.handled_access_fs;
  int fd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
  if (fd < 0 || (fd = fd_above_2(fd)) < 0) {
    refuse(why, "launch-failed", "sandbox-failed", errno, "cannot create a Landlock ruleset: %s", strerror(errno));
    return -2;
  }
  /* An isolated run's paths name places in its own root: its child adds
   * them once that root is in place (landlock_child_add_rules). */
  if (!s->isolate && (add_rules(fd, s->write_paths, s->nwrite, handled, why) != 0 ||
                      add_rules(fd, s->read_paths, s->nread, handled & read, why) != 0)) {
    close(fd);
    return -2;
  }
  snprintf(applied, applied_len, "landlock-abi-%d", abi);
  return fd;
}

/* add_rules for an isolated child (process_start.c), on paths of its own
 * root, between its clone and its exec: raw system calls only, as the child
 * runs on its parent's memory.  *failed_path: the path a failure was about. */
__attribute__((no_sanitize("address", "undefined"))) int landlock_child_add_rules(int ruleset, const char *const *paths,
                                                                                   size_t n, uint64_t rights,
                                                                                   const char **failed_path) {
  const uint64_t file_rights = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    *failed_path = paths[i];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, paths[i], O_PATH | O_CLOEXEC);
    if (fd < 0) return -1;
    struct ll_path_beneath_attr rule = {rights, fd};
    long rc = syscall(SYS_fstat, fd, &st);
    if (rc == 0 && !S_ISDIR(st.st_mode)) rule.allowed_access &= file_rights;
    if (rc == 0) rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
    int err = errno;
    syscall(SYS_close, fd);
    if (rc != 0) {
      errno = err;
      return -1;
    }
  }
  *failed_path = NULL;
  return 0;
}
