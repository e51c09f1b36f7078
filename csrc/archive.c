/*
 * archive.c: vkit.archive, reading tar streams (plain or gzip) without
 * trusting them.
 *
 *   open(path [, {max_bytes, max_entries, max_name}]) -> reader
 *   reader:next()        -> entry | nil at the end of the archive
 *   reader:read([n])     -> up to n bytes (default 64 KiB) of the current
 *                           entry's data, "" once it is exhausted
 *   reader:info()        -> {compressed = bool, bytes = decompressed so far,
 *                           entries = headers read}
 *   reader:close()       (also __gc, __close)
 *
 * An entry is reported as data, never acted on: {path, kind, type, size,
 * mode, link?} where kind is "file", "dir", "symlink", "hardlink", "char",
 * "block", "fifo" or "other" and type is the raw typeflag character.  GNU
 * long names (L/K) and pax extended headers (path, linkpath, size) are
 * applied to the entry they precede.  Nothing is extracted, no path is
 * interpreted: the caller decides what is safe.
 *
 * The archive is read in one pass, streamed: compressed input through
 * zlib (every gzip member, trailing zero padding allowed), the tar stream
 * in 512-byte blocks.  Failures return nil, message, code with code one
 * of: unsupported-compression (bzip2, xz, zstd, lzip or compress magic
 * where no tar header is), empty (not one tar block, compressed or not), truncated,
 * bad-checksum, bad-header, too-large (more decompressed
 * bytes than max_bytes, headers included), too-many-entries, name-too-long,
 * gzip, not-a-regular-file, or an errno name.
 */
#include "vkit.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define READER "vkit.archive.reader"
#define BLOCK 512
#define IN_SIZE (64 * 1024)

typedef struct {
  int fd;
  int compressed, zdone, zinit, eof_in;
  z_stream z;
  unsigned char in[IN_SIZE];
  long long total, max_bytes;   /* decompressed bytes delivered, cap */
  long long entries, max_entries;
  size_t max_name;
  long long remaining, padding; /* of the current entry's data */
  int ended;                    /* end-of-archive seen or a failure */
  const char *code;             /* set on failure */
  char message[160];
} Reader;

static Reader *checkreader(lua_State *L) {
  Reader *r = luaL_checkudata(L, 1, READER);
  if (r->fd < 0) luaL_error(L, "attempt to use a closed archive reader");
  return r;
}

static void reader_release(Reader *r) {
  if (r->fd >= 0) {
    close(r->fd);
    r->fd = -1;
  }
  if (r->zinit) {
    inflateEnd(&r->z);
    r->zinit = 0;
  }
}

static int reader_close(lua_State *L) {
  reader_release(luaL_checkudata(L, 1, READER));
  return 0;
}

/* The compression whose magic starts in[0..n), when it is one vkit does not
 * read and the bytes are not a tar header (ustar at offset 257): or NULL. */
static const char *foreign_compression(const unsigned char *in, size_t n) {
  if (n >= 262 && memcmp(in + 257, "ustar", 5) == 0) return NULL;
  if (n >= 4 && in[0] == 'B' && in[1] == 'Z' && in[2] == 'h' && in[3] >= '1' && in[3] <= '9') return "bzip2";
  if (n >= 6 && memcmp(in, "\xfd" "7zXZ\0", 6) == 0) return "xz";
  if (n >= 4 && memcmp(in, "\x28\xb5\x2f\xfd", 4) == 0) return "zstd";
  if (n >= 4 && memcmp(in, "LZIP", 4) == 0) return "lzip";
  if (n >= 2 && in[0] == 0x1f && in[1] == 0x9d) return "compress (.Z)";
  return NULL;
}

static int fail(Reader *r, const char *code, const char *msg) {
  r->code = code;
  snprintf(r->message, sizeof r->message, "%s", msg);
  r->ended = 1;
  return -1;
}

