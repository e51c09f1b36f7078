/* says [LOG] [linger]: prints the word it was compiled with (-DWORD="A"),
 * and appends it to LOG when given, so a test can tell which of two
 * binaries ran, even one killed before its output was collected.  With
 * "linger" it then sleeps a second, long enough to be seen running. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int linger = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "linger") == 0) {
      linger = 1;
      continue;
    }
    int fd = open(argv[i], O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0 && write(fd, WORD "\n", 2) != 2) return 1;
  }
  printf("%s\n", WORD);
  if (linger) sleep(1);
  return 0;
}
