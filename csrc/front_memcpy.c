/*
 * front_memcpy.c: the front's memcpy and memmove (VKIT_FRONT only; the full
 * executable keeps glibc's).  musl's memmove calls into its memcpy's
 * object, so both are defined here.
 *
 * musl's x86-64 memcpy moves 8 bytes at a time after aligning, and its
 * set-up dominates the short copies the Lua VM makes (strings, bytecode
 * reads): a tenth of a cold `vkit vac verify` in `perf`.  This one copies
 * any length up to 32 bytes with two possibly overlapping loads and stores,
 * longer ones 16 bytes at a time, and leaves copies of 2 KiB and more to
 * `rep movsb` (fast on processors with ERMS, and correct on every one).
 * The specs reach every branch through front_spec (the front answers as
 * the full executable does) and sha256_spec's lengths.
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
#else
typedef int vkit_front_memcpy_unused; /* the full executable keeps glibc's memcpy */
#endif