/* Refills the raw input buffer; 0 at end of file, -1 on error. */
static int fill_input(Reader *r) {
  ssize_t n;
  do n = read(r->fd, r->in, IN_SIZE); while (n < 0 && errno == EINTR);
  if (n < 0) {
    char buf[120];
    snprintf(buf, sizeof buf, "read error: %s", strerror(errno));
    return fail(r, vkit_errno_name(errno), buf);
  }
  if (n == 0) r->eof_in = 1;
  r->z.next_in = r->in;
  r->z.avail_in = (uInt)n;
  return (int)n;
}

/* Reads up to len bytes of the (decompressed) tar stream into out;
 * returns the count (short only at the end of the stream) or -1. */
static long long stream_read(Reader *r, unsigned char *out, size_t len) {
  size_t got = 0;
  while (got < len) {
    if (!r->compressed) {
      if (r->z.avail_in == 0) {
        if (r->eof_in) break;
        int n = fill_input(r);
        if (n < 0) return -1;
        if (n == 0) break;
      }
      size_t take = len - got < r->z.avail_in ? len - got : r->z.avail_in;
      memcpy(out + got, r->z.next_in, take);
      r->z.next_in += take;
      r->z.avail_in -= (uInt)take;
      got += take;
      continue;
    }
    if (r->zdone) {
      /* between gzip members: skip zero padding, then a new member or the end */
      while (r->z.avail_in > 0 && *r->z.next_in == 0) {
        r->z.next_in++;
        r->z.avail_in--;
      }
      if (r->z.avail_in == 0) {
        if (r->eof_in) break;
        int n = fill_input(r);
        if (n < 0) return -1;
        continue;
      }
      if (inflateReset(&r->z) != Z_OK) return fail(r, "gzip", "cannot restart the gzip stream");
      r->zdone = 0;
    }
    if (r->z.avail_in == 0 && !r->eof_in) {
      if (fill_input(r) < 0) return -1;
    }
    r->z.next_out = out + got;
    r->z.avail_out = (uInt)(len - got);
    int rc = inflate(&r->z, Z_NO_FLUSH);
    got = len - r->z.avail_out;
    if (rc == Z_STREAM_END) {
      r->zdone = 1;
    } else if (rc == Z_BUF_ERROR) {
      if (r->eof_in && r->z.avail_in == 0) return fail(r, "truncated", "gzip stream ends early");
    } else if (rc != Z_OK) {
      char buf[120];
      snprintf(buf, sizeof buf, "gzip: %s", r->z.msg ? r->z.msg : "corrupt stream");
      return fail(r, "gzip", buf);
    }
  }
  r->total += (long long)got;
  if (r->total > r->max_bytes) {
    char buf[120];
    snprintf(buf, sizeof buf, "archive unpacks to more than %lld bytes", r->max_bytes);
    return fail(r, "too-large", buf);
  }
  return (long long)got;
}

/* Exactly one block, or -1 (a short block is truncation, 0 bytes is EOF). */
static int read_block(Reader *r, unsigned char *block, int *eof) {
  long long n = stream_read(r, block, BLOCK);
  if (n < 0) return -1;
  *eof = n == 0;
  if (n > 0 && n < BLOCK) return fail(r, "truncated", "archive ends inside a header block");
  return 0;
}

/* Skips n bytes of the stream. */
static int skip(Reader *r, long long n) {
  unsigned char buf[8192];
  while (n > 0) {
    size_t want = n < (long long)sizeof buf ? (size_t)n : sizeof buf;
    long long got = stream_read(r, buf, want);
    if (got < 0) return -1;
    if (got == 0) return fail(r, "truncated", "archive ends inside an entry");
    n -= got;
  }
  return 0;
}

/* Octal (or GNU base-256) numeric field; -1 when malformed. */
static long long number_field(const unsigned char *p, size_t len) {
  if (p[0] & 0x80) {
    if (p[0] != 0x80) return -1; /* negative or too large */
    long long v = 0;
    for (size_t i = 1; i < len; i++) {
      if (v > (LLONG_MAX >> 8)) return -1;
      v = (v << 8) | p[i];
    }
    return v;
  }
  size_t i = 0;
  while (i < len && (p[i] == ' ' || p[i] == 0)) i++;
  long long v = 0;
  int digits = 0;
  for (; i < len && p[i] >= '0' && p[i] <= '7'; i++, digits++) {
    if (v > (LLONG_MAX >> 3)) return -1;
    v = v * 8 + (p[i] - '0');
  }
  for (; i < len; i++)
    if (p[i] != ' ' && p[i] != 0) return -1;
  return digits ? v : 0;
}

