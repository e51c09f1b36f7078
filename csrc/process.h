/*
 * process.h: the internals shared by the files of vkit.process, in layers,
 * top first; each calls only the files below it (scripts/c-call-graph.lua
 * checks it), and the one report upward, from the tree to the keepers,
 * goes through callbacks (KeeperHooks).
 *
 *   process.c          the Lua module: spec parsing, handles, the wait loop,
 *                      results, cancel tokens, executable handles
 *   process_launch.c   from a launch spec to a started run: pins, the exe
 *                      descriptor, the ruleset, cgroup and pipes, then the
 *                      start here or through a keeper
 *   process_keeper.c   the keeper: a per-run subreaper process between vkit
 *                      and the root of a run that has no cgroup
 *   process_start.c    the clone, the child's set-up, the hold at its first
 *                      instruction, the exe's hash and its release
 *   process_tree.c     containment: the subreaper, per-run cgroups, finding,
 *                      killing and reaping every descendant, stale cgroups
 *   process_isolate.c  isolation: the child's own namespaces, a root made of
 *                      the listed mounts only, an unprivileged uid
 *   process_landlock.c the Landlock sandbox: ABI, rights, rulesets
 *   process_common.c   refusals, the hash a pin compares, fds above 2
 *
 * None of these knows a protocol or a policy; every limit arrives in the spec.
 */
#ifndef VKIT_PROCESS_H
#define VKIT_PROCESS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

typedef int64_t ms_t;

/* System calls and constants newer than Debian 12's headers (x86-64 and
 * the generic table agree on these numbers); after <sys/wait.h>, whose
 * idtype_t may name P_PIDFD itself. */
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* Milliseconds on CLOCK_MONOTONIC: every deadline is measured on it. */
ms_t proc_now_ms(void);

/* ---- refusals: process_common.c ---------------------------------------- */

/* Why a launch did not happen: `status` is "launch-failed" or "pin-mismatch",
 * `error` a stable name, `err` an errno (0 when none), `message` a sentence. */
typedef struct Refusal {
  const char *status;
  const char *error;
  int err;
  char message[1024];
  /* pin-mismatch only: which file, what was pinned, what was found (a
   * SHA-256, or a file identity "dev:ino:size:mtime:ctime") */
  char pin_path[PATH_MAX];
  char expected[128];
  char actual[128];
} Refusal;

