/* introspect: prints what a child inherited, one "key=value" line each:
 * the open descriptors, the blocked and ignored signal sets (from
 * /proc/self/status), whether it leads its session and process group,
 * and its environment.  Used by tests/proc_spec.lua. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(void) {
  printf("fds=");
  const char *sep = "";
  for (int fd = 0; fd < 65536; fd++) {
    if (fcntl(fd, F_GETFD) != -1) {
      printf("%s%d", sep, fd);
      sep = ",";
    }
  }
  printf("\n");
  FILE *f = fopen("/proc/self/status", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "SigBlk:", 7) == 0) printf("sigblk=%s", line + 8);
    if (strncmp(line, "SigIgn:", 7) == 0) printf("sigign=%s", line + 8);
    if (strncmp(line, "NoNewPrivs:", 11) == 0) printf("nonewprivs=%s", line + 12);
  }
  if (f) fclose(f);
  printf("session_leader=%d\n", getsid(0) == getpid());
  printf("group_leader=%d\n", getpgrp() == getpid());
  for (char **e = environ; *e; e++) printf("env=%s\n", *e);
  return 0;
}
