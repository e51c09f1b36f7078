/*
 * front_malloc.c: the front's malloc (VKIT_FRONT only; the full executable
 * keeps glibc's).  musl allows a program to replace malloc, calloc,
 * realloc, free, aligned_alloc, posix_memalign, memalign and
 * malloc_usable_size; its own internal allocations that must not reach a
 * replacement use __libc_malloc and __libc_free, which stay musl's.
 *
 * Why: musl's allocator returns memory to the kernel as soon as a group
 * of blocks empties, so a process that reads fifteen small files
 * allocates, maps, faults in, frees and unmaps a buffer for each; in a
 * cold `vkit vac verify` that churn (some ninety blocks) cost 0.2 ms, a
 * twelfth of the process.  This allocator never gives a small block back
 * to the kernel: a freed block goes on its size class's free list and is
 * the next block of that class.
 *
 * Blocks: a 16-byte header, then the caller's bytes.  Sizes with their
 * header up to 1 KiB come in 16-byte classes, then four classes per
 * doubling up to 256 KiB, carved from chunks of 256 KiB doubling to
 * 4 MiB; a block of more is a mapping of its own, unmapped when freed
 * (and moved by mremap when it grows).  So what a process keeps is at
 * most the most it held at once in each class.
 *
 * The header holds the class, the distance back to the block's start (an
 * aligned block's header is not at its start) and a check word derived
 * from its own address: freeing or resizing anything that is not a live
 * block of this allocator (a stray pointer, a block freed twice) aborts
 * with a message rather than corrupting the lists.
 *
 * One lock (a spinlock: the front has at most a hashing thread beside the
 * main one), taken across fork so a child never inherits it held.
 * tests/front_malloc_spec.lua drives every entry point against its
 * contract from two threads, and across fork.
 */
#ifdef VKIT_FRONT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HEADER 16
#define SMALL_STEP 16
#define SMALL_TOP 1024 /* classes of 16 bytes up to here (header included) */
#define SMALL_CLASSES (SMALL_TOP / SMALL_STEP)
#define STEPS 4                   /* classes per doubling above SMALL_TOP */
#define LARGE ((size_t)256 << 10) /* a block of more (header included) is a mapping */
#define CLASSES (SMALL_CLASSES + 8 * STEPS) /* SMALL_TOP * 2^8 = LARGE */
#define MAPPED UINT32_MAX                   /* the class of a block that is its own mapping */
#define FIRST_CHUNK ((size_t)256 << 10)
#define LAST_CHUNK ((size_t)4 << 20)
#define MAGIC 0x766b69746d616c6cull /* "vkitmall" */
#define MAX_ALIGN ((size_t)1 << 30)
_Static_assert(LARGE <= FIRST_CHUNK, "a chunk holds a block of every class");
_Static_assert((size_t)SMALL_TOP << 8 == LARGE, "CLASSES counts eight doublings from SMALL_TOP to LARGE");

typedef struct {
  uint32_t cls;    /* size class, or MAPPED */
  uint32_t offset; /* bytes from the block's start to this header */
  uint64_t check;  /* MAGIC ^ this header's address while the block is live */
} Header;

/* A mapped block's start: the mapping's length, then (at offset) the header. */
typedef struct {
  size_t length;
  size_t unused;
} Mapping;

typedef struct Free { struct Free *next; } Free;

static Free *free_list[CLASSES];
static char *bump, *bump_end;
static size_t next_chunk = FIRST_CHUNK;
static int lock_word;

static void lock(void) {
  while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&lock_word, __ATOMIC_RELAXED)) sched_yield();
}
static void unlock(void) { __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE); }
static void unlock_in_child(void) { lock_word = 0; }

__attribute__((constructor)) static void register_fork_handlers(void) {
  pthread_atfork(lock, unlock, unlock_in_child);
}

__attribute__((noreturn)) static void corrupt(const char *what) {
  char line[160] = "vkit: malloc: "; /* one write: no allocation, no stdio */
  size_t n = strlen(line), w = strlen(what);
  if (w > sizeof line - n - 2) w = sizeof line - n - 2;
  memcpy(line + n, what, w);
  line[n + w] = '\n';
  (void)!write(2, line, n + w + 1);
  abort();
}

/* The class of a block of total bytes (header included, at most LARGE). */
static unsigned class_of(size_t total) {
  if (total <= SMALL_TOP) return (unsigned)((total + SMALL_STEP - 1) / SMALL_STEP) - 1;
  unsigned p = 63u - (unsigned)__builtin_clzll(total - 1); /* 2^p < total <= 2^(p+1) */
  unsigned step = (unsigned)((total - 1 - ((size_t)1 << p)) >> (p - 2));
  return SMALL_CLASSES + (p - 10) * STEPS + step;
}

static size_t class_size(unsigned cls) {
  if (cls < SMALL_CLASSES) return (size_t)(cls + 1) * SMALL_STEP;
  unsigned p = 10 + (cls - SMALL_CLASSES) / STEPS, step = (cls - SMALL_CLASSES) % STEPS;
  return ((size_t)1 << p) + ((size_t)(step + 1) << (p - 2));
}

static void *map(size_t length) {
  void *m = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? NULL : m;
}