void refuse(Refusal *why, const char *status, const char *error, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A pin-mismatch refusal: `what` (exe, dependency) at path was pinned to
 * sha256 `expected` and is `actual`. */
void pin_mismatch(Refusal *why, const char *error, const char *what, const char *path,
                  const char *expected, const char *actual);

/* SHA-256 of a descriptor's whole contents (from offset 0) as hex. 0/errno. */
int hash_fd_hex(int fd, char hex[65]);

/* Moves fd to a number >= 3 (so dup3 onto 0-2 in the child cannot clobber
 * it); close-on-exec.  Returns the new fd, or -1 with errno. */
int fd_above_2(int fd);

/* ---- containment: process_tree.c -------------------------------------- */

/* One reusable cgroup v2 directory; a run owns it while it runs. */
typedef struct CgSlot {
  int dirfd, procs_fd, events_fd, kill_fd;
  int killed;               /* cgroup.kill was written: never reused (below) */
  char path[PATH_MAX];      /* as /proc/<pid>/cgroup names it after "0::" */
  char fspath[PATH_MAX];    /* where it is mounted, for rmdir */
  struct CgSlot *next_all;  /* every slot ever made, for cleanup at exit */
  struct CgSlot *next_free; /* the pool of empty slots */
} CgSlot;

/* Makes this process the subreaper of its descendants (once). 0 or errno. */
int tree_init(void);

/* A free cgroup for one run, or NULL (with *why set) when cgroup v2 with
 * cgroup.kill is not writable here. */
CgSlot *cg_acquire(Refusal *why);
/* Returns an empty slot to the pool; a slot still populated is retired
 * (removed at exit), a killed one is removed now. */
void cg_release(CgSlot *slot);
/* Kills every process in the slot's cgroup (cgroup.kill): 0 or -1. */
int cg_kill(CgSlot *slot);
/* 1 when processes remain in the cgroup, 0 when empty, -1 when unknown. */
int cg_populated(const CgSlot *slot);
/* Whether runs can get a cgroup here; when not, why (into reason). */
int cg_available(char *reason, size_t n);

typedef struct Run Run;

/* Registers a started run / forgets a finished one (process-wide list). */
void tree_track(Run *r);
void tree_untrack(Run *r);

/* Signals the root and its process group (the root must not be reaped). */
void tree_signal_group(Run *r, int sig);

/* Kills every descendant of the run (cgroup.kill, the process group, and
 * escaped children re-parented to us) and waits up to `until` for them to
 * die; counts them in r->descendants_killed / r->descendants_surviving. */
void tree_kill_descendants(Run *r, ms_t until);

/* Ends a run's containment: kills every descendant, reaps the root (it
 * must have exited or been sent SIGKILL), closes the pidfd, returns the
 * cgroup and forgets the run.  Pipes are the caller's. */
void run_collect(Run *r);

/* Reaps zombie children of this process that belong to run trees (never
 * foreign children such as io.popen's, never a run's unreaped root). */
void tree_reap_orphans(void);

/* What the tree asks the keepers (process_keeper.c), the layer above it:
 * through these callbacks, which that layer hands over before its first
 * keeper starts, never by name.  Until then there is no keeper to ask. */
typedef struct KeeperHooks {
  /* whether pid is one of our keepers (never a stray) */
  int (*is_keeper)(pid_t pid);
  /* a keeper of ours is a zombie: reap and forget it if its run is done */
  void (*reaped)(pid_t pid);
  /* ends a run that has a keeper (run_collect): the keeper kills its tree
   * and reports, or is killed and its tree taken over, by `until` */
  void (*collect)(Run *r, ms_t until);
  /* os.exit: ends every keeper run (bounded by `until`) */
  void (*exit_all)(ms_t until);
} KeeperHooks;

void tree_set_keeper_hooks(const KeeperHooks *hooks);

/* Reaps a run's root through its pidfd once it is our child; 1 when reaped. */
int tree_reap_root(Run *r);

/* Leaves a child of ours alone for good (a daemon vkit.sys started: it is
 * re-parented to us, a subreaper, and is no run's). */
void tree_disown(pid_t pid);

/* In the environment of every daemon vkit.sys.spawn_detached starts, in
 * whichever vkit process: a subreaper that is handed one as an orphan
 * leaves it alone. */
#define DETACHED_MARK "VKIT_DETACHED=1"

/* ---- the chase, shared by vkit and the keepers --------------------------- */

/* How a process found among our children is treated by a chase. */
enum { CLAIM_SKIP, CLAIM_THIS, CLAIM_STRAY };

typedef struct PidSet {
  pid_t *v;
  size_t n, cap;
} PidSet;

void pidset_add(PidSet *s, pid_t p);
int pidset_has(const PidSet *s, pid_t p);

typedef struct ProcStat {
  char state;
  pid_t ppid, pgid, sid;
  unsigned long long start; /* clock ticks after boot */
} ProcStat;

/* /proc/<pid>/stat; 0, or -1 when the process is gone. */
int proc_stat(pid_t pid, ProcStat *st);

typedef struct Chase {
  /* which of our live or dead children the chase is about */
  int (*claim)(void *ctx, pid_t pid, const ProcStat *st);
  void *ctx;
  PidSet killed;  /* CLAIM_THIS processes killed (or found killed) */
  PidSet strays;  /* CLAIM_STRAY processes killed */
  int surviving;  /* CLAIM_THIS processes alive when `until` passed */
  int stray_surviving;
  /* > 0 in a keeper: every child but this one (the root, reaped last) is
   * the run's, and is reaped without reading /proc first */
  pid_t all_ours_but;
  /* and, when ending the tree, sent SIGKILL the moment it is listed */
  int kill_at_sight;
} Chase;

/* Kills every claimed child of this process and, below each, every process
 * it had when it was killed, reaping as they die, until a pass finds none
 * alive and reaps none (the tree is empty) or `until` passes (0: one pass,
 * nothing counted).  Returns 1 when the tree was found empty; otherwise
 * `surviving` counts what was alive at the end, never 0 while a claimed
 * descendant lives. */
int chase(Chase *c, ms_t until);

/* Finds, beside this process's cgroup, the cgroups vkit-<pid> of vkit
 * processes that are gone (the pid is free, or now names a process started
 * after the cgroup was made), kills what is left in them and removes them.
 * Each is reported through `found` (path, owner pid, processes killed,
 * processes still there after `kill_wait` ms, removed or not, why not). */
typedef struct StaleCgroup {
  char path[PATH_MAX];
  pid_t owner;
  int killed, surviving, removed;
  char error[256];
} StaleCgroup;
typedef void (*StaleFound)(void *ctx, const StaleCgroup *cg);
void cg_reap_stale(ms_t kill_wait, StaleFound found, void *ctx);

/* ---- one run ---------------------------------------------------------- */

typedef struct Buf {
  char *p;
  size_t n, cap;
} Buf;

enum { PHASE_RUNNING, PHASE_TERMINATING, PHASE_EXITED, PHASE_DONE };
enum { END_NONE, END_TIMEOUT, END_CANCEL, END_CAP };

struct Token;

struct Run {
  int phase;
  pid_t pid;
  int pidfd;
  int in_fd, out_fd, err_fd;       /* our ends; -1 once closed */
  const char *in_p;                /* stdin bytes (pinned by a uservalue) */
  size_t in_len, in_off;
  Buf out, err;
  size_t cap;
  int truncated;
  ms_t start, end, deadline, grace, kill_at, kill_wait, reap_interval, next_reap;
  int end_reason;
  int kill_sent;
  struct Token *token;             /* pinned by a uservalue */
  CgSlot *cg;
  int cg_used;                     /* the child joined its cgroup */
  int escaped;                     /* a process outside its cgroup was found */
  struct Keeper *keeper;           /* runs without a cgroup: the root's parent */
  int descendants_killed, descendants_surviving;
  char exe_sha256[65];
  char sandbox[32];
  int isolated;                    /* the run had its namespaces and root */
  int iso_user_ns, iso_uid, iso_gid;
  /* how the root ended */
  int waited, code, sig;
  struct rusage ru;
  Run *live_prev, *live_next;
};

/* ---- launching: process_launch.c, process_start.c --------------------- */

enum { RL_CPU, RL_AS, RL_FSIZE, RL_NOFILE, RL_COUNT };

/* ---- isolation: process_isolate.c --------------------------------------- */

typedef struct LaunchSpec LaunchSpec;

enum { ISO_BIND, ISO_TMPFS, ISO_PROC, ISO_SYMLINK, ISO_COPY };

/* One entry of the new root, made in the order given. */
typedef struct IsoMount {
  int type;
  const char *target;     /* absolute, normalised, inside the new root */
  const char *source;     /* bind: the host path (never a link); copy: the host file */
  const char *link;       /* symlink: the link's text */
  int writable;           /* bind: read-write (default read-only) */
  int executable;         /* bind, tmpfs: files may be executed (default noexec);
                           * copy: the copy is mode 0555 (else 0444) */
  int devices;            /* bind: device nodes work (default nodev) */
  char options[64];       /* tmpfs: "mode=...,size=..." */
} IsoMount;

typedef struct Isolation {
  size_t nmounts;
  const IsoMount *mounts;
  int has_ids;            /* when vkit is root: run as uid/gid */
  unsigned uid, gid;
  const char *hostname;   /* NULL: the host's name stays */
  /* The executable's path in the new root (NULL: exec the host's
   * descriptor).  The child opens it there and checks that it is the very
   * file vkit opened and hashes (device and inode), so /proc/self/exe and
   * what the run sees of itself name the path in its root, not the host's. */
  const char *exe;
} Isolation;

/* What the parent prepares for the child of an isolated launch. */
typedef struct IsoPlan {
  const Isolation *iso;
  unsigned long flags;    /* clone flags: the namespaces */
  int user_ns;            /* vkit is not root: a user namespace too */
  int set_ids;
  char **where;           /* per mount: its path while the root is assembled */
  int *fds;               /* per bind: the cloned tree, in the child */
  int *is_dir;            /* per bind: the source is a directory */
  char uid_map[48], gid_map[48];
  unsigned long long exe_dev, exe_ino;  /* the file iso->exe must be */
  int exe_copied;         /* iso->exe is a copy: hash the running image (/proc/PID/exe) */
  char root_options[64];  /* the root tmpfs: room for the copies */
  /* set by the child when a step fails (with errno in the Child) */
  const char *failed_step, *failed_path;
} IsoPlan;

/* The namespaces of an isolated run. */
unsigned long isolate_clone_flags(int user_ns);
/* Opens the image a started child runs (/proc/PID/exe): fd or -1. */
int isolate_open_image(pid_t pid);
/* Checks the spec's isolation and prepares the plan: 0, or -1 with *why. */
int isolate_prepare(const LaunchSpec *s, IsoPlan *p, Refusal *why);
void isolate_release(IsoPlan *p);
/* In the child, before exec: 0, or -1 with errno and p->failed_* set. */
int isolate_enter(IsoPlan *p);
/* In the child, after no_new_privs: the system-call filter of an isolated
 * run (the kernel keyrings, shared by every process of a uid, denied);
 * 0 or -1 with errno.  Its name for the result. */
int isolate_filter(void);
const char *isolate_filter_name(void);
/* Whether runs can be isolated here (once per process); when not, why. */
int isolate_available(char *reason, size_t n);

struct LaunchSpec {
  int exe_fd;                      /* open executable, or -1 to open exe_path */
  const char *exe_path;            /* for messages and for opening */
  char *const *argv;               /* NULL-terminated */
  char *const *envp;               /* NULL-terminated */
  const char *cwd;
  const char *exe_sha256;          /* pinned hash or NULL */
  size_t nfiles;
  const char *const *file_paths;   /* dependency pins */
  const char *const *file_sha256;
  int has_rlimit[RL_COUNT];
  rlim_t rlimit[RL_COUNT];
  int sandbox;                     /* 0 none, 1 requested */
  int sandbox_optional;            /* run unsandboxed when Landlock is absent */
  int sandbox_read;                /* 1 when reads are restricted too */
  size_t nread, nwrite;
  const char *const *read_paths;
  const char *const *write_paths;
  int cgroup_mode;                 /* CG_OFF, CG_AUTO, CG_REQUIRED */
  int has_stdin;
  const Isolation *isolate;        /* NULL: the host's namespaces and root */
  size_t nidentities;              /* file identities that must not have changed */
  const char *const *identity_paths;
  const char *const *identities;
};

enum { CG_OFF, CG_AUTO, CG_REQUIRED };

/* ---- Landlock: process_landlock.c -------------------------------------- */

/* The kernel's Landlock ABI version, 0 when absent. */
int landlock_abi(void);
/* The rights of reading (execute, read a file, list a directory). */
uint64_t landlock_read_rights(void);
/* The filesystem rights a ruleset handles: writes always, reads when the
 * spec restricts them; rights this kernel's ABI does not know are left out. */
uint64_t landlock_handled(const LaunchSpec *s, int abi);
/* The ruleset of a sandboxed launch: a fd (>= 3) with the spec's paths
 * added (an isolated run's are added by its child); -1 when the sandbox is
 * optional and Landlock absent; -2 when refused (*why).  *applied names
 * what will apply ("landlock-abi-N"). */
int landlock_ruleset(const LaunchSpec *s, char *applied, size_t applied_len, Refusal *why);
/* In an isolated child, before exec (raw system calls only): adds rules
 * for paths of its own root; 0, or -1 with errno and *failed_path set. */
int landlock_child_add_rules(int ruleset, const char *const *paths, size_t n, uint64_t rights,
                             const char **failed_path);

/* ---- the start: process_start.c ---------------------------------------- */

/* What a launch has prepared for the clone: the descriptors the child gets
 * and what it is checked against. */
typedef struct Start {
  const LaunchSpec *s;
  IsoPlan *iso;                    /* NULL unless isolated */
  int exe_fd, in_fd, out_fd, err_fd, ruleset_fd;
  CgSlot *cg;
  int cgroup_required;
  int prehashed;                   /* the exe was hashed before the launch too */
  ms_t kill_wait;
} Start;

/* The child, once run_start returned. */
typedef struct Started {
  pid_t pid;
  int pidfd;
  int joined, held;
  int waited;                      /* it ended during the launch and was reaped */
  char exe_sha256[65];
} Started;

enum { RS_OK = 0, RS_NONE = -1, RS_DISCARD = -2 };

/* Clones the child, holds it at its first instruction, hashes and checks
 * the executable and lets it run: RS_OK.  RS_NONE: nothing was started.
 * RS_DISCARD: a child was started but refused (*why); the caller kills and
 * collects it.  Runs in vkit, or in a keeper for runs without a cgroup. */
int run_start(const Start *st, Started *out, Refusal *why);

/* Learns from a started child whether the hold works here. */
void hold_learn(int held);
/* 1 once a child has shown that the hold does not work here. */
int hold_unavailable(void);

/* ---- keepers: process_keeper.c ---------------------------------------- */

/* Starts the run through a keeper: 0, or -1 with *why. */
int keeper_launch(const Start *st, Run *r, Refusal *why);

/* Its end (run_collect) and the keepers' at exit are the tree's calls,
 * through the KeeperHooks this layer hands it. */

/* ---- the launch: process_launch.c --------------------------------------- */

/* Starts the run: on success fills r (pid, pidfd, pipes, cgroup or keeper,
 * exe hash, sandbox) and returns 0; otherwise fills *why and returns -1. */
int launch(const LaunchSpec *spec, Run *r, Refusal *why);

/* A file's identity as a pin compares it: "dev:ino:size:mtime:ctime" (times
 * in nanoseconds) of the path itself, never followed; 0 or errno. */
int file_identity(const char *path, char *out, size_t n);

/* Opens an executable for hashing and exec: 0 or fills *why. */
int open_exe(const char *path, int *fd, Refusal *why);

#endif
