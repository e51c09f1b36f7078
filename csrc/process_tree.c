/*
 * process_tree.c: nothing escapes.  Finding, killing and reaping every
 * descendant of a run, whatever it did (double fork, setsid, setpgid).
 *
 * Three mechanisms, strongest first:
 *   - a cgroup v2 per run (under /sys/fs/cgroup or /sys/fs/cgroup/unified,
 *     in a directory vkit-<pid> beside our own cgroup), killed atomically
 *     with cgroup.kill, which also catches processes forking at that moment;
 *   - the run's process group (the child is a session and group leader),
 *     signalled while the root is unreaped so the group id cannot be reused;
 *   - PR_SET_CHILD_SUBREAPER on this process: a descendant whose parent dies
 *     is re-parented to us, not to init, so it stays findable in
 *     /proc/self/task/<tid>/children.
 *
 * Which run a child of ours belongs to: a process in our own session is
 * foreign (io.popen, os.execute: nothing a run can create, because every
 * run starts a new session and no process can join an existing session);
 * another live run's root is left to that run; otherwise it belongs to this
 * run when its session or process group is this run's root, or when it sits
 * in this run's cgroup.  A process that left both (setsid after its parent
 * died) and is outside any cgroup of ours cannot be attributed: it is
 * killed when no other run is live, i.e. at the latest when the last
 * concurrent run ends.  Killing is by pid only for our own unreaped children
 * (their pids cannot be reused), so no unrelated process is ever signalled.
 *
 * State here is process-wide on purpose: the subreaper attribute, the
 * re-parented orphans and the cgroup directory belong to the process, not to
 * one Lua state, and the atexit handler that kills live runs on os.exit()
 * must find them without a Lua state.
 */
#include "process.h"
#include "vkit.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#define CGROUP2_MAGIC 0x63677270

static pid_t my_pid, my_sid;
static Run *live_head;
static void tree_atexit(void);

/* The exit handler kills live runs and removes our cgroups; registered by
 * whichever comes first, the first launch or the first cgroup. */
static void need_atexit(void) {
  static int registered;
  if (!registered) atexit(tree_atexit);
  registered = 1;
}

ms_t proc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (ms_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* snprintf that reports truncation (a truncated path must not be used). */
static int fmt(char *dst, size_t n, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int fmt(char *dst, size_t n, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  int len = vsnprintf(dst, n, format, ap);
  va_end(ap);
  return len < 0 || (size_t)len >= n ? -1 : 0;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ---- small /proc readers ------------------------------------------------ */

static ssize_t read_small(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t got = 0, r;
  while ((size_t)got < n - 1 && (r = read(fd, buf + got, n - 1 - got)) > 0) got += r;
  close(fd);
  buf[got] = '\0';
  return got;
}

/* State letter, process group and session of pid; 0 or -1 when gone. */
static int read_stat(pid_t pid, char *state, pid_t *pgid, pid_t *sid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if (read_small(path, buf, sizeof buf) <= 0) return -1;
  char *p = strrchr(buf, ')'); /* the command name may hold anything */
  int ppid, pg, se;
  if (!p || sscanf(p + 1, " %c %d %d %d", state, &ppid, &pg, &se) != 4) return -1;
  *pgid = pg;
  *sid = se;
  return 0;
}

/* The cgroup v2 path of pid ("0::" line), or "" when unknown. */
static void read_cgroup(pid_t pid, char *out, size_t n) {
  char path[64], buf[4096];
  out[0] = '\0';
  snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
  if (read_small(path, buf, sizeof buf) <= 0) return;
  char *line = strncmp(buf, "0::", 3) == 0 ? buf : strstr(buf, "\n0::");
  if (!line) return;
  line += line == buf ? 3 : 4;
  size_t len = strcspn(line, "\n");
  if (len >= n) return;
  memcpy(out, line, len);
  out[len] = '\0';
}

typedef struct PidSet {
  pid_t *v;
  size_t n, cap;
} PidSet;

static int pidset_has(const PidSet *s, pid_t p) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] == p) return 1;
  return 0;
}

static void pidset_add(PidSet *s, pid_t p) {
  if (pidset_has(s, p)) return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    pid_t *v = realloc(s->v, cap * sizeof *v);
    if (!v) return;
    s->v = v, s->cap = cap;
  }
  s->v[s->n++] = p;
}

/* Every child of this process, from each thread's children list. */
static void list_children(PidSet *out) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return;
  struct dirent *e;
  char path[64], buf[65536];
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%.20s/children", e->d_name);
    if (read_small(path, buf, sizeof buf) <= 0) continue;
    for (char *p = buf; *p;) {
      char *end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      pidset_add(out, (pid_t)v);
      p = end;
    }
  }
  closedir(d);
}