static int checksum_ok(const unsigned char *b) {
  long long want = number_field(b + 148, 8);
  if (want < 0) return 0;
  long long u = 0, s = 0;
  for (int i = 0; i < BLOCK; i++) {
    unsigned char c = (i >= 148 && i < 156) ? ' ' : b[i];
    u += c;
    s += (signed char)c;
  }
  return want == u || want == s;
}

static size_t field_len(const unsigned char *p, size_t max) {
  size_t n = 0;
  while (n < max && p[n]) n++;
  return n;
}

/* Reads an entry's whole data (a long name or pax record set) into a
 * Lua string on the stack; -1 on failure. */
static int read_meta(lua_State *L, Reader *r, long long size) {
  if ((size_t)size > r->max_name + 64 * 1024) return fail(r, "name-too-long", "extended header too long");
  luaL_Buffer b;
  unsigned char *dst = (unsigned char *)luaL_buffinitsize(L, &b, (size_t)size);
  long long got = size ? stream_read(r, dst, (size_t)size) : 0;
  if (got < 0) return -1;
  if (got < size) return fail(r, "truncated", "archive ends inside an extended header");
  luaL_pushresultsize(&b, (size_t)size);
  long long pad = (BLOCK - size % BLOCK) % BLOCK;
  return skip(r, pad);
}

/* Applies pax records ("len key=value\n") from the string at top of stack
 * to the overrides at indices path_idx, link_idx and *size. */
static int apply_pax(lua_State *L, Reader *r, int path_idx, int link_idx, long long *size) {
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  size_t i = 0;
  while (i < len) {
    size_t j = i;
    long long rec = 0;
    while (j < len && s[j] >= '0' && s[j] <= '9') {
      rec = rec * 10 + (s[j] - '0');
      if (rec > (long long)len) break;
      j++;
    }
    if (j >= len || s[j] != ' ' || rec <= 0 || (size_t)rec > len - i) return fail(r, "bad-header", "malformed pax record");
    const char *kv = s + j + 1, *end = s + i + rec - 1; /* end points at the '\n' */
    if (*end != '\n') return fail(r, "bad-header", "malformed pax record");
    const char *eq = memchr(kv, '=', (size_t)(end - kv));
    if (!eq) return fail(r, "bad-header", "malformed pax record");
    size_t klen = (size_t)(eq - kv), vlen = (size_t)(end - eq - 1);
    if (klen == 4 && !memcmp(kv, "path", 4)) {
      if (vlen > r->max_name) return fail(r, "name-too-long", "pax path too long");
      lua_pushlstring(L, eq + 1, vlen);
      lua_replace(L, path_idx);
    } else if (klen == 8 && !memcmp(kv, "linkpath", 8)) {
      lua_pushlstring(L, eq + 1, vlen);
      lua_replace(L, link_idx);
    } else if (klen == 4 && !memcmp(kv, "size", 4)) {
      long long v = 0;
      for (size_t k = 0; k < vlen; k++) {
        char c = eq[1 + k];
        if (c < '0' || c > '9' || v > (LLONG_MAX - 9) / 10) return fail(r, "bad-header", "malformed pax size");
        v = v * 10 + (c - '0');
      }
      *size = v;
    }
    i += (size_t)rec;
  }
  lua_pop(L, 1);
  return 0;
}

static const char *kind_of(char t, const char *name, size_t nlen) {
  switch (t) {
    case '0': case '7': return "file";
    case '\0': return (nlen && name[nlen - 1] == '/') ? "dir" : "file";
    case '1': return "hardlink";
    case '2': return "symlink";
    case '3': return "char";
    case '4': return "block";
    case '5': return "dir";
    case '6': return "fifo";
    default: return "other";
  }
}

