/*
 * json.c: vkit.json, the one strict JSON reader and the canonical writer.
 *
 * Everything vkit hashes, compares or validates is decoded here, so a
 * document means one thing to vkit.  The decoder follows RFC 8259 exactly
 * and refuses, with `nil, message, code, byte_offset`:
 *   invalid-json         any syntax error (comments, trailing commas, NaN,
 *                        Infinity, leading zeros, bad escapes, raw control
 *                        characters, lone surrogates, trailing bytes, BOM);
 *   invalid-utf8         malformed, overlong or surrogate UTF-8;
 *   duplicate-key        an object key that repeats (message names it);
 *   too-deep             nesting beyond max_depth (default 256, at most
 *                        4096), or beyond what half the C stack's soft
 *                        limit holds (a small `ulimit -s`);
 *   number-out-of-range  a number that overflows a double (1e400).
 * Values: objects and arrays are tables carrying the metatables
 * vkit.json.object_mt / vkit.json.array_mt, so {} and [] survive a round
 * trip; null is the sentinel vkit.json.null (distinct from absent); a
 * number without fraction or exponent that fits 64 bits is a Lua integer,
 * anything else a float.
 *
 * encode(v [, {indent = n}]) writes sorted-key JSON; canonical(v) writes
 * RFC 8785 (JCS) bytes: keys sorted by UTF-16 code units, ECMAScript number
 * formatting, minimal escapes; digest(v) is SHA-256 of canonical(v);
 * exact_key(v) is bytes that tell apart exactly the values that differ in
 * type or value (1, 1.0, true; 0.0, -0.0), for comparing, never shown.
 * Tables without a JSON metatable are arrays when their keys are exactly
 * 1..n and objects when every key is a string; an unmarked empty table is
 * refused because [] and {} hash differently (mark it with array()/object()).
 */
#include "vkit.h"
#include "chunks.h"

#include <fcntl.h>
#include <endian.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define ARRAY_MT "vkit.json.array"
#define OBJECT_MT "vkit.json.object"
/* Every function of the module holds the two metatables as upvalues 1 and 2,
 * so marking and classifying a table never looks a name up. */
#define ARRAY_MT_UV lua_upvalueindex(1)
#define OBJECT_MT_UV lua_upvalueindex(2)
/* The depth a caller that names none gets; policies/api.lua's
 * json_max_depth and json_max_depth_cap say the same (the module exports
 * both, and tests/c_limits_spec.lua holds them equal). */
#define DEFAULT_MAX_DEPTH 256
/* The parser recurses once per level (~210 bytes of C stack a level here,
 * ~350 under ASan; 8 MiB overflowed at ~40,000 and ~22,000 levels), so the
 * deepest nesting any caller may allow is a hard cap far below that, and
 * the stack itself is watched as well (see enter). */
#define MAX_DEPTH_CAP 4096

static char null_sentinel;
#define PUSH_NULL(L) lua_pushlightuserdata(L, &null_sentinel)
/* Stands, while its object is parsed, for a member a projection drops. */
static char dropped_sentinel;
#define PUSH_DROPPED(L) lua_pushlightuserdata(L, &dropped_sentinel)
#define IS_DROPPED(L, i) (lua_type(L, i) == LUA_TLIGHTUSERDATA && lua_touserdata(L, i) == &dropped_sentinel)

/* ======================================================================
 * UTF-8
 * ====================================================================== */

/* Length of the valid UTF-8 sequence at p (0 if invalid); *cp gets it. */
static size_t utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *cp) {
  unsigned c = p[0];
  if (c < 0x80) { *cp = c; return 1; }
  size_t n;
  uint32_t v, min;
  if (c >= 0xC2 && c <= 0xDF) { n = 2; v = c & 0x1F; min = 0x80; }
  else if (c >= 0xE0 && c <= 0xEF) { n = 3; v = c & 0x0F; min = 0x800; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 4; v = c & 0x07; min = 0x10000; }
  else return 0;
  if ((size_t)(end - p) < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (p[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

/* ======================================================================
 * The encoder's output, in a userdata whose __gc frees it if an error
 * unwinds the stack.  (json.read's input is vkit_read_file's, util.c.)
 * ====================================================================== */

typedef struct { char *data; size_t len, cap; } Out;
#define OUT "vkit.json.out"

static void out_release(Out *o) {
  free(o->data);
  o->data = NULL;
  o->len = o->cap = 0;
}

static int out_gc(lua_State *L) {
  out_release(luaL_checkudata(L, 1, OUT));
  return 0;
}

static void out_add(lua_State *L, Out *o, const char *s, size_t n) {
  if (o->len + n > o->cap) {
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + n) cap *= 2;
    char *d = realloc(o->data, cap);
    if (!d) luaL_error(L, "out of memory in vkit.json");
    o->data = d;
    o->cap = cap;
  }
  memcpy(o->data + o->len, s, n);
  o->len += n;
}
#define OUT_LIT(L, o, s) out_add(L, o, s, sizeof(s) - 1)

/* ======================================================================
 * Decoder
 * ====================================================================== */

#define ARRAY_BATCH 32  /* elements held on the stack (see parse_array) */
#define OBJECT_BATCH 16 /* key/value pairs held on the stack */
#define KEYED_DEPTH 64  /* levels whose held keys are compared in C */

typedef struct { const char *s; size_t len; } HeldKey;

/* ======================================================================
 * Tallies: rows counted by the values of a few named fields, without a
 * Lua value per row
 *
 * A tally reads rows (the lines of a JSON Lines file, or the elements of a
 * document's top-level array member) and groups them by the scalar values
 * of the fields it is asked for: each distinct combination of values is
 * one entry {row = {field = value...}, n = rows, first = its first row},
 * in order of first appearance.  The rules applied to those values are
 * the caller's.  The scanner decides only inputs it can vouch for: every
 * row an object whose named fields are absent or scalars, no escape in a
 * key or a named field's string, at most TALLY_KEYS keys per object, at
 * most TALLY_DEPTH levels, no line break Python would cut at (JSON
 * Lines); anything else, including any input the decoder would refuse,
 * ends the tally with code "not-exact" and the row where it gave up, so
 * the caller decodes the input the ordinary way and names what is wrong
 * exactly as the decoder does.  It never accepts what the decoder refuses.
 * ====================================================================== */

#define TALLY_FIELDS 16
#define TALLY_KEYS 32
#define SHAPE_KEY_TEXT 64 /* the longest key, as written, a tally remembers in its place */
#define TALLY_DEPTH 256
#define TALLY_COMBOS (1 << 16)
#define TALLY_CHUNK ((size_t)2 << 20) /* a huge page */
#define READ_CHUNK ((size_t)256 << 10) /* json.read's tally: chunks that stay in the caches */
#define TALLY_AHEAD ((off_t)1 << 20) /* a file this large is read ahead on a second thread */

enum { T_ABSENT, T_NULL, T_TRUE, T_FALSE, T_INT, T_FLOAT, T_STRING };

typedef struct { const char *s; size_t len; } Name;

typedef struct {
  uint64_t hash;
  size_t key_at, key_len; /* in the arena */
  lua_Integer n, first;
  int index;              /* 1-based position in the combos table */
} Combo;

typedef struct Tally {
  int nfields;
  Name fields[TALLY_FIELDS];
  int lines;              /* JSON Lines: Python-only line breaks are not decided */
  /* the current row: each field's token (tag + payload) in key[] */
  const unsigned char *val[TALLY_FIELDS];
  size_t val_len[TALLY_FIELDS];
  unsigned char tag[TALLY_FIELDS];
  lua_Integer ival[TALLY_FIELDS];
  double fval[TALLY_FIELDS];
  unsigned char *key;
  size_t key_cap;
  Combo *slots;           /* open addressing, cap a power of two */
  size_t cap, count;
  char *arena;
  size_t arena_len, arena_cap;
  lua_Integer rows, line; /* rows counted; the line being read (JSON Lines) */
  /* The keys of the last row, in order, with the field each names: each
   * key's lead as it was written - the ',' before it (but the first's),
   * the key with its quotes, and the ':' when it follows at once.  A row
   * that repeats them is read by comparing bytes, its keys already known
   * valid and distinct: scan_object compares the key as written (the lead
   * without its ','), scan_row_fast the whole lead. */
  struct Shape {
    unsigned char lead[1 + SHAPE_KEY_TEXT];
    size_t lead_len, klen;
    int field, colon;
  } shape[TALLY_KEYS];
  size_t str_bytes;       /* the current row's named string values, in bytes */
  int shape_n;
  int fast_n;             /* shape_n when every key is followed by its ':', else 0 */
  const char *why;        /* why the tally gave up */
} Tally;


static const unsigned char *tally_row(lua_State *L, Tally *t, const unsigned char *p, const unsigned char *end,
                                      int combos, int object_mt);
static int reserve_bytes(void *bufp, size_t *cap, size_t len, size_t n);

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

typedef struct {
  lua_State *L;
  const unsigned char *start, *p, *end;
  int depth, max_depth;
  uintptr_t stack_base;    /* decode_buffer's frame */
  size_t stack_budget;     /* bytes of C stack the parse may use below it */
  int array_mt, object_mt; /* stack slots holding the two metatables */
  int key_cache;           /* stack slot of the key cache (see parse_key) */
  /* Streaming (json.read's stream/each): the elements of the top-level
   * member named stream_key, when it is an array, go to the function in
   * stack slot stream_fn instead of into the document. */
  int stream_fn;
  const char *stream_key;
  size_t stream_key_len;
  int stream_next;         /* the value about to be parsed is that member */
  lua_Integer streamed;    /* its element count, or -1 when none was streamed */
  /* Projection (json.read's fields): a streamed element that is an object
   * keeps only the members named in the set in stack slot keep; the other
   * members are read and checked as any, and dropped without their strings
   * being made (discard is set while such a value is parsed). */
  int keep;
  int project_next;        /* the value about to be parsed is a streamed element */
  int discard;
  /* Key order (json.read's order_of/each_key): the keys of the top-level
   * member named order_key, when it is an object, go to the function in
   * stack slot order_fn in document order (tables forget it). */
  int order_fn;
  const char *order_key;
  size_t order_key_len;
  int order_next;          /* the value about to be parsed is that member */
  /* Tally (json.read's tally): the streamed member's elements are counted
   * by tally_row into the combos table at stack slot tally_combos. */
  Tally *tally;
  int tally_combos;
  /* Chunked input (json.read's tally of a large file, read_chunked): p..end
   * is the chunk at hand and the rest of the file comes from chunks.  The
   * streamed array's rows are read on across chunks (a row a chunk cuts is
   * read again with the next one behind it); once the array closes, all
   * that follows is gathered into rest and read as usual.  What this cannot
   * read (a row longer than a carried tail may be, anything before the
   * array past the first chunk) fails, and the file is then read whole. */
  ChunkedRead *chunked;
  int chunk_last;          /* the chunk at hand is the file's last */
  size_t chunk_read;       /* bytes of the file handed over so far */
  size_t chunk_margin;     /* a row starting this near a chunk's end waits for the next */
  const char *code;      /* set on failure */
  size_t offset;
  char message[200];
  /* The held keys of the objects being parsed at depths 1..KEYED_DEPTH,
   * anchored by their strings on the Lua stack: duplicate detection by
   * pointer (interned) or bytes, without a call into Lua per pair. */
  HeldKey keys[KEYED_DEPTH][OBJECT_BATCH];
} Parser;

/* Bytes a string scan must stop at: the quote, the backslash, control
 * characters (refused) and the first byte of every multi-byte sequence
 * (validated). */
static const unsigned char string_stop[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(1), R16(1),                                   /* 0x00-0x1F */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x20-0x2F: '"' */
    R16(0), R16(0),                                   /* 0x30-0x4F */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,   /* 0x50-0x5F: '\\' */
    R16(0), R16(0),                                   /* 0x60-0x7F */
    R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1)};
#undef R16

/* The first byte at or after p that a string scan stops at (string_stop),
 * or end: sixteen bytes at a time, then eight. */
static inline const unsigned char *string_run_end(const unsigned char *p, const unsigned char *end) {
#ifdef __SSE2__
  /* sixteen bytes at a time: a signed compare below ' ' flags the control
   * characters and every byte of a multi-byte sequence at once */
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(' ');
  for (; end - p >= 16; p += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                _mm_cmplt_epi8(v, space));
    unsigned m = (unsigned)_mm_movemask_epi8(stop);
    if (m) return p + __builtin_ctz(m);
  }
#endif
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  for (; end - p >= 8; p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    w = le64toh(w); /* the first byte lowest; a borrow only runs upwards */
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t stop = (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & high;
    if (stop) return p + __builtin_ctzll(stop) / 8;
  }
  while (p < end && !string_stop[*p]) p++;
  return p;
}

static int perr(Parser *ps, const unsigned char *at, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int perr(Parser *ps, const unsigned char *at, const char *code, const char *fmt, ...) {
  va_list ap;
  ps->code = code;
  ps->offset = (size_t)(at - ps->start);
  va_start(ap, fmt);
  vsnprintf(ps->message, sizeof ps->message, fmt, ap);
  va_end(ap);
  return -1;
}

static inline int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Indented documents are mostly white space between short tokens: sixteen
 * bytes at a time, after the common case of none at all. */
static inline void skip_ws(Parser *ps) {
  const unsigned char *p = ps->p, *end = ps->end;
  if (p < end && !is_ws(*p)) return;
#ifdef __SSE2__
  const __m128i space = _mm_set1_epi8(' '), lf = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t'),
                cr = _mm_set1_epi8('\r');
  for (; end - p >= 16; p += 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, space), _mm_cmpeq_epi8(v, lf)),
                              _mm_or_si128(_mm_cmpeq_epi8(v, tab), _mm_cmpeq_epi8(v, cr)));
    unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xffffu;
    if (other) {
      ps->p = p + __builtin_ctz(other);
      return;
    }
  }
#endif
  while (p < end && is_ws(*p)) p++;
  ps->p = p;
}

