/* says [LOG] [--until=FILE]: prints the word it was compiled with
 * (-DWORD="A"), and appends it to LOG when given, so a test can tell which
 * of two binaries ran, even one killed before its output was collected.
 * With --until=FILE it then runs until FILE exists (two minutes at most),
 * so that a test sees it running for as long as it needs, on any machine. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *until = NULL;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--until=", 8) == 0) {
      until = argv[i] + 8;
      continue;
    }
    int fd = open(argv[i], O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0 && write(fd, WORD "\n", 2) != 2) return 1;
  }
  printf("%s\n", WORD);
  fflush(stdout);
  for (int waited = 0; until && access(until, F_OK) != 0 && waited < 120000; waited += 10) usleep(10000);
  return 0;
}
