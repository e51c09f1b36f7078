/* spawn_baseline N EXE [keeper]: the baselines for bench/proc.lua.  N
 * sequential launches of EXE with posix_spawn + waitpid, empty environment,
 * inherited stdio; prints the elapsed seconds on CLOCK_MONOTONIC.  With
 * "keeper", each launch goes through a forked child subreaper that spawns
 * EXE, waits for it and exits, as vkit.proc does for a run without a
 * cgroup: the cost of the extra process alone, for a fair ratio. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int spawn_and_wait(char *exe) {
  char *args[] = {exe, NULL}, *env[] = {NULL};
  pid_t pid;
  int status;
  if (posix_spawn(&pid, exe, NULL, NULL, args, env) != 0) return 1;
  return waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int n = atoi(argv[1]), keeper = argc > 3 && strcmp(argv[3], "keeper") == 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) {
    if (!keeper) {
      if (spawn_and_wait(argv[2])) return 1;
      continue;
    }
    pid_t k = fork();
    if (k == 0) {
      prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
      _exit(spawn_and_wait(argv[2]));
    }
    int status;
    if (k < 0 || waitpid(k, &status, 0) != k || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  return 0;
}
