/*
 * front_string.c: the front's memcpy, memmove, memcmp and strcmp
 * (VKIT_FRONT only; the full executable keeps glibc's).  musl's memmove
 * calls into its memcpy's object, so both are defined here.
 *
 * musl's x86-64 memcpy moves 8 bytes at a time after aligning, and its
 * set-up dominates the short copies the Lua VM makes (strings, bytecode
 * reads): a tenth of a cold `vkit vac verify` in `perf`.  This one copies
 * any length up to 32 bytes with two possibly overlapping loads and stores,
 * longer ones 16 bytes at a time, and leaves copies of 2 KiB and more to
 * `rep movsb` (fast on processors with ERMS, and correct on every one).
 *
 * musl's memcmp and strcmp compare a byte at a time.  Lua calls memcmp for
 * every short string it interns that is already interned (each constant of
 * a precompiled module, each key of a decoded object) and strcmp for every
 * C string it pushes (its cache of them): 4% of a cold `vkit vac verify`'s
 * instructions.  These compare 8 bytes at a time and find the first byte
 * that differs in a word by its byte order.
 *
 * tests/front_string_spec.lua holds all four to byte loops at every length,
 * alignment and overlap, and strcmp at the last bytes before an unmapped
 * page.
 */
#ifdef VKIT_FRONT
#include <emmintrin.h>
#include <stddef.h>
#include <stdint.h>

/* no loop may be turned into a call to memcpy: this is memcpy */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (n <= 16) {
    if (n >= 8) {
      uint64_t a, b;
      __builtin_memcpy(&a, s, 8), __builtin_memcpy(&b, s + n - 8, 8);
      __builtin_memcpy(d, &a, 8), __builtin_memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      __builtin_memcpy(&a, s, 4), __builtin_memcpy(&b, s + n - 4, 4);
      __builtin_memcpy(d, &a, 4), __builtin_memcpy(d + n - 4, &b, 4);
    } else if (n) {
      unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
      d[0] = a, d[n / 2] = b, d[n - 1] = c;
    }
    return dst;
  }
  if (n >= 2048) {
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return dst;
  }
  __m128i last = _mm_loadu_si128((const __m128i *)(s + n - 16));
  for (size_t i = 0; i < n - 16; i += 16) _mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
  _mm_storeu_si128((__m128i *)(d + n - 16), last);
  return dst;
}

/* Forward, memcpy's way, unless dst starts inside src: then backwards, 16
 * bytes at a time, the first 16 loaded before anything is stored.  (memcpy
 * loads every byte of a copy of up to 32 before it stores, and copies
 * forwards otherwise, so it is right for dst below src.) */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (d <= s || d >= s + n || n <= 32) {
    if (n >= 2048 && d > s && d < s + n) goto backwards; /* rep movsb runs forwards */
    return memcpy(dst, src, n);
  }
backwards:;
  __m128i first = _mm_loadu_si128((const __m128i *)s);
  for (size_t i = n - 16; i > 0; i = i > 16 ? i - 16 : 0)
    _mm_storeu_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
  _mm_storeu_si128((__m128i *)d, first);
  return dst;
}

static inline uint64_t load64(const unsigned char *p) {
  uint64_t v;
  __builtin_memcpy(&v, p, 8);
  return v;
}

/* The sign of the first byte that differs between two unequal words read
 * from memory (little-endian: the lowest byte came first). */
static inline int word_order(uint64_t a, uint64_t b) {
  return __builtin_bswap64(a) < __builtin_bswap64(b) ? -1 : 1;
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
int memcmp(const void *left, const void *right, size_t n) {
  const unsigned char *l = left, *r = right;
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t a = load64(l + i), b = load64(r + i);
      if (a != b) return word_order(a, b);
    }
    if (i == n) return 0;
    /* the last 8 bytes, some compared already and found equal */
    uint64_t a = load64(l + n - 8), b = load64(r + n - 8);
    return a == b ? 0 : word_order(a, b);
  }
  for (size_t i = 0; i < n; i++)
    if (l[i] != r[i]) return l[i] < r[i] ? -1 : 1;
  return 0;
}

#define PAGE 4096u
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* A word is read only where it cannot reach into the next page (which may
 * be unmapped): near a page's end the comparison goes a byte at a time. */
static inline int word_fits(const unsigned char *p) { return ((uintptr_t)p & (PAGE - 1)) <= PAGE - 8; }

__attribute__((optimize("no-tree-loop-distribute-patterns")))
int strcmp(const char *left, const char *right) {
  const unsigned char *l = (const unsigned char *)left, *r = (const unsigned char *)right;
  /* Lua's cache of C strings mostly compares strings that differ at once */
  if (*l != *r) return *l < *r ? -1 : 1;
  for (;;) {
    if (word_fits(l) && word_fits(r)) {
      uint64_t a = load64(l), b = load64(r), diff = a ^ b;
      /* the high bit of a's first 0 byte is the lowest bit set (a borrow
       * can set bits above it, never below) */
      uint64_t zero = (a - ONES) & ~a & HIGHS;
      if (!diff && !zero) {
        l += 8, r += 8;
        continue;
      }
      if (zero && (!diff || __builtin_ctzll(diff) > __builtin_ctzll(zero))) return 0; /* equal to the 0 */
      unsigned at = (unsigned)__builtin_ctzll(diff) >> 3; /* the first byte that differs */
      return l[at] < r[at] ? -1 : 1;
    }
    /* near a page's end, a byte at a time */
    if (*l != *r) return *l < *r ? -1 : 1;
    if (!*l) return 0;
    l++, r++;
  }
}
#else
typedef int vkit_front_string_unused; /* the full executable keeps glibc's */
#endif
