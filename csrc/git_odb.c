/*
 * git_odb.c: the object database vkit.git reads through.
 *
 * libgit2 1.5's loose-object reader is not safe on hostile or damaged
 * files: a truncated loose object makes git_odb_read loop forever
 * (libgit2 issue #7342) and an object whose header claims fewer bytes than
 * its body holds overflows a heap buffer (#7177).  A verifier must answer
 * "corrupt" instead, so every repository vkit opens gets an object database
 * of three backends:
 *
 *   1. this file's loose reader (read, read_header, exists, and their
 *      prefix forms, which list objects/xx/ for a unique match), which inflates
 *      with explicit bounds: the header must be "<type> <size>\0" with a
 *      canonical decimal size, the body must be exactly <size> bytes, the
 *      zlib stream must end there with nothing after it, and a size beyond
 *      what deflate could expand the file to (1032:1) is refused before any
 *      allocation;
 *   2. libgit2's pack reader;
 *   3. libgit2's loose backend wrapped so that it only writes (the writer
 *      API), never reads.
 *
 * The odb layer above still checks every object's hash after reading.
 * Alternates (objects/info/alternates, up to 5 levels as in Git) get the
 * same safe loose reader and the pack reader.  The legacy "packed loose"
 * format that Git stopped writing in 2005 is refused as corrupt.
 */
#include "git.h"

#include <dirent.h>
#include <fcntl.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_HEADER 64            /* "commit 18446744073709551615\0" fits */
#define MAX_HEADER_INPUT 65536   /* compressed bytes read to find a header */
#define DEFLATE_MAX_RATIO 1032   /* deflate's largest expansion factor */
#define MAX_ALTERNATE_DEPTH 5

typedef struct {
  git_odb_backend parent;
  char dir[];  /* the objects directory */
} SafeLoose;

static int corrupt(const char *what, const git_oid *oid) {
  char hex[41], msg[160];
  git_hexoid(oid, hex);
  snprintf(msg, sizeof msg, "loose object %s is corrupt: %s", hex, what);
  git_error_set_str(GIT_ERROR_ZLIB, msg);
  return -1;
}

/* The path of an object's file (whole) or of its fan-out directory, from
 * its hex id: malloc'd, or NULL with the error set. */
static char *object_path(const SafeLoose *b, const char hex[41], int whole) {
  size_t n = strlen(b->dir) + 44;
  char *path = malloc(n);
  if (!path) {
    git_error_set_str(GIT_ERROR_NOMEMORY, "out of memory");
    return NULL;
  }
  if (whole) snprintf(path, n, "%s/%.2s/%s", b->dir, hex, hex + 2);
  else snprintf(path, n, "%s/%.2s", b->dir, hex);
  return path;
}

/* Opens the object's file: fd, GIT_ENOTFOUND, or -1 with the error set. */
static int open_object(SafeLoose *b, const git_oid *oid, struct stat *st) {
  char hex[41];
  git_hexoid(oid, hex);
  char *path = object_path(b, hex, 1);
  if (!path) return -1;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  int err = errno;
  free(path);
  if (fd < 0) {
    if (err == ENOENT || err == ENOTDIR) return GIT_ENOTFOUND;
    char msg[160];
    snprintf(msg, sizeof msg, "opening loose object %s: %s", hex, strerror(err));
    git_error_set_str(GIT_ERROR_OS, msg);
    return -1;
  }
  if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
    close(fd);
    return corrupt("not a regular file", oid);
  }
  return fd;
}

