/*
 * json_read.c: vkit.json.read - a file decoded without its bytes becoming
 * a Lua string, checked against a pin, its top-level array member streamed
 * to a function or tallied (json_tally.c), a large tallied file read in
 * chunks on a second thread that hashes them (csrc/chunks.c).
 */
#include "json.h"
#include "chunks.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)256 << 10) /* json.read's tally: chunks that stay in the caches */

/* ======================================================================
 * Hashing while decoding
 * ====================================================================== */

typedef struct { pthread_t thread; VkitSha256 *ctx; const void *bytes; size_t len; int running; } HashJob;

static void *hash_job_run(void *arg) {
  HashJob *j = arg;
  vkit_sha256_update(j->ctx, j->bytes, j->len);
  return NULL;
}

/* Hashes len bytes into j->ctx on another thread (or here, if no thread
 * can be had); hash_job_wait before the bytes change. */
static void hash_job_start(HashJob *j, const void *bytes, size_t len) {
  j->bytes = bytes;
  j->len = len;
  j->running = pthread_create(&j->thread, NULL, hash_job_run, j) == 0;
  if (!j->running) hash_job_run(j);
}

static void hash_job_wait(HashJob *j) {
  if (j->running) pthread_join(j->thread, NULL);
  j->running = 0;
}

/* ======================================================================
 * Tallied rows, from the buffer or from chunks
 * ====================================================================== */

/* What a chunked read (read_chunked) holds, in a userdata: released on any
 * exit, a raised error included (the thread stopped, the file closed, the
 * gathered rest freed). */
typedef struct {
  VkitChunks *chunks;
  VkitSha256 *sha;
  unsigned char *rest;     /* everything after the streamed array (chunk_gather) */
  size_t rest_cap;
  int fd;
} ChunkedRead;

/* Stops the reading and closes the file; 1 when every byte was read. */
static int chunked_release(ChunkedRead *c) {
  int complete = c->chunks && vkit_chunks_finish(c->chunks);
  c->chunks = NULL;
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  free(c->rest);
  c->rest = NULL;
  return complete;
}

static int chunked_gc(lua_State *L) {
  ChunkedRead *c = lua_touserdata(L, 1);
  chunked_release(c);
  if (c->sha) {
    vkit_sha256_free(c->sha);
    c->sha = NULL;
  }
  return 0;
}

/* The rows hook's state (Parser.rows_data): the tally, its combos table,
 * and for a chunked read where the file stands.  With chunks, p..end is
 * the chunk at hand and the rest of the file comes from chunks.  The
 * streamed array's rows are read on across chunks (a row a chunk cuts is
 * read again with the next one behind it); once the array closes, all
 * that follows is gathered into the read's rest and parsed as usual.  What
 * this cannot read (a row longer than a carried tail may be, anything
 * before the array past the first chunk) fails, and the file is then read
 * whole. */
typedef struct {
  Tally *tally;
  int combos;              /* stack slot of its combos table */
  ChunkedRead *chunked;    /* NULL: the whole file is in the buffer */
  int last;                /* the chunk at hand is the file's last */
  size_t read;             /* bytes of the file handed over so far */
  size_t margin;           /* a row starting this near a chunk's end waits for the next */
} TallyRows;

/* The next chunk, behind the unread tail of the one at hand; 0, or -1
 * (code "chunked": the file is to be read whole). */
static int chunk_more(Parser *ps, TallyRows *r) {
  const unsigned char *data;
  size_t n, tail = (size_t)(ps->end - ps->p);
  int last = 1, err = 0;
  int got = vkit_chunks_next_after(r->chunked->chunks, ps->p, tail, &data, &n, &last, &err);
  if (got < 0) return json_perr(ps, ps->p, "chunked", "cannot read on in chunks (%s)", strerror(err));
  if (got == 0) { /* the file ended where the last chunk did (the tail is then empty) */
    r->last = 1;
    return 0;
  }
  r->read += n - tail;
  r->last = last;
  ps->start = ps->p = data;
  ps->end = data + n;
  return 0;
}

/* At least need bytes readable at p, or all that is left of the file.
 * (This and chunk_skip_ws run at every row: inlined, they cost a compare
 * or two when the chunk holds what is needed; a call costs more.) */
static inline __attribute__((always_inline)) int chunk_ahead(Parser *ps, TallyRows *r, size_t need) {
  while (r->chunked && !r->last && (size_t)(ps->end - ps->p) < need)
    if (chunk_more(ps, r)) return -1;
  return 0;
}

