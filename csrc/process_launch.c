/*
 * process_launch.c: from a launch spec to a started, contained run.
 *
 * Order of events (each step refuses the launch as data when it fails):
 *   1. dependency pins are re-hashed (the last moment before the launch);
 *   2. the executable is opened once; that descriptor is what runs;
 *   3. the Landlock ruleset (process_landlock.c), the run's cgroup
 *      (process_tree.c) and the three pipes are made;
 *   4. the child is started, held, hashed and released (process_start.c):
 *      here, when the run has a cgroup; otherwise by a keeper of its own
 *      (process_keeper.c), which becomes the root's parent.
 *   When the hold is known not to work here, a pinned exe is hashed before
 *   the launch too, so an ordinary mismatch never runs.
 */
#include "process.h"
#include "vkit.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static int make_pipe(int p[2], int parent_end) {
  if (pipe2(p, O_CLOEXEC) != 0) return -1;
  if ((p[0] = fd_above_2(p[0])) < 0 || (p[1] = fd_above_2(p[1])) < 0) return -1;
  return fcntl(p[parent_end], F_SETFL, O_NONBLOCK);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
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
  if (s->exe_sha256 && hold_unavailable()) {
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
  if (s->sandbox && (ruleset = landlock_ruleset(s, r->sandbox, sizeof r->sandbox, why)) == -2) goto out;
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
