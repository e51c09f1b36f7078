/*
 * json.h: what the files of vkit.json share.  They are layers, top first
 * (tests/c_call_graph_spec.lua holds them), and a file calls only files
 * of the layers below it:
 *
 *   json.c         the module table, array/object/kind; registers the rest
 *   json_read.c    json.read: a file decoded without becoming a Lua string,
 *                  streamed, tallied, read in chunks on a second thread
 *   json_tally.c   tallies: rows counted in C by a few named fields, and
 *                  tally_lines, the rows of a JSON Lines file
 *   json_lines.c   JSON Lines read row by row; the line breaks a caller
 *   json_encode.c  names besides LF | sorted-key and canonical (RFC 8785)
 *                  writing, digests, exact keys
 *   json_decode.c  the strict decoder (RFC 8259) | a reader's bytes checked
 *   json_pin.c     against a SHA-256 pin
 *
 * The decoder reaches a tally only through the Parser's rows hook, which
 * json.read sets.
 */
#ifndef VKIT_JSON_H
#define VKIT_JSON_H

#include <endian.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "vkit.h"

/* The executable exports every symbol (-Wl,-E, for the shared modules);
 * these are vkit.json's internals, not an interface, and stay out of its
 * dynamic symbol table (a shared library's symbol of the same name must
 * never bind to them). */
