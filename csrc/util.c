/* util.c: the small helpers vkit.h promises every module. */
#include "vkit.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* 1 MiB reads keep the syscall count low; the digest, not I/O, dominates. */
#define HASH_CHUNK (1 << 20)

int vkit_sha256_fd(int fd, unsigned char digest[32], long long *size) {
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  unsigned char *buf = malloc(HASH_CHUNK);
  int err = 0;
  long long total = 0;
  if (!ctx || !buf || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
    err = ENOMEM;
    goto done;
  }
  for (;;) {
    ssize_t n = read(fd, buf, HASH_CHUNK);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      goto done;
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx, buf, (size_t)n);
    total += n;
  }
  EVP_DigestFinal_ex(ctx, digest, NULL);
  if (size) *size = total;
done:
  free(buf);
  EVP_MD_CTX_free(ctx);
  return err;
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
