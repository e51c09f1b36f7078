/*
 * process_tree.c: nothing escapes.  Finding, killing and reaping every
 * descendant of a run, whatever it did (double fork, setsid, setpgid).
 *
 * Mechanisms, strongest first:
 *   - a cgroup v2 per run (under /sys/fs/cgroup or /sys/fs/cgroup/unified,
 *     in a directory vkit-<pid> beside our own cgroup), killed atomically
 *     with cgroup.kill, which also catches processes forking at that moment;
 *   - for a run without a cgroup, a keeper (process_keeper.c): a subreaper
 *     process of its own between vkit and the root, so that every orphan of
 *     the run is re-parented to it and to no one else;
 *   - the run's process group (the child is a session and group leader),
 *     signalled while the root is unreaped so the group id cannot be reused;
 *   - PR_SET_CHILD_SUBREAPER on this process: a descendant whose parent dies
 *     is re-parented to us, not to init, so it stays findable in
 *     /proc/self/task/<tid>/children.
 *
 * Our own children are therefore: runs' roots (cgroup runs), keepers,
 * daemons vkit.sys started (disowned), foreign children in our own session
 * (io.popen, os.execute: nothing a run can create, because every run starts
 * a new session and no process can join an existing one), orphans of cgroup
 * runs, which sit in their run's cgroup, and strays: processes that left
 * every cgroup of ours (only a process with the privileges to write another
 * cgroup's cgroup.procs can) or whose keeper died, and leftovers of runs
 * whose end could not kill them.  A stray is killed at the end of a run,
 * and counted by it when its session or process group names the run's
 * root; one that names no run makes every live run's containment
 * "best-effort", since it might have been any of theirs.
 *
 * A chase kills a process and then, before it has died and handed its
 * children to us, the children it has: each pinned by a pidfd and checked
 * to be the child of a living, pinned parent before it is signalled, so a
 * recycled pid is never hit.  A killed process can start no other (fork
 * fails once a fatal signal is pending), so the walk runs ahead of a chain
 * of processes that each fork, setsid and exit, instead of waiting for
 * each death to hand the next link to us.
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
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define CGROUP2_MAGIC 0x63677270
#define OWNER_XATTR "user.vkit.owner" /* "<pid>:<start ticks>" of vkit-<pid>'s maker */
enum { WALK_DEPTH = 64 };             /* pidfds a walk holds at most */

static pid_t my_pid, my_sid;
static Run *live_head;
static PidSet disowned;
/* The keepers, above us, answer through these (process.h: KeeperHooks). */
static const KeeperHooks *keeper_hooks;
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

int proc_stat(pid_t pid, ProcStat *st) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if (read_small(path, buf, sizeof buf) <= 0) return -1;
  char *p = strrchr(buf, ')'); /* the command name may hold anything */
  int ppid, pg, se;
  if (!p || sscanf(p + 1, " %c %d %d %d", &st->state, &ppid, &pg, &se) != 4) return -1;
  st->ppid = ppid, st->pgid = pg, st->sid = se;
  /* field 22, the start time: 19 fields after the state */
  st->start = 0;
  char *q = p + 2;
  for (int field = 3; field < 22 && q; field++) q = strchr(q + 1, ' ');
  if (q) st->start = strtoull(q + 1, NULL, 10);
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

/* A set keeps its members in v, in the order added, and an index of them
 * in the same allocation: 2 * cap slots after the cap members, open
 * addressing, 0 for free.  A chase meets thousands of a chain's zombies and
 * links in one pass; a linear search per member made the chase quadratic,
 * and a slow enough chase lets such a chain exhaust the machine's pids. */
static pid_t *pidset_slots(const PidSet *s) { return s->v + s->cap; }
static size_t pidset_home(const PidSet *s, pid_t p) { return ((size_t)p * 2654435761u) & (2 * s->cap - 1); }

