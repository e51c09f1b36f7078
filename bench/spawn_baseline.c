/* spawn_baseline N EXE: the baseline for bench/proc.lua.  N sequential
 * launches of EXE with posix_spawn + waitpid, empty environment, inherited
 * stdio; prints the elapsed seconds on CLOCK_MONOTONIC. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int n = atoi(argv[1]);
  char *args[] = {argv[2], NULL}, *env[] = {NULL};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) {
    pid_t pid;
    int status;
    if (posix_spawn(&pid, argv[2], NULL, NULL, args, env) != 0) return 1;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  return 0;
}
