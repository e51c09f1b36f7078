/*
 * process_launch.c: from a launch spec to a running, contained child.
 *
 * Order of events (each step refuses the launch as data when it fails):
 *   1. dependency pins are re-hashed (the last moment before the launch);
 *   2. the executable is opened once; that descriptor is what runs;
 *   3. the Landlock ruleset, the run's cgroup and the three pipes are made;
 *   4. clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) starts the child on a
 *      stack of its own, with every signal blocked (so no handler of ours can
 *      run in it), as posix_spawn does; the child resets every disposition,
 *      becomes a session and process-group leader, joins the cgroup, gets
 *      fds 0-2 and marks every other descriptor close-on-exec, changes
 *      directory, applies rlimits and the sandbox, asks to be traced by us,
 *      unblocks signals and calls execveat(exe_fd, "", AT_EMPTY_PATH);
 *   5. the kernel stops the traced child at its first instruction (SIGTRAP
 *      after exec).  The executable cannot be written while it runs
 *      (ETXTBSY), so hashing the descriptor now hashes exactly the bytes that
 *      were mapped; if they are not the pinned bytes the child is killed
 *      before it executes anything.  Otherwise we detach and it runs.
 *   When tracing is not permitted (vkit itself traced, Yama level 3, a
 *   seccomp filter), step 5 becomes: hash before clone when pinned, hash
 *   again right after exec, and kill the tree if the two differ.
 *
 * The child runs on shared memory with the parent suspended, so it calls
 * nothing but raw system calls (no allocator, no stdio, no sanitizer
 * interceptors) and reports a failure through the shared Child struct.
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

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
static int fd_above_2(int fd) {
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

int open_exe(const char *path, int *out, Refusal *why) {
  if (path[0] != '/') {
    refuse(why, "launch-failed", "exe-not-absolute", 0, "exe '%s' is not an absolute path", path);
    return -1;
  }
  /* O_NONBLOCK only so a FIFO cannot hang the open. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    refuse(why, "launch-failed", "exe-unavailable", errno, "cannot open exe %s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  char magic[2] = {0, 0};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    refuse(why, "launch-failed", "exe-not-regular-file", 0, "exe %s is not a regular file", path);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, 0);
  if (pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!') {
    refuse(why, "launch-failed", "exe-is-script", 0,
           "exe %s is a script (#!): its interpreter would run unpinned; pin the interpreter as exe "
           "and the script as a dependency",
           path);
    close(fd);
    return -1;
  }
  if ((fd = fd_above_2(fd)) < 0) {
    refuse(why, "launch-failed", "spawn-failed", errno, "cannot move a descriptor: %s", strerror(errno));
    return -1;
  }
  *out = fd;
  return 0;
}

/* ---- pins -------------------------------------------------------------- */

static void pin_mismatch(Refusal *why, const char *error, const char *what, const char *path,
                         const char *expected, const char *actual) {
  refuse(why, "pin-mismatch", error, 0, "%s %s: pinned sha256 %s, found %s", what, path, expected, actual);
  snprintf(why->pin_path, sizeof why->pin_path, "%s", path);
  snprintf(why->expected, sizeof why->expected, "%s", expected);
  snprintf(why->actual, sizeof why->actual, "%s", actual);
}

