/*
 * process_isolate.c: a run in namespaces of its own, on a root of its own.
 *
 * What a spec's `isolate` asks for, the child gets before it runs anything:
 *   - new mount, PID, network, IPC, UTS and cgroup namespaces (and a user namespace
 *     when vkit is not root, which is what lets an ordinary user make the
 *     others): no network but an unconfigured loopback, no process outside
 *     its own tree to see or signal, no System V IPC or abstract unix
 *     socket shared with the host;
 *   - a root made of nothing but the mounts the spec lists: read-only binds
 *     of host paths (writable where the spec says), copies of host files
 *     (so that not even /proc/self/mountinfo names where they come from),
 *     fresh tmpfs and proc mounts, symbolic links.  The host's root is
 *     detached and gone, so a path that is not listed does not exist for
 *     the run;
 *   - when vkit is root and the spec names them, an unprivileged uid and
 *     gid, with no supplementary groups.
 *
 * The same mechanisms as bubblewrap and nsjail (clone flags, pivot_root),
 * with the new mount API (open_tree, mount_setattr, move_mount: Linux 5.12)
 * so that every bind source is taken from the host before anything covers
 * it.  The child runs this on the parent's memory (CLONE_VM | CLONE_VFORK):
 * isolate_enter uses raw system calls only, over a plan the parent made.
 */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#define ISO_ATTR_RDONLY 0x00000001
#define ISO_ATTR_NOSUID 0x00000002
#define ISO_ATTR_NODEV 0x00000004
#define ISO_ATTR_NOEXEC 0x00000008

struct iso_mount_attr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* Where the new root is assembled, in the child's own mount namespace (a
 * tmpfs is mounted over it there, never on the host).  Every bind source
 * was taken before the tmpfs covers it, so a source beneath it is fine. */
#define BASE "/tmp"

#define RAW(...) syscall(__VA_ARGS__)

unsigned long isolate_clone_flags(int user_ns) {
  return CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
         (user_ns ? CLONE_NEWUSER : 0);
}

