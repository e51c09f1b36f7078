/* Checks csrc/front_string.c (built with -DVKIT_FRONT into this program,
 * in place of the C library's) against byte loops: memcpy at every length
 * 0-4200 and a few larger, at every source and destination offset 0-16;
 * memmove at every overlap either way; memcmp and strcmp at every length
 * to 300 (and larger), every pair of offsets 0-16 and a difference at
 * every position, either way, high bytes included; and strcmp of strings
 * whose last byte is the last byte before a page that cannot be read.
 * Prints "ok" or the first difference; tests/front_string_spec.lua builds
 * and runs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static unsigned char src[20000], dst[20000], want[20000];

/* the program's own comparisons must not use the functions under test */
static int same(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static int sign(int v) { return (v > 0) - (v < 0); }

static int byte_memcmp(const unsigned char *a, const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

static int byte_strcmp(const unsigned char *a, const unsigned char *b) {
  for (;; a++, b++) {
    if (*a != *b) return *a < *b ? -1 : 1;
    if (!*a) return 0;
  }
}

static int check(const char *what, size_t n, size_t so, size_t dof) {
  if (!same(dst, want, sizeof dst)) {
    printf("%s: n=%zu src+%zu dst+%zu differs\n", what, n, so, dof);
    return 1;
  }
  return 0;
}

static int copies(void) {
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
  return 0;
}

/* a and b hold the same len bytes (none 0) at offsets ao and bo; then each
 * position in turn is made larger, then smaller, in b */
static int comparisons(void) {
  static unsigned char a[700], b[700];
  static const size_t big[] = {511, 512, 600};
  static const unsigned char deltas[] = {1, 0x80};
  for (size_t k = 0; k <= 300 + 3; k++) {
    size_t len = k <= 300 ? k : big[k - 301];
    for (size_t ao = 0; ao <= 16; ao += (len > 64 ? 5 : 1))
      for (size_t bo = 0; bo <= 16; bo += (len > 64 ? 3 : 1)) {
        memset(a, 0x5A, sizeof a), memset(b, 0xA5, sizeof b);
        for (size_t i = 0; i < len; i++) a[ao + i] = b[bo + i] = (unsigned char)(1 + (i * 37 + 11) % 250);
        a[ao + len] = b[bo + len] = 0;
        if (memcmp(a + ao, b + bo, len) != 0 || strcmp((char *)a + ao, (char *)b + bo) != 0) {
          printf("equal: n=%zu a+%zu b+%zu compare unequal\n", len, ao, bo);
          return 1;
        }
        for (size_t at = 0; at < len; at += (len > 64 ? 7 : 1))
          for (int d = 0; d < 2; d++)
            for (int up = 0; up < 2; up++) {
              unsigned char keep = b[bo + at], v = (unsigned char)(up ? keep + deltas[d] : keep - deltas[d]);
              if (v == 0) continue; /* a terminator: the prefix case below */
              b[bo + at] = v;
              int wm = byte_memcmp(a + ao, b + bo, len), ws = byte_strcmp(a + ao, b + bo);
              int gm = sign(memcmp(a + ao, b + bo, len)), gs = sign(strcmp((char *)a + ao, (char *)b + bo));
              b[bo + at] = keep;
              if (gm != wm || gs != ws) {
                printf("n=%zu a+%zu b+%zu differ at %zu: memcmp %d (want %d), strcmp %d (want %d)\n", len, ao, bo,
                       at, gm, wm, gs, ws);
                return 1;
              }
            }
        /* two differences a word apart or less, of opposite signs: the
         * first decides */
        for (size_t at = 0; at + 1 < len; at += (len > 64 ? 11 : 1))
          for (size_t j = 1; j <= 8 && at + j < len; j++)
            for (int up = 0; up < 2; up++) {
              unsigned char k1 = b[bo + at], k2 = b[bo + at + j];
              b[bo + at] = (unsigned char)(up ? (k1 < 255 ? k1 + 1 : k1 - 1) : (k1 > 1 ? k1 - 1 : k1 + 1));
              b[bo + at + j] = (unsigned char)(a[ao + at] < b[bo + at] ? 1 : 255);
              int wm = byte_memcmp(a + ao, b + bo, len), ws = byte_strcmp(a + ao, b + bo);
              int gm = sign(memcmp(a + ao, b + bo, len)), gs = sign(strcmp((char *)a + ao, (char *)b + bo));
              b[bo + at] = k1, b[bo + at + j] = k2;
              if (gm != wm || gs != ws) {
                printf("n=%zu a+%zu b+%zu differ at %zu and %zu: memcmp %d (want %d), strcmp %d (want %d)\n", len,
                       ao, bo, at, at + j, gm, wm, gs, ws);
                return 1;
              }
            }
        /* b ends early: a prefix compares below the longer string */
        static const unsigned char next[] = {0x01, 0x7F, 0x80, 0x81, 0xFF}; /* a's byte where b ends */
        for (size_t cut = 0; cut < len; cut += (len > 64 ? 9 : 1))
          for (size_t v = 0; v < sizeof next; v++) {
            unsigned char keep = b[bo + cut], keep_a = a[ao + cut];
            b[bo + cut] = 0, a[ao + cut] = next[v];
            int g1 = sign(strcmp((char *)a + ao, (char *)b + bo)), g2 = sign(strcmp((char *)b + bo, (char *)a + ao));
            b[bo + cut] = keep, a[ao + cut] = keep_a;
            if (g1 != 1 || g2 != -1) {
              printf("strcmp prefix: n=%zu cut=%zu a+%zu b+%zu next 0x%02x gives %d, %d\n", len, cut, ao, bo, next[v],
                     g1, g2);
              return 1;
            }
          }
      }
  }
  return 0;
}

/* Strings that end on the last byte before an unreadable page: a
 * comparison that read a word past its terminator would fault. */
static int page_ends(void) {
  long page = 4096;
  unsigned char *m = mmap(NULL, 4 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m + page, (size_t)page, PROT_NONE) || mprotect(m + 3 * page, (size_t)page, PROT_NONE)) {
    puts("cannot map the guard pages");
    return 1;
  }
  unsigned char *end1 = m + page, *end2 = m + 3 * page; /* the first unreadable bytes */
  for (size_t len = 0; len <= 40; len++)
    for (size_t len2 = 0; len2 <= 40; len2++) {
      unsigned char *x = end1 - len - 1, *y = end2 - len2 - 1;
      for (size_t i = 0; i < len; i++) x[i] = (unsigned char)('a' + i % 26);
      for (size_t i = 0; i < len2; i++) y[i] = (unsigned char)('a' + i % 26);
      x[len] = y[len2] = 0;
      int want1 = byte_strcmp(x, y), got1 = sign(strcmp((char *)x, (char *)y));
      int want2 = byte_strcmp(y, x), got2 = sign(strcmp((char *)y, (char *)x));
      if (got1 != want1 || got2 != want2) {
        printf("strcmp at a page's end: lengths %zu and %zu give %d, %d (want %d, %d)\n", len, len2, got1, got2,
               want1, want2);
        return 1;
      }
    }
  return 0;
}

int main(void) {
  if (copies() || comparisons() || page_ends()) return 1;
  puts("ok");
  return 0;
}