int file_identity(const char *path, char *out, size_t n) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno;
  snprintf(out, n, "%llu:%llu:%lld:%lld%09ld:%lld%09ld", (unsigned long long)st.st_dev,
           (unsigned long long)st.st_ino, (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
           (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
  return 0;
}

/* A file whose identity is unchanged has not been written since it was
 * hashed (ctime moves with every write, chmod and rename onto it): the
 * cheap check before each launch of what was hashed once. */
static int check_identities(const LaunchSpec *s, Refusal *why) {
  for (size_t i = 0; i < s->nidentities; i++) {
    const char *path = s->identity_paths[i];
    char now[128];
    int err = path[0] == '/' ? file_identity(path, now, sizeof now) : EINVAL;
    if (err || strcmp(now, s->identities[i]) != 0) {
      refuse(why, "pin-mismatch", "dependency-identity-changed", err,
             "dependency %s: identity %s when it was hashed, %s now", path, s->identities[i],
             err ? strerror(err) : now);
      snprintf(why->pin_path, sizeof why->pin_path, "%s", path);
      snprintf(why->expected, sizeof why->expected, "%s", s->identities[i]);
      if (!err) snprintf(why->actual, sizeof why->actual, "%s", now);
      return -1;
    }
  }
  return 0;
}

static int check_dependencies(const LaunchSpec *s, Refusal *why) {
  if (check_identities(s, why) != 0) return -1;
  for (size_t i = 0; i < s->nfiles; i++) {
    const char *path = s->file_paths[i];
    char hex[65];
    if (path[0] != '/') {
      refuse(why, "launch-failed", "pin-path-not-absolute", 0, "pinned dependency '%s' is not an absolute path", path);
      return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    int err = fd < 0 ? errno : 0;
    if (!err && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) err = EINVAL;
    if (!err) {
      fcntl(fd, F_SETFL, 0);
      err = hash_fd_hex(fd, hex);
    }
    if (fd >= 0) close(fd);
    if (err) {
      refuse(why, "pin-mismatch", "dependency-unreadable", err,
             "dependency %s: pinned sha256 %s, but it cannot be hashed: %s", path, s->file_sha256[i],
             err == EINVAL ? "not a regular file" : strerror(err));
      snprintf(why->pin_path, sizeof why->pin_path, "%s", path);
      snprintf(why->expected, sizeof why->expected, "%s", s->file_sha256[i]);
      return -1;
    }
    if (strcmp(hex, s->file_sha256[i]) != 0) {
      pin_mismatch(why, "dependency-sha256-mismatch", "dependency", path, s->file_sha256[i], hex);
      return -1;
    }
  }
  return 0;
}

/* ---- Landlock ---------------------------------------------------------- */

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
static uint64_t ll_read_rights(void) { return LL_EXECUTE | LL_READ_FILE | LL_READ_DIR; }

static uint64_t ll_handled(const LaunchSpec *s, int abi) {
  uint64_t write = LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_CHAR | LL_MAKE_DIR | LL_MAKE_REG |
                   LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK | LL_MAKE_SYM;
  if (abi >= 2) write |= LL_REFER;
  if (abi >= 3) write |= LL_TRUNCATE;
  return write | (s->sandbox_read ? ll_read_rights() : 0);
}

/* A ruleset fd (>= 3), or -1 when refused; *applied names what will apply. */
static int make_ruleset(const LaunchSpec *s, char *applied, size_t applied_len, Refusal *why) {
  int abi = landlock_abi();
  if (abi < 1) {
    if (s->sandbox_optional) return -1;
    refuse(why, "launch-failed", "sandbox-unavailable", 0, "a sandbox was requested but this kernel offers no Landlock");
    return -2;
  }
  uint64_t read = ll_read_rights(), handled = ll_handled(s, abi);
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
   * them once that root is in place (child_add_rules). */
  if (!s->isolate && (add_rules(fd, s->write_paths, s->nwrite, handled, why) != 0 ||
                      add_rules(fd, s->read_paths, s->nread, handled & read, why) != 0)) {
    close(fd);
    return -2;
  }
  snprintf(applied, applied_len, "landlock-abi-%d", abi);
  return fd;
}

/* ---- the child --------------------------------------------------------- */

enum { STAGE_OK, STAGE_SETSID, STAGE_DUP, STAGE_ISOLATE, STAGE_CWD, STAGE_RLIMIT, STAGE_SANDBOX, STAGE_SANDBOX_RULE,
       STAGE_EXE_INSIDE, STAGE_FILTER, STAGE_EXEC };

typedef struct Child {
  const LaunchSpec *s;
  IsoPlan *iso;
  int exe_fd, in_fd, out_fd, err_fd, procs_fd, ruleset_fd;
  const char *failed_path;
  int max_fd;
  pid_t parent;
  int try_hold;
  uint64_t ll_handled;             /* the rights make_ruleset handled */
  volatile int reached, stage, err, held, joined;
} Child;

static const int rl_resource[RL_COUNT] = {RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NOFILE};

#define RAW(...) syscall(__VA_ARGS__)

__attribute__((no_sanitize("address", "undefined"))) static void child_fail(Child *c, int stage) {
  c->err = errno;
  c->stage = stage;
  RAW(SYS_exit_group, 127);
}

/* add_rules for an isolated child, on paths of its own root: raw calls. */
__attribute__((no_sanitize("address", "undefined"))) static int child_add_rules(Child *c, const char *const *paths,
                                                                                 size_t n, uint64_t rights) {
  const uint64_t file_rights = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    c->failed_path = paths[i];
    int fd = (int)RAW(SYS_openat, AT_FDCWD, paths[i], O_PATH | O_CLOEXEC);
    if (fd < 0) return -1;
    struct ll_path_beneath_attr rule = {rights, fd};
    long rc = RAW(SYS_fstat, fd, &st);
    if (rc == 0 && !S_ISDIR(st.st_mode)) rule.allowed_access &= file_rights;
    if (rc == 0) rc = RAW(SYS_landlock_add_rule, c->ruleset_fd, LL_RULE_PATH_BENEATH, &rule, 0);
    int err = errno;
    RAW(SYS_close, fd);
    if (rc != 0) {
      errno = err;
      return -1;
    }
  }
  c->failed_path = NULL;
  return 0;
}

__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg) {
  Child *c = arg;
  const LaunchSpec *s = c->s;
  c->reached = 1;
  /* SIG_DFL is 0, so an all-zero kernel sigaction is "default" on every
   * architecture's layout.  Signals stay blocked until just before exec. */
  unsigned long zero[4] = {0, 0, 0, 0};
  for (int sig = 1; sig < 65; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) RAW(SYS_rt_sigaction, sig, zero, NULL, 8);
  if (RAW(SYS_setsid) < 0) child_fail(c, STAGE_SETSID);
  RAW(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* In a PID namespace of its own, the child's parent is outside it: 0. */
  if (RAW(SYS_getppid) != (c->iso ? 0 : c->parent)) RAW(SYS_exit_group, 127);
  if (c->procs_fd >= 0) c->joined = RAW(SYS_write, c->procs_fd, "0", 1) == 1;
  if (RAW(SYS_dup3, c->in_fd, 0, 0) < 0 || RAW(SYS_dup3, c->out_fd, 1, 0) < 0 || RAW(SYS_dup3, c->err_fd, 2, 0) < 0)
    child_fail(c, STAGE_DUP);
  if (c->iso && isolate_enter(c->iso) != 0) child_fail(c, STAGE_ISOLATE);
  if (RAW(SYS_chdir, s->cwd) != 0) child_fail(c, STAGE_CWD);
  for (int i = 0; i < RL_COUNT; i++) {
    if (!s->has_rlimit[i]) continue;
    /* CPU: SIGXCPU at the limit (visible as such), SIGKILL a second later. */
    struct rlimit lim = {s->rlimit[i], s->rlimit[i] + (i == RL_CPU)};
    if (RAW(SYS_prlimit64, 0, rl_resource[i], &lim, NULL) != 0) child_fail(c, STAGE_RLIMIT);
  }
  if (c->ruleset_fd >= 0 && c->iso) {
    if (child_add_rules(c, s->write_paths, s->nwrite, c->ll_handled) != 0 ||
        child_add_rules(c, s->read_paths, s->nread, c->ll_handled & ll_read_rights()) != 0)
      child_fail(c, STAGE_SANDBOX_RULE);
  }
  /* No exec gains privileges: a set-uid file, file capabilities. */
  if ((c->ruleset_fd >= 0 || c->iso) && RAW(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    child_fail(c, STAGE_SANDBOX);
  if (c->iso && isolate_filter() != 0) child_fail(c, STAGE_FILTER);
  if (c->ruleset_fd >= 0 && RAW(SYS_landlock_restrict_self, c->ruleset_fd, 0) != 0) child_fail(c, STAGE_SANDBOX);
  /* Everything above 2 is closed by exec, including exe_fd after the kernel
   * has opened the image from it. */
  if (RAW(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
    for (int fd = 3; fd <= c->max_fd; fd++) RAW(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
  if (c->try_hold) c->held = RAW(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0) == 0;
  RAW(SYS_rt_sigprocmask, SIG_SETMASK, zero, NULL, 8);
  int exe_fd = c->exe_fd;
  if (c->iso && c->iso->iso->exe) {
    /* The executable by its path in the run's own root (process_isolate.c):
     * the very file vkit opened and hashes, or a copy of it, whose running
     * image run_start hashes through /proc/PID/exe. */
    struct stat st;
    exe_fd = (int)RAW(SYS_openat, AT_FDCWD, c->iso->iso->exe, O_RDONLY | O_CLOEXEC);
    if (exe_fd < 0 || RAW(SYS_fstat, exe_fd, &st) != 0) child_fail(c, STAGE_EXE_INSIDE);
    if (!c->iso->exe_copied &&
        ((unsigned long long)st.st_dev != c->iso->exe_dev || (unsigned long long)st.st_ino != c->iso->exe_ino)) {
      errno = ESTALE;
      child_fail(c, STAGE_EXE_INSIDE);
    }
  }
  RAW(SYS_execveat, exe_fd, "", s->argv, s->envp, AT_EMPTY_PATH);
  child_fail(c, STAGE_EXEC);
  return 127;
}

/* ---- the parent -------------------------------------------------------- */

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* clone3's argument block (linux/sched.h, version 2: with the cgroup). */
struct vk_clone_args {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
      cgroup;
};

#if defined(__x86_64__)
/* clone3 on a new stack, calling fn(arg) in the child, which never returns
 * (child_main ends in exec or exit_group).  glibc has no clone3 wrapper that
 * runs a function, and returning from syscall() on another stack is not
 * possible, hence these few instructions.  `syscall` preserves every
 * register but rax, rcx and r11, so the child still has fn and arg. */
static long clone3_run(struct vk_clone_args *args, int (*fn)(void *), void *arg) {
  register long rax __asm__("rax") = SYS_clone3;
  register void *rdi __asm__("rdi") = args;
  register long rsi __asm__("rsi") = sizeof *args;
  register int (*r12)(void *) __asm__("r12") = fn;
  register void *r13 __asm__("r13") = arg;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xor %%ebp, %%ebp\n\t" /* the child: outermost frame */
      "mov %%r13, %%rdi\n\t"
      "call *%%r12\n\t"
      "mov %%eax, %%edi\n\t"
      "mov $231, %%eax\n\t" /* exit_group */
      "syscall\n\t"
      "hlt\n"
      "1:\n"
      : "+r"(rax)
      : "r"(rdi), "r"(rsi), "r"(r12), "r"(r13)
      : "rcx", "r11", "memory");
  if (rax < 0) {
    errno = (int)-rax;
    return -1;
  }
  return rax;
}
#endif

/* Starts the child suspended-parent style (CLONE_VM | CLONE_VFORK) with a
 * pidfd.  With a cgroup, clone3(CLONE_INTO_CGROUP) creates it inside: no
 * migration afterwards, whose write lock can cost an RCU grace period.
 * Where clone3 is not usable, the child joins by writing cgroup.procs. */
static pid_t start_child(Child *c, void *stack, size_t stack_size, CgSlot *cg, int *pidfd) {
#if defined(__x86_64__)
  static int clone3_usable = 1; /* a fact about the kernel, learnt once */
  if (clone3_usable) {
    struct vk_clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | (cg ? CLONE_INTO_CGROUP : 0) | (c->iso ? c->iso->flags : 0);
    args.pidfd = (uintptr_t)pidfd;
    args.exit_signal = SIGCHLD;
    args.stack = (uintptr_t)stack;
    args.stack_size = stack_size;
    args.cgroup = cg ? (uint64_t)cg->dirfd : 0;
    long pid = clone3_run(&args, child_main, c);
    if (pid >= 0 && c->reached) {
      c->joined = cg != NULL;
      return (pid_t)pid;
    }
    if (pid >= 0) {
      /* Killed by the kernel before it ran (the kill_seq bug described in
       * process_tree.c, for a cgroup killed outside our knowledge): reap
       * it and start again joining the cgroup by migration. */
      siginfo_t si;
      syscall(SYS_waitid, P_PIDFD, *pidfd, &si, WEXITED, NULL);
      close(*pidfd);
      *pidfd = -1;
      cg->killed = 1; /* so it is not handed out again */
    } else if (errno == ENOSYS || errno == E2BIG) {
      clone3_usable = 0;
    } else if (!cg) {
      return -1;
    } /* else the cgroup refused the child: join by migration instead */
  }
#endif
  c->procs_fd = cg ? cg->procs_fd : -1;
  return clone(child_main, (char *)stack + stack_size,
               CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD | (c->iso ? (int)c->iso->flags : 0), c, pidfd);
}

static int make_pipe(int p[2], int parent_end) {
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  if ((p[0] = fd_above_2(p[0])) < 0 || (p[1] = fd_above_2(p[1])) < 0) return -1;
  return fcntl(p[parent_end], F_SETFL, O_NONBLOCK);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void refuse_stage(Refusal *why, const LaunchSpec *s, const Child *c, int stage, int err) {
  switch (stage) {
    case STAGE_ISOLATE:
      refuse(why, "launch-failed", "isolation-failed", err, "cannot isolate the child (%s %s): %s",
             c->iso->failed_step ? c->iso->failed_step : "?", c->iso->failed_path ? c->iso->failed_path : "",
             strerror(err));
      break;
    case STAGE_FILTER:
      refuse(why, "launch-failed", "isolation-failed", err, "cannot install the system-call filter: %s", strerror(err));
      break;
    case STAGE_EXE_INSIDE:
      refuse(why, "launch-failed", "isolation-failed", err,
             "the executable's path in the run's root, %s, is not the file vkit opened as %s: %s", s->isolate->exe,
             s->exe_path, err == ESTALE ? "another file" : strerror(err));
      break;
    case STAGE_SANDBOX_RULE:
      refuse(why, "launch-failed", "sandbox-path-unavailable", err, "sandbox path %s: %s",
             c->failed_path ? c->failed_path : "?", strerror(err));
      break;
    case STAGE_CWD:
      refuse(why, "launch-failed", "cwd-unavailable", err, "cannot change to directory %s: %s", s->cwd, strerror(err));
      break;
    case STAGE_RLIMIT:
      refuse(why, "launch-failed", "rlimit-failed", err, "cannot set a resource limit: %s", strerror(err));
      break;
    case STAGE_SANDBOX:
      refuse(why, "launch-failed", "sandbox-failed", err, "cannot apply the Landlock sandbox: %s", strerror(err));
      break;
    case STAGE_EXEC:
      if (err == EACCES || err == ENOEXEC || err == EPERM)
        refuse(why, "launch-failed", "exe-not-executable", err, "exe %s cannot be executed: %s", s->exe_path,
               strerror(err));
      else
        refuse(why, "launch-failed", "exec-failed", err, "exec of %s failed: %s", s->exe_path, strerror(err));
      break;
    default:
      refuse(why, "launch-failed", "spawn-failed", err, "cannot set up the child: %s", strerror(err));
  }
}

/* Whether PTRACE_TRACEME works here: learnt from the first child. */
static int hold_works = -1;

void hold_learn(int held) {
  if (hold_works < 0) hold_works = held;
}

int run_start(const Start *st, Started *o, Refusal *why) {
  const LaunchSpec *s = st->s;
  const size_t stack_size = 64 * 1024;
  int rc = RS_DISCARD, e;
  memset(o, 0, sizeof *o);
  o->pidfd = -1;
  void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    refuse(why, "launch-failed", "spawn-failed", errno, "cannot map the child's stack: %s", strerror(errno));
    return RS_NONE;
  }
  struct rlimit nofile;
  getrlimit(RLIMIT_NOFILE, &nofile);
  Child c = {.s = s, .iso = st->iso, .exe_fd = st->exe_fd, .in_fd = st->in_fd, .out_fd = st->out_fd,
             .err_fd = st->err_fd, .procs_fd = -1, .ruleset_fd = st->ruleset_fd,
             .max_fd = nofile.rlim_cur > 65536 ? 65536 : (int)nofile.rlim_cur,
             .parent = getpid(), .try_hold = hold_works != 0, .ll_handled = ll_handled(s, landlock_abi())};
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  pid_t pid = start_child(&c, stack, stack_size, st->cg, &o->pidfd);
  e = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  munmap(stack, stack_size); /* the child has exec'd or exited: it is free */
  if (pid < 0) {
    refuse(why, "launch-failed", "spawn-failed", e, "clone failed: %s", strerror(e));
    return RS_NONE;
  }
  o->pid = pid;
  o->joined = st->cg && c.joined;
  o->held = c.held;
  if (st->cgroup_required && !o->joined && c.stage == STAGE_OK) {
    refuse(why, "launch-failed", "cgroup-unavailable", 0, "the child could not join its cgroup");
    return RS_DISCARD;
  }
  if (c.stage != STAGE_OK) {
    refuse_stage(why, s, &c, c.stage, c.err);
    return RS_DISCARD;
  }
  hold_learn(c.held);
  if (c.held) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    long w = syscall(SYS_waitid, P_PIDFD, o->pidfd, &si, WEXITED | WSTOPPED, NULL);
    if (w != 0 || si.si_code != CLD_TRAPPED) {
      /* Killed before its first instruction (not by us): it ran nothing. */
      refuse(why, "launch-failed", "spawn-failed", w != 0 ? errno : 0,
             "the child of %s ended before its first instruction", s->exe_path);
      o->waited = w == 0;
      return RS_DISCARD;
    }
  }
  /* Held at its first instruction, or just exec'd: either way the image can
   * no longer be written, so this is the hash of the bytes that run (for an
   * executable copied into an isolated run's root, the copy's: the image
   * the child maps, opened through /proc/PID/exe). */
  int image = st->iso && st->iso->exe_copied ? isolate_open_image(pid) : st->exe_fd;
  if (image < 0) {
    e = errno;
    refuse(why, "launch-failed", "exe-unavailable", e, "cannot open the image of %s: %s", s->exe_path, strerror(e));
  } else if ((e = hash_fd_hex(image, o->exe_sha256)) != 0) {
    refuse(why, "launch-failed", "exe-unavailable", e, "cannot hash exe %s: %s", s->exe_path, strerror(e));
  } else if (s->exe_sha256 && strcmp(s->exe_sha256, o->exe_sha256) != 0) {
    /* Unheld and checked before the launch too: it changed in between. */
    pin_mismatch(why, st->prehashed ? "exe-changed-during-launch" : "exe-sha256-mismatch", "exe", s->exe_path,
                 s->exe_sha256, o->exe_sha256);
  } else if (c.held && ptrace(PTRACE_DETACH, pid, NULL, NULL) != 0) {
    refuse(why, "launch-failed", "spawn-failed", errno, "cannot release the held child: %s", strerror(errno));
  } else {
    rc = RS_OK;
  }
  if (image >= 0 && image != st->exe_fd) close(image);
  return rc;
}

/* The launch in this process: the child is ours, in its cgroup or not. */
static int direct_launch(const Start *st, Run *r, Refusal *why) {
  Started o;
  int rc = run_start(st, &o, why);
  if (rc == RS_NONE) return -1;
  r->pid = o.pid;
  r->pidfd = o.pidfd;
  if (r->cg && !o.joined) {
    /* The child could not join: it is contained by its process tree only. */
    cg_release(r->cg);
    r->cg = NULL;
  }
  tree_track(r);
  if (rc == RS_DISCARD) {
    r->waited = o.waited;
    if (!o.waited) syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    run_collect(r);
    return -1;
  }
  memcpy(r->exe_sha256, o.exe_sha256, sizeof r->exe_sha256);
  return 0;
}

int launch(const LaunchSpec *s, Run *r, Refusal *why) {
  int exe_fd = s->exe_fd, ruleset = -1, in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  int own_exe = 0, rc = -1, e;
  char pre[65] = "";
  Refusal cg_why;
  IsoPlan iso;
  int have_iso = 0;

  snprintf(r->sandbox, sizeof r->sandbox, "none");
  if ((e = tree_init()) != 0) {
    refuse(why, "launch-failed", "spawn-failed", e, "cannot become the subreaper of our children: %s", strerror(e));
    return -1;
  }
  tree_reap_orphans(); /* zombies left since the last run */
  if (check_dependencies(s, why) != 0) return -1;
  if (exe_fd < 0) {
    if (open_exe(s->exe_path, &exe_fd, why) != 0) return -1;
    own_exe = 1;
  }
  /* Without the hold, a pinned exe is checked before the launch too, so an
   * ordinary mismatch never runs. */
  if (s->exe_sha256 && hold_works == 0) {
    if ((e = hash_fd_hex(exe_fd, pre)) != 0) {
      refuse(why, "launch-failed", "exe-unavailable", e, "cannot hash exe %s: %s", s->exe_path, strerror(e));
      goto out;
    }
    if (strcmp(pre, s->exe_sha256) != 0) {
      pin_mismatch(why, "exe-sha256-mismatch", "exe", s->exe_path, s->exe_sha256, pre);
      goto out;
    }
  }
  if (s->isolate) {
    char reason[256];
    if (!isolate_available(reason, sizeof reason)) {
      refuse(why, "launch-failed", "isolation-unavailable", 0, "isolation was requested but %s", reason);
      goto out;
    }
    if (isolate_prepare(s, &iso, why) != 0) goto out;
    have_iso = 1;
    struct stat est;
    if (fstat(exe_fd, &est) != 0) {
      refuse(why, "launch-failed", "exe-unavailable", errno, "cannot stat exe %s: %s", s->exe_path, strerror(errno));
      goto out;
    }
    iso.exe_dev = (unsigned long long)est.st_dev;
    iso.exe_ino = (unsigned long long)est.st_ino;
  }
  if (s->sandbox && (ruleset = make_ruleset(s, r->sandbox, sizeof r->sandbox, why)) == -2) goto out;
  if (s->cgroup_mode != CG_OFF && !(r->cg = cg_acquire(&cg_why)) && s->cgroup_mode == CG_REQUIRED) {
    *why = cg_why;
    goto out;
  }
  if (make_pipe(in, 1) != 0 || make_pipe(out, 0) != 0 || make_pipe(err, 0) != 0) {
    refuse(why, "launch-failed", "spawn-failed", errno, "cannot create pipes: %s", strerror(errno));
    goto out;
  }
  Start st = {.s = s, .iso = have_iso ? &iso : NULL, .exe_fd = exe_fd, .in_fd = in[0], .out_fd = out[1], .err_fd = err[1], .ruleset_fd = ruleset,
              .cg = r->cg, .cgroup_required = s->cgroup_mode == CG_REQUIRED, .prehashed = pre[0] != '\0',
              .kill_wait = r->kill_wait};
  r->start = proc_now_ms();
  /* Without a cgroup, the root gets a keeper of its own for a parent. */
  if ((r->cg ? direct_launch(&st, r, why) : keeper_launch(&st, r, why)) != 0) goto out;
  r->in_fd = in[1], in[1] = -1;
  r->out_fd = out[0], out[0] = -1;
  r->err_fd = err[0], err[0] = -1;
  if (have_iso) {
    r->isolated = 1;
    r->iso_user_ns = iso.user_ns;
    r->iso_uid = iso.set_ids ? (int)s->isolate->uid : (int)geteuid();
    r->iso_gid = iso.set_ids ? (int)s->isolate->gid : (int)getegid();
  }
  rc = 0;
out:
  if (have_iso) isolate_release(&iso);
  if (rc != 0 && r->cg) {
    cg_release(r->cg);
    r->cg = NULL;
  }
  if (own_exe) close_fd(&exe_fd);
  close_fd(&ruleset);
  for (int i = 0; i < 2; i++) {
    close_fd(&in[i]);
    close_fd(&out[i]);
    close_fd(&err[i]);
  }
  return rc;
}