static int hex4(const unsigned char *p, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return 0;
  }
  *out = v;
  return 1;
}

static void add_utf8(luaL_Buffer *b, uint32_t cp) {
  char out[4];
  int n;
  if (cp < 0x80) { out[0] = (char)cp; n = 1; }
  else if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
  else if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
  } else {
    out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
  }
  luaL_addlstring(b, out, (size_t)n);
}

/* Parses a string starting at the opening quote; pushes it, or while a
 * dropped member is parsed, the dropped sentinel (checked all the same). */
static int parse_string(Parser *ps) {
  const unsigned char *open = ps->p++;
  const unsigned char *run = ps->p;
  /* Fast path: no escapes. */
  while (ps->p < ps->end) {
    ps->p = string_run_end(ps->p, ps->end);
    if (ps->p >= ps->end) break;
    unsigned c = *ps->p;
    if (c == '"') {
      if (ps->discard) PUSH_DROPPED(ps->L);
      else lua_pushlstring(ps->L, (const char *)run, (size_t)(ps->p - run));
      ps->p++;
      return 0;
    }
    if (c == '\\') break;
    if (c < 0x20) return perr(ps, ps->p, "invalid-json", "raw control character in string");
    if (c < 0x80) { ps->p++; continue; }
    uint32_t cp;
    size_t n = utf8_decode(ps->p, ps->end, &cp);
    if (!n) return perr(ps, ps->p, "invalid-utf8", "invalid UTF-8 in string");
    ps->p += n;
  }
  if (ps->p >= ps->end) return perr(ps, open, "invalid-json", "unterminated string");
  luaL_Buffer b;
  luaL_buffinit(ps->L, &b);
  while (ps->p < ps->end) {
    /* the bytes up to the next escape go in at once, multi-byte sequences
     * validated on the way */
    for (;;) {
      ps->p = string_run_end(ps->p, ps->end);
      if (ps->p >= ps->end || *ps->p < 0x80) break;
      uint32_t cp;
      size_t n = utf8_decode(ps->p, ps->end, &cp);
      if (!n) return perr(ps, ps->p, "invalid-utf8", "invalid UTF-8 in string");
      ps->p += n;
    }
    luaL_addlstring(&b, (const char *)run, (size_t)(ps->p - run));
    if (ps->p >= ps->end) break;
    unsigned c = *ps->p;
    if (c == '"') {
      ps->p++;
      luaL_pushresult(&b);
      if (ps->discard) {
        lua_pop(ps->L, 1);
        PUSH_DROPPED(ps->L);
      }
      return 0;
    }
    if (c < 0x20) return perr(ps, ps->p, "invalid-json", "raw control character in string");
    const unsigned char *esc = ps->p; /* c is the backslash */
    if (ps->end - ps->p < 2) return perr(ps, esc, "invalid-json", "unterminated escape");
    char e = (char)ps->p[1];
    ps->p += 2;
    switch (e) {
      case '"': luaL_addchar(&b, '"'); break;
      case '\\': luaL_addchar(&b, '\\'); break;
      case '/': luaL_addchar(&b, '/'); break;
      case 'b': luaL_addchar(&b, '\b'); break;
      case 'f': luaL_addchar(&b, '\f'); break;
      case 'n': luaL_addchar(&b, '\n'); break;
      case 'r': luaL_addchar(&b, '\r'); break;
      case 't': luaL_addchar(&b, '\t'); break;
      case 'u': {
        uint32_t cp, lo;
        if (ps->end - ps->p < 4 || !hex4(ps->p, &cp))
          return perr(ps, esc, "invalid-json", "bad \\u escape");
        ps->p += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return perr(ps, esc, "invalid-json", "lone low surrogate \\u%04X", (unsigned)cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' || !hex4(ps->p + 2, &lo) ||
              lo < 0xDC00 || lo > 0xDFFF)
            return perr(ps, esc, "invalid-json", "lone high surrogate \\u%04X", (unsigned)cp);
          ps->p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        add_utf8(&b, cp);
        break;
      }
      default:
        return perr(ps, esc, "invalid-json", "invalid escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
    }
    run = ps->p;
  }
  return perr(ps, open, "invalid-json", "unterminated string");
}

/*
 * Parses an object key.  Documents repeat their keys (every row of an array
 * of objects has the same ones), and interning a string hashes all of it,
 * so the key cache remembers the last key seen at each (depth, position):
 * a plain ASCII key with the same bytes reuses that string.  Anything else
 * goes through parse_string, which validates it.  A held key (position <
 * OBJECT_BATCH at depth <= KEYED_DEPTH) is cached and its bytes returned.
 */
static int parse_key(Parser *ps, int position, HeldKey *key) {
  lua_State *L = ps->L;
  int discard = ps->discard; /* a key is made even inside a dropped member */
  ps->discard = 0;
  int status = 0;
  const unsigned char *run = ps->p + 1, *q = run;
  if (key) q = string_run_end(q, ps->end);
  if (!key || q >= ps->end || *q != '"') {
    status = parse_string(ps);
    if (status == 0 && key) key->s = lua_tolstring(L, -1, &key->len);
  } else {
    size_t len = (size_t)(q - run);
    lua_Integer slot = (lua_Integer)(ps->depth - 1) * OBJECT_BATCH + position + 1;
    ps->p = q + 1;
    if (lua_rawgeti(L, ps->key_cache, slot) == LUA_TSTRING) {
      key->s = lua_tolstring(L, -1, &key->len);
      if (key->len == len && memcmp(key->s, run, len) == 0) goto done;
    }
    lua_pop(L, 1);
    key->s = lua_pushlstring(L, (const char *)run, len);
    key->len = len;
    lua_pushvalue(L, -1);
    lua_rawseti(L, ps->key_cache, slot);
  }
done:
  ps->discard = discard;
  return status;
}

/* The double nearest the decimal number s..p (already validated: -?digits,
 * optional .digits, optional exponent) in the cases where one IEEE
 * multiplication or division gives it exactly rounded (Clinger's fast
 * path: at most 19 significant digits making an integer of at most 2^53,
 * and a power of ten within 10^22, both exact doubles); 0 when strtod must
 * decide. */
static int fast_decimal(const unsigned char *s, const unsigned char *p, double *out) {
  static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const unsigned char *d = s + (*s == '-');
  uint64_t m = 0;
  int digits = 0, scale = 0;
  for (; d < p && *d >= '0' && *d <= '9'; d++) {
    if (m || *d != '0') digits++;
    m = m * 10 + (uint64_t)(*d - '0');
    if (digits > 19) return 0;
  }
  if (d < p && *d == '.') {
    for (d++; d < p && *d >= '0' && *d <= '9'; d++) {
      if (m || *d != '0') digits++;
      m = m * 10 + (uint64_t)(*d - '0');
      scale--;
      if (digits > 19) return 0;
    }
  }
  if (d < p) { /* the exponent */
    int neg = 0, e = 0;
    d++;
    if (*d == '+' || *d == '-') neg = *d++ == '-';
    for (; d < p; d++) {
      e = e * 10 + (*d - '0');
      if (e > 400) return 0;
    }
    scale += neg ? -e : e;
  }
  if (m > ((uint64_t)1 << 53) || scale < -22 || scale > 22) return 0;
  double v = (double)m;
  v = scale < 0 ? v / pow10[-scale] : v * pow10[scale];
  *out = *s == '-' ? -v : v;
  return 1;
}

static int parse_number(Parser *ps) {
  const unsigned char *s = ps->p, *p = ps->p;
  int integral = 1;
  if (p < ps->end && *p == '-') p++;
  if (p >= ps->end || *p < '0' || *p > '9') return perr(ps, s, "invalid-json", "invalid number");
  if (*p == '0') {
    p++;
    if (p < ps->end && *p >= '0' && *p <= '9') return perr(ps, s, "invalid-json", "leading zero in number");
  } else {
    while (p < ps->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < ps->end && *p == '.') {
    integral = 0;
    p++;
    if (p >= ps->end || *p < '0' || *p > '9') return perr(ps, s, "invalid-json", "digit expected after '.'");
    while (p < ps->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < ps->end && (*p == 'e' || *p == 'E')) {
    integral = 0;
    p++;
    if (p < ps->end && (*p == '+' || *p == '-')) p++;
    if (p >= ps->end || *p < '0' || *p > '9') return perr(ps, s, "invalid-json", "digit expected in exponent");
    while (p < ps->end && *p >= '0' && *p <= '9') p++;
  }
  size_t len = (size_t)(p - s);
  ps->p = p;
  if (integral) {
    /* Exact 64-bit integer when it fits; larger integers become floats. */
    const unsigned char *d = s + (*s == '-');
    uint64_t v = 0;
    int overflow = 0;
    for (; d < p; d++) {
      unsigned digit = *d - '0';
      if (v > (UINT64_MAX - digit) / 10) { overflow = 1; break; }
      v = v * 10 + digit;
    }
    if (!overflow) {
      if (*s == '-' && v <= (uint64_t)INT64_MAX + 1) {
        lua_pushinteger(ps->L, (lua_Integer)(0 - v));
        return 0;
      }
      if (*s != '-' && v <= (uint64_t)INT64_MAX) {
        lua_pushinteger(ps->L, (lua_Integer)v);
        return 0;
      }
    }
  }
  double fast;
  if (fast_decimal(s, p, &fast)) {
    lua_pushnumber(ps->L, fast);
    return 0;
  }
  char small[64];
  char *buf = len < sizeof small ? small : malloc(len + 1);
  if (!buf) return perr(ps, s, "invalid-json", "out of memory");
  memcpy(buf, s, len);
  buf[len] = '\0';
  double v = strtod(buf, NULL);
  if (buf != small) free(buf);
  if (isinf(v)) return perr(ps, s, "number-out-of-range", "number does not fit a double");
  lua_pushnumber(ps->L, v);
  return 0;
}

static int literal(Parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
    return perr(ps, ps->p, "invalid-json", "unexpected character");
  ps->p += n;
  return 0;
}

static int parse_value(Parser *ps);

static int enter(Parser *ps) {
  if (++ps->depth > ps->max_depth)
    return perr(ps, ps->p, "too-deep", "nesting deeper than %d", ps->max_depth);
  /* the stack grows down on every target vkit builds for; the frame
   * address, not a local's, which ASan may keep on a heap "fake stack" */
  if (ps->stack_base - (uintptr_t)__builtin_frame_address(0) > ps->stack_budget)
    return perr(ps, ps->p, "too-deep", "nesting deeper than the C stack allows (%d levels)", ps->depth - 1);
  luaL_checkstack(ps->L, 8, "JSON nesting");
  return 0;
}

/*
 * Tables are made at their final size.  The first members of an array or
 * object are parsed onto the Lua stack, and the table is created when the
 * container closes (or, for a larger one, when the batch is full: its
 * later members are then set as they come).  Growing a table member by
 * member rehashes it at every power of two, which dominated decoding.
 */
/* Pushes a table of the given shape carrying the metatable in stack slot mt. */
static void new_container(Parser *ps, int narr, int nrec, int mt) {
  lua_createtable(ps->L, narr, nrec);
  lua_pushvalue(ps->L, mt);
  lua_setmetatable(ps->L, -2);
}

/* Moves the n array elements above slot base into a new table left at base+1. */
static void collect_array(Parser *ps, int base, int n, int narr) {
  lua_State *L = ps->L;
  new_container(ps, narr, 0, ps->array_mt);
  lua_rotate(L, base + 1, 1);
  for (int i = n; i >= 1; i--) lua_rawseti(L, base + 1, i);
}

/* Moves the n key/value pairs above slot base into a new table left at
 * base+1, except the pairs whose bit is set in skip (bit i: pair i+1). */
static void collect_object(Parser *ps, int base, int n, int nrec, unsigned skip) {
  lua_State *L = ps->L;
  new_container(ps, 0, nrec, ps->object_mt);
  lua_rotate(L, base + 1, 1);
  for (int i = n - 1; i >= 0; i--) {
    if (skip >> i & 1u) lua_pop(L, 2);
    else lua_rawset(L, base + 1);
  }
}

/* Removes the members a projection dropped from the object at idx. */
static void remove_dropped(lua_State *L, int idx) {
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (IS_DROPPED(L, -1)) {
      lua_pushvalue(L, -2);
      lua_pushnil(L);
      lua_rawset(L, idx); /* clearing a field during lua_next is allowed */
    }
    lua_pop(L, 1);
  }
}

/* ---- chunked input (see Parser.chunked) ---- */

/* The next chunk, behind the unread tail of the one at hand; 0, or -1
 * (code "chunked": the file is to be read whole). */
static int chunk_more(Parser *ps) {
  const unsigned char *data;
  size_t n, tail = (size_t)(ps->end - ps->p);
  int last = 1, err = 0;
  int got = vkit_chunks_next_after(ps->chunked->chunks, ps->p, tail, &data, &n, &last, &err);
  if (got < 0) return perr(ps, ps->p, "chunked", "cannot read on in chunks (%s)", strerror(err));
  if (got == 0) { /* the file ended where the last chunk did (the tail is then empty) */
    ps->chunk_last = 1;
    return 0;
  }
  ps->chunk_read += n - tail;
  ps->chunk_last = last;
  ps->start = ps->p = data;
  ps->end = data + n;
  return 0;
}

/* At least need bytes readable at p, or all that is left of the file. */
static int chunk_ahead(Parser *ps, size_t need) {
  while (ps->chunked && !ps->chunk_last && (size_t)(ps->end - ps->p) < need)
    if (chunk_more(ps)) return -1;
  return 0;
}

/* skip_ws, on into the next chunk when white space reaches the end of one. */
static int chunk_skip_ws(Parser *ps) {
  for (;;) {
    skip_ws(ps);
    if (ps->p < ps->end || !ps->chunked || ps->chunk_last) return 0;
    if (chunk_more(ps)) return -1;
  }
}

/* Everything after p, to the end of the file, into the read's rest;
 * parsing goes on there. */
static int chunk_gather(Parser *ps) {
  ChunkedRead *c = ps->chunked;
  size_t len = 0;
  for (;;) {
    size_t n = (size_t)(ps->end - ps->p);
    if (reserve_bytes(&c->rest, &c->rest_cap, len, n + 1)) return perr(ps, ps->p, "chunked", "out of memory");
    memcpy(c->rest + len, ps->p, n);
    len += n;
    ps->p = ps->end;
    if (ps->chunk_last) break;
    if (chunk_more(ps)) return -1;
  }
  ps->start = ps->p = c->rest;
  ps->end = c->rest + len;
  return 0;
}

/* The streamed member's array: each element goes to the stream function
 * as it is parsed; the member's value is left as a placeholder. */
static int stream_array(Parser *ps) {
  lua_State *L = ps->L;
  lua_Integer i = 0;
  if (chunk_skip_ws(ps)) return -1;
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
  } else if (ps->tally) { /* counted in C: no value per element */
    for (;;) {
      if (chunk_ahead(ps, ps->chunk_margin)) return -1;
      const unsigned char *next = tally_row(L, ps->tally, ps->p, ps->end, ps->tally_combos, ps->object_mt);
      if (!next && ps->chunked && !ps->chunk_last) { /* perhaps the chunk's end cut it: again, with more */
        ps->tally->rows--;
        if (chunk_more(ps)) return -1;
        continue;
      }
      if (!next) return perr(ps, ps->p, "not-exact", "row %d: %s", (int)ps->tally->rows, ps->tally->why);
      ps->p = next;
      i++;
      if (chunk_skip_ws(ps)) return -1;
      if (ps->p >= ps->end) return perr(ps, ps->p, "invalid-json", "unterminated array");
      if (*ps->p == ']') { ps->p++; break; }
      if (*ps->p != ',') return perr(ps, ps->p, "invalid-json", "expected ',' or ']'");
      ps->p++;
      if (chunk_skip_ws(ps)) return -1;
    }
  } else {
    for (;;) {
      ps->project_next = ps->keep != 0;
      int status = parse_value(ps);
      ps->project_next = 0;
      if (status) return -1;
      i++;
      lua_pushvalue(L, ps->stream_fn);
      lua_pushinteger(L, i);
      lua_rotate(L, -3, 2); /* fn, i, element */
      lua_call(L, 2, 0);
      skip_ws(ps);
      if (ps->p >= ps->end) return perr(ps, ps->p, "invalid-json", "unterminated array");
      if (*ps->p == ']') { ps->p++; break; }
      if (*ps->p != ',') return perr(ps, ps->p, "invalid-json", "expected ',' or ']'");
      ps->p++;
    }
  }
  if (ps->chunked && chunk_gather(ps)) return -1;
  ps->streamed = i;
  ps->depth--;
  lua_pushboolean(L, 1); /* holds the key until the object is complete */
  return 0;
}

/*
 * Tables are made at their final size.  Within the first KEYED_DEPTH
 * levels, the first members of an array or object are parsed onto the Lua
 * stack, and the table is created when the container closes (or, for a
 * larger one, when the batch is full: its later members are then set as
 * they come).  Growing a table member by member rehashes it at every power
 * of two, which dominated decoding.  Deeper containers, and any container
 * when the stack cannot hold a batch, are built member by member.
 */
static int parse_array(Parser *ps) {
  lua_State *L = ps->L;
  if (enter(ps)) return -1;
  ps->project_next = 0; /* a projection applies to an object element only */
  ps->p++;
  if (ps->stream_next) {
    ps->stream_next = 0;
    return stream_array(ps);
  }
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
    ps->depth--;
    new_container(ps, 0, 0, ps->array_mt);
    return 0;
  }
  int base = lua_gettop(L);
  int held = ps->depth <= KEYED_DEPTH && lua_checkstack(L, ARRAY_BATCH + 8); /* elements on the stack */
  if (!held) new_container(ps, 0, 0, ps->array_mt);
  for (lua_Integer i = 1;; i++) {
    if (held && i > ARRAY_BATCH) {
      collect_array(ps, base, ARRAY_BATCH, 2 * ARRAY_BATCH);
      held = 0;
    }
    if (parse_value(ps)) return -1;
    if (!held) lua_rawseti(L, base + 1, i);
    skip_ws(ps);
    if (ps->p >= ps->end) return perr(ps, ps->p, "invalid-json", "unterminated array");
    if (*ps->p == ']') {
      ps->p++;
      if (held) collect_array(ps, base, (int)i, (int)i);
      break;
    }
    if (*ps->p != ',') return perr(ps, ps->p, "invalid-json", "expected ',' or ']'");
    ps->p++;
  }
  ps->depth--;
  return 0;
}