/* Reads up to n bytes at the current offset; bytes read, or -1. */
static ssize_t read_full(int fd, unsigned char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Parses "<type> <size>\0" from the first `have` inflated bytes; the
 * header's length including its NUL, or 0 when malformed. */
static size_t parse_header(const unsigned char *h, size_t have, git_object_t *type, size_t *size) {
  const unsigned char *nul = memchr(h, '\0', have);
  const unsigned char *sp = nul ? memchr(h, ' ', (size_t)(nul - h)) : NULL;
  if (!sp) return 0;
  static const struct { const char *name; git_object_t type; } types[] = {
      {"blob", GIT_OBJECT_BLOB}, {"tree", GIT_OBJECT_TREE}, {"commit", GIT_OBJECT_COMMIT}, {"tag", GIT_OBJECT_TAG}};
  *type = GIT_OBJECT_INVALID;
  for (size_t i = 0; i < 4; i++)
    if (strlen(types[i].name) == (size_t)(sp - h) && !memcmp(types[i].name, h, (size_t)(sp - h)))
      *type = types[i].type;
  const unsigned char *d = sp + 1;
  size_t digits = (size_t)(nul - d);
  if (*type == GIT_OBJECT_INVALID || digits == 0 || digits > 19 || (digits > 1 && d[0] == '0')) return 0;
  unsigned long long v = 0;
  for (size_t i = 0; i < digits; i++) {
    if (d[i] < '0' || d[i] > '9') return 0;
    v = v * 10 + (unsigned)(d[i] - '0');
  }
  if (v > (unsigned long long)SIZE_MAX / 2) return 0;
  *size = (size_t)v;
  return (size_t)(nul - h) + 1;
}

static int is_zlib(const unsigned char *p, size_t n) {
  return n >= 2 && (p[0] & 0x8f) == 0x08 && ((p[0] << 8) + p[1]) % 31 == 0;
}

static int safe_read_header(size_t *len_out, git_object_t *type_out, git_odb_backend *backend,
                            const git_oid *oid) {
  SafeLoose *b = (SafeLoose *)backend;
  struct stat st;
  int fd = open_object(b, oid, &st);
  if (fd < 0) return fd;
  unsigned char in[4096], head[MAX_HEADER];
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit(&z) != Z_OK) {
    close(fd);
    return corrupt("zlib failed to start", oid);
  }
  z.next_out = head;
  z.avail_out = sizeof head;
  size_t consumed = 0, hlen = 0, size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  int rc = 0, first = 1;
  for (;;) {
    ssize_t n = read_full(fd, in, sizeof in);
    if (n < 0) {
      rc = corrupt(strerror(errno), oid);
      break;
    }
    if (first && !is_zlib(in, (size_t)n)) {
      rc = corrupt("not a zlib stream", oid);
      break;
    }
    first = 0;
    consumed += (size_t)n;
    z.next_in = in;
    z.avail_in = (uInt)n;
    int zr = inflate(&z, Z_NO_FLUSH);
    size_t have = sizeof head - z.avail_out;
    if ((hlen = parse_header(head, have, &type, &size))) break;
    if ((zr != Z_OK && zr != Z_BUF_ERROR) || n == 0 || have == sizeof head || consumed >= MAX_HEADER_INPUT) {
      rc = corrupt("no valid header", oid);
      break;
    }
  }
  inflateEnd(&z);
  close(fd);
  if (rc) return rc;
  if (size > (size_t)st.st_size * DEFLATE_MAX_RATIO + MAX_HEADER)
    return corrupt("its header claims more bytes than the file can hold", oid);
  *len_out = size;
  *type_out = type;
  return 0;
}

static int safe_read(void **data_out, size_t *len_out, git_object_t *type_out, git_odb_backend *backend,
                     const git_oid *oid) {
  SafeLoose *b = (SafeLoose *)backend;
  struct stat st;
  int fd = open_object(b, oid, &st);
  if (fd < 0) return fd;
  size_t flen = (size_t)st.st_size;
  unsigned char *in = malloc(flen ? flen : 1);
  if (!in) {
    close(fd);
    git_error_set_str(GIT_ERROR_NOMEMORY, "out of memory");
    return -1;
  }
  ssize_t n = read_full(fd, in, flen);
  close(fd);
  if (n < 0 || (size_t)n != flen) {
    free(in);
    return corrupt("the file changed or could not be read", oid);
  }
  if (!is_zlib(in, flen)) {
    free(in);
    return corrupt("not a zlib stream", oid);
  }
  z_stream z;
  memset(&z, 0, sizeof z);
  unsigned char head[MAX_HEADER];
  unsigned char *body = NULL;
  int rc = -1;
  if (inflateInit(&z) != Z_OK) {
    free(in);
    return corrupt("zlib failed to start", oid);
  }
  /* Deflate streams may exceed uInt; feed at most 1 GiB per call. */
  size_t fed = 0;
#define FEED()                                                        \
  do {                                                                \
    if (z.avail_in == 0 && fed < flen) {                              \
      size_t chunk = flen - fed > (1u << 30) ? (1u << 30) : flen - fed; \
      z.next_in = in + fed;                                           \
      z.avail_in = (uInt)chunk;                                       \
      fed += chunk;                                                   \
    }                                                                 \
  } while (0)
  FEED();
  z.next_out = head;
  z.avail_out = sizeof head;
  int zr = Z_OK;
  while (z.avail_out && zr == Z_OK) {
    uInt before_in = z.avail_in, before_out = z.avail_out;
    zr = inflate(&z, Z_NO_FLUSH);
    FEED();
    if (zr == Z_BUF_ERROR || (z.avail_in == before_in && z.avail_out == before_out && fed == flen)) break;
  }
  size_t have = sizeof head - z.avail_out, size = 0;
  git_object_t type;
  size_t hlen = parse_header(head, have, &type, &size);
  if (!hlen) {
    corrupt("no valid header", oid);
    goto done;
  }
  if (size > flen * DEFLATE_MAX_RATIO + MAX_HEADER) {
    corrupt("its header claims more bytes than the file can hold", oid);
    goto done;
  }
  size_t extra = have - hlen;  /* body bytes that came with the header */
  if (extra > size) {
    corrupt("it holds more bytes than its header says", oid);
    goto done;
  }
  if (!(body = git_odb_backend_data_alloc(backend, size + 1))) {
    git_error_set_str(GIT_ERROR_NOMEMORY, "out of memory");
    goto done;
  }
  memcpy(body, head + hlen, extra);
  /* One byte more than the header allows, to notice a longer body. */
  z.next_out = body + extra;
  size_t room = size - extra + 1, produced = extra;
  while (zr == Z_OK) {
    uInt step = room > (1u << 30) ? (1u << 30) : (uInt)room;
    z.avail_out = step;
    uInt before_in = z.avail_in;
    zr = inflate(&z, Z_NO_FLUSH);
    size_t out = step - z.avail_out;
    produced += out;
    room -= out;
    FEED();
    if (produced > size) break;
    if (zr == Z_OK && out == 0 && z.avail_in == before_in) break;  /* no progress: truncated */
  }
#undef FEED
  if (zr != Z_STREAM_END) {
    corrupt(produced > size ? "it holds more bytes than its header says"
            : zr == Z_OK || zr == Z_BUF_ERROR ? "the zlib stream is truncated"
                                              : "the zlib stream is invalid",
            oid);
    goto done;
  }
  if (produced != size) {
    corrupt(produced > size ? "it holds more bytes than its header says" : "it holds fewer bytes than its header says", oid);
    goto done;
  }
  if (z.avail_in || fed < flen) {
    corrupt("bytes follow the end of the zlib stream", oid);
    goto done;
  }
  body[size] = '\0';
  *data_out = body;
  *len_out = size;
  *type_out = type;
  body = NULL;
  rc = 0;
done:
  if (body) git_odb_backend_data_free(backend, body);
  inflateEnd(&z);
  free(in);
  return rc;
}