int pidset_has(const PidSet *s, pid_t p) {
  if (!s->cap) return 0;
  const pid_t *slot = pidset_slots(s);
  for (size_t i = pidset_home(s, p);; i = (i + 1) & (2 * s->cap - 1)) {
    if (slot[i] == p) return 1;
    if (slot[i] == 0) return 0;
  }
}

static void pidset_index(PidSet *s, pid_t p) {
  pid_t *slot = pidset_slots(s);
  size_t i = pidset_home(s, p);
  while (slot[i] != 0) i = (i + 1) & (2 * s->cap - 1);
  slot[i] = p;
}

/* Indexes v[0..n) afresh, in place. */
static void pidset_reindex(PidSet *s) {
  memset(pidset_slots(s), 0, 2 * s->cap * sizeof *s->v);
  for (size_t i = 0; i < s->n; i++) pidset_index(s, s->v[i]);
}

void pidset_add(PidSet *s, pid_t p) {
  if (p <= 0 || pidset_has(s, p)) return;
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    pid_t *v = realloc(s->v, 3 * cap * sizeof *v); /* the members stay where they were */
    if (!v) return;
    s->v = v, s->cap = cap;
    pidset_reindex(s);
  }
  s->v[s->n++] = p;
  pidset_index(s, p);
}

static void pidset_remove(PidSet *s, pid_t p) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i] == p) {
      s->v[i] = s->v[--s->n];
      pidset_reindex(s); /* rare (a disowned daemon reaped): O(n) is fine */
      return;
    }
}

/* Adds every pid the file at fd lists (decimals separated by white space),
 * however long the list: a subreaper's children file or a cgroup.procs
 * holds one entry per zombie of a chain that outruns the chase, and the
 * newest entries, the live ones, come last.  Closes fd. */
static void read_pids(int fd, PidSet *out) {
  char buf[4096];
  long v = -1;
  ssize_t r;
  while ((r = read(fd, buf, sizeof buf)) != 0) {
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (ssize_t i = 0; i < r; i++) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        v = (v < 0 ? 0 : v) * 10 + (buf[i] - '0');
        if (v > 0x7fffffff) v = 0x7fffffff; /* no pid: pins and checks will find nothing */
      } else if (v >= 0) {
        pidset_add(out, (pid_t)v);
        v = -1;
      }
    }
  }
  if (v >= 0) pidset_add(out, (pid_t)v);
  close(fd);
}

/* Every child of pid (0: this process), from each of its threads' lists. */
static void list_children(pid_t pid, PidSet *out) {
  char dir[64], path[96];
  if (pid) snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
  else snprintf(dir, sizeof dir, "/proc/self/task");
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%.20s/children", dir, e->d_name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) read_pids(fd, out);
  }
  closedir(d);
}

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