#pragma GCC visibility push(hidden)

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
 * the stack itself is watched as well (json_decode.c's enter). */
#define MAX_DEPTH_CAP 4096

/* vkit.json.null: a light userdata, the address of this byte. */
extern char json_null;
#define PUSH_NULL(L) lua_pushlightuserdata(L, &json_null)

/* ======================================================================
 * Bytes (json_decode.c): what every reader of JSON text checks alike
 * ====================================================================== */

/* Length of the valid UTF-8 sequence at p (0 if invalid); *cp gets it. */
static inline size_t utf8_decode(const unsigned char *p, const unsigned char *end, uint32_t *cp) {
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

/* Bytes a string scan must stop at: the quote, the backslash, control
 * characters (refused) and the first byte of every multi-byte sequence
 * (validated). */
extern const unsigned char json_string_stop[256];

/* The first byte at or after p that a string scan stops at (json_string_stop),
 * or end: sixteen bytes at a time, then eight.  Inline: the decoder's and
 * the tally's inner loops run through it. */
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
  while (p < end && !json_string_stop[*p]) p++;
  return p;
}

/* The four hex digits at p as a number; 0 when one is not a hex digit. */
int json_hex4(const unsigned char *p, uint32_t *out);

/* The double nearest the validated decimal number s..p when one IEEE
 * operation gives it exactly rounded; 0 when strtod must decide. */
int json_fast_decimal(const unsigned char *s, const unsigned char *p, double *out);

/* ======================================================================
 * The decoder (json_decode.c)
 * ====================================================================== */

#define OBJECT_BATCH 16 /* key/value pairs held on the stack */
#define KEYED_DEPTH 64  /* levels whose held keys are compared in C */

typedef struct { const char *s; size_t len; } HeldKey;

typedef struct Parser Parser;

/* Reads the streamed member's array in the decoder's place (json.read's
 * tally): called with ps->p just past its '[', it leaves ps->p just past
 * its ']' and the element count in *count and returns 0, or returns -1
 * with the failure set (json_perr). */
typedef int (*ParseRows)(Parser *ps, lua_Integer *count);

struct Parser {
  lua_State *L;
  const unsigned char *start, *p, *end;
  int depth, max_depth;
  uintptr_t stack_base;    /* json_decode_buffer's frame */
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
  /* Rows (json.read's tally): with stream_key set, the streamed member's
   * array is read by rows, which holds its own state in rows_data. */
  ParseRows rows;
  void *rows_data;
  const char *code;      /* set on failure */
  size_t offset;
  char message[200];
  /* The held keys of the objects being parsed at depths 1..KEYED_DEPTH,
   * anchored by their strings on the Lua stack: duplicate detection by
   * pointer (interned) or bytes, without a call into Lua per pair. */
  HeldKey keys[KEYED_DEPTH][OBJECT_BATCH];
};

/* Sets the failure (code, the offset of at, the message); returns -1. */
int json_perr(Parser *ps, const unsigned char *at, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

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

/* Prepares ps to decode s[0..len); a caller may then set the stream fields. */
void json_parser_init(Parser *ps, lua_State *L, const char *s, size_t len, int max_depth);

/* Decodes the text ps was prepared for, leaving the value on the stack; 0,
 * or -1 with ps set.  array_mt and object_mt are the indices of the two
 * metatables (upvalues of the calling function); key_cache is the index of
 * a key cache table to share, or 0 for one of its own. */
int json_decode_buffer(Parser *ps, int array_mt, int object_mt, int key_cache);

/* Pushes `nil, message, code, byte_offset` for a failed parse; returns 4. */
int json_push_parse_error(lua_State *L, const Parser *ps);

/* opts.max_depth of the options at idx (nil: the default); raises on misuse. */
int json_opt_depth(lua_State *L, int idx);

/* Is opts[k] true, for the options at idx (a table, or nothing)? */
int json_opt_flag(lua_State *L, int idx, const char *k);

/* ======================================================================
 * Pins (json_pin.c): a reader's bytes hashed and compared to opts.sha256
 * ====================================================================== */

/* The expected SHA-256 of the bytes (opts.sha256, 64 lowercase hex
 * digits), or NULL.  The string stays anchored by the options table. */
const char *json_opt_pin(lua_State *L, int idx);

/* Lowercase hex SHA-256 of a finished hash context into hex[65]; when
 * hashing failed, 64 'x': not hex, so it equals no pin. */
void json_final_hex(VkitSha256 *h, char hex[65]);

/* Pushes `nil, message, "sha256-mismatch", actual`; returns 4. */
int json_push_mismatch(lua_State *L, const char *pin, const char *hex);

/* Do len bytes hash to something other than pin?  Then the mismatch is
 * pushed (json_push_mismatch) and 1 returned. */
int json_pin_mismatch(lua_State *L, const void *bytes, size_t len, const char *pin);

/* ======================================================================
 * Line breaks (json_lines.c): the byte sequences besides LF that a
 * caller's rows may not hold (opts.line_breaks)
 * ====================================================================== */

#define LINE_BREAKS_MAX 16  /* sequences in one set */
#define LINE_BREAK_BYTES 8  /* bytes in one sequence */

typedef struct {
  unsigned char first[256]; /* 1 for a byte that begins some sequence */
  int n;
  struct { unsigned char len, bytes[LINE_BREAK_BYTES]; } seq[LINE_BREAKS_MAX];
} LineBreaks;

/* Reads opts.line_breaks of the options at idx (an array of byte strings;
 * absent: none) into b, each sequence's first byte a control character
 * other than LF or a byte of 0x80 and up: the bytes a row's scan stops at
 * anyway.  Raises on misuse. */
void json_opt_line_breaks(lua_State *L, int idx, LineBreaks *b);

/* Does one of b's sequences begin at p (its first byte marked in b->first)? */
int json_line_break_at(const LineBreaks *b, const unsigned char *p, const unsigned char *end);

/* ======================================================================
 * Tallies (json_tally.c)
 * ====================================================================== */

typedef struct Tally Tally;

/* Pushes a new tally (a userdata that frees it when collected) of the
 * fields named by the array at stack index names, and returns it; a bad
 * array is blamed on argument arg.  The names stay anchored by the caller. */
Tally *json_tally_new(lua_State *L, int names, int arg);

/* One row at p: an object whose named fields are kept and counted in the
 * combos table at stack index combos (a new combination's row marked with
 * the metatable at object_mt); the position after it, or NULL when the
 * tally gives up (json_tally_why says why). */
const unsigned char *json_tally_row(lua_State *L, Tally *t, const unsigned char *p, const unsigned char *end,
                               int combos, int object_mt);

/* Forgets the row json_tally_row just gave up on, to read it again (a chunk's
 * end cut it). */
void json_tally_unread_row(Tally *t);

/* The rows read so far, and why the tally gave up. */
lua_Integer json_tally_rows(const Tally *t);
const char *json_tally_why(const Tally *t);

/* Sets n on every combo and leaves {rows = , combos = } on the stack top. */
void json_tally_result(lua_State *L, const Tally *t, int combos);

/* A tally that starts over: its fields kept, everything counted dropped. */
void json_tally_reset(Tally *t);

/* Frees what the tally holds now rather than at its collection. */
void json_tally_free(Tally *t);

/* Room for n more bytes at *bufp (a char *; capacity *cap, length len),
 * grown by doubling; 0, or -1 when out of memory. */
int json_reserve(void *bufp, size_t *cap, size_t len, size_t n);

/* ======================================================================
 * The module's functions, registered by json.c
 * ====================================================================== */

int json_decode(lua_State *L);      /* json_decode.c */
int json_read(lua_State *L);        /* json_read.c */
int json_lines(lua_State *L);       /* json_lines.c */
int json_tally_lines(lua_State *L); /* json_tally.c */
int json_encode(lua_State *L);      /* json_encode.c */
int json_canonical(lua_State *L);
int json_digest(lua_State *L);
int json_exact_key(lua_State *L);

/* json.lines' handle class (json_lines.c). */
void json_lines_register(lua_State *L);

/* KIND_ARRAY, KIND_OBJECT or -1 (empty and unmarked, or mixed keys) for
 * the table at idx (json_encode.c): what kind() answers. */
enum { KIND_ARRAY, KIND_OBJECT };
int json_marked_kind(lua_State *L, int idx);

#pragma GCC visibility pop

#endif