static int safe_exists(git_odb_backend *backend, const git_oid *oid) {
  struct stat st;
  int fd = open_object((SafeLoose *)backend, oid, &st);
  if (fd >= 0) close(fd);
  git_error_clear();
  return fd >= 0;
}

static void safe_free(git_odb_backend *backend) { free(backend); }

/* Finds the one loose object whose id starts with the first `len` hex
 * digits of `prefix` (libgit2 passes len >= GIT_OID_MINPREFIXLEN = 4) by
 * listing its fan-out directory: 0 with *found set, GIT_ENOTFOUND,
 * GIT_EAMBIGUOUS, or -1 with the error set.  Abbreviated ids (`git
 * rev-parse` prefixes) resolve through this; the pack backend answers for
 * packed objects and the odb layer refuses two different matches. */
static int loose_prefix(SafeLoose *b, const git_oid *prefix, size_t len, git_oid *found) {
  char hex[41];
  git_hexoid(prefix, hex);
  char *path = object_path(b, hex, 0);
  if (!path) return -1;
  DIR *d = opendir(path);
  free(path);
  if (!d) return GIT_ENOTFOUND;
  int matches = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (strlen(e->d_name) != 38 || strncmp(e->d_name, hex + 2, len - 2)) continue;
    char full[41];
    memcpy(full, hex, 2);
    memcpy(full + 2, e->d_name, 39);
    git_oid candidate;
    if (git_oid_fromstrn(&candidate, full, 40)) continue;  /* not an object file */
    if (matches && !git_oid_cmp(&candidate, found)) continue;
    *found = candidate;
    matches++;
  }
  closedir(d);
  git_error_clear();
  if (!matches) return GIT_ENOTFOUND;
  if (matches > 1) {
    git_error_set_str(GIT_ERROR_ODB, "ambiguous object id prefix: more than one loose object matches");
    return GIT_EAMBIGUOUS;
  }
  return 0;
}

static int safe_read_prefix(git_oid *full, void **data_out, size_t *len_out, git_object_t *type_out,
                            git_odb_backend *backend, const git_oid *prefix, size_t len) {
  int err = loose_prefix((SafeLoose *)backend, prefix, len, full);
  return err ? err : safe_read(data_out, len_out, type_out, backend, full);
}

static int safe_exists_prefix(git_oid *full, git_odb_backend *backend, const git_oid *prefix, size_t len) {
  return loose_prefix((SafeLoose *)backend, prefix, len, full);
}

