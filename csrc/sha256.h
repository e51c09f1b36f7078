/*
 * sha256.h: SHA-256 (FIPS 180-4), vkit's one implementation of it.
 *
 * Two engines compute the same compression function: the x86 SHA
 * extensions, where the processor has them, and portable C.  The engine is
 * chosen once, at the first block hashed (two CPUID instructions; nothing
 * runs at start-up), and can be set for tests (sha256_use).
 */
#ifndef VKIT_SHA256_H
#define VKIT_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t h[8];
  uint64_t length;          /* bytes hashed so far */
  unsigned char block[64];  /* the partial block */
  size_t filled;
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *bytes, size_t len);
/* The digest; s must be initialised again before it is used again. */
void sha256_final(Sha256 *s, unsigned char digest[32]);

/* The engine in use ("sha-ni" or "portable"), choosing it if none is yet. */
const char *sha256_engine(void);
/* Uses the named engine from now on: 0, or -1 (unknown, or not on this
 * processor).  For tests, which must reach both. */
int sha256_use(const char *engine);

#endif
