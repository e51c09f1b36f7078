/* Checks csrc/front_malloc.c (built with -DVKIT_FRONT into this program, in
 * place of musl's malloc) against the contract of each entry point:
 *
 *   - random malloc, calloc, realloc, aligned_alloc, posix_memalign and
 *     free over every class and mapped sizes, each block filled with a
 *     pattern of its own and checked before it is resized or freed
 *     (realloc keeps the prefix, calloc is zero even when recycled, every
 *     address is aligned, malloc_usable_size covers the request);
 *   - the same from two threads at once, with blocks freed by the thread
 *     that did not allocate them;
 *   - fork while the other thread allocates: each child allocates and
 *     exits (a lock inherited held would hang it);
 *   - the edges: malloc(0), overflowing calloc, huge requests, bad
 *     alignments, realloc(NULL) and realloc to 0;
 *   - a double free and a free of a pointer it never returned: each aborts
 *     with "vkit: malloc:" on stderr.
 *
 * Prints "ok" or the first failure; tests/front_malloc_spec.lua builds and
 * runs it. */
/* the edges and the abort cases below are wrong on purpose */
#pragma GCC diagnostic ignored "-Walloc-size-larger-than="
#pragma GCC diagnostic ignored "-Wuse-after-free"
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 2048

typedef struct {
  unsigned char *p;
  size_t n;
  unsigned seed;
} Slot;

typedef struct {
  Slot slots[SLOTS];
  uint64_t rng;
  const char *failure;
  int ops;
} World;

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

static size_t pick_size(uint64_t *s) {
  uint64_t r = next(s) % 100;
  if (r < 70) return next(s) % 1100;           /* the 16-byte classes and a little past */
  if (r < 97) return next(s) % (300u << 10);   /* the doubling classes, past LARGE */
  if (r < 98) return next(s) % (2u << 20);     /* mappings */
  return (size_t[]){0, 1, 1008, 1009, 1024, 262128, 262129, 262144}[next(s) % 8]; /* class edges */
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed + i * 7 + (i >> 8));
}

static int holds(const unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed + i * 7 + (i >> 8))) return 0;
  return 1;
}

/* One step on slot i: allocate an empty slot, else check it and resize or free it. */
static const char *step(World *w, Slot *s) {
  uint64_t *r = &w->rng;
  if (!s->p) {
    size_t n = pick_size(r), align = 16;
    unsigned how = (unsigned)(next(r) % 5);
    unsigned char *p = NULL;
    if (how == 0) p = malloc(n);
    else if (how == 1) {
      p = calloc(1, n);
      if (p)
        for (size_t i = 0; i < n; i++)
          if (p[i]) return "calloc: a byte is not zero";
    } else if (how == 2) {
      align = (size_t)1 << (4 + next(r) % 9); /* 16 .. 4096 */
      p = aligned_alloc(align, n);
    } else if (how == 3) {
      align = (size_t)1 << (3 + next(r) % 10); /* 8 .. 4096 */
      void *q = NULL;
      if (posix_memalign(&q, align, n) != 0) return "posix_memalign failed";
      p = q;
    } else {
      p = realloc(NULL, n);
    }
    if (!p) return "an allocation failed";
    if ((uintptr_t)p % (align < 16 ? 16 : align)) return "a block is not aligned";
    if (malloc_usable_size(p) < n) return "malloc_usable_size is less than the request";
    s->p = p, s->n = n, s->seed = (unsigned)next(r);
    fill(p, n, s->seed);
    return NULL;
  }
  if (!holds(s->p, s->n, s->seed)) return "a block's bytes changed while it was live";
  if (next(r) % 3 == 0) {
    size_t n = pick_size(r);
    unsigned char *q = realloc(s->p, n);
    if (!q) return "realloc failed";
    if ((uintptr_t)q % 16) return "realloc: not aligned";
    size_t keep = n < s->n ? n : s->n;
    if (!holds(q, keep, s->seed)) return "realloc: the prefix changed";
    s->p = q, s->n = n, s->seed = (unsigned)next(r);
    fill(q, n, s->seed);
  } else {
    free(s->p);
    s->p = NULL;
  }
  return NULL;
}

static void *hammer(void *arg) {
  World *w = arg;
  for (int k = 0; k < w->ops && !w->failure; k++) {
    const char *f = step(w, &w->slots[next(&w->rng) % SLOTS]);
    if (f) w->failure = f;
  }
  return NULL;
}

static void drain(World *w) {
  for (int i = 0; i < SLOTS; i++)
    if (w->slots[i].p) {
      if (!holds(w->slots[i].p, w->slots[i].n, w->slots[i].seed)) w->failure = "a block changed before its free";
      free(w->slots[i].p);
      w->slots[i].p = NULL;
    }
}

static World one, two;

/* Blocks allocated by one thread and freed by another while the first
 * allocates the next batch: BATCH blocks a round, each with a mark at
 * either end. */
#define BATCH 2000
static unsigned char *batches[2][BATCH];
static size_t batch_sizes[2][BATCH];

static void *allocate_batch(void *arg) {
  int which = *(int *)arg;
  uint64_t s = 99 + (uint64_t)which;
  for (int k = 0; k < BATCH; k++) {
    size_t n = pick_size(&s) % 70000 + 2; /* two bytes at least: two marks */
    unsigned char *p = malloc(n);
    if (!p) abort();
    p[0] = 0x5A, p[n - 1] = 0xA5;
    batches[which][k] = p, batch_sizes[which][k] = n;
  }
  return NULL;
}