static int push_failure(lua_State *L, Reader *r) {
  return vkit_fail(L, r->code ? r->code : "bad-header", "%s", r->message);
}

static int reader_next(lua_State *L) {
  Reader *r = checkreader(L);
  lua_settop(L, 1);
  if (r->code) return push_failure(L, r);
  if (r->ended) return 0;
  if (skip(r, r->remaining + r->padding) < 0) return push_failure(L, r);
  r->remaining = r->padding = 0;
  lua_pushnil(L); /* 2: path override */
  lua_pushnil(L); /* 3: link override */
  long long size_override = -1;
  unsigned char b[BLOCK];
  for (;;) {
    int eof = 0;
    if (read_block(r, b, &eof) < 0) return push_failure(L, r);
    if (eof && r->total == 0) { /* not even an end-of-archive block: tar(1) and Python's tarfile refuse it */
      fail(r, "empty", "archive is empty (no tar block at all)");
      return push_failure(L, r);
    }
    if (eof) { r->ended = 1; return 0; }
    int zero = 1;
    for (int i = 0; i < BLOCK && zero; i++) zero = b[i] == 0;
    if (zero) { r->ended = 1; return 0; }
    if (!checksum_ok(b)) {
      fail(r, "bad-checksum", "tar header checksum mismatch (not a tar archive, or a corrupt one)");
      return push_failure(L, r);
    }
    if (++r->entries > r->max_entries) {
      char buf[120];
      snprintf(buf, sizeof buf, "archive has more than %lld entries", r->max_entries);
      fail(r, "too-many-entries", buf);
      return push_failure(L, r);
    }
    long long size = number_field(b + 124, 12);
    long long mode = number_field(b + 100, 8);
    if (size < 0 || mode < 0) {
      fail(r, "bad-header", "malformed size or mode field");
      return push_failure(L, r);
    }
    char t = (char)b[156];
    if (t == 'L' || t == 'K' || t == 'x' || t == 'g') {
      if (read_meta(L, r, size) < 0) return push_failure(L, r);
      if (t == 'L' || t == 'K') {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        lua_pushlstring(L, s, field_len((const unsigned char *)s, n));
        lua_remove(L, -2);
        lua_replace(L, t == 'L' ? 2 : 3);
      } else if (t == 'x') {
        if (apply_pax(L, r, 2, 3, &size_override) < 0) return push_failure(L, r);
      } else {
        lua_pop(L, 1); /* global pax headers carry nothing an entry needs */
      }
      continue;
    }
    if (size_override >= 0) size = size_override;
    /* the entry itself */
    lua_createtable(L, 0, 6);
    if (!lua_isnil(L, 2)) {
      lua_pushvalue(L, 2);
    } else {
      luaL_Buffer nb;
      luaL_buffinit(L, &nb);
      int ustar = !memcmp(b + 257, "ustar", 5);
      size_t plen = ustar ? field_len(b + 345, 155) : 0;
      if (plen) {
        luaL_addlstring(&nb, (const char *)b + 345, plen);
        luaL_addchar(&nb, '/');
      }
      luaL_addlstring(&nb, (const char *)b, field_len(b, 100));
      luaL_pushresult(&nb);
    }
    size_t nlen;
    const char *name = lua_tolstring(L, -1, &nlen);
    if (nlen > r->max_name) {
      fail(r, "name-too-long", "member name too long");
      return push_failure(L, r);
    }
    const char *kind = kind_of(t, name, nlen);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushlstring(L, &t, t ? 1 : 0);
    lua_setfield(L, -2, "type");
    lua_pushinteger(L, (lua_Integer)mode & 07777);
    lua_setfield(L, -2, "mode");
    if (!lua_isnil(L, 3)) {
      lua_pushvalue(L, 3);
    } else {
      lua_pushlstring(L, (const char *)b + 157, field_len(b + 157, 100));
    }
    lua_setfield(L, -2, "link");
    lua_pushinteger(L, (lua_Integer)size);
    lua_setfield(L, -2, "size");
    /* as in the common readers, only regular files (and unknown types)
     * are followed by data blocks; a directory's or link's size is not */
    int has_data = !strcmp(kind, "file") || !strcmp(kind, "other");
    r->remaining = has_data ? size : 0;
    r->padding = has_data ? (BLOCK - size % BLOCK) % BLOCK : 0;
    return 1;
  }
}

