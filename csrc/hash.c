/*
 * hash.c: vkit.hash, SHA-256 (OpenSSL's, through vkit_sha256*: csrc/util.c).
 *
 *   sha256(bytes)        -> lowercase hex
 *   file(path [, {nofollow}]) -> hex, size | nil, message, code (streamed)
 *   new()                -> hasher: h:update(bytes) -> h, h:hexdigest()
 *   evidence_digest(set) -> hex | nil, message, code
 *
 * A failure inside OpenSSL (or no memory for its context) raises: a
 * digest is never made up.
 *
 * The evidence digest (seed 000: "digest of sorted evidence path/hash pairs")
 * is SHA-256 over the records `path || 0x00 || sha256-hex || 0x0a`, one per
 * pair, sorted by the bytes of `path` (memcmp order).  `set` is an array of
 * `{path = ..., sha256 = ...}` tables.  Paths must be non-empty and free of
 * NUL and newline; hashes are 64 lowercase hex digits; duplicate paths are
 * refused.  The separators make the encoding injective.
 */
#include "vkit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define HASHER "vkit.hasher"

static int hash_sha256(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  unsigned char md[32];
  char hex[65];
  if (vkit_sha256(s, len, md) != 0) return luaL_error(L, VKIT_SHA256_FAILED);
  vkit_hex(md, 32, hex);
  lua_pushstring(L, hex);
  return 1;
}

static int hash_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int nofollow = 0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "nofollow");
    nofollow = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  struct stat st;
  int fd = vkit_open_regular(L, path, nofollow, &st); /* only regular files hash */
  if (fd < 0) return 3;
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  unsigned char md[32];
  char hex[65];
  long long size = 0;
  int err = vkit_sha256_fd(fd, md, &size);
  close(fd);
  if (err) return vkit_fail_errno(L, err, path);
  vkit_hex(md, 32, hex);
  lua_pushstring(L, hex);
  lua_pushinteger(L, size);
  return 2;
}

/* ---- incremental hasher ------------------------------------------------ */

typedef struct { VkitSha256 *ctx; } Hasher; /* ctx NULL: closed */

static Hasher *checkhasher(lua_State *L) {
  Hasher *h = luaL_checkudata(L, 1, HASHER);
  if (!h->ctx) luaL_error(L, "attempt to use a closed hasher");
  return h;
}

static int hash_new(lua_State *L) {
  Hasher *h = lua_newuserdatauv(L, sizeof *h, 0);
  h->ctx = NULL;
  luaL_setmetatable(L, HASHER); /* before the context: __gc frees it on any error */
  if (!(h->ctx = vkit_sha256_new())) return luaL_error(L, VKIT_SHA256_FAILED);
  return 1;
}

static int hasher_update(lua_State *L) {
  Hasher *h = checkhasher(L);
  size_t len;
  const char *s = luaL_checklstring(L, 2, &len);
  vkit_sha256_update(h->ctx, s, len);
  lua_settop(L, 1);
  return 1;
}

/* Digest of everything so far; the hasher stays usable (copy, then final). */
static int hasher_hexdigest(lua_State *L) {
  Hasher *h = checkhasher(L);
  VkitSha256 *copy = vkit_sha256_copy(h->ctx);
  unsigned char md[32];
  char hex[65];
  if (!copy || vkit_sha256_final(copy, md) != 0) return luaL_error(L, VKIT_SHA256_FAILED);
  vkit_hex(md, 32, hex);
  lua_pushstring(L, hex);
  return 1;
}

static int hasher_gc(lua_State *L) {
  Hasher *h = luaL_checkudata(L, 1, HASHER);
  vkit_sha256_free(h->ctx);
  h->ctx = NULL;
  return 0;
}

static int hasher_tostring(lua_State *L) {
  Hasher *h = luaL_checkudata(L, 1, HASHER);
  lua_pushfstring(L, "vkit.hasher (%s)", h->ctx ? "open" : "closed");
  return 1;
}