/* Is the key on the stack top the name k (of length n)? */
static int key_is(lua_State *L, const char *k, size_t n) {
  size_t len;
  const char *s = lua_tolstring(L, -1, &len);
  return k && len == n && memcmp(s, k, n) == 0;
}

static int parse_object(Parser *ps) {
  lua_State *L = ps->L;
  if (enter(ps)) return -1;
  int ordered = ps->order_next;     /* its keys go to the order function */
  int projected = ps->project_next; /* a streamed element: members outside keep are dropped */
  ps->order_next = ps->project_next = 0;
  ps->p++;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    ps->depth--;
    new_container(ps, 0, 0, ps->object_mt);
    return 0;
  }
  int base = lua_gettop(L);
  int held = ps->depth <= KEYED_DEPTH && lua_checkstack(L, 2 * OBJECT_BATCH + 8); /* pairs on the stack */
  int n = 0, kept = 0, dropped = 0;
  unsigned dropped_held = 0; /* bit i: held pair i+1 is dropped */
  HeldKey *keys = held ? ps->keys[ps->depth - 1] : NULL;
  if (!held) new_container(ps, 0, 0, ps->object_mt);
  for (;;) {
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"') return perr(ps, ps->p, "invalid-json", "object key expected");
    if (held && n == OBJECT_BATCH) {
      /* dropped pairs go in too, their keys still to be refused if repeated;
       * remove_dropped takes them out when the object is complete */
      collect_object(ps, base, n, 2 * OBJECT_BATCH, 0);
      held = 0;
    }
    const unsigned char *key_at = ps->p;
    if (parse_key(ps, n, held ? &keys[n] : NULL)) return -1;
    /* A repeated key is refused where it stands, before its value. */
    if (held) {
      for (int k = 0; k < n; k++)
        if (keys[k].len == keys[n].len && (keys[k].s == keys[n].s || (keys[k].s[0] == keys[n].s[0] &&
                                                                     memcmp(keys[k].s, keys[n].s, keys[n].len) == 0)))
          return perr(ps, key_at, "duplicate-key", "duplicate object key \"%.80s\"", keys[n].s);
    } else {
      lua_pushvalue(L, -1);
      if (lua_rawget(L, base + 1) != LUA_TNIL)
        return perr(ps, key_at, "duplicate-key", "duplicate object key \"%.80s\"", lua_tostring(L, -2));
      lua_pop(L, 1);
    }
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') return perr(ps, ps->p, "invalid-json", "expected ':'");
    ps->p++;
    if (ordered) {
      lua_pushvalue(L, ps->order_fn);
      lua_pushvalue(L, -2);
      lua_call(L, 1, 0);
    }
    if (ps->depth == 1 && (ps->stream_fn || ps->order_fn)) {
      skip_ws(ps);
      if (ps->p < ps->end) {
        ps->stream_next = *ps->p == '[' && key_is(L, ps->stream_key, ps->stream_key_len);
        ps->order_next = *ps->p == '{' && key_is(L, ps->order_key, ps->order_key_len);
      }
    }
    int drop = 0, discard = ps->discard;
    if (projected) {
      lua_pushvalue(L, -1);
      drop = lua_rawget(L, ps->keep) == LUA_TNIL;
      lua_pop(L, 1);
      ps->discard = drop;
    }
    if (parse_value(ps)) return -1;
    ps->discard = discard;
    if (drop) { /* the value is checked; what stands for it is dropped */
      lua_pop(L, 1);
      PUSH_DROPPED(L);
      dropped++;
      if (held) dropped_held |= 1u << n;
    } else {
      kept++;
    }
    if (held) n++;
    else lua_rawset(L, base + 1);
    skip_ws(ps);
    if (ps->p >= ps->end) return perr(ps, ps->p, "invalid-json", "unterminated object");
    if (*ps->p == '}') {
      ps->p++;
      if (held) collect_object(ps, base, n, kept, dropped_held);
      else if (dropped) remove_dropped(L, base + 1);
      break;
    }
    if (*ps->p != ',') return perr(ps, ps->p, "invalid-json", "expected ',' or '}'");
    ps->p++;
  }
  ps->depth--;
  return 0;
}

static int parse_value(Parser *ps) {
  skip_ws(ps);
  if (ps->p >= ps->end) return perr(ps, ps->p, "invalid-json", "unexpected end of input");
  switch (*ps->p) {
    case '{': return parse_object(ps);
    case '[': return parse_array(ps);
    case '"': return parse_string(ps);
    case 't': if (literal(ps, "true")) return -1; lua_pushboolean(ps->L, 1); return 0;
    case 'f': if (literal(ps, "false")) return -1; lua_pushboolean(ps->L, 0); return 0;
    case 'n': if (literal(ps, "null")) return -1; PUSH_NULL(ps->L); return 0;
    default:
      if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) return parse_number(ps);
      return perr(ps, ps->p, "invalid-json", "unexpected character");
  }
}

/* Prepares ps to decode s[0..len); a caller may then set the stream fields. */
static void parser_init(Parser *ps, lua_State *L, const char *s, size_t len, int max_depth) {
  memset(ps, 0, offsetof(Parser, keys)); /* keys[] is written before it is read */
  ps->streamed = -1;
  ps->L = L;
  ps->start = ps->p = (const unsigned char *)s;
  ps->end = ps->start + len;
  ps->max_depth = max_depth;
}

/* Decodes the text ps was prepared for, leaving the value on the stack; 0,
 * or -1 with ps set.  array_mt and object_mt are the indices of the two
 * metatables (upvalues of the calling function); key_cache is the index of
 * a key cache table to share, or 0 for one of its own. */
/* Bytes of C stack a parse may use: half the soft stack limit (the rest is
 * the caller's), at most 64 MiB.  Read once: a process constant, cached
 * because json.lines parses a million rows. */
static size_t stack_budget(void) {
  static size_t budget; /* a benign race: every writer stores the same value */
  if (!budget) {
    struct rlimit rl;
    size_t limit = (size_t)128 << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit)
      limit = (size_t)rl.rlim_cur;
    budget = limit / 2;
  }
  return budget;
}

