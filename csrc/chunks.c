/*
 * chunks.c: a file read in chunks ahead of its reader, and hashed, on a
 * second thread.
 *
 * One pass over a large artifact is three jobs: read(2) copies its bytes
 * from the page cache, SHA-256 digests them, the caller scans them.  Here
 * the chunks go through a ring of SLOTS buffers.  A second thread hashes
 * each chunk, in file order, while the caller scans it; a chunk is read
 * (pread at its offset) by whichever thread is free first: the second
 * thread reads ahead when it has nothing to hash, and a caller that wants
 * a chunk nobody has begun reads it itself rather than wait.  A buffer is
 * refilled only once the caller has given it back and it is hashed.  So
 * on two cores a pass costs about half of (read + hash + scan), or the
 * hash or the scan alone when one of them is longer, and the bytes hashed
 * are the very bytes handed over.  Chunks of 2 MiB or more are 2 MiB
 * aligned and advised to use huge pages (a page fault per 4 KiB of fresh
 * buffer cost more than the copy into it).  Signals are blocked in the
 * thread, so they reach the caller's.
 */
#include "chunks.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOTS 3
#define HUGE_PAGE ((size_t)2 << 20)

enum { FREE, READING, FILLED };

typedef struct {
  unsigned char *buf;
  unsigned long seq;           /* the chunk it holds (its offset / chunk) */
  size_t len;
  int state;                   /* FREE, READING (by either thread), FILLED */
  int err, last;               /* a read error (errno); the end of the file */
  int returned, hashed;        /* FILLED: FREE again once both */
} Slot;

struct VkitChunks {
  int fd;
  off_t base;                  /* the file offset of chunk 0 */
  size_t chunk, room;          /* bytes read into a slot; bytes before it for a carried tail */
  VkitSha256 *sha;
  Slot slot[SLOTS];
  void *map;
  size_t map_len;
  int threaded, stop;
  int complete;                /* every byte to the end read, and hashed */
  int eof;                     /* a chunk marked last has been read: nothing more is begun */
  unsigned long next_read;     /* the next chunk to begin reading */
  unsigned long next_hash;     /* the next chunk to hash */
  unsigned long take;          /* the next chunk to hand out */
  int taken;                   /* the slot handed out, or -1 */
  int done;                    /* the last chunk has been handed out */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
};

/* Reads up to n bytes at off, retrying short reads and EINTR. */
static size_t pread_full(int fd, unsigned char *buf, size_t n, off_t off, int *err) {
  size_t got = 0;
  *err = 0;
  while (got < n) {
    ssize_t r = pread(fd, buf + got, n - got, off + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *err = errno;
      break;
    }
    if (r == 0) break;
    got += (size_t)r;
  }
  return got;
}

/* Can the next chunk be begun now (c->mu held)? */
static int can_begin(const VkitChunks *c) {
  return !c->eof && c->slot[c->next_read % SLOTS].state == FREE;
}

/* Reads the next chunk into its slot, c->mu held on entry and on return
 * (released while reading). */
static void begin_and_read(VkitChunks *c) {
  unsigned long seq = c->next_read++;
  Slot *s = &c->slot[seq % SLOTS];
  s->state = READING;
  s->seq = seq;
  pthread_mutex_unlock(&c->mu);
  int err;
  size_t got = pread_full(c->fd, s->buf, c->chunk, c->base + (off_t)(seq * c->chunk), &err);
  pthread_mutex_lock(&c->mu);
  s->len = got;
  s->err = err;
  s->last = err || got < c->chunk;
  s->returned = s->hashed = 0;
  s->state = FILLED;
  if (s->last) c->eof = 1;
  pthread_cond_broadcast(&c->cv);
}

/* Marks slot s hashed (c->mu held); it is free again if also given back. */
static void mark_hashed(VkitChunks *c, Slot *s) {
  s->hashed = 1;
  if (s->returned) s->state = FREE;
  c->next_hash++;
  if (s->last) c->complete = !s->err;
  pthread_cond_broadcast(&c->cv);
}

/* The second thread: hashes each chunk in order as soon as it is read, and
 * reads ahead when there is nothing to hash.  Once told to stop it begins
 * nothing, but still hashes every chunk that was handed out. */
