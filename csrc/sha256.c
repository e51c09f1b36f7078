/*
 * sha256.c: SHA-256 (FIPS 180-4) with two engines for the compression
 * function, the x86 SHA extensions and portable C (sha256.h).
 *
 * Why not libcrypto: vkit's front (csrc/main.c) is a static executable on
 * musl, and a cold `vkit vac verify` is mostly process start-up; OpenSSL's
 * start-up probes the processor with CPUID, which on a virtual machine
 * traps to the hypervisor (here ~12 us each).  This file probes only when
 * a block is first hashed, with two CPUID instructions.
 *
 * The specs (tests/sha256_spec.lua) hold both engines to the FIPS 180-4
 * examples, to sha256sum at every length around the block edges, and to
 * each other over random inputs fed in random pieces.
 */
#include "sha256.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI_CODE 1
#endif

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/* ---- portable C --------------------------------------------------------- */

static inline uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void blocks_portable(uint32_t h[8], const unsigned char *p, size_t n) {
  for (; n; n--, p += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
      w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
      uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
      uint32_t t1 = k + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
      uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
  }
}

/* ---- x86 SHA extensions --------------------------------------------------- */

#ifdef HAVE_SHA_NI_CODE
/* The state lives in two registers as the instructions want it: abef holds
 * (from the top lane down) a, b, e, f and cdgh holds c, d, g, h.  Each
 * sha256rnds2 does two rounds; msg1/msg2 extend the message schedule four
 * words at a time, w[t] from w[t-16..t-1] held in four registers. */
__attribute__((target("sha,sse4.1"))) static void blocks_sha_ni(uint32_t h[8], const unsigned char *p, size_t n) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128((const __m128i *)&h[0]);
  __m128i hgfe = _mm_loadu_si128((const __m128i *)&h[4]);
  __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(badc, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);
  for (; n; n--, p += 64) {
    __m128i abef0 = abef, cdgh0 = cdgh, w[4];
    for (int i = 0; i < 4; i++) w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
#pragma GCC unroll 16
    for (int g = 0; g < 16; g++) {
      __m128i wk = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&K[4 * g]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
      if (g < 12) {
        /* w[4g+16..19] = w[t-16] + s0(w[t-15]) + w[t-7] + s1(w[t-2]) */
        __m128i x = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
        x = _mm_add_epi32(x, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
        w[g & 3] = _mm_sha256msg2_epu32(x, w[(g + 3) & 3]);
      }
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

/* CPUID leaf 7 EBX bit 29: the SHA extensions (every processor with them
 * has SSE4.1 too). */
static int has_sha_ni(void) {
  unsigned a, b, c, d;
  if (__get_cpuid_max(0, NULL) < 7) return 0;
  __cpuid_count(7, 0, a, b, c, d);
  return (b >> 29) & 1;
}
#endif

/* ---- engine choice ------------------------------------------------------ */

typedef void (*Blocks)(uint32_t h[8], const unsigned char *p, size_t n);

/* Chosen at first use; two threads choosing at once choose alike. */
static Blocks chosen;

static Blocks engine(void) {
  Blocks e = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
  if (e) return e;
  e = blocks_portable;
#ifdef HAVE_SHA_NI_CODE
  if (has_sha_ni()) e = blocks_sha_ni;
#endif
  __atomic_store_n(&chosen, e, __ATOMIC_RELEASE);
  return e;
}

const char *sha256_engine(void) {
#ifdef HAVE_SHA_NI_CODE
  if (engine() == blocks_sha_ni) return "sha-ni";
#endif
  (void)engine();
  return "portable";
}

int sha256_use(const char *name) {
  Blocks e = NULL;
  if (strcmp(name, "portable") == 0) e = blocks_portable;
#ifdef HAVE_SHA_NI_CODE
  else if (strcmp(name, "sha-ni") == 0 && has_sha_ni()) e = blocks_sha_ni;
#endif
  if (!e) return -1;
  __atomic_store_n(&chosen, e, __ATOMIC_RELEASE);
  return 0;
}

/* ---- the hash ----------------------------------------------------------- */

void sha256_init(Sha256 *s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, iv, sizeof iv);
  s->length = 0;
  s->filled = 0;
}

void sha256_update(Sha256 *s, const void *bytes, size_t len) {
  const unsigned char *p = bytes;
  Blocks run = NULL;
  s->length += len;
  if (s->filled) {
    size_t take = 64 - s->filled < len ? 64 - s->filled : len;
    memcpy(s->block + s->filled, p, take);
    s->filled += take, p += take, len -= take;
    if (s->filled < 64) return;
    run = engine();
    run(s->h, s->block, 1);
    s->filled = 0;
  }
  if (len >= 64) {
    if (!run) run = engine();
    run(s->h, p, len / 64);
    p += len & ~(size_t)63, len &= 63;
  }
  if (len) memcpy(s->block, p, len), s->filled = len;
}

void sha256_final(Sha256 *s, unsigned char digest[32]) {
  uint64_t bits = s->length * 8;
  unsigned char pad[72] = {0x80};
  size_t n = (s->filled < 56 ? 56 : 120) - s->filled;
  for (int i = 0; i < 8; i++) pad[n + i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(s, pad, n + 8);
  for (int i = 0; i < 8; i++) {
    digest[4 * i] = (unsigned char)(s->h[i] >> 24);
    digest[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
    digest[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
    digest[4 * i + 3] = (unsigned char)s->h[i];
  }
}