static int decode_buffer(Parser *ps, int array_mt, int object_mt, int key_cache) {
  lua_State *L = ps->L;
  ps->stack_base = (uintptr_t)__builtin_frame_address(0);
  ps->stack_budget = stack_budget();
  int top = lua_gettop(L);
  luaL_checkstack(L, 8, "JSON decoding");
  lua_pushvalue(L, array_mt);
  lua_pushvalue(L, object_mt);
  ps->array_mt = top + 1;
  ps->object_mt = top + 2;
  if (key_cache) {
    lua_pushvalue(L, key_cache);
  } else {
    skip_ws(ps); /* only a container can hold a key */
    if (ps->p < ps->end && (*ps->p == '{' || *ps->p == '['))
      lua_createtable(L, OBJECT_BATCH, 0);
    else
      lua_pushnil(L);
  }
  ps->key_cache = top + 3;
  if (parse_value(ps) == 0) {
    skip_ws(ps);
    if (ps->p == ps->end) {
      lua_replace(L, top + 1); /* the value replaces the metatables */
      lua_settop(L, top + 1);
      return 0;
    }
    perr(ps, ps->p, "invalid-json", "trailing bytes after the JSON value");
  }
  lua_settop(L, top);
  return -1;
}

static int push_parse_error(lua_State *L, const Parser *ps) {
  lua_pushnil(L);
  lua_pushfstring(L, "%s at byte %d: %s", ps->code, (int)ps->offset, ps->message);
  lua_pushstring(L, ps->code);
  lua_pushinteger(L, (lua_Integer)ps->offset);
  return 4;
}

static int opt_depth(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return DEFAULT_MAX_DEPTH;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer d = vkit_optintfield(L, idx, "max_depth", DEFAULT_MAX_DEPTH);
  luaL_argcheck(L, d >= 1 && d <= MAX_DEPTH_CAP, idx, "max_depth must be 1..4096");
  return (int)d;
}

/* The expected SHA-256 of the bytes (opts.sha256, 64 lowercase hex
 * digits), or NULL.  The string stays anchored by the options table. */
static const char *opt_pin(lua_State *L, int idx) {
  if (!lua_istable(L, idx)) return NULL;
  lua_getfield(L, idx, "sha256");
  const char *pin = lua_tostring(L, -1);
  int ok = lua_isnil(L, -1) || (lua_type(L, -1) == LUA_TSTRING && lua_rawlen(L, -1) == 64 &&
                                strspn(pin, "0123456789abcdef") == 64);
  lua_pop(L, 1);
  luaL_argcheck(L, ok, idx, "sha256 must be 64 lowercase hex digits");
  return pin;
}

/* Lowercase hex SHA-256 of a finished hash context into hex[65]; when
 * hashing failed, 64 'x': not hex, so it equals no pin (zeros would equal
 * a pin of zeros). */
static void final_hex(VkitSha256 *h, char hex[65]) {
  unsigned char md[32];
  if (vkit_sha256_final(h, md) == 0) {
    vkit_hex(md, 32, hex);
  } else {
    memset(hex, 'x', 64);
    hex[64] = '\0';
  }
}

/* Pushes `nil, message, "sha256-mismatch", actual` for bytes that hashed to
 * hex where pin was expected. */
static int push_mismatch(lua_State *L, const char *pin, const char *hex) {
  lua_pushnil(L);
  lua_pushfstring(L, "sha256-mismatch: expected %s, read %s", pin, hex);
  lua_pushliteral(L, "sha256-mismatch");
  lua_pushstring(L, hex);
  return 4;
}

/* Do len bytes hash to something other than pin?  Then the mismatch is
 * pushed (push_mismatch) and 1 returned. */
static int pin_mismatch(lua_State *L, const void *bytes, size_t len, const char *pin) {
  unsigned char md[32];
  char hex[65];
  if (vkit_sha256(bytes, len, md) != 0) luaL_error(L, VKIT_SHA256_FAILED);
  vkit_hex(md, 32, hex);
  if (memcmp(hex, pin, 64) == 0) return 0;
  push_mismatch(L, pin, hex);
  return 1;
}

/* ---- tallies: the scanner, the counting, tally_lines ---------------------- */

static void tally_free(Tally *t) {
  free(t->key);
  free(t->slots);
  free(t->arena);
  t->key = NULL;
  t->slots = NULL;
  t->arena = NULL;
}

static int tally_gc(lua_State *L) {
  tally_free(lua_touserdata(L, 1));
  return 0;
}

/* Are the n bytes at a and b the same?  (Keys and values here are short:
 * a call to memcmp costs more than comparing them eight at a time, the
 * last word overlapping the one before it.) */
static inline int same_bytes(const void *pa, const void *pb, size_t n) {
  const unsigned char *a = pa, *b = pb;
  uint64_t x, y;
  if (n >= 8) {
    for (; n > 8; a += 8, b += 8, n -= 8) {
      memcpy(&x, a, 8);
      memcpy(&y, b, 8);
      if (x != y) return 0;
    }
    memcpy(&x, a + n - 8, 8);
    memcpy(&y, b + n - 8, 8);
    return x == y;
  }
  if (n >= 4) {
    uint32_t u, v, w, z;
    memcpy(&u, a, 4);
    memcpy(&v, b, 4);
    memcpy(&w, a + n - 4, 4);
    memcpy(&z, b + n - 4, 4);
    return u == v && w == z;
  }
  for (; n; n--)
    if (*a++ != *b++) return 0;
  return 1;
}

/* The tally gives up: the caller must decode this input the ordinary way. */
#define GIVE_UP(t, what) ((t)->why = (what), -1)

static const unsigned char *give_up(Tally *t, const char *why) {
  t->why = why;
  return NULL;
}

/* JSON whitespace; in JSON Lines not a CR (Python's splitlines() would
 * cut there, so the row is left to the decoder: what follows fails). */
static inline const unsigned char *skip_ws_in(const Tally *t, const unsigned char *p, const unsigned char *end) {
  if (p < end && *p > ' ') return p; /* the common case: no white space at all */
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || (*p == '\r' && !t->lines))) p++;
  return p;
}

/* A string at p (its opening quote): the bytes between the quotes, when it
 * holds no escape (escaped is set otherwise), validated as the decoder
 * validates; returns the position after it or NULL. */
static const unsigned char *scan_string(Tally *t, const unsigned char *p, const unsigned char *end,
                                        const unsigned char **body, size_t *len, int *escaped) {
  const unsigned char *run = ++p;
  *escaped = 0;
  while (p < end) {
    /* eight bytes at a time to the first that is a quote, a backslash, a
     * control character or part of a multi-byte sequence: the lowest
     * flagged byte of each test is exact (a borrow only runs upwards) */
    while (end - p >= 8) {
      uint64_t w;
      memcpy(&w, p, 8);
      w = le64toh(w); /* the first byte lowest */
      const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
      uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
      uint64_t stop = (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & high;
      if (stop) {
        p += __builtin_ctzll(stop) / 8;
        goto special;
      }
      p += 8;
    }
    while (p < end && !string_stop[*p]) p++;
    if (p >= end) break;
  special:;
    unsigned c = *p;
    if (c == '"') {
      *body = run;
      *len = (size_t)(p - run);
      return p + 1;
    }
    if (c < 0x20) return give_up(t, "control character in a string");
    if (c == '\\') {
      *escaped = 1;
      if (end - p < 2) return give_up(t, "unterminated escape");
      unsigned e = p[1];
      if (e == 'u') {
        uint32_t cp;
        if (end - p < 6 || !hex4(p + 2, &cp)) return give_up(t, "bad \\u escape");
        if (cp >= 0xD800 && cp <= 0xDFFF) return give_up(t, "a surrogate escape");
        p += 6; /* an escaped U+2028 is no line break */
      } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
        p += 2;
      } else {
        return give_up(t, "invalid escape");
      }
      continue;
    }
    uint32_t cp;
    size_t n = utf8_decode(p, end, &cp);
    if (!n) return give_up(t, "invalid UTF-8");
    if (t->lines && (cp == 0x85 || cp == 0x2028 || cp == 0x2029))
      return give_up(t, "a line break Python's splitlines() honours");
    p += n;
  }
  return give_up(t, "unterminated string");
}

/* A number at p, validated as the decoder validates; with want, its value
 * as the decoder makes it (an integer when integral and within 64 bits). */
static const unsigned char *scan_number(Tally *t, const unsigned char *p, const unsigned char *end, int want,
                                        int field) {
  const unsigned char *s = p;
  int integral = 1;
  if (p < end && *p == '-') p++;
  if (p >= end || *p < '0' || *p > '9') return give_up(t, "invalid number");
  if (*p == '0') {
    p++;
    if (p < end && *p >= '0' && *p <= '9') return give_up(t, "leading zero");
  } else {
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  if (p < end && *p == '.') {
    integral = 0;
    p++;
    if (p >= end || *p < '0' || *p > '9') return give_up(t, "invalid number");
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    integral = 0;
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || *p < '0' || *p > '9') return give_up(t, "invalid number");
    while (p < end && *p >= '0' && *p <= '9') p++;
  }
  size_t len = (size_t)(p - s);
  size_t digits = len - (*s == '-');
  if (integral && digits <= 18) { /* fits 64 bits: exact */
    if (want) {
      lua_Integer v = 0;
      for (const unsigned char *d = s + (*s == '-'); d < p; d++) v = v * 10 + (*d - '0');
      t->tag[field] = T_INT;
      t->ival[field] = *s == '-' ? -v : v;
    }
    return p;
  }
  if (integral && digits <= 20) return give_up(t, "an integer near 64 bits"); /* the decoder decides */
  double v; /* made even when not wanted: one beyond a double is refused */
  if (!fast_decimal(s, p, &v)) {
    char small[64];
    if (len >= sizeof small) return give_up(t, "a long number");
    memcpy(small, s, len);
    small[len] = '\0';
    v = strtod(small, NULL);
  }
  if (isinf(v)) return give_up(t, "a number beyond a double");
  if (want) {
    t->tag[field] = T_FLOAT;
    t->fval[field] = v;
  }
  return p;
}

static const unsigned char *scan_literal(Tally *t, const unsigned char *p, const unsigned char *end,
                                         const char *word, size_t n) {
  if ((size_t)(end - p) < n || memcmp(p, word, n) != 0) return give_up(t, "invalid literal");
  return p + n;
}

static const unsigned char *skip_any(Tally *t, const unsigned char *p, const unsigned char *end, int depth);

/* The members of an object at p ('{'), each key told apart from the others
 * (at most TALLY_KEYS); at depth 1 the named fields' values are kept. */
static const unsigned char *scan_object(Tally *t, const unsigned char *p, const unsigned char *end, int depth) {
  if (depth > TALLY_DEPTH) return give_up(t, "nesting deeper than a tally decides");
  Name keys[TALLY_KEYS];
  int nkeys = 0;
  p = skip_ws_in(t, p + 1, end);
  if (p < end && *p == '}') return p + 1;
  int as_before = depth == 1; /* every key so far is the last row's, in its place */
  for (;;) {
    if (p >= end || *p != '"') return give_up(t, "object key expected");
    const unsigned char *k;
    size_t klen;
    int escaped, field = -1;
    if (nkeys == TALLY_KEYS) return give_up(t, "an object with many keys");
    int colon = 0; /* the ':' read with the key */
    const struct Shape *last = &t->shape[nkeys];
    size_t comma = nkeys > 0; /* the lead's ',', not part of the key as written */
    if (as_before && nkeys < t->shape_n && (size_t)(end - p) >= last->lead_len - comma &&
        same_bytes(p, last->lead + comma, last->lead_len - comma)) {
      k = p + 1;
      klen = last->klen;
      field = last->field;
      colon = last->colon;
      p += last->lead_len - comma;
    } else {
      const unsigned char *open = p;
      if (!(p = scan_string(t, p, end, &k, &klen, &escaped))) return NULL;
      if (escaped) return give_up(t, "an escape in a key");
      for (int i = 0; i < nkeys; i++)
        if (keys[i].len == klen && (klen == 0 || (keys[i].s[0] == (char)k[0] && memcmp(keys[i].s, k, klen) == 0)))
          return give_up(t, "a duplicate key");
      if (depth == 1) {
        for (int i = 0; i < t->nfields; i++)
          if (t->fields[i].len == klen && klen && t->fields[i].s[0] == (char)k[0] &&
              memcmp(t->fields[i].s, k, klen) == 0) {
            field = i;
            break;
          }
        /* remember it in its place, if this row's keys so far are the last one's */
        size_t text_len = (size_t)(p - open) + (p < end && *p == ':');
        if (as_before && text_len <= SHAPE_KEY_TEXT) {
          struct Shape *s = &t->shape[nkeys];
          s->lead[0] = ',';
          memcpy(s->lead + comma, open, text_len);
          s->lead_len = comma + text_len;
          s->klen = klen;
          s->field = field;
          s->colon = text_len > (size_t)(p - open);
          t->shape_n = nkeys + 1;
        } else {
          if (as_before) t->shape_n = nkeys;
          as_before = 0;
        }
      }
    }
    keys[nkeys].s = (const char *)k;
    keys[nkeys++].len = klen;
    if (!colon) {
      p = skip_ws_in(t, p, end);
      if (p >= end || *p != ':') return give_up(t, "expected ':'");
      p++;
    }
    p = skip_ws_in(t, p, end);
    if (field < 0) {
      if (!(p = skip_any(t, p, end, depth))) return NULL;
    } else if (p < end && *p == '"') {
      const unsigned char *s;
      size_t slen;
      if (!(p = scan_string(t, p, end, &s, &slen, &escaped))) return NULL;
      if (escaped) return give_up(t, "an escape in a named field");
      t->tag[field] = T_STRING;
      t->val[field] = s;
      t->val_len[field] = slen;
      t->str_bytes += slen;
    } else if (p < end && (*p == '-' || (*p >= '0' && *p <= '9'))) {
      if (!(p = scan_number(t, p, end, 1, field))) return NULL;
    } else if (p < end && *p == 't') {
      if (!(p = scan_literal(t, p, end, "true", 4))) return NULL;
      t->tag[field] = T_TRUE;
    } else if (p < end && *p == 'f') {
      if (!(p = scan_literal(t, p, end, "false", 5))) return NULL;
      t->tag[field] = T_FALSE;
    } else if (p < end && *p == 'n') {
      if (!(p = scan_literal(t, p, end, "null", 4))) return NULL;
      t->tag[field] = T_NULL;
    } else {
      return give_up(t, "a named field that is not a scalar");
    }
    p = skip_ws_in(t, p, end);
    if (p >= end) return give_up(t, "unterminated object");
    if (*p == '}') return p + 1;
    if (*p != ',') return give_up(t, "expected ',' or '}'");
    p = skip_ws_in(t, p + 1, end);
  }
}