static int pidfd_exited(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

/* ---- the chase ---------------------------------------------------------- */

/* Kills c, our unreaped child (its pid is ours until we reap it), and below
 * it every process it has at that moment, depth first.  A descendant is
 * pinned by a pidfd, then its stat must name the parent we came from, and
 * both must still be alive afterwards: then the stat was the pinned
 * process's and it really was that parent's child.  Past WALK_DEPTH levels
 * the deeper ones are left for the next pass, when their parents' deaths
 * have handed them to us.  Returns how many processes were signalled. */
static int kill_tree_of(pid_t c, PidSet *killed) {
  struct {
    pid_t pid;
    int fd;
  } stack[WALK_DEPTH];
  int n = 0, signalled = 1;
  kill(c, SIGKILL);
  pidset_add(killed, c);
  stack[n].pid = c, stack[n++].fd = -1;
  while (n > 0) {
    pid_t parent = stack[n - 1].pid;
    int parent_fd = stack[--n].fd;
    PidSet kids = {0};
    list_children(parent, &kids);
    for (size_t i = 0; i < kids.n; i++) {
      ProcStat st;
      int fd = pidfd_open_(kids.v[i]);
      if (fd < 0) continue;
      if (proc_stat(kids.v[i], &st) != 0 || st.ppid != parent || st.state == 'Z' || pidfd_exited(fd) ||
          (parent_fd >= 0 && pidfd_exited(parent_fd))) {
        close(fd);
        continue;
      }
      syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
      pidset_add(killed, kids.v[i]);
      signalled++;
      if (n < WALK_DEPTH) stack[n].pid = kids.v[i], stack[n++].fd = fd;
      else close(fd);
    }
    free(kids.v);
    if (parent_fd >= 0) close(parent_fd);
  }
  return signalled;
}

/* Waits up to ms for one of the given children of ours to die: an event,
 * where a sleep would either waste the time or miss it. */
static void wait_for_a_death(const PidSet *alive, int ms) {
  struct pollfd p[16];
  nfds_t n = 0;
  for (size_t i = 0; i < alive->n && n < 16; i++) {
    int fd = pidfd_open_(alive->v[i]);
    if (fd >= 0) p[n].fd = fd, p[n].events = POLLIN, p[n++].revents = 0;
  }
  if (n) poll(p, n, ms);
  for (nfds_t i = 0; i < n; i++) close(p[i].fd);
}

/* Reaps k, a child of ours, if it is dead: 1, or 0 while it lives. */
static int reap_child(Chase *c, pid_t k, int claim) {
  siginfo_t si;
  si.si_pid = 0;
  if (waitid(P_PID, k, &si, WEXITED | WNOHANG) != 0 || si.si_pid != k) return 0;
  /* killed before we saw it alive: by the group kill, cgroup.kill or a keeper's kill at sight */
  if (claim == CLAIM_THIS && si.si_code != CLD_EXITED && (si.si_status == SIGKILL || si.si_status == SIGTERM))
    pidset_add(&c->killed, k);
  return 1;
}

/* How many of our claimed children are alive, by claim. */
static void count_alive(Chase *c, int *this_alive, int *strays_alive) {
  PidSet kids = {0};
  list_children(0, &kids);
  for (size_t i = 0; i < kids.n; i++) {
    ProcStat st;
    if (proc_stat(kids.v[i], &st) != 0 || st.state == 'Z' || st.state == 'X') continue;
    int claim = c->claim(c->ctx, kids.v[i], &st);
    if (claim == CLAIM_THIS) ++*this_alive;
    else if (claim == CLAIM_STRAY) ++*strays_alive;
  }
  free(kids.v);
}

int chase(Chase *c, ms_t until) {
  PidSet seen = {0};
  int empty = 0;
  for (;;) {
    PidSet kids = {0}, alive = {0};
    int reaped = 0, fresh = 0, this_alive = 0, strays_alive = 0;
    list_children(0, &kids);
    /* A keeper's children are its run's, unreaped: their pids cannot be
     * reused under us, so they are killed before anything is read. */
    if (c->all_ours_but > 0 && c->kill_at_sight)
      for (size_t i = kids.n; i-- > 0;)
        if (kids.v[i] != c->all_ours_but) kill(kids.v[i], SIGKILL);
    /* Newest first: a chain's live link is the last child re-parented to
     * us, behind the zombies its forerunners left; reaping those first
     * would give it time to start its successor. */
    for (size_t i = kids.n; i-- > 0;) {
      pid_t k = kids.v[i];
      ProcStat st;
      /* A keeper reaps its dead without reading /proc first: thousands of
       * a chain's zombies, each an open and a read, make a chase too slow
       * to catch the chain before it has used up the machine's pids. */
      if (c->all_ours_but > 0 && k != c->all_ours_but && reap_child(c, k, CLAIM_THIS)) {
        reaped++;
        continue;
      }
      if (proc_stat(k, &st) != 0) continue;
      int claim = c->claim(c->ctx, k, &st);
      if (claim == CLAIM_SKIP) continue;
      if (st.state == 'Z') {
        reaped += reap_child(c, k, claim);
        continue;
      }
      if (!pidset_has(&seen, k)) fresh++, pidset_add(&seen, k);
      int n = kill_tree_of(k, claim == CLAIM_THIS ? &c->killed : &c->strays);
      if (claim == CLAIM_THIS) this_alive += n;
      else strays_alive += n;
      pidset_add(&alive, k);
    }
    free(kids.v);
    if (alive.n == 0 && reaped == 0) empty = 1;
    else if (proc_now_ms() >= until) {
      /* The last pass may have reaped the parents of processes it never
       * saw (re-parented to us as those parents died): count what is alive
       * among our children now.  A live descendant is our child or below
       * one that lives, so none alive here means none at all. */
      int still_this = 0, still_strays = 0;
      if (until > 0) count_alive(c, &still_this, &still_strays);
      c->surviving = this_alive > still_this ? this_alive : still_this;
      c->stray_surviving = strays_alive > still_strays ? strays_alive : still_strays;
    } else {
      /* Killed ones take a moment to die; a newly found one means the
       * chase is running behind, so go round again at once. */
      if (alive.n && !fresh) wait_for_a_death(&alive, 1);
      free(alive.v);
      continue;
    }
    free(alive.v);
    free(seen.v);
    return empty;
  }
}

/* ---- cgroups ------------------------------------------------------------ */

static int cg_state;         /* 0 not tried, 1 usable, -1 not usable */
static char cg_reason[512];  /* why not usable */
static int cg_base_fd = -1;
static char cg_mount[64], cg_parent[PATH_MAX]; /* where vkit-<pid> directories are made */
static char cg_base_fs[PATH_MAX], cg_base_path[PATH_MAX];
static CgSlot *cg_free_list, *cg_all;
static unsigned cg_made;

/* The cgroup v2 mount and this process's cgroup in it: 0, or -1 (reason). */
static int cg_locate(char *reason, size_t n) {
  static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
  struct statfs sf;
  cg_mount[0] = '\0';
  for (size_t i = 0; i < 2 && !cg_mount[0]; i++)
    if (statfs(mounts[i], &sf) == 0 && sf.f_type == CGROUP2_MAGIC) snprintf(cg_mount, sizeof cg_mount, "%s", mounts[i]);
  if (!cg_mount[0]) {
    snprintf(reason, n, "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified");
    return -1;
  }
  read_cgroup(getpid(), cg_parent, sizeof cg_parent);
  if (cg_parent[0] != '/') {
    snprintf(reason, n, "this process's cgroup v2 path is unknown");
    return -1;
  }
  if (strcmp(cg_parent, "/") == 0) cg_parent[0] = '\0';
  return 0;
}

static void cg_init(void) {
  ProcStat self;
  char owner[64];
  cg_state = -1;
  if (cg_locate(cg_reason, sizeof cg_reason) != 0) return;
  if (fmt(cg_base_path, sizeof cg_base_path, "%s/vkit-%d", cg_parent, (int)getpid()) != 0 ||
      fmt(cg_base_fs, sizeof cg_base_fs, "%s%s", cg_mount, cg_base_path) != 0) {
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
  /* Who made it, so that a cleaner can tell us from a process that got our
   * pid after we died (best effort: not every kernel keeps user xattrs). */
  if (proc_stat(getpid(), &self) == 0) {
    int len = snprintf(owner, sizeof owner, "%d:%llu", (int)getpid(), self.start);
    fsetxattr(cg_base_fd, OWNER_XATTR, owner, (size_t)len, 0);
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

static int events_populated(int events_fd) {
  char buf[256];
  ssize_t n = pread(events_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char *p = strstr(buf, "populated ");
  return p ? p[10] == '1' : -1;
}

int cg_populated(const CgSlot *s) { return events_populated(s->events_fd); }

/* Whether a process of the run, with the privileges to, changed the
 * cgroup at dirfd: cgroups made below it would keep it from being removed,
 * and a controller enabled for its subtree keeps it from taking members. */
static int slot_tampered(int dir_fd) {
  char buf[256];
  int fd = openat(dir_fd, "cgroup.subtree_control", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
  if (fd >= 0) close(fd);
  if (n != 0 && !(n == 1 && buf[0] == '\n')) return 1;
  fd = dup(dir_fd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  int found = 0;
  if (!d) {
    if (fd >= 0) close(fd);
    return 1;
  }
  rewinddir(d);
  struct dirent *e;
  while (!found && (e = readdir(d)))
    if (e->d_type == DT_DIR && e->d_name[0] != '.') found = 1;
  closedir(d);
  return found;
}

/* Removes a cgroup directory and everything below it, deepest first; the
 * cgroups must be empty.  0, or -1 with errno of the first failure. */
static int rmdir_tree(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int err = 0;
  if (fd < 0) return errno == ENOENT ? 0 : -1;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return -1;
  }
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_type == DT_DIR && e->d_name[0] != '.' && rmdir_tree(dirfd(d), e->d_name) != 0 && !err) err = errno;
  closedir(d);
  if (unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT && !err) err = errno;
  errno = err;
  return err ? -1 : 0;
}

static void cg_free(CgSlot *s) {
  for (CgSlot **p = &cg_all; *p; p = &(*p)->next_all)
    if (*p == s) {
      *p = s->next_all;
      break;
    }
  close(s->procs_fd);
  close(s->events_fd);
  close(s->kill_fd);
  close(s->dirfd);
  rmdir_tree(cg_base_fd, strrchr(s->fspath, '/') + 1);
  free(s);
}

/* Linux 6.14 to at least 6.18 kill every child created with
 * clone3(CLONE_INTO_CGROUP) in a cgroup that cgroup.kill was ever written
 * to: cgroup_css_set_fork() records the parent's cgroup kill_seq, and
 * cgroup_post_fork() compares it with the target's.  So a killed cgroup is
 * never handed out again; a fresh one costs a mkdir.  Nor is one that a
 * process of its run gave cgroups of its own. */
void cg_release(CgSlot *s) {
  if (!s || cg_populated(s) != 0) return; /* retired: still populated */
  if (!s->killed && !slot_tampered(s->dirfd)) {
    s->next_free = cg_free_list;
    cg_free_list = s;
    return;
  }
  cg_free(s);
}

int cg_kill(CgSlot *s) {
  s->killed = 1;
  return write(s->kill_fd, "1", 1) == 1 ? 0 : -1;
}

/* Waits until the cgroup (its cgroup.events) is empty or `until`; 1 when empty. */
static int events_wait_empty(int events_fd, ms_t until) {
  for (;;) {
    int pop = events_populated(events_fd);
    if (pop == 0) return 1;
    ms_t left = until - proc_now_ms();
    if (pop < 0 || left <= 0) return 0;
    /* cgroup.events signals POLLPRI on every change of "populated". */
    struct pollfd p = {events_fd, POLLPRI, 0};
    poll(&p, 1, left > 10 ? 10 : (int)left);
  }
}

/* Adds the members of the cgroup at dirfd and of every cgroup below it. */
static void members_below(int dir_fd, PidSet *out) {
  int fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) read_pids(fd, out);
  int dup_fd = dup(dir_fd);
  DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  if (!d) {
    if (dup_fd >= 0) close(dup_fd);
    return;
  }
  rewinddir(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
    int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sub >= 0) {
      members_below(sub, out);
      close(sub);
    }
  }
  closedir(d);
}

/* Whether the cgroup path (as /proc/<pid>/cgroup names it) is `cg` or below it. */
static int cg_within(const char *path, const char *cg) {
  size_t n = strlen(cg);
  return strncmp(path, cg, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* ---- stale cgroups of dead vkit processes ------------------------------- */

/* Whether the vkit-<pid> directory (open as dirfd) was made by a process
 * that is gone.  The pid may have been given to another process since: the
 * owner's start time, kept in an xattr, must match; without one, a process
 * that started after the directory was made is not its maker either. */
static int owner_gone(int dirfd, pid_t owner) {
  ProcStat st;
  char recorded[64];
  /* a zombie is dead too: a vkit whose parent is slow to reap it */
  if (proc_stat(owner, &st) != 0 || st.state == 'Z' || st.state == 'X') return 1;
  ssize_t n = fgetxattr(dirfd, OWNER_XATTR, recorded, sizeof recorded - 1);
  if (n > 0) {
    recorded[n] = '\0';
    char *colon = strchr(recorded, ':');
    return !colon || strtoull(colon + 1, NULL, 10) != st.start;
  }
  struct stat dir;
  char buf[4096];
  long ticks = sysconf(_SC_CLK_TCK);
  if (fstat(dirfd, &dir) != 0 || ticks <= 0 || read_small("/proc/stat", buf, sizeof buf) <= 0) return 0;
  char *btime = strstr(buf, "\nbtime ");
  if (!btime) return 0;
  long long started = strtoll(btime + 7, NULL, 10) + (long long)(st.start / (unsigned long long)ticks);
  return started > (long long)dir.st_ctime + 1; /* both to the second */
}

void cg_reap_stale(ms_t kill_wait, StaleFound found, void *ctx) {
  char reason[512], dirpath[PATH_MAX];
  if (cg_locate(reason, sizeof cg_reason) != 0 || fmt(dirpath, sizeof dirpath, "%s%s", cg_mount, cg_parent) != 0) return;
  int parent = open(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return;
  /* The owners first, then the removals: entries removed while a directory
   * is read can make the reading skip others. */
  PidSet owners = {0};
  int dup_fd = dup(parent);
  DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
  if (!d && dup_fd >= 0) close(dup_fd);
  for (struct dirent *e; d && (e = readdir(d));) {
    char *end;
    long pid = strncmp(e->d_name, "vkit-", 5) == 0 ? strtol(e->d_name + 5, &end, 10) : 0;
    if (pid > 0 && !*end && e->d_name[5] != '0' && pid != getpid()) pidset_add(&owners, (pid_t)pid);
  }
  if (d) closedir(d);
  for (size_t i = 0; i < owners.n; i++) {
    char name[32];
    snprintf(name, sizeof name, "vkit-%d", (int)owners.v[i]);
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    if (!owner_gone(fd, owners.v[i])) {
      close(fd);
      continue;
    }
    StaleCgroup cg;
    memset(&cg, 0, sizeof cg);
    cg.owner = owners.v[i];
    fmt(cg.path, sizeof cg.path, "%s/%s", dirpath, name);
    PidSet members = {0};
    members_below(fd, &members);
    cg.killed = (int)members.n;
    int events = openat(fd, "cgroup.events", O_RDONLY | O_CLOEXEC), kill_fd = openat(fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
    if (members.n && (kill_fd < 0 || write(kill_fd, "1", 1) != 1))
      snprintf(cg.error, sizeof cg.error, "cannot write cgroup.kill: %s", strerror(errno));
    if (members.n && events >= 0 && !events_wait_empty(events, proc_now_ms() + kill_wait)) {
      PidSet left = {0};
      members_below(fd, &left);
      cg.surviving = (int)left.n;
      free(left.v);
    }
    if (events >= 0) close(events);
    if (kill_fd >= 0) close(kill_fd);
    close(fd);
    free(members.v);
    cg.removed = rmdir_tree(parent, name) == 0;
    if (!cg.removed && !cg.error[0]) snprintf(cg.error, sizeof cg.error, "cannot remove it: %s", strerror(errno));
    found(ctx, &cg);
  }
  free(owners.v);
  close(parent);
}

/* ---- the live runs ------------------------------------------------------ */

static void tree_atexit(void);

int tree_init(void) {
  if (my_pid == getpid()) return 0;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return errno;
  need_atexit();
  my_pid = getpid();
  my_sid = getsid(0);
  return 0;
}

void tree_set_keeper_hooks(const KeeperHooks *hooks) { keeper_hooks = hooks; }

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

/* Only while we are the subreaper: then the daemon is our child, and its
 * pid ours until we reap it (and forget it); otherwise it went to init and
 * its pid may later name a process of a run. */
void tree_disown(pid_t pid) {
  if (my_pid == getpid()) pidset_add(&disowned, pid);
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

/* Whether pid's environment holds DETACHED_MARK: a daemon some vkit
 * started with vkit.sys.spawn_detached (a job-store worker). */
static int is_detached_daemon(pid_t pid) {
  char path[64], buf[16384];
  snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
  ssize_t n = read_small(path, buf, sizeof buf);
  for (ssize_t at = 0; at < n; at += (ssize_t)strlen(buf + at) + 1)
    if (strcmp(buf + at, DETACHED_MARK) == 0) return 1;
  return 0;
}

/* Children of ours that are nobody's business: foreign (our session),
 * keepers, detached daemons, and live roots (their runs reap them). */
static int is_ours_to_leave(pid_t pid, const ProcStat *st) {
  if (st->sid == my_sid || is_live_root(pid)) return 1;
  if (st->state != 'Z' && !pidset_has(&disowned, pid) && is_detached_daemon(pid)) return 1;
  int keeper = keeper_hooks && keeper_hooks->is_keeper(pid);
  if (keeper || pidset_has(&disowned, pid)) {
    if (st->state == 'Z') {
      siginfo_t si;
      si.si_pid = 0;
      if (pidset_has(&disowned, pid)) {
        if (waitid(P_PID, pid, &si, WEXITED | WNOHANG) == 0 && si.si_pid == pid) pidset_remove(&disowned, pid);
      } else {
        keeper_hooks->reaped(pid); /* reaps it if its run is done with it */
      }
    }
    return 1;
  }
  return 0;
}

enum { OWNER_THIS, OWNER_OTHER, OWNER_NONE };

/* Which live run a child of ours belongs to, as far as the kernel says:
 * its cgroup, or else its session or process group naming a root. */
static int owner_of(const Run *r, pid_t pid, const ProcStat *st, int *outside_cgroup) {
  char cg[PATH_MAX];
  *outside_cgroup = 0;
  if (cg_state > 0) {
    read_cgroup(pid, cg, sizeof cg);
    for (const Run *o = live_head; o; o = o->live_next)
      if (o->cg && cg_within(cg, o->cg->path)) return o == r ? OWNER_THIS : OWNER_OTHER;
    if (r && r->cg && cg_within(cg, r->cg->path)) return OWNER_THIS;
  }
  *outside_cgroup = 1;
  if (r && (st->pgid == r->pid || st->sid == r->pid)) return OWNER_THIS;
  for (const Run *o = live_head; o; o = o->live_next)
    if (o != r && (st->pgid == o->pid || st->sid == o->pid)) return OWNER_OTHER;
  return OWNER_NONE;
}

typedef struct Sweep {
  Run *r;              /* the run ending, or NULL at exit */
  int this_outside;    /* a process of r's was found outside its cgroup */
} Sweep;

static int sweep_claim(void *ctx, pid_t pid, const ProcStat *st) {
  Sweep *w = ctx;
  int outside;
  if ((w->r && pid == w->r->pid) || is_ours_to_leave(pid, st)) return CLAIM_SKIP;
  switch (owner_of(w->r, pid, st, &outside)) {
    case OWNER_THIS:
      if (outside && w->r && w->r->cg_used) w->this_outside = 1;
      return CLAIM_THIS;
    case OWNER_OTHER:
      return CLAIM_SKIP;
    default:
      return CLAIM_STRAY;
  }
}

static int zombie_claim(void *ctx, pid_t pid, const ProcStat *st) {
  (void)ctx;
  if (is_ours_to_leave(pid, st) || st->state != 'Z') return CLAIM_SKIP;
  return CLAIM_THIS;
}

/* Kills a stray: it might have been any live run's, so none of them can
 * claim that its cgroup held everything. */
static void strays_found(const Chase *c) {
  if (!c->strays.n) return;
  for (Run *o = live_head; o; o = o->live_next) o->escaped = 1;
}

void tree_reap_orphans(void) {
  /* zombies only: one pass, nothing alive is touched */
  PidSet kids = {0};
  list_children(0, &kids);
  for (size_t i = 0; i < kids.n; i++) {
    ProcStat st;
    if (proc_stat(kids.v[i], &st) != 0 || zombie_claim(NULL, kids.v[i], &st) != CLAIM_THIS) continue;
    siginfo_t si;
    waitid(P_PID, kids.v[i], &si, WEXITED | WNOHANG);
  }
  free(kids.v);
}

void tree_kill_descendants(Run *r, ms_t until) {
  Sweep w = {r, 0};
  Chase c = {sweep_claim, &w, {0}, {0}, 0, 0, 0, 0};
  if (!r->waited) kill(-r->pid, SIGKILL);
  if (r->cg && cg_populated(r->cg) == 1) {
    PidSet members = {0};
    members_below(r->cg->dirfd, &members);
    for (size_t i = 0; i < members.n; i++)
      if (members.v[i] != r->pid) pidset_add(&c.killed, members.v[i]);
    free(members.v);
    if (cg_kill(r->cg) == 0 && !events_wait_empty(r->cg->events_fd, until)) {
      PidSet left = {0};
      members_below(r->cg->dirfd, &left);
      r->descendants_surviving += (int)left.n - pidset_has(&left, r->pid);
      free(left.v);
    }
  }
  chase(&c, until);
  /* A stray whose keeper died is most likely this run's: count it here. */
  if (r->keeper) {
    for (size_t i = 0; i < c.strays.n; i++) pidset_add(&c.killed, c.strays.v[i]);
    c.surviving += c.stray_surviving;
  } else {
    strays_found(&c);
  }
  if (w.this_outside || c.stray_surviving) r->escaped = 1;
  r->descendants_killed += (int)c.killed.n;
  r->descendants_surviving += c.surviving;
  free(c.killed.v);
  free(c.strays.v);
}

int tree_reap_root(Run *r) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  syscall(SYS_waitid, P_PIDFD, r->pidfd, &si, WEXITED | WNOHANG, &r->ru);
  if (!si.si_pid) return 0;
  r->waited = 1;
  if (si.si_code == CLD_EXITED) r->code = si.si_status;
  else r->sig = si.si_status;
  return 1;
}

void run_collect(Run *r) {
  ms_t until = proc_now_ms() + r->kill_wait;
  if (r->keeper) {
    keeper_hooks->collect(r, until); /* set before r->keeper was */
  } else {
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
    if (!r->waited && r->pidfd >= 0 && !tree_reap_root(r)) r->descendants_surviving++; /* the root would not die */
  }
  if (r->pidfd >= 0) close(r->pidfd);
  r->pidfd = -1;
  if (r->cg) cg_release(r->cg);
  r->cg = NULL;
  tree_untrack(r);
}

static void tree_atexit(void) {
  if (my_pid && getpid() != my_pid) return; /* a forked child inherits atexit */
  ms_t until = proc_now_ms() + 1000;
  for (Run *r = live_head; r; r = r->live_next) {
    if (!r->waited) kill(-r->pid, SIGKILL);
    syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
    if (r->cg) cg_kill(r->cg);
  }
  if (keeper_hooks) keeper_hooks->exit_all(until);
  for (CgSlot *s = cg_all; s; s = s->next_all) {
    if (cg_populated(s) != 0) {
      if (cg_kill(s) == 0) events_wait_empty(s->events_fd, until);
    }
    rmdir_tree(cg_base_fd, strrchr(s->fspath, '/') + 1);
  }
  if (cg_state > 0) rmdir(cg_base_fs);
  /* whatever else of the runs is still about: strays and leftovers */
  Sweep w = {NULL, 0};
  Chase c = {sweep_claim, &w, {0}, {0}, 0, 0, 0, 0};
  chase(&c, until);
}
