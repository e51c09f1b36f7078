/*
 * lua_alloc.c: the Lua state's allocator.
 *
 * A cold `vkit vac verify` makes some fifteen thousand allocations, nearly
 * all small (strings, tables, closures, the pieces of the precompiled
 * modules' prototypes), and frees them all again at lua_close: glibc's
 * malloc and free were a sixth of its instructions.  Lua tells the
 * allocator the size of every block it frees or resizes, so a small block
 * needs no header: blocks of at most SMALL_MAX bytes are carved in 16-byte
 * size classes from regions of memory and, when freed, kept on their
 * class's free list for the next block of that class.  Larger blocks are
 * malloc's.  Regions are 256 KiB, then twice the last, up to 4 MiB.  A
 * page fault per fresh page costs more than the kernel filling many in one
 * call, so the first region is mapped with its pages present (a state
 * fills most of it just opening), and a later one is made present as
 * carving reaches it (MADV_POPULATE_WRITE), 64 KiB first and then as much
 * again as is present: mapped whole, the last region of a cold
 * verification was half unused, and a fresh page costs about a microsecond
 * and a half here.  Regions are given back only
 * when the state is closed (by lua_close, whoever calls it: os.exit(n,
 * true) too), so a long-lived state keeps as much small-block memory as it
 * ever held at once.
 *
 * Lua requires a shrink to succeed.  A block that cannot move to its new
 * class (no memory for a region) stays where it is and is from then on
 * recycled as a block of that class: it is larger than the class needs,
 * and a malloc'd one is then never freed (only out of memory, and only
 * until the process ends).
 *
 * Under AddressSanitizer every byte of a region that no live block
 * occupies, up to the block's requested size, is poisoned: a use after
 * free or a write past a block's end is still reported.
 */
#include "lua_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define GRAIN 16
#define SMALL_MAX 1024
#define FIRST_REGION ((size_t)256 << 10)
#define LAST_REGION ((size_t)4 << 20)

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
/* LeakSanitizer looks for pointers in malloc's blocks, never in mappings:
 * under it a region is malloc's, so a large (malloc'd) block that only a
 * Lua object in a region points at is still reachable when a process
 * exits without closing its state (os.exit(n)), not reported leaked. */
static void *region_map(size_t size) {
  void *r = aligned_alloc(16, size);
  return r ? r : MAP_FAILED;
}
static void region_unmap(void *r, size_t size) { (void)size; free(r); }
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
static void *region_map(size_t size) {
  int present = size == FIRST_REGION ? MAP_POPULATE : 0;
  return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | present, -1, 0);
}
static void region_unmap(void *r, size_t size) { munmap(r, size); }
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
/* Makes [from, to) present; 0 when the kernel cannot (before 5.14: the
 * pages then fault in one by one, as any mapping's do). */
static int region_populate(char *from, char *to) {
  return madvise(from, (size_t)(to - from), MADV_POPULATE_WRITE) == 0;
}
#endif
#define POPULATE_STEP ((size_t)64 << 10)

typedef struct Block { struct Block *next; } Block;
typedef struct Region { struct Region *next; size_t size; } Region; /* a region's first grain */

typedef struct {
  Block *free[SMALL_MAX / GRAIN + 1]; /* by class: size rounded up to GRAIN, / GRAIN */
  char *bump, *end;                   /* the uncarved rest of the newest region */
  char *present;                      /* the newest region is present below this */
  int populate;                       /* the kernel populates ranges (until it says it cannot) */
  Region *regions;                    /* every region, newest first */
  void *state;                        /* the state's own block: the first made, the last freed */
  int *released;                      /* while lua_newstate runs: set when a is released */
} Pools;

/* After the state's own block, the last thing lua_close frees. */
static void release(Pools *a) {
  if (a->released) *a->released = 1;
  for (Region *r = a->regions, *next; r; r = next) {
    next = r->next;
    UNPOISON(r, r->size);
    region_unmap(r, r->size);
  }
  free(a);
}

static size_t class_of(size_t n) { return (n + GRAIN - 1) / GRAIN; }