static const unsigned char *scan_array(Tally *t, const unsigned char *p, const unsigned char *end, int depth) {
  if (depth > TALLY_DEPTH) return give_up(t, "nesting deeper than a tally decides");
  p = skip_ws_in(t, p + 1, end);
  if (p < end && *p == ']') return p + 1;
  for (;;) {
    if (!(p = skip_any(t, p, end, depth))) return NULL;
    p = skip_ws_in(t, p, end);
    if (p >= end) return give_up(t, "unterminated array");
    if (*p == ']') return p + 1;
    if (*p != ',') return give_up(t, "expected ',' or ']'");
    p = skip_ws_in(t, p + 1, end);
  }
}

/* Any value at p, checked and passed over; depth is its container's. */
static const unsigned char *skip_any(Tally *t, const unsigned char *p, const unsigned char *end, int depth) {
  if (p >= end) return give_up(t, "unexpected end of input");
  const unsigned char *s;
  size_t len;
  int escaped;
  switch (*p) {
    case '{': return scan_object(t, p, end, depth + 1);
    case '[': return scan_array(t, p, end, depth + 1);
    case '"': return scan_string(t, p, end, &s, &len, &escaped);
    case 't': return scan_literal(t, p, end, "true", 4);
    case 'f': return scan_literal(t, p, end, "false", 5);
    case 'n': return scan_literal(t, p, end, "null", 4);
    default:
      if (*p == '-' || (*p >= '0' && *p <= '9')) return scan_number(t, p, end, 0, 0);
      return give_up(t, "unexpected character");
  }
}

/* A hash of n bytes, eight at a time (the table only needs it spread);
 * the 8 bytes after them must be readable (the last word is masked). */
static uint64_t key_hash(const unsigned char *p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  }
  uint64_t w;
  memcpy(&w, p, 8);
  w = n ? le64toh(w) & (~0ULL >> (64 - 8 * n)) : 0;
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL;
  return h ^ (h >> 29);
}

/* memcpy for the short values a key holds: a call costs more than they do.
 * Reads and writes only the n bytes (overlapping words). */
static inline void copy_short(unsigned char *d, const unsigned char *s, size_t n) {
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
  } else {
    memcpy(d, s, n);
  }
}

/* Room for n more bytes at *buf (capacity *cap, length len); 0 or -1. */
static int reserve_bytes(void *bufp, size_t *cap, size_t len, size_t n) {
  char **buf = bufp;
  if (len + n <= *cap) return 0;
  size_t c = *cap ? *cap : 256;
  while (c < len + n) c *= 2;
  char *d = realloc(*buf, c);
  if (!d) return -1;
  *buf = d;
  *cap = c;
  return 0;
}

/* Pushes field i's value of the current row. */
static void push_token(lua_State *L, const Tally *t, int i) {
  switch (t->tag[i]) {
    case T_NULL: PUSH_NULL(L); break;
    case T_TRUE: lua_pushboolean(L, 1); break;
    case T_FALSE: lua_pushboolean(L, 0); break;
    case T_INT: lua_pushinteger(L, t->ival[i]); break;
    case T_FLOAT: lua_pushnumber(L, t->fval[i]); break;
    default: lua_pushlstring(L, (const char *)t->val[i], t->val_len[i]); break;
  }
}

/* Counts the current row (row number t->rows) under its combination of
 * values; a new combination is appended to the combos table at stack index
 * combos, its row table marked with the object metatable at index
 * object_mt.  0, or -1 (out of memory, too many combinations). */
static int tally_count(lua_State *L, Tally *t, int combos, int object_mt) {
  /* the key: each field's tag, then the payload of each that has one (a
   * number's 8 bytes; a string's length, in one byte below 255, else 255
   * and 8 bytes, and its bytes): the tags fix where each payload lies and
   * the lengths where it ends, so equal keys are equal rows */
  size_t need = sizeof t->tag + (size_t)t->nfields * (1 + sizeof(size_t)) + t->str_bytes + 8; /* key_hash reads 8 past it */
  if (reserve_bytes(&t->key, &t->key_cap, 0, need)) return GIVE_UP(t, "out of memory");
  unsigned char *key = t->key;
  memcpy(key, t->tag, sizeof t->tag); /* all sixteen, the payloads written over those past nfields */
  size_t len = (size_t)t->nfields;
  for (int i = 0; i < t->nfields; i++) {
    unsigned tag = t->tag[i];
    if (tag < T_INT) continue; /* absent, null, true, false: the tag is all */
    if (tag == T_STRING) {
      size_t n = t->val_len[i];
      if (n < 255) {
        key[len++] = (unsigned char)n;
      } else {
        key[len++] = 255;
        memcpy(key + len, &n, sizeof n);
        len += sizeof n;
      }
      copy_short(key + len, t->val[i], n);
      len += n;
    } else {
      memcpy(key + len, tag == T_INT ? (const void *)&t->ival[i] : (const void *)&t->fval[i], 8);
      len += 8;
    }
  }
  uint64_t h = key_hash(t->key, len);
  if (t->count * 2 >= t->cap) { /* grow: rehash into twice the slots */
    size_t cap = t->cap ? t->cap * 2 : 64;
    Combo *slots = calloc(cap, sizeof *slots);
    if (!slots) return GIVE_UP(t, "out of memory");
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->slots[i].index) continue;
      size_t j = t->slots[i].hash & (cap - 1);
      while (slots[j].index) j = (j + 1) & (cap - 1);
      slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
  }
  size_t j = h & (t->cap - 1);
  while (t->slots[j].index) {
    Combo *c = &t->slots[j];
    if (c->hash == h && c->key_len == len && same_bytes(t->arena + c->key_at, t->key, len)) {
      c->n++;
      return 0;
    }
    j = (j + 1) & (t->cap - 1);
  }
  if (t->count >= TALLY_COMBOS) return GIVE_UP(t, "more combinations of values than a tally holds");
  if (reserve_bytes(&t->arena, &t->arena_cap, t->arena_len, len)) return GIVE_UP(t, "out of memory");
  memcpy(t->arena + t->arena_len, t->key, len);
  Combo *c = &t->slots[j];
  c->hash = h;
  c->key_at = t->arena_len;
  c->key_len = len;
  c->n = 1;
  c->first = t->rows;
  c->index = (int)++t->count;
  t->arena_len += len;
  /* combos[index] = {row = {field = value...}, first = row}; n at the end */
  lua_createtable(L, 0, 3);
  lua_createtable(L, 0, t->nfields);
  lua_pushvalue(L, object_mt);
  lua_setmetatable(L, -2);
  for (int i = 0; i < t->nfields; i++) {
    if (t->tag[i] == T_ABSENT) continue;
    push_token(L, t, i);
    lua_setfield(L, -2, t->fields[i].s);
  }
  lua_setfield(L, -2, "row");
  lua_pushinteger(L, t->rows);
  lua_setfield(L, -2, "first");
  lua_rawseti(L, combos, c->index);
  return 0;
}

/* One row at p: an object whose named fields are kept and counted; returns
 * the position after it or NULL. */
/* The closing quote of a string whose body starts at p and holds only
 * printable ASCII other than the backslash; NULL for any other string
 * (scan_string decides it). */
static inline const unsigned char *plain_string_end(const unsigned char *p, const unsigned char *end) {
  p = string_run_end(p, end);
  return p < end && *p == '"' ? p : NULL;
}

/*
 * A row written as the last row was: the same keys in the same order, each
 * followed at once by its ':', no white space, and values that are plain
 * (strings of printable ASCII without escapes, numbers, literals, and
 * containers outside the named fields, checked by skip_any).  Its keys are
 * then read by comparing bytes and its values checked as scan_object
 * checks them.  NULL for any other row: scan_object reads it from the
 * start, and decides.
 */
/* Do the bytes at p repeat the lead of key s (its ',', the key, the ':')? */
static inline int lead_matches(const struct Shape *s, const unsigned char *p, const unsigned char *end) {
#ifdef __SSE2__
  if (s->lead_len <= 16 && end - p >= 16) { /* one compare of sixteen bytes, those past the lead ignored */
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)s->lead);
    unsigned ours = (unsigned)((1u << s->lead_len) - 1); /* lead_len 16: 0xFFFF, as wanted */
    return (~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) & ours) == 0;
  }
#endif
  return (size_t)(end - p) >= s->lead_len && same_bytes(p, s->lead, s->lead_len);
}

static const unsigned char *scan_row_fast(Tally *t, const unsigned char *p, const unsigned char *end) {
  int n = t->fast_n;
  if (!n) return NULL;
  p++;
  for (int k = 0; k < n; k++) {
    const struct Shape *s = &t->shape[k];
    if (!lead_matches(s, p, end)) return NULL;
    p += s->lead_len;
    if (end - p < 2) return NULL; /* a value and its ',' or '}' take at least two bytes */
    int field = s->field;
    unsigned c = *p;
    if (c == '"') {
      const unsigned char *close = plain_string_end(p + 1, end);
      if (!close) return NULL;
      if (field >= 0) {
        size_t len = (size_t)(close - p - 1);
        t->tag[field] = T_STRING;
        t->val[field] = p + 1;
        t->val_len[field] = len;
        t->str_bytes += len;
      }
      p = close + 1;
    } else if ((c == 't' || c == 'f' || c == 'n') && end - p >= 6 - (c != 'f')) { /* the word and one byte */
      uint32_t w; /* the four bytes at p; "false" is "fals" and 'e' */
      memcpy(&w, p, 4);
      unsigned char tag;
      if (!memcmp(&w, "true", 4)) tag = T_TRUE, p += 4;
      else if (!memcmp(&w, "fals", 4) && p[4] == 'e') tag = T_FALSE, p += 5;
      else if (!memcmp(&w, "null", 4)) tag = T_NULL, p += 4;
      else return NULL;
      if (field >= 0) t->tag[field] = tag;
    } else if (c >= '1' && c <= '9') { /* a plain integer, else scan_number reads it */
      const unsigned char *d = p + 1;
      while (d < end && *d >= '0' && *d <= '9') d++;
      if (d - p > 18 || (d < end && (*d == '.' || *d == 'e' || *d == 'E'))) {
        if (!(p = scan_number(t, p, end, field >= 0, field >= 0 ? field : 0))) return NULL;
      } else {
        if (field >= 0) {
          lua_Integer v = 0;
          for (const unsigned char *x = p; x < d; x++) v = v * 10 + (*x - '0');
          t->tag[field] = T_INT;
          t->ival[field] = v;
        }
        p = d;
      }
    } else if (c == '-' || c == '0') {
      if (!(p = scan_number(t, p, end, field >= 0, field >= 0 ? field : 0))) return NULL;
    } else if (field < 0 && (c == '{' || c == '[')) {
      if (!(p = skip_any(t, p, end, 1))) return NULL;
    } else {
      return NULL;
    }
  }
  return p < end && *p == '}' ? p + 1 : NULL;
}

/* After scan_object has read a row: may the next rows be read by
 * scan_row_fast (every key of the last row followed at once by its ':')? */
static void note_shape(Tally *t) {
  t->fast_n = t->shape_n;
  for (int k = 0; k < t->shape_n; k++)
    if (!t->shape[k].colon) t->fast_n = 0;
}

