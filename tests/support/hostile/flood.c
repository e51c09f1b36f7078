/* flood STREAMS BYTES [PROGRESS]: writes BYTES bytes of a counting pattern
 * to stdout (STREAMS = "out"), stderr ("err") or both alternately ("both"),
 * in 4 KiB writes, then exits; the pattern makes every prefix checkable.
 * With PROGRESS, the count written so far is kept in that file, so a test
 * can see how far the flood got before it was stopped. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  long long total = atoll(argv[2]), done = 0;
  int both = strcmp(argv[1], "both") == 0, fd = strcmp(argv[1], "err") == 0 ? 2 : 1;
  int progress = argc > 3 ? open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
  char buf[4096];
  while (done < total) {
    size_t n = total - done < (long long)sizeof buf ? (size_t)(total - done) : sizeof buf;
    for (size_t i = 0; i < n; i++) buf[i] = (char)('a' + (done + (long long)i) % 26);
    ssize_t w = write(both ? 1 + (int)((done / sizeof buf) % 2) : fd, buf, n);
    if (w <= 0) return 1;
    done += w;
    if (progress >= 0) {
      char num[32];
      int len = snprintf(num, sizeof num, "%020lld\n", done);
      if (pwrite(progress, num, (size_t)len, 0) != len) return 1;
    }
  }
  return 0;
}
