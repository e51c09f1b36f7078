/* chain NAME STOP LINGER_MS LINK_US MAX_LINKS [fork]: a chain of processes
 * racing the supervisor.  The root starts the first link and exits
 * LINGER_MS later.  Each link names itself NAME (so a test finds the
 * survivors in /proc), leaves its session, starts the next link and exits,
 * at once or LINK_US microseconds later (checking STOP every 10 ms).
 *
 * Links that exit at once are the supervisor's child only for the moment
 * it takes them to start the next; links that linger make a line of live
 * processes of which only the oldest has been re-parented to the
 * supervisor, so that killing it hands over the next, which has long made
 * its own successor.  Links are made with clone(CLONE_VM), which copies no
 * page tables (as cheap as the kernel allows; only for links that exit at
 * once: they share one ring of stacks), or with fork.  The ring holds 4,096
 * stacks: a link preempted between starting its successor and exiting
 * (a loaded machine, a sanitizer run) must not find a link 64 generations
 * on running on its stack, or both crash and the chain ends by itself
 * (the spec then finds nothing left to kill: killed 0).  Only the pages a
 * link touches are ever made.
 *
 * The chain stops when the file STOP exists or after MAX_LINKS links, so
 * that a chain the supervisor lost cannot outlive its test.  A chase that
 * falls behind lets the zombies of the links pile up until the machine's
 * pids run out, clone fails and the chain ends by itself: the spec then
 * finds nothing left to kill (killed 0). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NSTACK 4096
#define STACK (32 * 1024)

static char *stacks, name[16];
static const char *stop;
static volatile unsigned long links;
static unsigned long max_links;
static long link_us;
static int use_fork;

static void become_link(void) {
  prctl(PR_SET_NAME, name, 0, 0, 0);
  syscall(SYS_setsid);
}

static int link_main(void *arg) {
  (void)arg;
  become_link();
  for (;;) {
    unsigned long i = __atomic_add_fetch(&links, 1, __ATOMIC_SEQ_CST);
    if (i > max_links || access(stop, F_OK) == 0) syscall(SYS_exit_group, 0);
    /* A link runs on the stack of the link NSTACK back: long dead by then. */
    pid_t next = use_fork ? fork() : clone(link_main, stacks + (i % NSTACK + 1) * STACK, CLONE_VM | SIGCHLD, NULL);
    if (next == 0) {
      become_link(); /* fork: the new link goes round the loop */
      continue;
    }
    if (next > 0) {
      for (long waited = 0; waited < link_us && access(stop, F_OK) != 0; waited += 10000) usleep(10000);
      syscall(SYS_exit_group, 0);
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 6) return 2;
  strncpy(name, argv[1], sizeof name - 1);
  stop = argv[2];
  long linger_ms = atol(argv[3]);
  link_us = atol(argv[4]);
  max_links = strtoul(argv[5], NULL, 10);
  use_fork = argc > 6 && strcmp(argv[6], "fork") == 0;
  if (!use_fork && link_us) return 2; /* lingering links would outnumber the stacks */
  stacks = malloc((size_t)NSTACK * STACK);
  if (!stacks) return 1;
  for (int fd = 0; fd < 3; fd++) close(fd); /* no pipe of the supervisor's is held */
  pid_t first = fork();
  if (first == 0) link_main(NULL);
  if (first < 0) return 1;
  usleep((useconds_t)linger_ms * 1000);
  return 0;
}