/* ---- evidence digest ---------------------------------------------------- */

typedef struct { const char *path; size_t len; const char *hash; } Pair;

static int cmp_pair(const void *a, const void *b) {
  const Pair *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->path, y->path, n);
  if (c) return c;
  return (x->len > y->len) - (x->len < y->len);
}

static int is_hex64(const char *s, size_t len) {
  if (len != 64) return 0;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

/* vkit.hash.is_digest(v): is v a string of 64 lowercase hex digits, the
 * form every digest here takes?  (A Lua pattern over the same 64 bytes
 * cost a hundred instructions a byte: 2% of a cold verification.) */
static int hash_is_digest(lua_State *L) {
  size_t len;
  const char *s = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : NULL;
  lua_pushboolean(L, s && is_hex64(s, len));
  return 1;
}

static int hash_evidence_digest(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 1);
  Pair *pairs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(Pair), 0);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_geti(L, 1, i) != LUA_TTABLE)
      return luaL_error(L, "evidence_digest: entry %d is not a table", (int)i);
    size_t plen, hlen;
    lua_getfield(L, -1, "path");
    lua_getfield(L, -2, "sha256");
    const char *p = lua_tolstring(L, -2, &plen);
    const char *h = lua_tolstring(L, -1, &hlen);
    if (!p || lua_type(L, -2) != LUA_TSTRING || plen == 0 || memchr(p, 0, plen) ||
        memchr(p, '\n', plen))
      return vkit_fail(L, "invalid-evidence-path", "entry %d: path must be a non-empty string without NUL or newline", (int)i);
    if (!h || lua_type(L, -1) != LUA_TSTRING || !is_hex64(h, hlen))
      return vkit_fail(L, "invalid-sha256", "entry %d (%s): sha256 must be 64 lowercase hex digits", (int)i, p);
    /* The strings stay alive: they are referenced by the table at index 1. */
    pairs[i - 1] = (Pair){p, plen, h};
    lua_pop(L, 3);
  }
  qsort(pairs, (size_t)n, sizeof(Pair), cmp_pair);
  for (lua_Integer i = 1; i < n; i++)
    if (cmp_pair(&pairs[i - 1], &pairs[i]) == 0)
      return vkit_fail(L, "duplicate-evidence-path", "evidence path listed twice: %s", pairs[i].path);
  VkitSha256 *ctx = vkit_sha256_new();
  if (!ctx) return luaL_error(L, VKIT_SHA256_FAILED);
  for (lua_Integer i = 0; i < n; i++) {
    vkit_sha256_update(ctx, pairs[i].path, pairs[i].len);
    vkit_sha256_update(ctx, "\0", 1);
    vkit_sha256_update(ctx, pairs[i].hash, 64);
    vkit_sha256_update(ctx, "\n", 1);
  }
  unsigned char md[32];
  char hex[65];
  if (vkit_sha256_final(ctx, md) != 0) return luaL_error(L, VKIT_SHA256_FAILED);
  vkit_hex(md, 32, hex);
  lua_pushstring(L, hex);
  return 1;
}

static const luaL_Reg hasher_methods[] = {
  {"update", hasher_update}, {"hexdigest", hasher_hexdigest}, {NULL, NULL}};
static const luaL_Reg hasher_meta[] = {
  {"__gc", hasher_gc}, {"__close", hasher_gc}, {"__tostring", hasher_tostring}, {NULL, NULL}};

static const luaL_Reg hash_funcs[] = {
  {"sha256", hash_sha256},
  {"file", hash_file},
  {"new", hash_new},
  {"evidence_digest", hash_evidence_digest},
  {"is_digest", hash_is_digest},
  {NULL, NULL}};

int luaopen_vkit_hash(lua_State *L) {
  vkit_newclass(L, HASHER, hasher_methods, hasher_meta);
  luaL_newlib(L, hash_funcs);
  return 1;
}
