/* spawn_time [NAME=VALUE ...] PROGRAM [ARG ...]: the timer of
 * bench/vac.lua.  Runs PROGRAM once (found on PATH) with posix_spawn, its
 * environment this one's plus the NAME=VALUE pairs, stdin from /dev/null,
 * stdout and stderr to /dev/null; waits for it with wait4 and prints one
 * line:
 *
 *   WALL_SECONDS CPU_SECONDS PEAK_KIB EXIT
 *
 * wall on CLOCK_MONOTONIC from just before the spawn to the wait's return,
 * CPU the child's user + system time and PEAK_KIB its largest resident set
 * (both from wait4's rusage, to the microsecond and the KiB), EXIT its exit
 * status or 128 + the signal that ended it.  The peak counts what the
 * child's address space held before exec too, which for posix_spawn is
 * this program's: about 1.2 MiB, a floor nothing here comes near.
 *
 * Why not a shell's `time`: bash forks itself (~0.8 ms here, more than a
 * quarter of a cold `vkit vac verify`) and reports to the millisecond, so a
 * 3 ms run was timed with a third of it the shell's and a third rounding.
 * posix_spawn starts a program the way a runner calling a verifier does,
 * and the same way for every command the benchmark compares.  Exit 0 when
 * the line was printed, 2 on bad usage, 1 when PROGRAM could not be
 * started or waited for. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double seconds(struct timespec t) { return (double)t.tv_sec + (double)t.tv_nsec * 1e-9; }

int main(int argc, char **argv) {
  int i = 1;
  for (; i < argc && strchr(argv[i], '=') && argv[i][0] != '='; i++) {
    char *eq = strchr(argv[i], '=');
    *eq = '\0';
    if (setenv(argv[i], eq + 1, 1) != 0) return perror("spawn_time: setenv"), 1;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: spawn_time [NAME=VALUE ...] PROGRAM [ARG ...]\n");
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  struct timespec t0, t1;
  pid_t pid;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int err = posix_spawnp(&pid, argv[i], &actions, NULL, argv + i, environ);
  if (err) {
    fprintf(stderr, "spawn_time: %s: %s\n", argv[i], strerror(err));
    return 1;
  }
  int status;
  struct rusage ru;
  pid_t got;
  while ((got = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR) {}
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (got != pid) return perror("spawn_time: wait4"), 1;
  double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("%.6f %.6f %ld %d\n", seconds(t1) - seconds(t0), cpu, ru.ru_maxrss, code);
  return 0;
}