static const unsigned char *tally_row(lua_State *L, Tally *t, const unsigned char *p, const unsigned char *end,
                                      int combos, int object_mt) {
  t->rows++;
  if (p >= end || *p != '{') return give_up(t, "a row that is not an object");
  memset(t->tag, T_ABSENT, sizeof t->tag);
  t->str_bytes = 0;
  const unsigned char *q = scan_row_fast(t, p, end);
  if (!q) { /* read it again, the general way */
    memset(t->tag, T_ABSENT, sizeof t->tag);
    t->str_bytes = 0;
    q = scan_object(t, p, end, 1);
    note_shape(t);
  }
  if (!(p = q)) return NULL;
  if (tally_count(L, t, combos, object_mt)) return NULL;
  return p;
}

/* Sets n on every combo and leaves {rows = , combos = } on the stack top. */
static void tally_result(lua_State *L, const Tally *t, int combos) {
  for (size_t i = 0; i < t->cap; i++) {
    const Combo *c = &t->slots[i];
    if (!c->index) continue;
    lua_rawgeti(L, combos, c->index);
    lua_pushinteger(L, c->n);
    lua_setfield(L, -2, "n");
    lua_pop(L, 1);
  }
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, t->rows);
  lua_setfield(L, -2, "rows");
  lua_pushvalue(L, combos);
  lua_setfield(L, -2, "combos");
}

/* Pushes `nil, message, "not-exact", row, line` for a tally that gave up
 * (line 0 outside JSON Lines). */
static int push_not_exact(lua_State *L, const Tally *t) {
  lua_pushnil(L);
  if (t->line) lua_pushfstring(L, "not-exact: line %d (row %d): %s", (int)t->line, (int)t->rows, t->why ? t->why : "?");
  else lua_pushfstring(L, "not-exact: row %d: %s", (int)t->rows, t->why ? t->why : "?");
  lua_pushliteral(L, "not-exact");
  lua_pushinteger(L, t->rows);
  lua_pushinteger(L, t->line);
  return 5;
}

/* Reads opts.fields (an array of 1..TALLY_FIELDS names) into t; the names
 * stay anchored by the options table. */
static void opt_fields(lua_State *L, int idx, Tally *t) {
  luaL_argcheck(L, lua_getfield(L, idx, "fields") == LUA_TTABLE, idx, "fields must be an array of names");
  int n = (int)luaL_len(L, -1);
  luaL_argcheck(L, n >= 1 && n <= TALLY_FIELDS, idx, "fields names 1..16 members");
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, -1, i + 1);
    luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, idx, "fields must be an array of names");
    t->fields[i].s = lua_tolstring(L, -1, &t->fields[i].len);
    lua_pop(L, 1);
  }
  t->nfields = n;
  lua_pop(L, 1);
}

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

/*
 * tally_lines(path, {fields = {...}, sha256, nofollow, max_line}) ->
 * {rows, combos} | nil, message, code [, detail]: the non-blank lines of a
 * JSON Lines file as tally rows (a line of spaces and tabs is blank).
 * The file is read in 2 MiB chunks and hashed ahead of the scan on a
 * second thread (csrc/chunks.c; in this thread when under 1 MiB); with
 * sha256, bytes that do not hash to it fail the tally as sha256-mismatch
 * (detail: the digest read).  A file refused as vkit.fs.read refuses it
 * fails with its code; a line over max_line, like any input the scanner
 * does not decide, as not-exact (detail: the row).
 */
static int json_tally_lines(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const char *pin = opt_pin(L, 2);
  lua_Integer max_line = vkit_optintfield(L, 2, "max_line", 64 << 20);
  lua_getfield(L, 2, "nofollow");
  int nofollow = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_settop(L, 2);
  Tally *t = vkit_newgcdata(L, sizeof *t, "vkit.json.tally", tally_gc); /* 3 */
  opt_fields(L, 2, t);
  t->lines = 1;
  lua_newtable(L); /* 4: combos */
  struct stat st;
  int fd = vkit_open_regular(L, path, nofollow, &st);
  if (fd < 0) return 3;
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  VkitSha256 *sha = pin ? vkit_sha256_new() : NULL;
  /* read and hashed ahead on a second thread, unless it is small; a small
   * file is read in chunks of a page more than its size (the first read
   * shorter than a chunk ends it), not into a huge page that the kernel
   * would clear, and perhaps compact memory for, to hold a few rows */
  size_t chunk = TALLY_CHUNK;
  if (st.st_size < TALLY_AHEAD) chunk = ((size_t)st.st_size + 4096) & ~(size_t)4095;
  VkitChunks *chunks = pin && !sha ? NULL : vkit_chunks_start(fd, chunk, 0, st.st_size >= TALLY_AHEAD, sha);
  unsigned char *carry = NULL; /* a line begun in the previous chunk */
  size_t carry_len = 0, carry_cap = 0;
  int status = 0, err = 0;
  if (!chunks) { status = -1; t->why = "out of memory"; }
  while (status == 0) {
    const unsigned char *data;
    size_t n;
    int got = vkit_chunks_next(chunks, &data, &n, &err);
    if (got < 0) { status = -2; break; }
    if (got == 0) break;
    const unsigned char *p = data, *end = data + n;
    while (status == 0 && p < end) {
      const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
      const unsigned char *stop = nl ? nl : end;
      const unsigned char *line = p, *line_end = stop;
      if (carry_len || !nl) { /* the line continues across chunks */
        if (carry_len + (size_t)(stop - p) > (size_t)max_line) { t->rows++, status = GIVE_UP(t, "a line over max_line"); break; }
        if (reserve_bytes(&carry, &carry_cap, carry_len, (size_t)(stop - p))) { status = GIVE_UP(t, "out of memory"); break; }
        memcpy(carry + carry_len, p, (size_t)(stop - p));
        carry_len += (size_t)(stop - p);
        if (!nl) { p = end; break; }
        line = carry;
        line_end = carry + carry_len;
      }
      p = nl + 1;
      t->line++;
      if ((size_t)(line_end - line) > (size_t)max_line) { t->rows++, status = GIVE_UP(t, "a line over max_line"); break; }
      const unsigned char *q = line;
      while (q < line_end && (*q == ' ' || *q == '\t')) q++;
      if (q < line_end) {
        if (!(q = tally_row(L, t, q, line_end, 4, OBJECT_MT_UV))) { status = -1; break; }
        q = skip_ws_in(t, q, line_end);
        if (q != line_end) { status = GIVE_UP(t, "trailing bytes after a row"); break; }
      }
      carry_len = 0;
    }
  }
  int complete = chunks && vkit_chunks_finish(chunks);
  if (status == 0 && !complete) { status = -2; err = EIO; } /* cannot be: the end was reached */
  if (status == 0 && carry_len) { /* the last line, without a newline */
    const unsigned char *q = carry, *line_end = carry + carry_len;
    t->line++;
    while (q < line_end && (*q == ' ' || *q == '\t')) q++;
    if (q < line_end) {
      if (!(q = tally_row(L, t, q, line_end, 4, OBJECT_MT_UV))) status = -1;
      else if (skip_ws_in(t, q, line_end) != line_end) status = GIVE_UP(t, "trailing bytes after a row");
    }
  }
  close(fd);
  free(carry);
  char hex[65] = "";
  if (sha) final_hex(sha, hex);
  if (status == -2) {
    tally_free(t);
    return vkit_fail_errno(L, err, path);
  }
  if (pin && status == 0 && memcmp(hex, pin, 64) != 0) {
    tally_free(t);
    return push_mismatch(L, pin, hex);
  }
  if (status != 0) {
    tally_free(t);
    return push_not_exact(L, t);
  }
  tally_result(L, t, 4);
  tally_free(t);
  return 1;
}


static int json_decode(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  int max_depth = opt_depth(L, 2);
  Parser ps;
  parser_init(&ps, L, s, len, max_depth);
  if (decode_buffer(&ps, ARRAY_MT_UV, OBJECT_MT_UV, 0) == 0) return 1;
  return push_parse_error(L, &ps);
}

/* json.read's results for a tally, the document on the stack top: the
 * document without the streamed member's placeholder, and the tally (its
 * `read`: "chunks" or "whole", how the file was read). */
static int finish_tally(lua_State *L, Tally *tally, int chunked) {
  lua_pushvalue(L, 4);
  lua_pushnil(L);
  lua_rawset(L, -3);
  tally_result(L, tally, 10);
  tally_free(tally);
  lua_pushstring(L, chunked ? "chunks" : "whole");
  lua_setfield(L, -2, "read");
  return 2;
}

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