/* skip_ws, on into the next chunk when white space reaches the end of one. */
static inline __attribute__((always_inline)) int chunk_skip_ws(Parser *ps, TallyRows *r) {
  for (;;) {
    skip_ws(ps);
    if (ps->p < ps->end || !r->chunked || r->last) return 0;
    if (chunk_more(ps, r)) return -1;
  }
}

/* Everything after p, to the end of the file, into the read's rest;
 * parsing goes on there. */
static int chunk_gather(Parser *ps, TallyRows *r) {
  ChunkedRead *c = r->chunked;
  size_t len = 0;
  for (;;) {
    size_t n = (size_t)(ps->end - ps->p);
    if (json_reserve(&c->rest, &c->rest_cap, len, n + 1)) return json_perr(ps, ps->p, "chunked", "out of memory");
    memcpy(c->rest + len, ps->p, n);
    len += n;
    ps->p = ps->end;
    if (r->last) break;
    if (chunk_more(ps, r)) return -1;
  }
  ps->start = ps->p = c->rest;
  ps->end = c->rest + len;
  return 0;
}

/* The rows hook (ParseRows): the streamed member's elements counted in C,
 * no value per element. */
static int tally_rows_hook(Parser *ps, lua_Integer *count) {
  TallyRows *r = ps->rows_data;
  lua_Integer i = 0;
  if (chunk_skip_ws(ps, r)) return -1;
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
  } else {
    for (;;) {
      if (chunk_ahead(ps, r, r->margin)) return -1;
      const unsigned char *next = json_tally_row(ps->L, r->tally, ps->p, ps->end, r->combos, ps->object_mt);
      if (!next && r->chunked && !r->last) { /* perhaps the chunk's end cut it: again, with more */
        json_tally_unread_row(r->tally);
        if (chunk_more(ps, r)) return -1;
        continue;
      }
      if (!next)
        return json_perr(ps, ps->p, "not-exact", "row %d: %s", (int)json_tally_rows(r->tally), json_tally_why(r->tally));
      ps->p = next;
      i++;
      if (chunk_skip_ws(ps, r)) return -1;
      if (ps->p >= ps->end) return json_perr(ps, ps->p, "invalid-json", "unterminated array");
      if (*ps->p == ']') { ps->p++; break; }
      if (*ps->p != ',') return json_perr(ps, ps->p, "invalid-json", "expected ',' or ']'");
      ps->p++;
      if (chunk_skip_ws(ps, r)) return -1;
    }
  }
  if (r->chunked && chunk_gather(ps, r)) return -1;
  *count = i;
  return 0;
}

/* ======================================================================
 * read
 * ====================================================================== */

/* json.read's results for a tally, the document on the stack top: the
 * document without the streamed member's placeholder, and the tally (its
 * `read`: "chunks" or "whole", how the file was read). */
static int finish_tally(lua_State *L, Tally *tally, int chunked) {
  lua_pushvalue(L, 4);
  lua_pushnil(L);
  lua_rawset(L, -3);
  json_tally_result(L, tally, 10);
  json_tally_free(tally);
  lua_pushstring(L, chunked ? "chunks" : "whole");
  lua_setfield(L, -2, "read");
  return 2;
}

/*
 * json.read's tally of a file of at least two chunks (the stack as
 * json_read leaves it: 4 the stream key, 9 the tally, 10 its combos), read
 * in chunks on a second thread that hashes them (csrc/chunks.c) while the
 * rows are scanned as they come: no buffer of the file's size, and the
 * reading overlaps the scan.  0 with the document on the stack top; a
 * count of results pushed (the file refused as vkit.fs.read refuses it,
 * or bytes that do not hold the pin); or -1, the tally and its combos
 * reset, when the file is to be read whole instead: smaller than two
 * chunks, over max, or anything that did not decode here (the whole read
 * then decides it, and names what is wrong).
 */