static void *worker(void *arg) {
  VkitChunks *c = arg;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    Slot *h = &c->slot[c->next_hash % SLOTS];
    if (h->state == FILLED && h->seq == c->next_hash && !h->hashed && (!c->stop || h->seq < c->take)) {
      pthread_mutex_unlock(&c->mu);
      if (c->sha && !h->err && h->len) vkit_sha256_update(c->sha, h->buf, h->len);
      pthread_mutex_lock(&c->mu);
      mark_hashed(c, h);
      if (h->last) break;
    } else if (c->stop) {
      break;
    } else if (can_begin(c)) {
      begin_and_read(c);
    } else {
      pthread_cond_wait(&c->cv, &c->mu);
    }
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

VkitChunks *vkit_chunks_start(int fd, size_t chunk, size_t room, int ahead, VkitSha256 *sha) {
  VkitChunks *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->fd = fd;
  c->base = lseek(fd, 0, SEEK_CUR);
  if (c->base < 0) c->base = 0;
  c->chunk = chunk;
  c->room = room;
  c->sha = sha;
  c->taken = -1;
  int slots = ahead ? SLOTS : 1;
  size_t stride = room + chunk;
  c->map_len = (size_t)slots * stride + (chunk >= HUGE_PAGE ? HUGE_PAGE : 0);
  c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (c->map == MAP_FAILED) {
    free(c);
    return NULL;
  }
  unsigned char *base = c->map;
  if (chunk >= HUGE_PAGE) {
    base = (unsigned char *)(((uintptr_t)base + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    madvise(base, (size_t)slots * stride, MADV_HUGEPAGE);
  }
  for (int i = 0; i < slots; i++) c->slot[i].buf = base + (size_t)i * stride + room;
  if (ahead && pthread_mutex_init(&c->mu, NULL) == 0) {
    if (pthread_cond_init(&c->cv, NULL) == 0) {
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      c->threaded = pthread_create(&c->thread, NULL, worker, c) == 0;
      pthread_sigmask(SIG_SETMASK, &old, NULL);
      if (!c->threaded) pthread_cond_destroy(&c->cv);
    }
    if (!c->threaded) pthread_mutex_destroy(&c->mu);
  }
  return c;
}

/* Without a thread: read and hash the next chunk now, into slot 0, the
 * tail moved to just before it first. */
static int next_inline(VkitChunks *c, const unsigned char *tail, size_t tail_len, const unsigned char **data,
                       size_t *len, int *last, int *err) {
  *err = 0;
  if (c->done) return 0;
  Slot *s = &c->slot[0];
  if (tail_len) memmove(s->buf - tail_len, tail, tail_len);
  s->len = pread_full(c->fd, s->buf, c->chunk, c->base + (off_t)(c->take++ * c->chunk), err);
  if (*err) {
    c->done = 1;
    return -1;
  }
  if (c->sha && s->len) vkit_sha256_update(c->sha, s->buf, s->len);
  if (s->len < c->chunk) c->done = c->complete = 1;
  *last = c->done;
  *data = s->buf - tail_len;
  *len = s->len + tail_len;
  return *len ? 1 : 0;
}

/* Gives back the slot handed out before (c->mu held). */
static void give_back(VkitChunks *c) {
  if (c->taken < 0) return;
  Slot *s = &c->slot[c->taken];
  s->returned = 1;
  if (s->hashed) s->state = FREE;
  c->taken = -1;
  pthread_cond_broadcast(&c->cv);
}

int vkit_chunks_next_after(VkitChunks *c, const unsigned char *tail, size_t tail_len, const unsigned char **data,
                           size_t *len, int *last, int *err) {
  if (tail_len > c->room) {
    *err = ENOBUFS;
    return -1;
  }
  if (!c->threaded) return next_inline(c, tail, tail_len, data, len, last, err);
  pthread_mutex_lock(&c->mu);
  if (!tail_len) give_back(c); /* nothing of it is needed: it may be refilled at once */
  if (c->done) {
    give_back(c);
    pthread_mutex_unlock(&c->mu);
    *err = 0;
    return 0;
  }
  unsigned long want = c->take++;
  Slot *s = &c->slot[want % SLOTS]; /* never the slot held: that is the one before it */
  for (;;) {
    if (s->state == FILLED && s->seq == want) break;
    if (c->next_read == want && can_begin(c)) begin_and_read(c); /* nobody has begun it: read it here */
    else pthread_cond_wait(&c->cv, &c->mu);
  }
  pthread_mutex_unlock(&c->mu);
  /* a slot is written only while READING, and hashed only from its chunk's
   * first byte: the room before it is the caller's */
  if (tail_len) memcpy(s->buf - tail_len, tail, tail_len);
  pthread_mutex_lock(&c->mu);
  give_back(c);
  c->taken = (int)(want % SLOTS);
  c->done = s->last;
  int status = s->err ? -1 : s->len + tail_len ? 1 : 0;
  *err = s->err;
  *last = s->last;
  *data = s->buf - tail_len;
  *len = s->len + tail_len;
  pthread_mutex_unlock(&c->mu);
  return status;
}

int vkit_chunks_next(VkitChunks *c, const unsigned char **data, size_t *len, int *err) {
  int last;
  return vkit_chunks_next_after(c, NULL, 0, data, len, &last, err);
}

int vkit_chunks_finish(VkitChunks *c) {
  if (c->threaded) {
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
  }
  int complete = c->complete;
  munmap(c->map, c->map_len);
  free(c);
  return complete;
}
