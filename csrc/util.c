/* util.c: the small helpers vkit.h promises every module. */
#include "vkit.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

volatile sig_atomic_t vkit_interrupt_requested;

int vkit_fail(lua_State *L, const char *code, const char *fmt, ...) {
  va_list ap;
  lua_pushnil(L);
  va_start(ap, fmt);
  lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  lua_pushstring(L, code);
  return 3;
}

const char *vkit_errno_name(int err) {
  switch (err) {
#define E(x) case x: return #x;
    E(EPERM) E(ENOENT) E(ESRCH) E(EINTR) E(EIO) E(ENXIO) E(E2BIG) E(ENOEXEC)
    E(EBADF) E(ECHILD) E(EAGAIN) E(ENOMEM) E(EACCES) E(EFAULT) E(EBUSY)
    E(EEXIST) E(EXDEV) E(ENODEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(ENFILE)
    E(EMFILE) E(ETXTBSY) E(EFBIG) E(ENOSPC) E(ESPIPE) E(EROFS) E(EMLINK)
    E(EPIPE) E(ENAMETOOLONG) E(ENOSYS) E(ENOTEMPTY) E(ELOOP) E(EOVERFLOW)
    E(EOPNOTSUPP) E(ETIMEDOUT) E(EDQUOT)
#undef E
    default: return "EUNKNOWN";
  }
}

int vkit_fail_errno(lua_State *L, int err, const char *what) {
  return vkit_fail(L, vkit_errno_name(err), "%s: %s", what, strerror(err));
}

int vkit_write_all(int fd, const void *bytes, size_t len) {
  const char *p = bytes;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

void vkit_hex(const unsigned char *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}

/*
 * SHA-256 is OpenSSL's, through EVP.  The digest is fetched once, at the
 * first hash (a command that hashes nothing sets up no provider; the
 * library's own start, its tables relocated at exec, every command pays:
 * docs/vac-performance.md, "OpenSSL's start"), from
 * the default provider with OpenSSL's configuration file NOT read: which
 * SHA-256 vkit computes is not for openssl.cnf or OPENSSL_CONF to change
 * (a provider loaded by a configuration is code run inside the verifier),
 * and reading it was two thirds of OpenSSL's first-hash cost
 * (docs/vac-performance.md).  Nor does it load the tables of every cipher
 * and digest: vkit asks for one digest by name.  Nor does it free its
 * tables one by one at exit (OPENSSL_INIT_NO_ATEXIT): the kernel takes the
 * memory back, and LeakSanitizer sees it still reachable.
 */
struct VkitSha256 {
  EVP_MD_CTX *md;
  int failed; /* an EVP call failed: the digest is not to be trusted */
};

static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha256_md;

static void sha256_fetch(void) {
  if (OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                              OPENSSL_INIT_NO_ADD_ALL_DIGESTS | OPENSSL_INIT_NO_ATEXIT,
                          NULL))
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

/* 0 once OpenSSL has given the digest, or EIO. */
static int sha256_ready(void) {
  pthread_once(&sha256_once, sha256_fetch);
  return sha256_md ? 0 : EIO;
}

VkitSha256 *vkit_sha256_new(void) {
  if (sha256_ready() != 0) return NULL;
  VkitSha256 *ctx = malloc(sizeof *ctx);
  if (!ctx) return NULL;
  ctx->failed = 0;
  ctx->md = EVP_MD_CTX_new();
  if (!ctx->md || !EVP_DigestInit_ex2(ctx->md, sha256_md, NULL)) {
    EVP_MD_CTX_free(ctx->md);
    free(ctx);
    return NULL;
  }
  return ctx;
}

void vkit_sha256_update(VkitSha256 *ctx, const void *bytes, size_t len) {
  if (!ctx->failed && len && !EVP_DigestUpdate(ctx->md, bytes, len)) ctx->failed = 1;
}

VkitSha256 *vkit_sha256_copy(const VkitSha256 *ctx) {
  VkitSha256 *copy = vkit_sha256_new();
  if (copy && !EVP_MD_CTX_copy_ex(copy->md, ctx->md)) {
    vkit_sha256_free(copy);
    return NULL;
  }
  if (copy) copy->failed = ctx->failed;
  return copy;
}

void vkit_sha256_free(VkitSha256 *ctx) {
  if (!ctx) return;
  EVP_MD_CTX_free(ctx->md);
  free(ctx);
}

int vkit_sha256_final(VkitSha256 *ctx, unsigned char digest[32]) {
  unsigned int n = 0;
  int ok = !ctx->failed && EVP_DigestFinal_ex(ctx->md, digest, &n) && n == 32;
  vkit_sha256_free(ctx);
  return ok ? 0 : EIO;
}

int vkit_sha256(const void *bytes, size_t len, unsigned char digest[32]) {
  if (sha256_ready() != 0) return EIO;
  VkitSha256 *ctx = vkit_sha256_new();
  if (!ctx) return ENOMEM;
  vkit_sha256_update(ctx, bytes, len);
  return vkit_sha256_final(ctx, digest);
}

/* 1 MiB reads keep the syscall count low; the digest, not I/O, dominates. */
#define HASH_CHUNK (1 << 20)

int vkit_sha256_fd(int fd, unsigned char digest[32], long long *size) {
  if (sha256_ready() != 0) return EIO;
  unsigned char *buf = malloc(HASH_CHUNK);
  VkitSha256 *ctx = buf ? vkit_sha256_new() : NULL;
  long long total = 0;
  if (!ctx) {
    free(buf);
    return ENOMEM;
  }
  for (;;) {
    ssize_t n = read(fd, buf, HASH_CHUNK);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      free(buf);
      vkit_sha256_free(ctx);
      return err;
    }
    if (n == 0) break;
    vkit_sha256_update(ctx, buf, (size_t)n);
    total += n;
  }
  free(buf);
  if (size) *size = total;
  return vkit_sha256_final(ctx, digest);
}

const char *vkit_crypto_version(void) { return OpenSSL_version(OPENSSL_VERSION); }

void vkit_setfield_str(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

void vkit_setfield_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

void vkit_newclass(lua_State *L, const char *name, const luaL_Reg *methods,
                   const luaL_Reg *metamethods) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, metamethods, 0);
  lua_newtable(L);
  luaL_setfuncs(L, methods, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

/* ---- whole files (vkit.fs.read, vkit.json.read) ----------------------- */

#define FILE_BYTES "vkit.file_bytes"

/* Buffers of this size or more are anonymous mappings advised to use huge
 * pages: reading tens of megabytes into fresh 4 KiB pages cost more, in
 * page faults and TLB misses, than decoding them. */
#define HUGE_INPUT ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

void vkit_file_bytes_release(VkitFileBytes *b) {
  if (b->mapped) munmap(b->data, b->cap);
  else free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->mapped = 0;
}

static int file_bytes_gc(lua_State *L) {
  vkit_file_bytes_release(lua_touserdata(L, 1));
  return 0;
}

/* Makes room for cap bytes, keeping the contents; 0, or -1 out of memory. */
static int file_bytes_reserve(VkitFileBytes *b, size_t cap) {
  int mapped = cap >= HUGE_INPUT;
  char *d;
  if (mapped) {
    cap = (cap + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    d = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (d == MAP_FAILED) return -1;
    madvise(d, cap, MADV_HUGEPAGE); /* advice: without transparent huge pages nothing changes */
  } else if (!(d = malloc(cap ? cap : 1))) {
    return -1;
  }
  size_t len = b->len;
  if (len) memcpy(d, b->data, len);
  vkit_file_bytes_release(b);
  b->data = d;
  b->len = len;
  b->cap = cap;
  b->mapped = mapped;
  return 0;
}

/* Reads fd to its end into b from a first capacity of size + 1 (the extra
 * byte sees the end; at least a page, for /proc files that report 0),
 * doubling it if the file grew; 0, -1 with errno, -2 past max bytes, -3 out
 * of memory.  A read that comes back short once the file's stat size is
 * reached is its end (a regular file's read is short only there), so a
 * file that did not grow costs one read, not a second that returns 0;
 * a file that reports no size (/proc) is read until a read returns 0. */
static int file_bytes_fill(VkitFileBytes *b, int fd, size_t size, lua_Integer max) {
  for (size_t cap = size < 4096 ? 4096 : size + 1;; cap = b->cap * 2) {
    if (file_bytes_reserve(b, cap) != 0) return -3;
    while (b->len < b->cap) {
      size_t want = b->cap - b->len;
      ssize_t n = read(fd, b->data + b->len, want);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -1;
      if (n == 0) return 0;
      b->len += (size_t)n;
      if ((lua_Integer)b->len > max) return -2;
      if (size > 0 && b->len >= size && (size_t)n < want) return 0;
    }
  }
}

int vkit_open_regular(lua_State *L, const char *path, int nofollow, struct stat *st) {
  return vkit_open_regular_at(L, AT_FDCWD, path, path, nofollow, st);
}

int vkit_open_regular_at(lua_State *L, int dirfd, const char *name, const char *path, int nofollow, struct stat *st) {
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
  int err = fd < 0 ? errno : 0;
  if (!err && fstat(fd, st) != 0) err = errno;
  /* O_NONBLOCK stays: it has no effect on a regular file (open(2)), and
   * only kept a FIFO put in the file's place from holding the open. */
  if (!err && S_ISREG(st->st_mode)) return fd;
  if (fd >= 0) close(fd);
  if (nofollow && err == ELOOP) vkit_fail(L, "not-a-regular-file", "%s: is a symbolic link", path);
  else if (err) vkit_fail_errno(L, err, path);
  else vkit_fail(L, "not-a-regular-file", "%s: not a regular file", path);
  return -1;
}

VkitFileBytes *vkit_read_file(lua_State *L, const char *path, lua_Integer max, int nofollow) {
  return vkit_read_file_at(L, AT_FDCWD, path, path, max, nofollow);
}

VkitFileBytes *vkit_read_file_at(lua_State *L, int dirfd, const char *name, const char *path, lua_Integer max,
                                 int nofollow) {
  /* The userdata comes first: nothing that can raise runs while fd is open. */
  VkitFileBytes *b = vkit_newgcdata(L, sizeof *b, FILE_BYTES, file_bytes_gc);
  struct stat st;
  int fd = vkit_open_regular_at(L, dirfd, name, path, nofollow, &st);
  if (fd < 0) {
    lua_remove(L, -4); /* the userdata, under the failure */
    return NULL;
  }
  int status, err = 0;
  if (st.st_size > max) {
    status = -5;
  } else {
    status = file_bytes_fill(b, fd, (size_t)st.st_size, max);
    err = errno;
  }
  close(fd);
  if (status == 0) return b;
  vkit_file_bytes_release(b);
  lua_pop(L, 1);
  switch (status) {
    case -3: luaL_error(L, "out of memory reading %s", path); break;
    case -5:
      vkit_fail(L, "too-large", "%s: %I bytes exceeds the %I-byte limit", path, (LUAI_UACINT)st.st_size,
                (LUAI_UACINT)max);
      break;
    case -2: vkit_fail(L, "too-large", "%s: exceeds the %I-byte limit", path, (LUAI_UACINT)max); break;
    default: vkit_fail_errno(L, err, path);
  }
  return NULL;
}

void *vkit_newgcdata(lua_State *L, size_t size, const char *name, lua_CFunction gc) {
  void *p = lua_newuserdatauv(L, size, 0);
  memset(p, 0, size);
  if (luaL_newmetatable(L, name)) {
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return p;
}

lua_Integer vkit_optintfield(lua_State *L, int idx, const char *k, lua_Integer def) {
  lua_Integer v = def;
  int t = lua_getfield(L, idx, k);
  if (t != LUA_TNIL) {
    int isnum;
    v = lua_tointegerx(L, -1, &isnum);
    if (!isnum) luaL_error(L, "field '%s' must be an integer", k);
  }
  lua_pop(L, 1);
  return v;
}