static int safe_loose_new(git_odb_backend **out, const char *dir) {
  size_t n = strlen(dir);
  SafeLoose *b = calloc(1, sizeof *b + n + 1);
  if (!b) return -1;
  git_odb_init_backend(&b->parent, GIT_ODB_BACKEND_VERSION);
  memcpy(b->dir, dir, n + 1);
  b->parent.read = safe_read;
  b->parent.read_header = safe_read_header;
  b->parent.exists = safe_exists;
  b->parent.read_prefix = safe_read_prefix;
  b->parent.exists_prefix = safe_exists_prefix;
  b->parent.free = safe_free;
  *out = &b->parent;
  return 0;
}

/* ---- libgit2's loose backend, for writing only ------------------------- */

typedef struct {
  git_odb_backend parent;
  git_odb_backend *inner;
} WriteOnly;

static int wo_write(git_odb_backend *b, const git_oid *oid, const void *data, size_t len, git_object_t type) {
  git_odb_backend *in = ((WriteOnly *)b)->inner;
  return in->write(in, oid, data, len, type);
}

static int wo_freshen(git_odb_backend *b, const git_oid *oid) {
  git_odb_backend *in = ((WriteOnly *)b)->inner;
  return in->freshen ? in->freshen(in, oid) : GIT_ENOTFOUND;
}

static void wo_free(git_odb_backend *b) {
  git_odb_backend *in = ((WriteOnly *)b)->inner;
  in->free(in);
  free(b);
}

static int write_only_new(git_odb_backend **out, const char *dir) {
  WriteOnly *w = calloc(1, sizeof *w);
  if (!w) return -1;
  int err = git_odb_backend_loose(&w->inner, dir, -1, 0, 0, 0);
  if (err) {
    free(w);
    return err;
  }
  git_odb_init_backend(&w->parent, GIT_ODB_BACKEND_VERSION);
  w->parent.write = wo_write;
  w->parent.freshen = wo_freshen;
  w->parent.free = wo_free;
  *out = &w->parent;
  return 0;
}

/* ---- assembling the database ------------------------------------------- */

static int add_readers(git_odb *odb, const char *dir, int alternate, int depth) {
  git_odb_backend *loose = NULL, *pack = NULL;
  int err = safe_loose_new(&loose, dir);
  if (err) return err;
  err = alternate ? git_odb_add_alternate(odb, loose, 3) : git_odb_add_backend(odb, loose, 3);
  if (err) {
    loose->free(loose);
    return err;
  }
  if ((err = git_odb_backend_pack(&pack, dir))) return err;
  err = alternate ? git_odb_add_alternate(odb, pack, 2) : git_odb_add_backend(odb, pack, 2);
  if (err) {
    pack->free(pack);
    return err;
  }
  if (depth >= MAX_ALTERNATE_DEPTH) return 0;
  /* objects/info/alternates: one objects directory per line, absolute or
   * relative to this one; '#' starts a comment. */
  size_t n = strlen(dir) + 32;
  char *path = malloc(n);
  if (!path) return -1;
  snprintf(path, n, "%s/info/alternates", dir);
  FILE *fp = fopen(path, "re");
  free(path);
  if (!fp) return 0;
  char line[4096];
  while (!err && fgets(line, sizeof line, fp)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    size_t m = strlen(dir) + strlen(line) + 2;
    char *alt = malloc(m);
    if (!alt) {
      err = -1;
      break;
    }
    if (line[0] == '/') snprintf(alt, m, "%s", line);
    else snprintf(alt, m, "%s/%s", dir, line);
    struct stat st;
    if (stat(alt, &st) == 0 && S_ISDIR(st.st_mode)) err = add_readers(odb, alt, 1, depth + 1);
    free(alt);
  }
  fclose(fp);
  return err;
}

int git_use_safe_odb(git_repository *repo) {
  const char *common = git_repository_commondir(repo);
  size_t n = strlen(common) + 16;
  char *dir = malloc(n);
  if (!dir) return -1;
  snprintf(dir, n, "%s%sobjects", common, common[0] && common[strlen(common) - 1] == '/' ? "" : "/");
  git_odb *odb = NULL;
  git_odb_backend *writer = NULL;
  int err = git_odb_new(&odb);
  if (!err) err = add_readers(odb, dir, 0, 0);
  if (!err) err = write_only_new(&writer, dir);
  if (!err && (err = git_odb_add_backend(odb, writer, 1))) writer->free(writer);
  if (!err) err = git_repository_set_odb(repo, odb);
  git_odb_free(odb);
  free(dir);
  return err;
}

int git_open_safe(git_repository **out, const char *path, unsigned flags) {
  int err = git_repository_open_ext(out, path, flags, NULL);
  if (!err && (err = git_use_safe_odb(*out))) {
    git_repository_free(*out);
    *out = NULL;
  }
  return err;
}
