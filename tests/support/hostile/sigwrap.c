/* sigwrap PROGRAM ARGS...: runs PROGRAM with a polluted signal state, the
 * way a careless parent might leave it: SIGINT, SIGQUIT, SIGUSR1, SIGPIPE
 * and SIGTERM ignored, SIGUSR2, SIGHUP and SIGALRM blocked.  Ignored
 * dispositions and the mask survive exec, so a child of PROGRAM inherits
 * them unless PROGRAM resets them. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int ignored[] = {SIGINT, SIGQUIT, SIGUSR1, SIGPIPE, SIGTERM};
  for (unsigned i = 0; i < sizeof ignored / sizeof ignored[0]; i++) signal(ignored[i], SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGALRM);
  sigprocmask(SIG_BLOCK, &set, NULL);
  execv(argv[1], argv + 1);
  perror("execv");
  return 127;
}