/* A block of class cls: from its free list, else carved (lock held). */
static char *take(unsigned cls) {
  Free *f = free_list[cls];
  if (f) {
    free_list[cls] = f->next;
    return (char *)f;
  }
  size_t size = class_size(cls);
  if ((size_t)(bump_end - bump) < size) {
    /* the rest of the chunk is left unused: less than one block of this class */
    size_t length = next_chunk;
    char *chunk = map(length);
    if (!chunk) return NULL;
    if (next_chunk < LAST_CHUNK) next_chunk *= 2;
    bump = chunk, bump_end = chunk + length;
  }
  char *b = bump;
  bump += size;
  return b;
}

static void *live(char *start, uint32_t cls, size_t offset) {
  Header *h = (Header *)(start + offset);
  h->cls = cls;
  h->offset = (uint32_t)offset;
  h->check = MAGIC ^ (uint64_t)(uintptr_t)h;
  return (char *)h + HEADER;
}

/* n bytes whose address is a multiple of align (a power of two, at least 16). */
static void *allocate(size_t n, size_t align) {
  size_t extra = align > HEADER ? align : 0; /* room to slide the header up to an aligned address */
  if (n > SIZE_MAX - HEADER - sizeof(Mapping) - extra - 4096) {
    errno = ENOMEM;
    return NULL;
  }
  size_t total = n + HEADER + extra;
  if (total <= LARGE) {
    unsigned cls = class_of(total);
    lock();
    char *b = take(cls);
    unlock();
    if (!b) {
      errno = ENOMEM;
      return NULL;
    }
    size_t offset = extra ? (size_t)((-(uintptr_t)(b + HEADER)) & (align - 1)) : 0;
    return live(b, cls, offset);
  }
  size_t length = (total + sizeof(Mapping) + 4095) & ~(size_t)4095;
  char *m = map(length);
  if (!m) {
    errno = ENOMEM;
    return NULL;
  }
  ((Mapping *)m)->length = length;
  size_t offset = sizeof(Mapping);
  if (extra) offset += (size_t)((-(uintptr_t)(m + offset + HEADER)) & (align - 1));
  return live(m, MAPPED, offset);
}

/* The header of p, a live block, or an abort. */
static Header *header_of(void *p, const char *what) {
  Header *h = (Header *)((char *)p - HEADER);
  if (((uintptr_t)p & (SMALL_STEP - 1)) != 0 || h->check != (MAGIC ^ (uint64_t)(uintptr_t)h)) corrupt(what);
  return h;
}

static size_t usable(const Header *h) {
  char *start = (char *)h - h->offset;
  size_t size = h->cls == MAPPED ? ((Mapping *)start)->length : class_size(h->cls);
  return size - h->offset - HEADER;
}

void *malloc(size_t n) { return allocate(n, SMALL_STEP); }

void free(void *p) {
  if (!p) return;
  Header *h = header_of(p, "free of a pointer that is not a live block");
  char *start = (char *)h - h->offset;
  h->check = 0; /* a second free of p aborts */
  if (h->cls == MAPPED) {
    munmap(start, ((Mapping *)start)->length);
    return;
  }
  uint32_t cls = h->cls;
  Free *f = (Free *)start;
  lock();
  f->next = free_list[cls];
  free_list[cls] = f;
  unlock();
}

void *calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = malloc(count * size);
  if (p) {
    Header *h = (Header *)((char *)p - HEADER);
    if (h->cls != MAPPED) memset(p, 0, count * size); /* a fresh mapping is zero already */
  }
  return p;
}

void *realloc(void *p, size_t n) {
  if (!p) return malloc(n);
  Header *h = header_of(p, "realloc of a pointer that is not a live block");
  size_t have = usable(h);
  if (h->cls == MAPPED && h->offset == sizeof(Mapping) && n > have) {
    /* a mapping grows in place or moves without a copy */
    char *start = (char *)h - h->offset;
    size_t old = ((Mapping *)start)->length;
    if (n > SIZE_MAX - HEADER - sizeof(Mapping) - 4096) {
      errno = ENOMEM;
      return NULL;
    }
    size_t length = (n + HEADER + sizeof(Mapping) + 4095) & ~(size_t)4095;
    char *m = mremap(start, old, length, MREMAP_MAYMOVE);
    if (m == MAP_FAILED) {
      errno = ENOMEM;
      return NULL;
    }
    ((Mapping *)m)->length = length;
    return live(m, MAPPED, sizeof(Mapping));
  }
  /* a block keeps its place while n fits, unless it would keep a mapping
   * more than twice what is asked */
  if (n <= have && !(h->cls == MAPPED && n < have / 2)) return p;
  void *q = malloc(n);
  if (!q) return NULL;
  memcpy(q, p, n < have ? n : have);
  free(p);
  return q;
}

/* a power of two, at most MAX_ALIGN */
static int good_alignment(size_t align) { return align && (align & (align - 1)) == 0 && align <= MAX_ALIGN; }

void *aligned_alloc(size_t align, size_t n) {
  if (!good_alignment(align)) {
    errno = EINVAL;
    return NULL;
  }
  return allocate(n, align < SMALL_STEP ? SMALL_STEP : align);
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }

int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || !good_alignment(align)) return EINVAL;
  void *p = allocate(n, align < SMALL_STEP ? SMALL_STEP : align);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

size_t malloc_usable_size(void *p) {
  if (!p) return 0;
  return usable(header_of(p, "malloc_usable_size of a pointer that is not a live block"));
}
#else
typedef int vkit_front_malloc_unused; /* the full executable keeps glibc's malloc */
#endif