/* ---- cgroups ------------------------------------------------------------ */

static int cg_state;         /* 0 not tried, 1 usable, -1 not usable */
static char cg_reason[512];  /* why not usable */
static int cg_base_fd = -1;
static char cg_base_fs[PATH_MAX], cg_base_path[PATH_MAX];
static CgSlot *cg_free_list, *cg_all;
static unsigned cg_made;

static void cg_init(void) {
  static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
  const char *mount = NULL;
  struct statfs sf;
  char own[PATH_MAX];
  cg_state = -1;
  for (size_t i = 0; i < 2 && !mount; i++)
    if (statfs(mounts[i], &sf) == 0 && sf.f_type == CGROUP2_MAGIC) mount = mounts[i];
  if (!mount) {
    snprintf(cg_reason, sizeof cg_reason, "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified");
    return;
  }
  read_cgroup(getpid(), own, sizeof own);
  if (own[0] != '/') {
    snprintf(cg_reason, sizeof cg_reason, "this process's cgroup v2 path is unknown");
    return;
  }
  if (strcmp(own, "/") == 0) own[0] = '\0';
  if (fmt(cg_base_path, sizeof cg_base_path, "%s/vkit-%d", own, (int)getpid()) != 0 ||
      fmt(cg_base_fs, sizeof cg_base_fs, "%s%s", mount, cg_base_path) != 0) {
    fmt(cg_reason, sizeof cg_reason, "this process's cgroup path is too long");
    return;
  }
  need_atexit();
  if (mkdir(cg_base_fs, 0755) != 0 && errno != EEXIST) {
    fmt(cg_reason, sizeof cg_reason, "cannot create %s: %s", cg_base_fs, strerror(errno));
    return;
  }
  cg_base_fd = open(cg_base_fs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cg_base_fd < 0 || faccessat(cg_base_fd, "cgroup.kill", W_OK, 0) != 0) {
    fmt(cg_reason, sizeof cg_reason, "%s has no writable cgroup.kill (Linux >= 5.14 needed)", cg_base_fs);
    if (cg_base_fd >= 0) close(cg_base_fd);
    cg_base_fd = -1;
    rmdir(cg_base_fs);
    return;
  }
  cg_state = 1;
}