/* A tally that starts over: its fields kept, everything counted dropped. */
static void tally_reset(Tally *t) {
  int nfields = t->nfields, lines = t->lines;
  Name fields[TALLY_FIELDS];
  memcpy(fields, t->fields, sizeof fields);
  tally_free(t);
  memset(t, 0, sizeof *t);
  t->nfields = nfields;
  t->lines = lines;
  memcpy(t->fields, fields, sizeof fields);
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
  parser_init(&ps, L, NULL, 0, max_depth);
  if (c->chunks) {
    ps.stream_fn = 5;
    ps.stream_key = lua_tolstring(L, 4, &ps.stream_key_len);
    ps.tally = tally;
    ps.tally_combos = 10;
    ps.chunked = c;
    ps.chunk_margin = chunk / 8;
    status = chunk_more(&ps);
    if (status == 0) status = decode_buffer(&ps, ARRAY_MT_UV, OBJECT_MT_UV, 0);
  }
  /* decoded only if the streamed array closed (so all after it was read
   * too) and the file held the bytes fstat counted */
  int whole = status == 0 && c->rest && ps.chunk_read == (size_t)st.st_size;
  int complete = chunked_release(c);
  if (whole && complete && c->sha) {
    char hex[65];
    final_hex(c->sha, hex);
    c->sha = NULL;
    if (memcmp(hex, pin, 64) != 0) {
      lua_settop(L, 10);
      return push_mismatch(L, pin, hex); /* whatever was decoded is dropped */
    }
  }
  if (whole && complete) {
    lua_remove(L, 11); /* the userdata, under the document */
    return 0;
  }
  lua_settop(L, 10);
  tally_reset(tally);
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
 * (see Tallies) and read returns value, {rows, combos, read}; a file of at
 * least two chunks (chunk = bytes, 4096..64 MiB, default 256 KiB; 0 reads
 * whole) is then read in chunks hashed on a second thread as the rows are
 * scanned (read_chunked; read = "chunks", else "whole").
 */
static int json_read(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_checkinteger(L, 2);
  luaL_argcheck(L, max >= 0, 2, "max_bytes must be >= 0");
  int max_depth = opt_depth(L, 3);
  int nofollow = 0;
  const char *pin = opt_pin(L, 3);
  lua_settop(L, 3);
  lua_pushnil(L); /* 4: stream key */
  lua_pushnil(L); /* 5: stream function */
  lua_pushnil(L); /* 6: order key */
  lua_pushnil(L); /* 7: order function */
  lua_pushnil(L); /* 8: the set of fields a streamed element keeps */
  if (lua_istable(L, 3)) {
    lua_getfield(L, 3, "nofollow");
    nofollow = lua_toboolean(L, -1);
    lua_pop(L, 1);
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
    lua_pop(L, 1);
    tally = vkit_newgcdata(L, sizeof *tally, "vkit.json.tally", tally_gc);
    lua_createtable(L, 1, 1);
    lua_getfield(L, 3, "tally");
    lua_setfield(L, -2, "fields");
    opt_fields(L, lua_gettop(L), tally);
    lua_pop(L, 1);
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
      tally_free(tally);
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
  if (pin && !concurrent && pin_mismatch(L, buf->data, buf->len, pin)) return 4; /* nothing is parsed */
  if (concurrent) {
    if (!(job.ctx = vkit_sha256_new())) return luaL_error(L, VKIT_SHA256_FAILED);
    hash_job_start(&job, buf->data, buf->len);
  }
  Parser ps;
  parser_init(&ps, L, buf->data, buf->len, max_depth);
  if (!lua_isnil(L, 5) || tally) {
    ps.stream_fn = 5;
    ps.stream_key = lua_tolstring(L, 4, &ps.stream_key_len);
    ps.keep = lua_isnil(L, 8) ? 0 : 8;
    ps.tally = tally;
    ps.tally_combos = 10;
  }
  if (!lua_isnil(L, 7)) {
    ps.order_fn = 7;
    ps.order_key = lua_tolstring(L, 6, &ps.order_key_len);
  }
  int status = decode_buffer(&ps, ARRAY_MT_UV, OBJECT_MT_UV, 0);
  if (concurrent) {
    char hex[65];
    hash_job_wait(&job);
    final_hex(job.ctx, hex);
    if (memcmp(hex, pin, 64) != 0) {
      vkit_file_bytes_release(buf);
      if (tally) tally_free(tally);
      return push_mismatch(L, pin, hex); /* whatever was decoded is dropped */
    }
  }
  vkit_file_bytes_release(buf); /* the value no longer needs the bytes */
  if (status != 0) {
    if (tally) tally_free(tally);
    return push_parse_error(L, &ps);
  }
  if (ps.streamed < 0) {
    if (tally) tally_free(tally);
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

/* ======================================================================
 * JSON Lines: a streaming reader
 * ====================================================================== */

#define LINES "vkit.json.lines"

typedef struct {
  FILE *f;
  char *line;
  size_t cap;
  lua_Integer lineno;
  int max_depth;
  size_t max_line;
  VkitSha256 *hash;    /* with opts.sha256: every byte read, checked at the end */
  char pin[65];
  int breaks;          /* opts.breaks: a Python-only line break ends the rows */
} Lines;

static int lines_close(lua_State *L) {
  Lines *r = luaL_checkudata(L, 1, LINES);
  if (r->f) fclose(r->f);
  free(r->line);
  vkit_sha256_free(r->hash);
  r->f = NULL;
  r->line = NULL;
  r->hash = NULL;
  return 0;
}

/* The first byte of a line break that Python's str.splitlines() honours
 * and a split on "\n" does not: CR (also of CRLF), U+0085, U+2028, U+2029;
 * the C0 separators (VT, FF, FS, GS, RS) are not JSON whitespace, so a row
 * holding one fails to decode on its own. */
static const char *python_break(const char *s, size_t len) {
  for (const char *p = s, *end = s + len; p < end; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '\r') return p;
    if (c == 0xC2 && p + 1 < end && (unsigned char)p[1] == 0x85) return p;
    if (c == 0xE2 && p + 2 < end && (unsigned char)p[1] == 0x80 &&
        ((unsigned char)p[2] == 0xA8 || (unsigned char)p[2] == 0xA9))
      return p;
  }
  return NULL;
}

/* Iterator: lineno, value | lineno, nil, message, code | nil at EOF.  A bad
 * row never ends the loop silently: the caller sees it and decides. */
static int lines_next(lua_State *L) {
  Lines *r = lua_touserdata(L, lua_upvalueindex(1)); /* set by json_lines, unreachable from Lua */
  if (!r->f) return 0;
  ssize_t n = getline(&r->line, &r->cap, r->f);
  if (n < 0) {
    int err = ferror(r->f) ? errno : 0;
    fclose(r->f);
    r->f = NULL;
    if (err) {
      lua_pushinteger(L, r->lineno + 1);
      lua_pushnil(L);
      lua_pushfstring(L, "read error: %s", strerror(err));
      lua_pushstring(L, vkit_errno_name(err));
      return 4;
    }
    if (r->hash) { /* the end: every byte read was hashed once */
      char hex[65];
      final_hex(r->hash, hex);
      r->hash = NULL;
      if (memcmp(hex, r->pin, 64) != 0) {
        lua_pushinteger(L, r->lineno + 1);
        return 1 + push_mismatch(L, r->pin, hex); /* lineno, nil, message, code, actual */
      }
    }
    return 0;
  }
  if (r->hash) vkit_sha256_update(r->hash, r->line, (size_t)n);
  r->lineno++;
  lua_pushinteger(L, r->lineno);
  size_t len = (size_t)n;
  if (len > 0 && r->line[len - 1] == '\n') len--;
  if (r->breaks) {
    const char *at = python_break(r->line, len);
    if (at) {
      lua_pushnil(L);
      lua_pushfstring(L, "line %d: a line break other than LF at byte %d", (int)r->lineno, (int)(at - r->line));
      lua_pushliteral(L, "python-line-break");
      return 4;
    }
  } else if (len > 0 && r->line[len - 1] == '\r') {
    len--;
  }
  if (len > r->max_line) {
    lua_pushnil(L);
    lua_pushfstring(L, "line %d is longer than %d bytes", (int)r->lineno, (int)r->max_line);
    lua_pushliteral(L, "line-too-long");
    return 4;
  }
  size_t i = 0;
  while (i < len && (r->line[i] == ' ' || r->line[i] == '\t')) i++;
  if (i == len) {
    lua_pushnil(L);
    lua_pushfstring(L, "line %d is blank", (int)r->lineno);
    lua_pushliteral(L, "blank-line");
    return 4;
  }
  Parser ps;
  parser_init(&ps, L, r->line, len, r->max_depth);
  if (decode_buffer(&ps, lua_upvalueindex(3), lua_upvalueindex(4), lua_upvalueindex(2)) == 0) return 2;
  lua_pushnil(L);
  lua_pushfstring(L, "line %d: %s at byte %d: %s", (int)r->lineno, ps.code, (int)ps.offset, ps.message);
  lua_pushstring(L, ps.code);
  return 4;
}

/* lines(path [, {max_depth, max_line, nofollow, sha256, breaks}]) ->
 * iterator, nil, nil, handle */
static int json_lines(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int max_depth = opt_depth(L, 2);
  lua_Integer max_line = lua_istable(L, 2) ? vkit_optintfield(L, 2, "max_line", 64 << 20) : 64 << 20;
  const char *pin = opt_pin(L, 2);
  int nofollow = 0, breaks = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "nofollow");
    nofollow = lua_toboolean(L, -1);
    lua_getfield(L, 2, "breaks");
    breaks = lua_toboolean(L, -1);
    lua_pop(L, 2);
  }
  Lines *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, LINES);
  r->max_depth = max_depth;
  r->max_line = (size_t)max_line;
  r->breaks = breaks;
  if (pin) {
    memcpy(r->pin, pin, 65);
    if (!(r->hash = vkit_sha256_new())) return luaL_error(L, VKIT_SHA256_FAILED);
  }
  struct stat st;
  int fd = vkit_open_regular(L, path, nofollow, &st); /* a FIFO cannot hang the open */
  if (fd < 0) return 3;
  if (!(r->f = fdopen(fd, "rb"))) {
    int err = errno;
    close(fd);
    return vkit_fail_errno(L, err, path);
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  lua_pushvalue(L, -1);
  lua_createtable(L, OBJECT_BATCH, 0); /* the key cache, shared by every line */
  lua_pushvalue(L, ARRAY_MT_UV);
  lua_pushvalue(L, OBJECT_MT_UV);
  lua_pushcclosure(L, lines_next, 4); /* reader, key cache, array and object metatables */
  lua_pushnil(L);
  lua_pushnil(L);
  lua_pushvalue(L, -4); /* to-be-closed value of the generic for */
  return 4;
}

/* ======================================================================
 * Encoder
 * ====================================================================== */


typedef struct { int canonical; int indent; int depth; } Style;

/* ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3). */
static void format_es_number(double v, char *out, size_t cap) {
  if (v == 0) { snprintf(out, cap, "0"); return; }
  char sci[40];
  int prec;
  for (prec = 1; prec <= 17; prec++) {
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    if (strtod(sci, NULL) == v) break;
  }
  /* sci is "-d.ddde±XX": split digits and exponent. */
  const char *p = sci;
  int neg = 0;
  if (*p == '-') { neg = 1; p++; }
  char digits[24];
  int k = 0;
  for (; *p && *p != 'e'; p++)
    if (*p != '.') digits[k++] = *p;
  while (k > 1 && digits[k - 1] == '0') k--;
  digits[k] = '\0';
  int n = atoi(p + 1) + 1; /* value = 0.digits * 10^n */
  char *w = out;
  size_t left = cap;
#define PUT(...) do { int m = snprintf(w, left, __VA_ARGS__); w += m; left -= (size_t)m; } while (0)
  if (neg) PUT("-");
  if (k <= n && n <= 21) {
    PUT("%s", digits);
    for (int i = 0; i < n - k; i++) PUT("0");
  } else if (0 < n && n <= 21) {
    PUT("%.*s.%s", n, digits, digits + n);
  } else if (-6 < n && n <= 0) {
    PUT("0.");
    for (int i = 0; i < -n; i++) PUT("0");
    PUT("%s", digits);
  } else {
    int e = n - 1;
    if (k == 1) PUT("%ce%c%d", digits[0], e < 0 ? '-' : '+', abs(e));
    else PUT("%c.%se%c%d", digits[0], digits + 1, e < 0 ? '-' : '+', abs(e));
  }
#undef PUT
}

static void encode_string(lua_State *L, Out *o, const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  OUT_LIT(L, o, "\"");
  while (p < end) {
    const unsigned char *run = p;
    while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80) p++;
    out_add(L, o, (const char *)run, (size_t)(p - run));
    if (p >= end) break;
    unsigned c = *p;
    if (c >= 0x80) {
      uint32_t cp;
      size_t n = utf8_decode(p, end, &cp);
      if (!n) luaL_error(L, "cannot encode a string that is not valid UTF-8 as JSON");
      out_add(L, o, (const char *)p, n);
      p += n;
      continue;
    }
    p++;
    switch (c) {
      case '"': OUT_LIT(L, o, "\\\""); break;
      case '\\': OUT_LIT(L, o, "\\\\"); break;
      case '\b': OUT_LIT(L, o, "\\b"); break;
      case '\f': OUT_LIT(L, o, "\\f"); break;
      case '\n': OUT_LIT(L, o, "\\n"); break;
      case '\r': OUT_LIT(L, o, "\\r"); break;
      case '\t': OUT_LIT(L, o, "\\t"); break;
      default: {
        char esc[8];
        snprintf(esc, sizeof esc, "\\u%04x", c);
        out_add(L, o, esc, 6);
      }
    }
  }
  OUT_LIT(L, o, "\"");
}

static void encode_number(lua_State *L, Out *o, int idx, const Style *st) {
  char buf[64];
  if (lua_isinteger(L, idx)) {
    lua_Integer i = lua_tointeger(L, idx);
    /* JCS numbers are IEEE doubles: an integer beyond 2^53 has no exact form. */
    if (st->canonical && (i > (1LL << 53) || i < -(1LL << 53)))
      luaL_error(L, "integer %I is not exactly representable in canonical JSON", (LUAI_UACINT)i);
    snprintf(buf, sizeof buf, "%lld", (long long)i);
  } else {
    double d = lua_tonumber(L, idx);
    if (!isfinite(d)) luaL_error(L, "cannot encode NaN or Infinity as JSON");
    format_es_number(d, buf, sizeof buf);
    /* Plain JSON keeps the float subtype visible: 3.0, not 3. */
    if (!st->canonical && !strpbrk(buf, ".e")) strcat(buf, ".0");
  }
  out_add(L, o, buf, strlen(buf));
}

/* Sort keys: bytewise, or by UTF-16 code units for canonical output. */
typedef struct { const char *s; size_t len; uint16_t *u16; size_t n16; } Key;

static int cmp_bytes(const void *a, const void *b) {
  const Key *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->s, y->s, n);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int cmp_utf16(const void *a, const void *b) {
  const Key *x = a, *y = b;
  size_t n = x->n16 < y->n16 ? x->n16 : y->n16;
  for (size_t i = 0; i < n; i++)
    if (x->u16[i] != y->u16[i]) return x->u16[i] < y->u16[i] ? -1 : 1;
  return (x->n16 > y->n16) - (x->n16 < y->n16);
}

static size_t to_utf16(const char *s, size_t len, uint16_t *out) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  size_t n = 0;
  while (p < end) {
    uint32_t cp;
    size_t k = utf8_decode(p, end, &cp);
    if (!k) { cp = *p; k = 1; } /* invalid keys are refused when written */
    p += k;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out[n++] = (uint16_t)(0xD800 + (cp >> 10));
      out[n++] = (uint16_t)(0xDC00 + (cp & 0x3FF));
    } else {
      out[n++] = (uint16_t)cp;
    }
  }
  return n;
}

enum { KIND_ARRAY, KIND_OBJECT };

/* Decides array or object for the table at idx; counts its keys. */
static int table_kind(lua_State *L, int idx, lua_Integer *count) {
  int kind = -1;
  if (lua_getmetatable(L, idx)) {
    if (lua_rawequal(L, -1, ARRAY_MT_UV)) kind = KIND_ARRAY;
    else if (lua_rawequal(L, -1, OBJECT_MT_UV)) kind = KIND_OBJECT;
    lua_pop(L, 1);
  }
  lua_Integer n = 0, max_int = 0;
  int strings = 0, ints = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    n++;
    if (lua_type(L, -2) == LUA_TSTRING) strings++;
    else if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1) {
      ints++;
      if (lua_tointeger(L, -2) > max_int) max_int = lua_tointeger(L, -2);
    }
    lua_pop(L, 1);
  }
  *count = n;
  int is_seq = ints == n && max_int == n;
  if (kind == KIND_ARRAY) {
    if (!is_seq) luaL_error(L, "JSON array has keys other than 1..n");
    return kind;
  }
  if (kind == KIND_OBJECT) {
    if (strings != n) luaL_error(L, "JSON object has a key that is not a string");
    return kind;
  }
  if (n == 0)
    luaL_error(L, "cannot tell an empty array from an empty object: "
                  "mark it with vkit.json.array() or vkit.json.object()");
  if (is_seq) return KIND_ARRAY;
  if (strings == n) return KIND_OBJECT;
  return luaL_error(L, "table mixes array and object keys, or has keys JSON cannot hold");
}

