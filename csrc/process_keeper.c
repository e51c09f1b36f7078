/*
 * process_keeper.c: the keeper, a subreaper of its own for each run that has
 * no cgroup.
 *
 * Without a cgroup the kernel cannot say which run a process belongs to
 * once it has left its session and lost its parent.  So such a run gets a
 * keeper: a forked copy of vkit that makes itself a child subreaper and
 * launches the root (process_start.c's run_start: the clone, the hold at
 * the first instruction, the hash, the release).  The root's parent is the keeper,
 * and every orphan of the run is re-parented to the keeper, and to no
 * other process: attribution is exact, however the runs overlap.
 *
 * The keeper reaps the run's orphans as they die, for as long as the run
 * lasts (a fork storm piles up no zombies).  When the root exits, or vkit
 * says "end" or goes away, it kills the root's process group and chases
 * every process left in its tree (process_tree.c: chase), and reports the
 * root's status and rusage, how many it killed and how many were still
 * alive when the run's kill_wait had passed.  It keeps the root unreaped
 * until vkit has collected the run (so the root's pid and group id stay
 * pinned for vkit's signals), then goes on chasing until its tree is empty,
 * after the run's result has been handed out too, and exits; vkit reaps it.
 * If vkit dies, the keeper ends the run the same way: the tree does not
 * outlive vkit.
 *
 * What it cannot do: a process with the privileges to signal the keeper
 * can kill it (then its tree is re-parented to vkit, which kills it at the
 * run's end), and a chain of processes that fork faster than the chase
 * kills them is caught only when the chase wins the race.  Hence a run
 * without a cgroup reports containment "best-effort".
 *
 * The keeper layer sits above the tree (process_tree.c) and below the launch
 * (process_launch.c): the tree asks it whether a child is a keeper, hands
 * it a dead keeper to reap, the end of a keeper run and os.exit only
 * through the KeeperHooks this file gives it (process.h).
 *
 * vkit and the keeper talk over a socketpair (no SIGPIPE either way):
 * keeper -> vkit: one KM_LAUNCHED or KM_REFUSED, then one KM_ENDED;
 * vkit -> keeper: 'E' (end the run now); closing it releases the root.
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>


/* How much longer than the run's kill_wait vkit waits for a keeper's
 * report before it kills the keeper and takes its tree over. */
enum { KEEPER_GRACE_MS = 2000 };

typedef struct Keeper {
  pid_t pid;
  int pidfd;  /* the keeper is our child */
  int sock;   /* our end of the socketpair */
  Run *run;   /* the run it keeps, until that run is collected */
  struct Keeper *next;
} Keeper;

static Keeper *keepers;

enum { KM_LAUNCHED = 1, KM_REFUSED, KM_ENDED };

typedef struct KeeperMsg {
  int type;
  pid_t pid;
  int held;
  char exe_sha256[65];
  Refusal why;
  int waited, code, sig;
  struct rusage ru;
  int killed, surviving;
} KeeperMsg;

