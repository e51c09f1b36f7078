/*
 * process_start.c: from a prepared Start (process_launch.c) to a child that
 * runs the pinned bytes.  It runs in vkit, or in a keeper (process_keeper.c)
 * for a run without a cgroup.
 *
 *   1. clone(CLONE_VM | CLONE_VFORK | CLONE_PIDFD) starts the child on a
 *      stack of its own, with every signal blocked (so no handler of ours can
 *      run in it), as posix_spawn does; the child resets every disposition,
 *      becomes a session and process-group leader, joins the cgroup, gets
 *      fds 0-2 and marks every other descriptor close-on-exec, changes
 *      directory, applies rlimits and the sandbox, asks to be traced by us,
 *      unblocks signals and calls execveat(exe_fd, "", AT_EMPTY_PATH);
 *   2. the kernel stops the traced child at its first instruction (SIGTRAP
 *      after exec).  The executable cannot be written while it runs
 *      (ETXTBSY), so hashing the descriptor now hashes exactly the bytes that
 *      were mapped; if they are not the pinned bytes the child is refused
 *      (its starter kills it) before it executes anything.  Otherwise we
 *      detach and it runs.
 *   When tracing is not permitted (vkit itself traced, Yama level 3, a
 *   seccomp filter), step 2 becomes: hash again right after exec (the
 *   launch hashed before the clone when pinned), and refuse if the two
 *   differ.
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
  uint64_t ll_handled, ll_read;    /* the rights landlock_ruleset handled; those of reads */
  volatile int reached, stage, err, held, joined;
} Child;

static const int rl_resource[RL_COUNT] = {RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NOFILE};

#define RAW(...) syscall(__VA_ARGS__)

__attribute__((no_sanitize("address", "undefined"))) static void child_fail(Child *c, int stage) {
  c->err = errno;
  c->stage = stage;
  RAW(SYS_exit_group, 127);
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
    if (landlock_child_add_rules(c->ruleset_fd, s->write_paths, s->nwrite, c->ll_handled, &c->failed_path) != 0 ||
        landlock_child_add_rules(c->ruleset_fd, s->read_paths, s->nread, c->ll_handled & c->ll_read, &c->failed_path) != 0)
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

int hold_unavailable(void) { return hold_works == 0; }

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
             .parent = getpid(), .try_hold = hold_works != 0, .ll_handled = landlock_handled(s, landlock_abi()),
             .ll_read = landlock_read_rights()};
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