static int valid_target(const char *t) {
  if (t[0] != '/' || t[1] == '\0') return 0;
  for (const char *p = t; *p; p++) {
    if (p[0] == '/' && p[1] == '/') return 0;
    if (p[0] == '/' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')) return 0;
    if (p[0] == '/' && p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0')) return 0;
  }
  return t[strlen(t) - 1] != '/';
}

int isolate_prepare(const LaunchSpec *s, IsoPlan *p, Refusal *why) {
  const Isolation *iso = s->isolate;
  memset(p, 0, sizeof *p);
  p->iso = iso;
  p->user_ns = geteuid() != 0;
  p->flags = isolate_clone_flags(p->user_ns);
  p->where = calloc(iso->nmounts + 1, sizeof *p->where);
  p->fds = calloc(iso->nmounts + 1, sizeof *p->fds);
  p->is_dir = calloc(iso->nmounts + 1, sizeof *p->is_dir);
  if (!p->where || !p->fds || !p->is_dir) goto nomem;
  unsigned long long copied = 0;
  for (size_t i = 0; i < iso->nmounts; i++) {
    const IsoMount *m = &iso->mounts[i];
    p->fds[i] = -1;
    if (!valid_target(m->target)) {
      refuse(why, "launch-failed", "isolation-path-unavailable", 0,
             "isolation target '%s' is not a normalised absolute path below /", m->target);
      isolate_release(p);
      return -1;
    }
    if (m->type == ISO_BIND) {
      struct stat st;
      if (m->source[0] != '/' || lstat(m->source, &st) != 0 || S_ISLNK(st.st_mode)) {
        int err = m->source[0] != '/' ? 0 : errno;
        refuse(why, "launch-failed", "isolation-path-unavailable", err, "isolation source %s: %s", m->source,
               m->source[0] != '/' ? "not an absolute path" : S_ISLNK(st.st_mode) && !err ? "a symbolic link" : strerror(err));
        isolate_release(p);
        return -1;
      }
      p->is_dir[i] = S_ISDIR(st.st_mode);
    }
    if (m->type == ISO_COPY) {
      struct stat st;
      if (m->source[0] != '/' || lstat(m->source, &st) != 0 || !S_ISREG(st.st_mode)) {
        int err = m->source[0] != '/' ? 0 : errno;
        refuse(why, "launch-failed", "isolation-path-unavailable", err, "isolation copy %s: %s", m->source,
               m->source[0] != '/' ? "not an absolute path" : err ? strerror(err) : "not a regular file");
        isolate_release(p);
        return -1;
      }
      copied += (unsigned long long)st.st_size;
      if (iso->exe && strcmp(iso->exe, m->target) == 0) p->exe_copied = 1;
    }
    size_t n = strlen(BASE) + strlen(m->target) + 1;
    if (!(p->where[i] = malloc(n))) goto nomem;
    snprintf(p->where[i], n, "%s%s", BASE, m->target);
  }
  if (p->user_ns) {
    snprintf(p->uid_map, sizeof p->uid_map, "%u %u 1\n", (unsigned)geteuid(), (unsigned)geteuid());
    snprintf(p->gid_map, sizeof p->gid_map, "%u %u 1\n", (unsigned)getegid(), (unsigned)getegid());
  }
  p->set_ids = !p->user_ns && iso->has_ids;
  /* the copies live on the root's tmpfs: its size is theirs and a megabyte */
  snprintf(p->root_options, sizeof p->root_options, "mode=0755,size=%llu", copied + (1ULL << 20));
  return 0;
nomem:
  refuse(why, "launch-failed", "spawn-failed", ENOMEM, "out of memory preparing the isolation");
  isolate_release(p);
  return -1;
}

void isolate_release(IsoPlan *p) {
  if (p->where)
    for (size_t i = 0; p->iso && i < p->iso->nmounts; i++) free(p->where[i]);
  free(p->where);
  free(p->fds);
  free(p->is_dir);
  memset(p, 0, sizeof *p);
}

/* ---- the child: raw system calls only ----------------------------------- */

#define NOSAN __attribute__((no_sanitize("address", "undefined")))

NOSAN static long fail(IsoPlan *p, const char *step, const char *path) {
  p->failed_step = step;
  p->failed_path = path;
  return -1;
}

NOSAN static int write_file(const char *path, const char *text) {
  int fd = (int)RAW(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  while (text[n]) n++;
  long w = RAW(SYS_write, fd, text, n);
  RAW(SYS_close, fd);
  return w == (long)n ? 0 : -1;
}

/* mkdir -p of every parent of path (the string is restored). */
NOSAN static int make_parents(char *path) {
  for (char *q = path + 1; *q; q++) {
    if (*q != '/') continue;
    *q = '\0';
    long rc = RAW(SYS_mkdirat, AT_FDCWD, path, 0755);
    int err = rc < 0 ? errno : 0;
    *q = '/';
    if (rc < 0 && err != EEXIST) return -1;
  }
  return 0;
}

NOSAN int isolate_enter(IsoPlan *p) {
  const Isolation *iso = p->iso;
  if (p->user_ns) {
    /* Map vkit's own ids and nothing else: the run stays that user. */
    if (write_file("/proc/self/uid_map", p->uid_map) != 0) return (int)fail(p, "uid_map", "/proc/self/uid_map");
    if (write_file("/proc/self/setgroups", "deny") != 0) return (int)fail(p, "setgroups", "/proc/self/setgroups");
    if (write_file("/proc/self/gid_map", p->gid_map) != 0) return (int)fail(p, "gid_map", "/proc/self/gid_map");
  }
  /* Nothing done below may reach the host's mount table. */
  if (RAW(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return (int)fail(p, "make-private", "/");
  /* Every bind source cloned and every copied file opened, from the
   * host's tree, before anything covers it. */
  for (size_t i = 0; i < iso->nmounts; i++) {
    const IsoMount *m = &iso->mounts[i];
    if (m->type == ISO_COPY) {
      int fd = (int)RAW(SYS_openat, AT_FDCWD, m->source, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) return (int)fail(p, "open", m->source);
      p->fds[i] = fd;
      continue;
    }
    if (m->type != ISO_BIND) continue;
    int fd = (int)RAW(SYS_open_tree, AT_FDCWD, m->source,
                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
    if (fd < 0) return (int)fail(p, "open_tree", m->source);
    p->fds[i] = fd;
    struct iso_mount_attr attr = {ISO_ATTR_NOSUID | (m->writable ? 0 : ISO_ATTR_RDONLY) |
                                      (m->devices ? 0 : ISO_ATTR_NODEV) | (m->executable ? 0 : ISO_ATTR_NOEXEC),
                                  0, 0, 0};
    if (RAW(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
      return (int)fail(p, "mount_setattr", m->source);
  }
  if (RAW(SYS_mount, "tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, p->root_options) != 0)
    return (int)fail(p, "root-tmpfs", BASE);
  for (size_t i = 0; i < iso->nmounts; i++) {
    const IsoMount *m = &iso->mounts[i];
    char *where = p->where[i];
    if (make_parents(where) != 0) return (int)fail(p, "mkdir", m->target);
    long rc = 0;
    switch (m->type) {
      case ISO_BIND:
        if (p->is_dir[i]) {
          rc = RAW(SYS_mkdirat, AT_FDCWD, where, 0755);
        } else {
          rc = RAW(SYS_openat, AT_FDCWD, where, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
          if (rc >= 0) rc = RAW(SYS_close, (int)rc);
        }
        if (rc < 0 && errno != EEXIST) return (int)fail(p, "mount-point", m->target);
        if (RAW(SYS_move_mount, p->fds[i], "", AT_FDCWD, where, MOVE_MOUNT_F_EMPTY_PATH) != 0)
          return (int)fail(p, "move_mount", m->target);
        RAW(SYS_close, p->fds[i]);
        p->fds[i] = -1;
        break;
      case ISO_TMPFS:
        if (RAW(SYS_mkdirat, AT_FDCWD, where, 0755) != 0 && errno != EEXIST) return (int)fail(p, "mkdir", m->target);
        if (RAW(SYS_mount, "tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV | (m->executable ? 0 : MS_NOEXEC),
                m->options) != 0)
          return (int)fail(p, "tmpfs", m->target);
        break;
      case ISO_PROC:
        /* The child is already the first process of its PID namespace:
         * this proc shows that namespace and nothing of the host's. */
        if (RAW(SYS_mkdirat, AT_FDCWD, where, 0755) != 0 && errno != EEXIST) return (int)fail(p, "mkdir", m->target);
        if (RAW(SYS_mount, "proc", where, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
          return (int)fail(p, "proc", m->target);
        break;
      case ISO_SYMLINK:
        if (RAW(SYS_symlinkat, m->link, AT_FDCWD, where) != 0) return (int)fail(p, "symlink", m->target);
        break;
      case ISO_COPY: {
        int out = (int)RAW(SYS_openat, AT_FDCWD, where, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (out < 0) return (int)fail(p, "copy", m->target);
        long n;
        while ((n = RAW(SYS_sendfile, out, p->fds[i], NULL, 1 << 20)) > 0) {
        }
        int err = errno;
        if (n < 0 || RAW(SYS_fchmod, out, m->executable ? 0555 : 0444) != 0) {
          if (n >= 0) err = errno;
          RAW(SYS_close, out);
          errno = err;
          return (int)fail(p, "copy", m->target);
        }
        RAW(SYS_close, out);
        RAW(SYS_close, p->fds[i]);
        p->fds[i] = -1;
        break;
      }
    }
  }
  /* Swap roots and drop the host's: after this, nothing else exists. */
  if (RAW(SYS_mkdirat, AT_FDCWD, BASE "/.host", 0700) != 0) return (int)fail(p, "mkdir", "/.host");
  if (RAW(SYS_pivot_root, BASE, BASE "/.host") != 0) return (int)fail(p, "pivot_root", BASE);
  if (RAW(SYS_chdir, "/") != 0) return (int)fail(p, "chdir", "/");
  if (RAW(SYS_umount2, "/.host", MNT_DETACH) != 0) return (int)fail(p, "umount", "/.host");
  if (RAW(SYS_unlinkat, AT_FDCWD, "/.host", AT_REMOVEDIR) != 0) return (int)fail(p, "rmdir", "/.host");
  if (RAW(SYS_mount, NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
    return (int)fail(p, "remount-root", "/");
  if (iso->hostname) {
    size_t n = 0;
    while (iso->hostname[n]) n++;
    if (RAW(SYS_sethostname, iso->hostname, n) != 0) return (int)fail(p, "sethostname", iso->hostname);
  }
  if (p->set_ids) {
    if (RAW(SYS_setgroups, 0, NULL) != 0) return (int)fail(p, "setgroups", "");
    if (RAW(SYS_setresgid, iso->gid, iso->gid, iso->gid) != 0) return (int)fail(p, "setresgid", "");
    if (RAW(SYS_setresuid, iso->uid, iso->uid, iso->uid) != 0) return (int)fail(p, "setresuid", "");
  }
  return 0;
}

int isolate_open_image(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
  return open(path, O_RDONLY | O_CLOEXEC);
}

/* ---- the one system-call filter ------------------------------------------
 *
 * The namespaces separate everything an unprivileged process shares with
 * others but the kernel's per-user keyrings: uid 65534's user keyring is
 * the same for every run and for every process of that uid on the host, a
 * channel from one launch to the next (found by a hostile review).  The
 * key system calls fail with EPERM, as under Docker's default profile; so
 * do all of the 32-bit and x32 ABIs, whose numbers differ. */
#if defined(__x86_64__)
#define X32_SYSCALL_BIT 0x40000000
static struct sock_filter key_filter[] = {
  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
  BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 3, 0),
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_add_key, 2, 0),
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_request_key, 1, 0),
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 0, 1),
  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};
static struct sock_fprog key_program = {(unsigned short)(sizeof key_filter / sizeof key_filter[0]), key_filter};
#endif

NOSAN int isolate_filter(void) {
#if defined(__x86_64__)
  return RAW(SYS_prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &key_program, 0, 0) == 0 ? 0 : -1;
#else
  return 0; /* no filter on this architecture: the report's isolation says none */
#endif
}

const char *isolate_filter_name(void) {
#if defined(__x86_64__)
  return "keyrings denied";
#else
  return "none";
#endif
}

/* ---- whether this machine can do it ------------------------------------- */

NOSAN static int probe_child(void) {
  int fd = (int)RAW(SYS_open_tree, AT_FDCWD, "/usr", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (fd < 0) return 1;
  struct iso_mount_attr attr = {ISO_ATTR_RDONLY, 0, 0, 0};
  if (RAW(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) return 2;
  return 0;
}

int isolate_available(char *reason, size_t n) {
  /* A fact about the kernel and our privileges, learnt once: a child is
   * made with the namespaces a run gets and tries the mount API. */
  static int known = -1;
  static char why[256];
  if (known < 0) {
    int user_ns = geteuid() != 0;
    long pid = syscall(SYS_clone, isolate_clone_flags(user_ns) | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid == 0) RAW(SYS_exit_group, probe_child());
    if (pid < 0) {
      snprintf(why, sizeof why, "cannot create %snamespaces: %s", user_ns ? "a user namespace and its " : "",
               strerror(errno));
      known = 0;
    } else {
      int status = 0;
      while (waitpid((pid_t)pid, &status, __WALL) < 0 && errno == EINTR) {
      }
      known = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!known) snprintf(why, sizeof why, "the mount API (open_tree, mount_setattr: Linux 5.12) is unavailable");
    }
  }
  if (!known && reason) snprintf(reason, n, "%s", why);
  return known;
}