static int send_msg(int sock, const KeeperMsg *m) {
  const char *p = (const char *)m;
  size_t left = sizeof *m;
  while (left) {
    ssize_t n = send(sock, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n, left -= (size_t)n;
  }
  return 0;
}

/* Reads one whole message; until < 0 waits as long as it takes.  1, or 0
 * on end of file (the keeper is gone) or when `until` passes. */
static int recv_msg(int sock, KeeperMsg *m, ms_t until) {
  char *p = (char *)m;
  size_t got = 0;
  while (got < sizeof *m) {
    int timeout = -1;
    if (until >= 0) {
      ms_t left = until - proc_now_ms();
      if (left <= 0) return 0;
      timeout = (int)left;
    }
    struct pollfd pf = {sock, POLLIN, 0};
    int ready = poll(&pf, 1, timeout);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return 0;
    ssize_t n = recv(sock, p + got, sizeof *m - got, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return 0;
    got += (size_t)n;
  }
  return 1;
}

/* ---- in the keeper ------------------------------------------------------ */

typedef struct KeepCtx {
  pid_t root;
  int zombies_only;
} KeepCtx;

/* Everything in a keeper's tree is its run's; the root is reaped last. */
static int keep_claim(void *ctx, pid_t pid, const ProcStat *st) {
  const KeepCtx *k = ctx;
  if (pid == k->root) return CLAIM_SKIP;
  if (k->zombies_only && st->state != 'Z') return CLAIM_SKIP;
  return CLAIM_THIS;
}

static void reap_dead_orphans(pid_t root) {
  KeepCtx k = {root, 1};
  Chase c = {keep_claim, &k, {0}, {0}, 0, 0, root, 0};
  chase(&c, 0);
  free(c.killed.v);
  free(c.strays.v);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Closes every descriptor but the n in keep (a keeper must hold no pipe of
 * another run: that run's reader would never see end of file). */
static void close_all_but(int *keep, int n) {
  qsort(keep, (size_t)n, sizeof *keep, cmp_int);
  int from = 0;
  for (int i = 0; i < n; i++) {
    if (keep[i] < from) continue;
    if (keep[i] > from && syscall(SYS_close_range, from, keep[i] - 1, 0) != 0)
      for (int fd = from; fd < keep[i]; fd++) close(fd);
    from = keep[i] + 1;
  }
  if (syscall(SYS_close_range, from, ~0U, 0) != 0)
    for (int fd = from; fd < 65536; fd++) close(fd);
}

static void status_of(const siginfo_t *si, KeeperMsg *m) {
  m->waited = 1;
  if (si->si_code == CLD_EXITED) m->code = si->si_status;
  else m->sig = si->si_status;
}

/* The keeper's life after a launch: reap orphans while the root runs; end
 * the tree when it exits or when told to; report; chase until the tree is
 * empty and vkit has let go; reap the root; exit. */
static void keeper_watch(int sock, pid_t root, int root_fd, ms_t kill_wait) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  KeepCtx k = {root, 0};
  Chase c = {keep_claim, &k, {0}, {0}, 0, 0, root, 1};
  KeeperMsg m;
  memset(&m, 0, sizeof m);
  m.type = KM_ENDED;
  int ending = 0, reported = 0, released = 0, empty = 0;
  ms_t deadline = 0;
  for (;;) {
    if (!m.waited) {
      siginfo_t si;
      memset(&si, 0, sizeof si);
      syscall(SYS_waitid, P_PIDFD, root_fd, &si, WEXITED | WNOHANG | WNOWAIT, &m.ru);
      if (si.si_pid) status_of(&si, &m);
    }
    if (m.waited && !ending) ending = 1, deadline = proc_now_ms() + kill_wait;
    if (!ending) {
      reap_dead_orphans(root);
    } else {
      if (!m.waited) kill(-root, SIGKILL); /* the unreaped root pins its group id */
      /* until the report: up to the deadline; after it, in slices */
      c.surviving = 0;
      empty = chase(&c, reported ? proc_now_ms() + 100 : deadline) && m.waited;
      if (!reported && (empty || proc_now_ms() >= deadline)) {
        m.killed = (int)c.killed.n;
        m.surviving = empty ? 0 : c.surviving;
        send_msg(sock, &m);
        reported = 1;
      }
      if (empty && released) {
        siginfo_t si;
        waitid(P_PID, root, &si, WEXITED); /* vkit is done with it */
        _exit(0);
      }
    }
    struct pollfd p[2] = {{sfd, POLLIN, 0}, {sock, POLLIN, 0}};
    int timeout = !ending || (empty && !released) ? -1 : 10;
    if (sfd < 0 && timeout < 0) timeout = 10;
    if (poll(p, released ? 1 : 2, timeout) <= 0) continue;
    struct signalfd_siginfo ss;
    while (sfd >= 0 && read(sfd, &ss, sizeof ss) > 0) {}
    if (!released && p[1].revents) {
      char b;
      ssize_t got = recv(sock, &b, 1, MSG_DONTWAIT);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) released = 1;
      if (!ending) {
        /* "end", or vkit is gone: the run ends now */
        kill(-root, SIGKILL);
        syscall(SYS_pidfd_send_signal, root_fd, SIGKILL, NULL, 0);
        ending = 1;
        deadline = proc_now_ms() + kill_wait;
      }
    }
  }
}

/* The keeper process: never returns. */
static void keeper_main(const Start *st, int sock) {
  int keep[] = {st->exe_fd, st->in_fd, st->out_fd, st->err_fd, st->ruleset_fd, sock};
  int n = (int)(sizeof keep / sizeof keep[0]);
  if (st->ruleset_fd < 0) keep[4] = sock;
  close_all_but(keep, n);
  signal(SIGCHLD, SIG_DFL); /* never ignored: the run's orphans must stay waitable */
  setsid();                 /* not in vkit's session: not foreign to it */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  Started o;
  Refusal why;
  KeeperMsg m;
  memset(&why, 0, sizeof why);
  memset(&m, 0, sizeof m);
  int rc = run_start(st, &o, &why);
  close(st->in_fd);
  close(st->out_fd);
  close(st->err_fd);
  close(st->exe_fd);
  if (st->ruleset_fd >= 0) close(st->ruleset_fd);
  m.held = o.held;
  if (rc != RS_OK) {
    if (rc == RS_DISCARD) {
      /* it may have run (without the hold): its whole tree goes */
      KeepCtx k = {o.pid, 0};
      Chase c = {keep_claim, &k, {0}, {0}, 0, 0, o.pid, 1};
      if (!o.waited) {
        kill(-o.pid, SIGKILL);
        syscall(SYS_pidfd_send_signal, o.pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        waitid(P_PID, o.pid, &si, WEXITED);
      }
      chase(&c, proc_now_ms() + st->kill_wait);
    }
    m.type = KM_REFUSED;
    m.why = why;
    send_msg(sock, &m);
    _exit(0);
  }
  m.type = KM_LAUNCHED;
  m.pid = o.pid;
  memcpy(m.exe_sha256, o.exe_sha256, sizeof m.exe_sha256);
  send_msg(sock, &m);
  keeper_watch(sock, o.pid, o.pidfd, st->kill_wait);
}

/* ---- in vkit ------------------------------------------------------------ */

static void keeper_unlink(Keeper *kp) {
  for (Keeper **p = &keepers; *p; p = &(*p)->next)
    if (*p == kp) {
      *p = kp->next;
      break;
    }
  if (kp->pidfd >= 0) close(kp->pidfd);
  if (kp->sock >= 0) close(kp->sock);
  free(kp);
}

static int keeper_is(pid_t pid) {
  for (Keeper *kp = keepers; kp; kp = kp->next)
    if (kp->pid == pid) return 1;
  return 0;
}

static void keeper_reaped(pid_t pid) {
  for (Keeper *kp = keepers; kp; kp = kp->next)
    if (kp->pid == pid) {
      if (kp->run) return; /* its run's collection deals with it */
      siginfo_t si;
      si.si_pid = 0;
      if (waitid(P_PID, pid, &si, WEXITED | WNOHANG) == 0 && si.si_pid == pid) keeper_unlink(kp);
      return;
    }
}

static void keeper_collect(Run *r, ms_t until);
static void keeper_exit_all(ms_t until);

/* What the tree, below us, asks of the keepers. */
static const KeeperHooks hooks = {keeper_is, keeper_reaped, keeper_collect, keeper_exit_all};

int keeper_launch(const Start *st, Run *r, Refusal *why) {
  int sv[2];
  tree_set_keeper_hooks(&hooks); /* before the first keeper exists */
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    refuse(why, "launch-failed", "spawn-failed", errno, "cannot create the keeper's socket: %s", strerror(errno));
    return -1;
  }
  Keeper *kp = calloc(1, sizeof *kp);
  if (!kp) {
    close(sv[0]);
    close(sv[1]);
    refuse(why, "launch-failed", "spawn-failed", ENOMEM, "out of memory");
    return -1;
  }
  /* Every signal blocked across the fork: no handler of ours runs in the
   * keeper, which keeps them blocked (SIGCHLD it reads from a signalfd). */
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  pid_t pid = fork();
  if (pid == 0) keeper_main(st, sv[1]);
  int e = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  close(sv[1]);
  if (pid < 0) {
    close(sv[0]);
    free(kp);
    refuse(why, "launch-failed", "spawn-failed", e, "cannot start the keeper: %s", strerror(e));
    return -1;
  }
  kp->pid = pid;
  kp->pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* our child: its pid is ours */
  kp->sock = sv[0];
  kp->next = keepers;
  keepers = kp;
  KeeperMsg m;
  if (!recv_msg(kp->sock, &m, -1) || (m.type != KM_LAUNCHED && m.type != KM_REFUSED)) {
    refuse(why, "launch-failed", "spawn-failed", 0, "the keeper of %s ended before it reported the launch",
           st->s->exe_path);
    syscall(SYS_pidfd_send_signal, kp->pidfd, SIGKILL, NULL, 0);
    return -1; /* reaped like any finished keeper */
  }
  hold_learn(m.held);
  if (m.type == KM_REFUSED) {
    *why = m.why;
    return -1; /* it exits by itself */
  }
  r->pid = m.pid;
  /* The keeper keeps the root unreaped until we release it: safe. */
  r->pidfd = (int)syscall(SYS_pidfd_open, m.pid, 0);
  if (r->pidfd < 0) {
    refuse(why, "launch-failed", "spawn-failed", errno, "cannot pin the root of %s: %s", st->s->exe_path,
           strerror(errno));
    close(kp->sock); /* the keeper ends the run and exits */
    kp->sock = -1;
    return -1;
  }
  memcpy(r->exe_sha256, m.exe_sha256, sizeof r->exe_sha256);
  kp->run = r;
  r->keeper = kp;
  tree_track(r);
  return 0;
}

/* The keeper did not report: kill it, and its tree (the root and the
 * orphans) is then ours. */
static void take_over(Run *r, Keeper *kp, ms_t until) {
  syscall(SYS_pidfd_send_signal, kp->pidfd, SIGKILL, NULL, 0);
  struct pollfd p = {kp->pidfd, POLLIN, 0};
  poll(&p, 1, 1000);
  siginfo_t si;
  si.si_pid = 0;
  if (waitid(P_PID, kp->pid, &si, WEXITED | WNOHANG) == 0 && si.si_pid == kp->pid) {
    close(kp->pidfd);
    kp->pidfd = -1;
  }
  if (until < proc_now_ms() + 1000) until = proc_now_ms() + 1000;
  if (!r->waited) kill(-r->pid, SIGKILL);
  p.fd = r->pidfd;
  poll(&p, 1, 1000);
  tree_kill_descendants(r, until); /* strays are counted as this run's: they were the keeper's */
  if (!r->waited && !tree_reap_root(r)) r->descendants_surviving++;
}

static void keeper_collect(Run *r, ms_t until) {
  Keeper *kp = r->keeper;
  KeeperMsg m;
  if (!r->waited) kill(-r->pid, SIGKILL);
  send(kp->sock, "E", 1, MSG_NOSIGNAL);
  if (recv_msg(kp->sock, &m, until + KEEPER_GRACE_MS) && m.type == KM_ENDED) {
    r->waited = m.waited;
    r->code = m.code;
    r->sig = m.sig;
    r->ru = m.ru;
    r->descendants_killed += m.killed;
    r->descendants_surviving += m.surviving + !m.waited; /* + the root, if it would not die */
  } else {
    take_over(r, kp, until);
  }
  kp->run = NULL;
  r->keeper = NULL;
  if (kp->pidfd < 0) {
    keeper_unlink(kp);
    return;
  }
  close(kp->sock); /* releases the root */
  kp->sock = -1;
  if (r->descendants_surviving) return; /* it goes on chasing; reaped when it is done */
  /* Its tree is empty: it reaps the root and exits at once. */
  struct pollfd p = {kp->pidfd, POLLIN, 0};
  ms_t left = until + KEEPER_GRACE_MS - proc_now_ms();
  if (poll(&p, 1, left > 0 ? (int)left : 0) > 0) keeper_reaped(kp->pid);
}

static void keeper_exit_all(ms_t until) {
  for (Keeper *kp = keepers; kp; kp = kp->next)
    if (kp->run) send(kp->sock, "E", 1, MSG_NOSIGNAL);
  for (Keeper *kp = keepers; kp; kp = kp->next) {
    KeeperMsg m;
    if (kp->run) recv_msg(kp->sock, &m, until);
  }
}
