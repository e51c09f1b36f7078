/* Checks csrc/front_memcpy.c (built with -DVKIT_FRONT into this program,
 * in place of the C library's) against a byte loop: every length 0-4200
 * and a few larger, at every source and destination offset 0-16, and
 * memmove at every overlap either way.  Prints "ok" or the first
 * difference; tests/front_memcpy_spec.lua builds and runs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char src[20000], dst[20000], want[20000];

static int check(const char *what, size_t n, size_t so, size_t dof) {
  if (memcmp(dst, want, sizeof dst) != 0) {
    printf("%s: n=%zu src+%zu dst+%zu differs\n", what, n, so, dof);
    return 1;
  }
  return 0;
}

int main(void) {
  static const size_t big[] = {8191, 8192, 9000, 16384};
  for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 131 + 7);
  for (size_t n = 0; n <= 4200 + 4; n++) {
    size_t len = n <= 4200 ? n : big[n - 4201];
    for (size_t so = 0; so <= 16; so += (len > 300 ? 5 : 1))
      for (size_t dof = 0; dof <= 16; dof += (len > 300 ? 3 : 1)) {
        memset(dst, 0xEE, sizeof dst), memset(want, 0xEE, sizeof want);
        for (size_t i = 0; i < len; i++) want[dof + i] = src[so + i];
        memcpy(dst + dof, src + so, len);
        if (check("memcpy", len, so, dof)) return 1;
      }
    /* memmove within one buffer, dst before and after src */
    for (size_t shift = 1; shift <= 40; shift += (len > 300 ? 13 : 1))
      for (int dir = 0; dir < 2; dir++) {
        size_t s0 = dir ? 100 : 100 + shift, d0 = dir ? 100 + shift : 100;
        memcpy(dst, src, sizeof dst);
        memcpy(want, src, sizeof want);
        for (size_t i = 0; i < len; i++) want[d0 + i] = src[s0 + i];
        memmove(dst + d0, dst + s0, len);
        if (check(dir ? "memmove up" : "memmove down", len, s0, d0)) return 1;
      }
  }
  puts("ok");
  return 0;
}