static void newline(lua_State *L, Out *o, const Style *st) {
  if (!st->indent) return;
  OUT_LIT(L, o, "\n");
  for (int i = 0; i < st->depth * st->indent; i++) OUT_LIT(L, o, " ");
}

static void encode_value(lua_State *L, Out *o, int idx, Style *st);

static void encode_table(lua_State *L, Out *o, int idx, Style *st) {
  if (st->depth >= 1000) luaL_error(L, "table nested too deeply (or a cycle) for JSON");
  luaL_checkstack(L, 6, "JSON encoding");
  lua_Integer n;
  int kind = table_kind(L, idx, &n);
  st->depth++;
  if (kind == KIND_ARRAY) {
    OUT_LIT(L, o, "[");
    for (lua_Integer i = 1; i <= n; i++) {
      if (i > 1) OUT_LIT(L, o, ",");
      newline(L, o, st);
      lua_rawgeti(L, idx, i);
      encode_value(L, o, lua_gettop(L), st);
      lua_pop(L, 1);
    }
    st->depth--;
    if (n) newline(L, o, st);
    OUT_LIT(L, o, "]");
    return;
  }
  /* Keys live in a userdata so an error while encoding frees nothing by hand. */
  Key *keys = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(Key), 0);
  size_t total16 = 0;
  lua_Integer k = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    keys[k].s = lua_tolstring(L, -1, &keys[k].len); /* anchored by the table */
    total16 += keys[k].len * 2;
    k++;
  }
  if (st->canonical) {
    uint16_t *u16 = lua_newuserdatauv(L, (total16 ? total16 : 1) * sizeof(uint16_t), 0);
    for (lua_Integer i = 0; i < n; i++) {
      keys[i].u16 = u16;
      keys[i].n16 = to_utf16(keys[i].s, keys[i].len, u16);
      u16 += keys[i].n16;
    }
    qsort(keys, (size_t)n, sizeof(Key), cmp_utf16);
  } else {
    lua_pushnil(L); /* keep the stack shape the same in both branches */
    qsort(keys, (size_t)n, sizeof(Key), cmp_bytes);
  }
  OUT_LIT(L, o, "{");
  for (lua_Integer i = 0; i < n; i++) {
    if (i > 0) OUT_LIT(L, o, ",");
    newline(L, o, st);
    encode_string(L, o, keys[i].s, keys[i].len);
    if (st->indent) OUT_LIT(L, o, ": ");
    else OUT_LIT(L, o, ":");
    lua_pushlstring(L, keys[i].s, keys[i].len);
    lua_rawget(L, idx);
    encode_value(L, o, lua_gettop(L), st);
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
  st->depth--;
  if (n) newline(L, o, st);
  OUT_LIT(L, o, "}");
}

static void encode_value(lua_State *L, Out *o, int idx, Style *st) {
  switch (lua_type(L, idx)) {
    case LUA_TNIL: OUT_LIT(L, o, "null"); break;
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, idx)) OUT_LIT(L, o, "true");
      else OUT_LIT(L, o, "false");
      break;
    case LUA_TNUMBER: encode_number(L, o, idx, st); break;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      encode_string(L, o, s, len);
      break;
    }
    case LUA_TTABLE: encode_table(L, o, idx, st); break;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == &null_sentinel) {
        OUT_LIT(L, o, "null");
        break;
      }
      /* fallthrough */
    default:
      luaL_error(L, "cannot encode a %s as JSON", luaL_typename(L, idx));
  }
}

/* Encodes the value at index 1 into a fresh Out left on the stack top. */
static Out *encode_to_out(lua_State *L, Style *st) {
  luaL_checkany(L, 1);
  Out *o = lua_newuserdatauv(L, sizeof *o, 0);
  memset(o, 0, sizeof *o);
  luaL_setmetatable(L, OUT);
  encode_value(L, o, 1, st);
  return o;
}

static int json_encode(lua_State *L) {
  Style st = {0, 0, 0};
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer indent = vkit_optintfield(L, 2, "indent", 0);
    luaL_argcheck(L, indent >= 0 && indent <= 16, 2, "indent must be 0..16");
    st.indent = (int)indent;
  }
  lua_settop(L, 1);
  Out *o = encode_to_out(L, &st);
  lua_pushlstring(L, o->data ? o->data : "", o->len);
  return 1;
}

static int json_canonical(lua_State *L) {
  Style st = {1, 0, 0};
  lua_settop(L, 1);
  Out *o = encode_to_out(L, &st);
  lua_pushlstring(L, o->data ? o->data : "", o->len);
  return 1;
}

static int json_digest(lua_State *L) {
  Style st = {1, 0, 0};
  lua_settop(L, 1);
  Out *o = encode_to_out(L, &st);
  unsigned char md[32];
  char hex[65];
  if (vkit_sha256(o->data ? o->data : "", o->len, md) != 0) return luaL_error(L, VKIT_SHA256_FAILED);
  vkit_hex(md, 32, hex);
  lua_pushstring(L, hex);
  return 1;
}

/* ======================================================================
 * Exact keys
 * ====================================================================== */

/* exact_key(v): bytes that tell apart exactly the decoded JSON values that
 * differ in type or value: 1 from 1.0 and from true, 0.0 from -0.0 (a
 * number is its tag and its eight little-endian bytes, never formatted),
 * an object's members in bytewise key order, every string and key
 * length-prefixed, so no two values share a key.  For comparing, never
 * shown.  Tags: i f s t F n [ ] { } and k before each key.  A table is
 * an array or object as kind() says; anything kind() names no JSON value
 * (and null) is "n". */
static void tagged_bytes(lua_State *L, Out *o, char tag, const char *s, size_t len) {
  if (len > 0xFFFFFFFFu) luaL_error(L, "a string of %I bytes has no exact key", (LUAI_UACINT)len);
  unsigned char head[5] = {(unsigned char)tag, (unsigned char)len, (unsigned char)(len >> 8),
                           (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
  out_add(L, o, (const char *)head, 5);
  out_add(L, o, s, len);
}

static void tagged_word(lua_State *L, Out *o, char tag, uint64_t w) {
  unsigned char b[9] = {(unsigned char)tag};
  for (int i = 0; i < 8; i++) b[1 + i] = (unsigned char)(w >> (8 * i));
  out_add(L, o, (const char *)b, 9);
}

/* KIND_ARRAY, KIND_OBJECT or -1 (empty and unmarked, or mixed keys) for
 * the table at idx: what kind() answers and exact_key writes. */
static int marked_kind(lua_State *L, int idx) {
  if (lua_getmetatable(L, idx)) {
    int kind = lua_rawequal(L, -1, ARRAY_MT_UV) ? KIND_ARRAY : lua_rawequal(L, -1, OBJECT_MT_UV) ? KIND_OBJECT : -1;
    lua_pop(L, 1);
    if (kind >= 0) return kind;
  }
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
  int strings = 1;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    count++;
    if (lua_type(L, -2) != LUA_TSTRING) strings = 0;
    lua_pop(L, 1);
  }
  if (count == 0) return -1;
  if (count == n) return KIND_ARRAY;
  return strings ? KIND_OBJECT : -1;
}

static void exact_key(lua_State *L, Out *o, int idx, int depth) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: out_add(L, o, lua_toboolean(L, idx) ? "t" : "F", 1); return;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) {
        tagged_word(L, o, 'i', (uint64_t)lua_tointeger(L, idx));
      } else {
        double d = lua_tonumber(L, idx);
        uint64_t w;
        memcpy(&w, &d, sizeof w);
        tagged_word(L, o, 'f', w);
      }
      return;
    case LUA_TSTRING: {
      size_t len;
      const char *s = lua_tolstring(L, idx, &len);
      tagged_bytes(L, o, 's', s, len);
      return;
    }
    case LUA_TTABLE: break;
    default: OUT_LIT(L, o, "n"); return;
  }
  int kind = marked_kind(L, idx);
  if (kind < 0) {
    OUT_LIT(L, o, "n");
    return;
  }
  if (depth >= 1000) luaL_error(L, "value nested too deeply (or a cycle) for an exact key");
  luaL_checkstack(L, 4, "exact key");
  if (kind == KIND_ARRAY) {
    OUT_LIT(L, o, "[");
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      exact_key(L, o, lua_gettop(L), depth + 1);
      lua_pop(L, 1);
    }
    OUT_LIT(L, o, "]");
    return;
  }
  lua_Integer n = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "an object has a key that is not a string");
    n++;
  }
  /* Keys live in a userdata so an error frees nothing by hand. */
  Key *keys = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(Key), 0);
  lua_Integer k = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    keys[k].s = lua_tolstring(L, -1, &keys[k].len); /* anchored by the table */
    k++;
  }
  qsort(keys, (size_t)n, sizeof(Key), cmp_bytes);
  OUT_LIT(L, o, "{");
  for (lua_Integer i = 0; i < n; i++) {
    tagged_bytes(L, o, 'k', keys[i].s, keys[i].len);
    lua_pushlstring(L, keys[i].s, keys[i].len);
    lua_rawget(L, idx);
    exact_key(L, o, lua_gettop(L), depth + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  OUT_LIT(L, o, "}");
}

static int json_exact_key(lua_State *L) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  Out *o = lua_newuserdatauv(L, sizeof *o, 0);
  memset(o, 0, sizeof *o);
  luaL_setmetatable(L, OUT);
  exact_key(L, o, 1, 0);
  lua_pushlstring(L, o->data ? o->data : "", o->len);
  return 1;
}

/* ======================================================================
 * Markers and kinds
 * ====================================================================== */

/* array([t]) / object([t]): marks t (or a new table) and returns it. */
static int mark(lua_State *L, int mt) {
  if (lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_pushvalue(L, mt);
  lua_setmetatable(L, 1);
  return 1;
}
static int json_array(lua_State *L) { return mark(L, ARRAY_MT_UV); }
static int json_object(lua_State *L) { return mark(L, OBJECT_MT_UV); }

/* kind(v): "null", "boolean", "integer", "number", "string", "array",
 * "object", or nil for a value JSON cannot hold.  Unmarked tables are
 * classified as encode() would, with an empty one being nil. */
static int json_kind(lua_State *L) {
  switch (lua_type(L, 1)) {
    case LUA_TBOOLEAN: lua_pushliteral(L, "boolean"); return 1;
    case LUA_TNUMBER:
      if (lua_isinteger(L, 1)) lua_pushliteral(L, "integer");
      else lua_pushliteral(L, "number");
      return 1;
    case LUA_TSTRING: lua_pushliteral(L, "string"); return 1;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, 1) == &null_sentinel) { lua_pushliteral(L, "null"); return 1; }
      break;
    case LUA_TTABLE:
      lua_settop(L, 1);
      switch (marked_kind(L, 1)) {
        case KIND_ARRAY: lua_pushliteral(L, "array"); return 1;
        case KIND_OBJECT: lua_pushliteral(L, "object"); return 1;
        default: break;
      }
      break;
    default: break;
  }
  lua_pushnil(L);
  return 1;
}

static const luaL_Reg lines_meta[] = {{"__gc", lines_close}, {"__close", lines_close}, {NULL, NULL}};
static const luaL_Reg no_methods[] = {{NULL, NULL}};
static const luaL_Reg out_meta[] = {{"__gc", out_gc}, {NULL, NULL}};

static const luaL_Reg json_funcs[] = {
  {"decode", json_decode},
  {"read", json_read},
  {"encode", json_encode},
  {"canonical", json_canonical},
  {"exact_key", json_exact_key},
  {"digest", json_digest},
  {"lines", json_lines},
  {"tally_lines", json_tally_lines},
  {"array", json_array},
  {"object", json_object},
  {"kind", json_kind},
  {NULL, NULL}};

int luaopen_vkit_json(lua_State *L) {
  vkit_newclass(L, LINES, no_methods, lines_meta);
  vkit_newclass(L, OUT, no_methods, out_meta);
  luaL_newmetatable(L, ARRAY_MT);
  lua_pushliteral(L, "array");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  luaL_newmetatable(L, OBJECT_MT);
  lua_pushliteral(L, "object");
  lua_setfield(L, -2, "__name");
  lua_pop(L, 1);
  luaL_newlibtable(L, json_funcs);
  luaL_getmetatable(L, ARRAY_MT);
  luaL_getmetatable(L, OBJECT_MT);
  luaL_setfuncs(L, json_funcs, 2);
  PUSH_NULL(L);
  lua_setfield(L, -2, "null");
  luaL_getmetatable(L, ARRAY_MT);
  lua_setfield(L, -2, "array_mt");
  luaL_getmetatable(L, OBJECT_MT);
  lua_setfield(L, -2, "object_mt");
  vkit_setfield_int(L, "default_max_depth", DEFAULT_MAX_DEPTH);
  vkit_setfield_int(L, "max_depth_cap", MAX_DEPTH_CAP);
  return 1;
}