/* A block of n bytes: the last one freed of its class, or carved. */
static void *small_new(Pools *a, size_t n) {
  size_t c = class_of(n);
  Block *b = a->free[c];
  if (b) {
    UNPOISON(b, sizeof *b);
    a->free[c] = b->next;
    POISON(b, c * GRAIN);
    UNPOISON(b, n);
    return b;
  }
  if ((size_t)(a->end - a->bump) < c * GRAIN) {
    size_t size = !a->regions ? FIRST_REGION : a->regions->size < LAST_REGION ? 2 * a->regions->size : LAST_REGION;
    Region *r = region_map(size);
    if (r == MAP_FAILED) return NULL;
    r->next = a->regions;
    r->size = size;
    a->regions = r;
    /* page-aligned, as madvise needs: every step is a multiple of POPULATE_STEP */
    a->present = (char *)r + (size == FIRST_REGION ? size : 0);
    a->bump = (char *)r + GRAIN;
    a->end = (char *)r + size;
    POISON(a->bump, size - GRAIN);
  }
  void *p = a->bump;
  a->bump += c * GRAIN;
#if !defined(__SANITIZE_ADDRESS__)
  if (a->bump > a->present && a->populate) {
    size_t done = (size_t)(a->present - (char *)a->regions);
    char *upto = a->present + (done > POPULATE_STEP ? done : POPULATE_STEP);
    if (upto > a->end) upto = a->end;
    a->populate = region_populate(a->present, upto);
    a->present = upto;
  }
#endif
  UNPOISON(p, n);
  return p;
}

static void small_free(Pools *a, void *p, size_t n) {
  size_t c = class_of(n);
  Block *b = p;
  UNPOISON(b, sizeof *b);
  b->next = a->free[c];
  a->free[c] = b;
  POISON(b, c * GRAIN);
}

/* lua_Alloc: osize is the block's size when ptr is a block (a type tag
 * when ptr is NULL). */
static void *pools_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  Pools *a = ud;
  if (!ptr) {
    if (nsize == 0) return NULL;
    void *p = nsize <= SMALL_MAX ? small_new(a, nsize) : malloc(nsize);
    if (!a->state) a->state = p; /* lua_newstate's first: the state itself */
    return p;
  }
  if (nsize == 0) {
    if (osize <= SMALL_MAX) small_free(a, ptr, osize);
    else free(ptr);
    if (ptr == a->state) release(a); /* lua_close has freed everything else */
    return NULL;
  }
  if (osize > SMALL_MAX && nsize > SMALL_MAX) return realloc(ptr, nsize);
  if (osize <= SMALL_MAX && nsize <= SMALL_MAX && class_of(osize) == class_of(nsize)) {
    POISON(ptr, class_of(osize) * GRAIN);
    UNPOISON(ptr, nsize);
    return ptr;
  }
  void *q = nsize <= SMALL_MAX ? small_new(a, nsize) : malloc(nsize);
  if (!q) {
    if (nsize > osize) return NULL; /* Lua handles a failed growth */
    /* a shrink must succeed: the block stays, recycled in its new class */
    if (osize <= SMALL_MAX) POISON(ptr, class_of(osize) * GRAIN);
    UNPOISON(ptr, nsize);
    return ptr;
  }
  memcpy(q, ptr, osize < nsize ? osize : nsize);
  if (osize <= SMALL_MAX) small_free(a, ptr, osize);
  else free(ptr);
  return q;
}

/* What luaL_newstate installs besides its allocator (Lua 5.4's lauxlib):
 * the panic message and warnings, off until "@on". */
static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  if (msg == NULL) msg = "error object is not a string";
  fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n", msg);
  fflush(stderr);
  return 0; /* return to Lua to abort */
}

static void warn_off(void *ud, const char *message, int tocont);
static void warn_on(void *ud, const char *message, int tocont);

/* "@on" and "@off" switch warnings; true when message was one. */
static int warn_control(lua_State *L, const char *message, int tocont) {
  if (tocont || *(message++) != '@') return 0;
  if (strcmp(message, "off") == 0) lua_setwarnf(L, warn_off, L);
  else if (strcmp(message, "on") == 0) lua_setwarnf(L, warn_on, L);
  return 1;
}

static void warn_off(void *ud, const char *message, int tocont) { warn_control(ud, message, tocont); }

static void warn_continue(void *ud, const char *message, int tocont) {
  fprintf(stderr, "%s", message);
  if (tocont) {
    lua_setwarnf(ud, warn_continue, ud);
  } else {
    fprintf(stderr, "\n");
    lua_setwarnf(ud, warn_on, ud);
  }
  fflush(stderr);
}

static void warn_on(void *ud, const char *message, int tocont) {
  if (warn_control(ud, message, tocont)) return;
  fprintf(stderr, "Lua warning: ");
  warn_continue(ud, message, tocont);
}

lua_State *vkit_lua_newstate(void) {
  Pools *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->populate = 1;
  int released = 0; /* a state that fails to open is closed, and a released */
  a->released = &released;
  lua_State *L = lua_newstate(pools_alloc, a);
  if (!L) {
    if (!released) release(a);
    return NULL;
  }
  a->released = NULL;
  lua_atpanic(L, panic);
  lua_setwarnf(L, warn_off, L);
  return L;
}