static int reader_read(lua_State *L) {
  Reader *r = checkreader(L);
  lua_Integer want = luaL_optinteger(L, 2, 64 * 1024);
  luaL_argcheck(L, want > 0, 2, "read size must be positive");
  if (r->code) return push_failure(L, r);
  if (r->remaining == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  if (want > r->remaining) want = (lua_Integer)r->remaining;
  luaL_Buffer b;
  unsigned char *dst = (unsigned char *)luaL_buffinitsize(L, &b, (size_t)want);
  long long got = stream_read(r, dst, (size_t)want);
  if (got < 0) return push_failure(L, r);
  if (got < want) {
    fail(r, "truncated", "archive ends inside an entry");
    return push_failure(L, r);
  }
  r->remaining -= got;
  luaL_pushresultsize(&b, (size_t)got);
  return 1;
}

static int reader_info(lua_State *L) {
  Reader *r = checkreader(L);
  lua_createtable(L, 0, 3);
  lua_pushboolean(L, r->compressed);
  lua_setfield(L, -2, "compressed");
  lua_pushinteger(L, (lua_Integer)r->total);
  lua_setfield(L, -2, "bytes");
  lua_pushinteger(L, (lua_Integer)r->entries);
  lua_setfield(L, -2, "entries");
  return 1;
}

static int archive_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max_bytes = 4LL << 30, max_entries = 100000, max_name = 4096;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    max_bytes = vkit_optintfield(L, 2, "max_bytes", max_bytes);
    max_entries = vkit_optintfield(L, 2, "max_entries", max_entries);
    max_name = vkit_optintfield(L, 2, "max_name", max_name);
  }
  luaL_argcheck(L, max_bytes > 0 && max_entries > 0 && max_name > 0 && max_name <= (1 << 20), 2,
                "limits must be positive (max_name at most 1 MiB)");
  struct stat st;
  int fd = vkit_open_regular(L, path, 0, &st);
  if (fd < 0) return 3;
  Reader *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  r->fd = fd;
  luaL_setmetatable(L, READER);
  r->max_bytes = max_bytes;
  r->max_entries = max_entries;
  r->max_name = (size_t)max_name;
  int n = fill_input(r);
  if (n < 0) return push_failure(L, r);
  if (r->z.avail_in >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
    r->compressed = 1;
    unsigned char *next = r->z.next_in;
    uInt avail = r->z.avail_in;
    if (inflateInit2(&r->z, 15 + 16) != Z_OK) {
      reader_release(r);
      return vkit_fail(L, "gzip", "cannot start zlib");
    }
    r->zinit = 1;
    r->z.next_in = next;
    r->z.avail_in = avail;
  } else {
    const char *other = foreign_compression(r->z.next_in, r->z.avail_in);
    if (other) {
      reader_release(r);
      return vkit_fail(L, "unsupported-compression", "%s-compressed: unsupported compression (vkit reads plain and gzip-compressed tar)", other);
    }
  }
  return 1;
}

static const luaL_Reg reader_methods[] = {
  {"next", reader_next}, {"read", reader_read}, {"info", reader_info}, {"close", reader_close}, {NULL, NULL}};
static const luaL_Reg reader_meta[] = {{"__gc", reader_close}, {"__close", reader_close}, {NULL, NULL}};
static const luaL_Reg archive_funcs[] = {{"open", archive_open}, {NULL, NULL}};

int luaopen_vkit_archive(lua_State *L) {
  vkit_newclass(L, READER, reader_methods, reader_meta);
  luaL_newlib(L, archive_funcs);
  return 1;
}