static int read_chunked(lua_State *L, const char *path, lua_Integer max, int nofollow, int max_depth,
                        const char *pin, Tally *tally, size_t chunk) {
  struct stat st;
  ChunkedRead *c = vkit_newgcdata(L, sizeof *c, "vkit.json.chunked", chunked_gc); /* 11 */
  c->fd = -1;
  int fd = vkit_open_regular(L, path, nofollow, &st);
  if (fd < 0) return 3;
  c->fd = fd;
  if (st.st_size > max || st.st_size < (off_t)(2 * chunk)) {
    chunked_release(c);
    lua_settop(L, 10);
    return -1;
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (pin && !(c->sha = vkit_sha256_new())) return luaL_error(L, VKIT_SHA256_FAILED);
  c->chunks = vkit_chunks_start(fd, chunk, chunk, 1, c->sha);
  int status = -1;
  Parser ps;
  json_parser_init(&ps, L, NULL, 0, max_depth);
  TallyRows rows = {.tally = tally, .combos = 10, .chunked = c, .margin = chunk / 8};
  if (c->chunks) {
    ps.stream_fn = 5;
    ps.stream_key = lua_tolstring(L, 4, &ps.stream_key_len);
    ps.rows = tally_rows_hook;
    ps.rows_data = &rows;
    status = chunk_more(&ps, &rows);
    if (status == 0) status = json_decode_buffer(&ps, ARRAY_MT_UV, OBJECT_MT_UV, 0);
  }
  /* decoded only if the streamed array closed (so all after it was read
   * too) and the file held the bytes fstat counted */
  int whole = status == 0 && c->rest && rows.read == (size_t)st.st_size;
  int complete = chunked_release(c);
  if (whole && complete && c->sha) {
    char hex[65];
    json_final_hex(c->sha, hex);
    c->sha = NULL;
    if (memcmp(hex, pin, 64) != 0) {
      lua_settop(L, 10);
      return json_push_mismatch(L, pin, hex); /* whatever was decoded is dropped */
    }
  }
  if (whole && complete) {
    lua_remove(L, 11); /* the userdata, under the document */
    return 0;
  }
  lua_settop(L, 10);
  json_tally_reset(tally);
  lua_newtable(L);
  lua_replace(L, 10);
  return -1;
}

/*
 * read(path, max_bytes [, {max_depth, nofollow}]): decode(the file's bytes),
 * without making them a Lua string: the bytes are read at their size into a
 * buffer that is freed once the value is built.  The file is refused as
 * vkit.fs.read refuses it (not a regular file, larger than max_bytes, a
 * symbolic link with nofollow), with `nil, message, code`; a document that
 * does not decode fails as decode does, `nil, message, code, byte_offset`.
 * When the document is an object: with stream = name and each = function,
 * the elements of its member `name`, if that is an array, go to each(i, v)
 * as they are decoded and are not kept (read then returns value, count);
 * with fields = {names...} as well, an element that is an object keeps only
 * those members (the others are read and checked, and dropped); with
 * order_of = name and each_key = function, the keys of its member `name`,
 * if that is an object, go to each_key(key) in document order.  With
 * stream = name and tally = {fields...}, the member's elements are tallied
 * (json_tally.c) and read returns value, {rows, combos, read}; a file of at
 * least two chunks (chunk = bytes, 4096..64 MiB, default 256 KiB; 0 reads
 * whole) is then read in chunks hashed on a second thread as the rows are
 * scanned (read_chunked; read = "chunks", else "whole").
 */
int json_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_checkinteger(L, 2);
  luaL_argcheck(L, max >= 0, 2, "max_bytes must be >= 0");
  int max_depth = json_opt_depth(L, 3);
  int nofollow = json_opt_flag(L, 3, "nofollow");
  const char *pin = json_opt_pin(L, 3);
  lua_settop(L, 3);
  lua_pushnil(L); /* 4: stream key */
  lua_pushnil(L); /* 5: stream function */
  lua_pushnil(L); /* 6: order key */
  lua_pushnil(L); /* 7: order function */
  lua_pushnil(L); /* 8: the set of fields a streamed element keeps */
  if (lua_istable(L, 3)) {
    static const char *const names[] = {"stream", "each", "order_of", "each_key"};
    for (int i = 0; i < 4; i++) {
      lua_getfield(L, 3, names[i]);
      lua_replace(L, 4 + i);
    }
    int tallied = lua_getfield(L, 3, "tally") != LUA_TNIL;
    lua_pop(L, 1);
    for (int i = 4; i <= 6; i += 2) {
      luaL_argcheck(L, lua_isnil(L, i) == lua_isnil(L, i + 1) || (i == 4 && tallied && lua_isnil(L, 5)), 3,
                    "stream/each and order_of/each_key go in pairs");
      luaL_argcheck(L, lua_isnil(L, i) || lua_type(L, i) == LUA_TSTRING, 3, "stream and order_of name a member");
      luaL_argcheck(L, lua_isnil(L, i + 1) || lua_isfunction(L, i + 1), 3, "each and each_key must be functions");
    }
    if (lua_getfield(L, 3, "fields") != LUA_TNIL) {
      luaL_argcheck(L, lua_istable(L, -1) && !lua_isnil(L, 4), 3, "fields is an array of names, with stream");
      lua_newtable(L);
      for (lua_Integer i = 1; lua_rawgeti(L, -2, i) != LUA_TNIL; i++) {
        luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, 3, "fields is an array of names");
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
      }
      lua_pop(L, 1);
      lua_replace(L, 8);
    }
    lua_pop(L, 1);
  }
  /* 9: the tally, 10: its combos (json.read's tally = {fields...}) */
  Tally *tally = NULL;
  if (lua_istable(L, 3) && lua_getfield(L, 3, "tally") != LUA_TNIL) {
    luaL_argcheck(L, lua_type(L, 4) == LUA_TSTRING && lua_isnil(L, 5) && lua_isnil(L, 8), 3,
                  "tally goes with stream, without each or fields");
    tally = json_tally_new(L, 9, 3);
    lua_replace(L, 9); /* the names stay anchored by opts.tally */
    lua_newtable(L);
  } else {
    lua_settop(L, 8);
    lua_pushnil(L);
    lua_pushnil(L);
  }
  size_t chunk = 0; /* json.read's tally reads a large file in chunks of this size (0: whole) */
  if (tally) {
    lua_Integer n = vkit_optintfield(L, 3, "chunk", (lua_Integer)READ_CHUNK);
    luaL_argcheck(L, n == 0 || (n >= 4096 && n <= ((lua_Integer)64 << 20)), 3, "chunk must be 0 or 4096..64 MiB");
    chunk = lua_isnil(L, 7) ? (size_t)n : 0; /* key order is read from a whole buffer */
  }
  if (tally && chunk) {
    int pushed = read_chunked(L, path, max, nofollow, max_depth, pin, tally, (size_t)chunk);
    if (pushed > 0) {
      json_tally_free(tally);
      return pushed;
    }
    if (pushed == 0) return finish_tally(L, tally, 1);
  }
  VkitFileBytes *buf = vkit_read_file(L, path, max, nofollow); /* as vkit.fs.read refuses */
  if (!buf) return 3;
  /* With a pin the bytes are hashed before anything of them reaches Lua,
   * on a second thread while they are decoded when nothing is handed out
   * before the end (no each / each_key), else first. */
  HashJob job = {0};
  int concurrent = pin && buf->len >= ((size_t)1 << 20) && lua_isnil(L, 5) && lua_isnil(L, 7);
  if (pin && !concurrent && json_pin_mismatch(L, buf->data, buf->len, pin)) return 4; /* nothing is parsed */
  if (concurrent) {
    if (!(job.ctx = vkit_sha256_new())) return luaL_error(L, VKIT_SHA256_FAILED);
    hash_job_start(&job, buf->data, buf->len);
  }
  Parser ps;
  json_parser_init(&ps, L, buf->data, buf->len, max_depth);
  TallyRows rows = {.tally = tally, .combos = 10};
  if (!lua_isnil(L, 5) || tally) {
    ps.stream_fn = 5;
    ps.stream_key = lua_tolstring(L, 4, &ps.stream_key_len);
    ps.keep = lua_isnil(L, 8) ? 0 : 8;
  }
  if (tally) {
    ps.rows = tally_rows_hook;
    ps.rows_data = &rows;
  }
  if (!lua_isnil(L, 7)) {
    ps.order_fn = 7;
    ps.order_key = lua_tolstring(L, 6, &ps.order_key_len);
  }
  int status = json_decode_buffer(&ps, ARRAY_MT_UV, OBJECT_MT_UV, 0);
  if (concurrent) {
    char hex[65];
    hash_job_wait(&job);
    json_final_hex(job.ctx, hex);
    if (memcmp(hex, pin, 64) != 0) {
      vkit_file_bytes_release(buf);
      if (tally) json_tally_free(tally);
      return json_push_mismatch(L, pin, hex); /* whatever was decoded is dropped */
    }
  }
  vkit_file_bytes_release(buf); /* the value no longer needs the bytes */
  if (status != 0) {
    if (tally) json_tally_free(tally);
    return json_push_parse_error(L, &ps);
  }
  if (ps.streamed < 0) {
    if (tally) json_tally_free(tally);
    return 1;
  }
  if (!tally) {
    lua_pushvalue(L, 4); /* the member's placeholder goes */
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pushinteger(L, ps.streamed);
    return 2;
  }
  return finish_tally(L, tally, 0);
}