static CgSlot *cg_make_slot(Refusal *why) {
  CgSlot *s = calloc(1, sizeof *s);
  char name[32];
  if (!s) return NULL;
  snprintf(name, sizeof name, "run-%u", cg_made++);
  s->dirfd = s->procs_fd = s->events_fd = s->kill_fd = -1;
  if (fmt(s->path, sizeof s->path, "%s/%s", cg_base_path, name) != 0 ||
      fmt(s->fspath, sizeof s->fspath, "%s/%s", cg_base_fs, name) != 0) {
    refuse(why, "launch-failed", "cgroup-unavailable", 0, "the cgroup path is too long");
    free(s);
    return NULL;
  }
  if ((mkdirat(cg_base_fd, name, 0755) != 0 && errno != EEXIST) ||
      (s->dirfd = openat(cg_base_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
      (s->procs_fd = openat(s->dirfd, "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0 ||
      (s->events_fd = openat(s->dirfd, "cgroup.events", O_RDONLY | O_CLOEXEC)) < 0 ||
      (s->kill_fd = openat(s->dirfd, "cgroup.kill", O_WRONLY | O_CLOEXEC)) < 0) {
    refuse(why, "launch-failed", "cgroup-unavailable", errno, "cannot set up cgroup %s: %s", s->fspath,
           strerror(errno));
    if (s->dirfd >= 0) close(s->dirfd);
    if (s->procs_fd >= 0) close(s->procs_fd);
    if (s->events_fd >= 0) close(s->events_fd);
    rmdir(s->fspath);
    free(s);
    return NULL;
  }
  s->next_all = cg_all;
  cg_all = s;
  return s;
}

int cg_available(char *reason, size_t n) {
  if (cg_state == 0) cg_init();
  snprintf(reason, n, "%s", cg_state > 0 ? "" : cg_reason);
  return cg_state > 0;
}

/* A slot from the pool of empty ones, or a new one: after the first runs,
 * a launch costs no mkdir. */
CgSlot *cg_acquire(Refusal *why) {
  if (cg_state == 0) cg_init();
  if (cg_state < 0) {
    refuse(why, "launch-failed", "cgroup-unavailable", 0, "cgroup containment is unavailable: %s", cg_reason);
    return NULL;
  }
  if (cg_free_list) {
    CgSlot *s = cg_free_list;
    cg_free_list = s->next_free;
    return s;
  }
  return cg_make_slot(why);
}

int cg_populated(const CgSlot *s) {
  char buf[256];
  ssize_t n = pread(s->events_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char *p = strstr(buf, "populated ");
  return p ? p[10] == '1' : -1;
}

/* Linux 6.14 to at least 6.18 kill every child created with
 * clone3(CLONE_INTO_CGROUP) in a cgroup that cgroup.kill was ever written
 * to: cgroup_css_set_fork() records the parent's cgroup kill_seq, and
 * cgroup_post_fork() compares it with the target's.  So a killed cgroup is
 * never handed out again; a fresh one costs a mkdir. */
void cg_release(CgSlot *s) {
  if (!s || cg_populated(s) != 0) return; /* retired: still populated */
  if (!s->killed) {
    s->next_free = cg_free_list;
    cg_free_list = s;
    return;
  }
  for (CgSlot **p = &cg_all; *p; p = &(*p)->next_all)
    if (*p == s) {
      *p = s->next_all;
      break;
    }
  close(s->procs_fd);
  close(s->events_fd);
  close(s->kill_fd);
  close(s->dirfd);
  rmdir(s->fspath);
  free(s);
}

int cg_kill(CgSlot *s) {
  s->killed = 1;
  return write(s->kill_fd, "1", 1) == 1 ? 0 : -1;
}

/* Waits until the slot's cgroup is empty or `until`; 1 when empty. */
static int cg_wait_empty(const CgSlot *s, ms_t until) {
  for (;;) {
    int pop = cg_populated(s);
    if (pop == 0) return 1;
    ms_t left = until - proc_now_ms();
    if (pop < 0 || left <= 0) return 0;
    /* cgroup.events signals POLLPRI on every change of "populated". */
    struct pollfd p = {s->events_fd, POLLPRI, 0};
    poll(&p, 1, left > 10 ? 10 : (int)left);
  }
}

static void cg_members(const CgSlot *s, PidSet *out, pid_t except) {
  char buf[65536];
  int fd = openat(s->dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  for (char *p = buf; *p;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p) break;
    if ((pid_t)v != except) pidset_add(out, (pid_t)v);
    p = end;
  }
}

/* ---- the live runs ------------------------------------------------------ */

static void tree_atexit(void) {
  if (my_pid && getpid() != my_pid) return; /* a forked child inherits atexit */
  for (Run *r = live_head; r; r = r->live_next) {
    if (!r->waited) kill(-r->pid, SIGKILL);
    syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    if (r->cg) cg_kill(r->cg);
  }
  ms_t until = proc_now_ms() + 1000;
  for (CgSlot *s = cg_all; s; s = s->next_all) {
    if (cg_populated(s) != 0) {
      if (cg_kill(s) == 0) cg_wait_empty(s, until);
    }
    rmdir(s->fspath);
  }
  if (cg_state > 0) rmdir(cg_base_fs);
}

int tree_init(void) {
  if (my_pid == getpid()) return 0;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return errno;
  need_atexit();
  my_pid = getpid();
  my_sid = getsid(0);
  return 0;
}

void tree_track(Run *r) {
  r->live_prev = NULL;
  r->live_next = live_head;
  if (live_head) live_head->live_prev = r;
  live_head = r;
}

void tree_untrack(Run *r) {
  if (r->live_prev) r->live_prev->live_next = r->live_next;
  else if (live_head == r) live_head = r->live_next;
  if (r->live_next) r->live_next->live_prev = r->live_prev;
  r->live_prev = r->live_next = NULL;
}

static int is_live_root(pid_t pid) {
  for (Run *r = live_head; r; r = r->live_next)
    if (r->pid == pid && !r->waited) return 1;
  return 0;
}

/* One signal, to the root's process group: that group holds the root for
 * its whole life (the launch made it a session leader, which cannot change
 * its group), and the unreaped root pins the group id.  Not through the
 * pidfd as well: a second SIGTERM could reach a root that had handled the
 * first and, exiting, restored the default action (Python does at
 * shutdown), so that it died of the signal instead of finishing.  The
 * pidfd serves only when the group cannot be signalled. */
void tree_signal_group(Run *r, int sig) {
  if (r->waited) return;
  if (kill(-r->pid, sig) != 0) syscall(SYS_pidfd_send_signal, r->pidfd, sig, NULL, 0);
}

enum { OWNER_THIS, OWNER_OTHER, OWNER_UNKNOWN };

static int owner_of(const Run *r, pid_t pid, pid_t pgid, pid_t sid) {
  if (pgid == r->pid || sid == r->pid) return OWNER_THIS;
  if (cg_state > 0) {
    char cg[PATH_MAX];
    size_t base = strlen(cg_base_path);
    read_cgroup(pid, cg, sizeof cg);
    if (r->cg && strcmp(cg, r->cg->path) == 0) return OWNER_THIS;
    if (strncmp(cg, cg_base_path, base) == 0 && cg[base] == '/') return OWNER_OTHER;
  }
  for (const Run *o = live_head; o; o = o->live_next)
    if (o != r && (pgid == o->pid || sid == o->pid)) return OWNER_OTHER;
  return OWNER_UNKNOWN;
}

/* One pass or a kill loop over our children.  Zombies from any run are
 * reaped; with `killed` non-NULL, live ones attributable to r are killed
 * and counted, until a pass finds none alive and reaps none (a process
 * hands its children to us as it dies, so a reaped zombie may have left
 * new children behind), or `until` passes. */
static void scan_children(Run *r, PidSet *killed, ms_t until) {
  for (;;) {
    PidSet kids = {0};
    int alive = 0, reaped = 0, alone = live_head == r && r->live_next == NULL;
    list_children(&kids);
    for (size_t i = 0; i < kids.n; i++) {
      pid_t c = kids.v[i], pgid, sid;
      char state;
      if (c == r->pid || read_stat(c, &state, &pgid, &sid) != 0) continue;
      if (sid == my_sid || is_live_root(c)) continue; /* foreign, or another run's root */
      if (state == 'Z') {
        siginfo_t si;
        si.si_pid = 0;
        if (waitid(P_PID, c, &si, WEXITED | WNOHANG) == 0 && si.si_pid == c) {
          reaped++;
          if (killed && si.si_code != CLD_EXITED && (si.si_status == SIGKILL || si.si_status == SIGTERM))
            pidset_add(killed, c);
        }
        continue;
      }
      if (!killed) continue;
      int owner = owner_of(r, c, pgid, sid);
      if (owner == OWNER_THIS || (owner == OWNER_UNKNOWN && alone)) {
        /* Both safe: c is our unreaped child, so its pid and its group's
         * id (c is a member) cannot be reused meanwhile. */
        kill(-pgid, SIGKILL);
        kill(c, SIGKILL);
        pidset_add(killed, c);
        alive++;
      }
    }
    free(kids.v);
    if (!killed || (alive == 0 && reaped == 0)) return;
    if (proc_now_ms() >= until) {
      r->descendants_surviving += alive;
      return;
    }
    if (alive) sleep_ms(1);
  }
}

void tree_reap_orphans(Run *r) { scan_children(r, NULL, 0); }

void tree_kill_descendants(Run *r, ms_t until) {
  PidSet killed = {0};
  if (!r->waited) kill(-r->pid, SIGKILL);
  if (r->cg && cg_populated(r->cg) == 1) {
    cg_members(r->cg, &killed, r->pid);
    if (cg_kill(r->cg) == 0 && !cg_wait_empty(r->cg, until)) {
      PidSet left = {0};
      cg_members(r->cg, &left, r->pid);
      r->descendants_surviving += (int)left.n;
      free(left.v);
    }
  }
  scan_children(r, &killed, until);
  r->descendants_killed += (int)killed.n;
  free(killed.v);
}

void run_collect(Run *r) {
  ms_t until = proc_now_ms() + r->kill_wait;
  if (!r->waited && r->pidfd >= 0) {
    /* The root dies first: by the time its pidfd reports the exit, its
     * children have been handed to us, so the scans below see them. */
    kill(-r->pid, SIGKILL);
    for (ms_t left; (left = until - proc_now_ms()) > 0;) {
      struct pollfd p = {r->pidfd, POLLIN, 0};
      int ready = poll(&p, 1, (int)left);
      if (ready > 0 || (ready < 0 && errno != EINTR)) break;
    }
  }
  tree_kill_descendants(r, until);
  if (!r->waited && r->pidfd >= 0) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    syscall(SYS_waitid, P_PIDFD, r->pidfd, &si, WEXITED | WNOHANG, &r->ru);
    if (si.si_pid) {
      r->waited = 1;
      if (si.si_code == CLD_EXITED) r->code = si.si_status;
      else r->sig = si.si_status;
    } else {
      r->descendants_surviving++; /* the root itself would not die */
    }
  }
  if (r->pidfd >= 0) close(r->pidfd);
  r->pidfd = -1;
  if (r->cg) cg_release(r->cg);
  r->cg = NULL;
  tree_untrack(r);
}
