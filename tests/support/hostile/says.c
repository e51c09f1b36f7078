/* says: prints the word it was compiled with (-DWORD="A"), so a test can
 * tell which of two binaries actually ran. */
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  printf("%s\n", WORD);
  if (argc > 1) sleep(1); /* long enough to be seen running */
  return 0;
}