static void *free_batch(void *arg) {
  int which = *(int *)arg;
  for (int k = 0; k < BATCH; k++) {
    unsigned char *p = batches[which][k];
    if (p[0] != 0x5A || p[batch_sizes[which][k] - 1] != 0xA5) return "a block freed by another thread changed";
    free(p);
  }
  return NULL;
}

static const char *across_threads(void) {
  static int ids[2] = {0, 1};
  allocate_batch(&ids[0]);
  for (int round = 1; round <= 40; round++) {
    int fresh = round % 2, old = 1 - fresh;
    pthread_t a, b;
    void *failure = NULL;
    pthread_create(&a, NULL, allocate_batch, &ids[fresh]);
    pthread_create(&b, NULL, free_batch, &ids[old]);
    pthread_join(a, NULL);
    pthread_join(b, &failure);
    if (failure) return failure;
  }
  return free_batch(&ids[40 % 2]);
}

static volatile int stop_spinning;
static void *spin(void *arg) {
  uint64_t s = 7;
  while (!stop_spinning) free(malloc(pick_size(&s) % 5000));
  return arg;
}

static const char *forks(void) {
  pthread_t t;
  stop_spinning = 0;
  if (pthread_create(&t, NULL, spin, NULL)) return "pthread_create failed";
  const char *failure = NULL;
  for (int k = 0; k < 200 && !failure; k++) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(20);
      for (int i = 0; i < 100; i++) free(malloc((size_t)i * 37));
      _exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      failure = "a child forked beside an allocating thread did not allocate and exit";
  }
  stop_spinning = 1;
  pthread_join(t, NULL);
  return failure;
}

static const char *edges(void) {
  void *z = malloc(0);
  if (!z) return "malloc(0) returned NULL";
  free(z);
  errno = 0;
  if (calloc(SIZE_MAX / 2, 3) != NULL || errno != ENOMEM) return "an overflowing calloc did not fail with ENOMEM";
  errno = 0;
  if (malloc(SIZE_MAX - 8) != NULL || errno != ENOMEM) return "malloc(SIZE_MAX - 8) did not fail with ENOMEM";
  errno = 0;
  if (aligned_alloc(24, 64) != NULL || errno != EINVAL) return "aligned_alloc(24) did not fail with EINVAL";
  void *q = NULL;
  if (posix_memalign(&q, 4, 64) != EINVAL) return "posix_memalign(4) did not fail with EINVAL";
  unsigned char *p = realloc(NULL, 100);
  if (!p) return "realloc(NULL, 100) failed";
  memset(p, 1, 100);
  p = realloc(p, 0);
  if (!p) return "realloc(p, 0) returned NULL";
  free(p);
  free(NULL);
  if (malloc_usable_size(NULL) != 0) return "malloc_usable_size(NULL) is not 0";
  /* a mapping grown by mremap keeps its bytes, then shrinks to a class */
  unsigned char *m = malloc(1 << 20);
  if (!m) return "malloc(1 MiB) failed";
  fill(m, 1 << 20, 3);
  m = realloc(m, 9 << 20);
  if (!m || !holds(m, 1 << 20, 3)) return "a mapping grown by realloc lost its bytes";
  m = realloc(m, 100);
  if (!m || !holds(m, 100, 3)) return "a mapping shrunk by realloc lost its bytes";
  free(m);
  return NULL;
}

/* Runs f in a child: it must die of SIGABRT, saying "vkit: malloc:" on stderr. */
static const char *aborts(void (*f)(void), const char *what) {
  int fds[2];
  if (pipe(fds)) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    f();
    _exit(0);
  }
  close(fds[1]);
  char buf[256] = {0};
  size_t got = 0;
  for (ssize_t r; got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0;) got += (size_t)r;
  close(fds[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || got == 0 || !strstr(buf, "vkit: malloc:")) return what;
  return NULL;
}

static void double_free(void) {
  void *p = malloc(40);
  free(p);
  free(p);
}
static void free_stranger(void) {
  static _Alignas(16) char not_a_block[64];
  free(not_a_block + 16);
}
static void free_inside(void) {
  char *p = malloc(200);
  free(p + 32);
}
static void realloc_freed(void) {
  void *p = malloc(5000);
  free(p);
  (void)!realloc(p, 6000);
}

int main(void) {
  const char *f = edges();
  if (!f) {
    one.rng = 1, one.ops = 60000;
    hammer(&one);
    drain(&one);
    f = one.failure;
  }
  if (!f) {
    pthread_t a, b;
    one.rng = 2, one.ops = 30000, two.rng = 3, two.ops = 30000;
    pthread_create(&a, NULL, hammer, &one);
    pthread_create(&b, NULL, hammer, &two);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    drain(&one), drain(&two);
    f = one.failure ? one.failure : two.failure;
  }
  if (!f) f = across_threads();
  if (!f) f = forks();
  if (!f) f = aborts(double_free, "a double free did not abort");
  if (!f) f = aborts(free_stranger, "a free of memory it never returned did not abort");
  if (!f) f = aborts(free_inside, "a free of a pointer inside a block did not abort");
  if (!f) f = aborts(realloc_freed, "a realloc of a freed block did not abort");
  puts(f ? f : "ok");
  return f != NULL;
}
