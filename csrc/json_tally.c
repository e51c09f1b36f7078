/*
 * json_tally.c: tallies - rows counted by the values of a few named
 * fields, without a Lua value per row.
 *
 * A tally reads rows (the lines of a JSON Lines file, tally_lines here, or
 * the elements of a document's top-level array member, json.read's tally)
 * and groups them by the scalar values of the fields it is asked for: each
 * distinct combination of values is one entry {row = {field = value...},
 * n = rows, first = its first row}, in order of first appearance.  The
 * rules applied to those values are the caller's.  The scanner decides
 * only inputs it can vouch for: every row an object whose named fields are
 * absent or scalars, no escape in a key or a named field's string, at most
 * TALLY_KEYS keys per object, at most TALLY_DEPTH levels, no line break the
 * caller named (JSON Lines, opts.line_breaks); anything else, including
 * any input the decoder would refuse, ends the tally with code "not-exact"
 * and the row where it gave up, so the caller decodes the input the
 * ordinary way and names what is wrong exactly as the decoder does.  It
 * never accepts what the decoder refuses.
 */
#include "json.h"
#include "chunks.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#define TALLY_FIELDS 16
#define TALLY_KEYS 32
#define SHAPE_KEY_TEXT 64 /* the longest key, as written, a tally remembers in its place */
#define TALLY_DEPTH 256
#define TALLY_COMBOS (1 << 16)
#define TALLY_CHUNK ((size_t)2 << 20) /* a huge page */
#define TALLY_AHEAD ((off_t)1 << 20) /* a file this large is read ahead on a second thread */

enum { T_ABSENT, T_NULL, T_TRUE, T_FALSE, T_INT, T_FLOAT, T_STRING };

typedef struct { const char *s; size_t len; } Name;

typedef struct {
  uint64_t hash;
  size_t key_at, key_len; /* in the arena */
  lua_Integer n, first;
  int index;              /* 1-based position in the combos table */
} Combo;

struct Tally {
  int nfields;
  Name fields[TALLY_FIELDS];
  /* White space: JSON's, but a byte that begins a line break the caller
   * named (JSON Lines), which ends the scan there (the row is left to the
   * decoder); and the breaks, sought in strings at their multi-byte
   * characters. */
  unsigned char ws[256];
  LineBreaks breaks;
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
};

void json_tally_free(Tally *t) {
  free(t->key);
  free(t->slots);
  free(t->arena);
  t->key = NULL;
  t->slots = NULL;
  t->arena = NULL;
}

static int tally_gc(lua_State *L) {
  json_tally_free(lua_touserdata(L, 1));
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

/* White space (t->ws): JSON's, but what begins a named line break, at
 * which the scan stops (and then fails: the row is left to the decoder). */
static inline const unsigned char *skip_ws_in(const Tally *t, const unsigned char *p, const unsigned char *end) {
  if (p < end && *p > ' ') return p; /* the common case: no white space at all */
  while (p < end && t->ws[*p]) p++;
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
    p = string_run_end(p, end); /* to a quote, a backslash, a control or multi-byte character */
    if (p >= end) break;
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
        if (end - p < 6 || !json_hex4(p + 2, &cp)) return give_up(t, "bad \\u escape");
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
    if (t->breaks.first[c] && json_line_break_at(&t->breaks, p, end))
      return give_up(t, "a line break the caller named");
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
  if (!json_fast_decimal(s, p, &v)) {
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
int json_reserve(void *bufp, size_t *cap, size_t len, size_t n) {
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
  if (json_reserve(&t->key, &t->key_cap, 0, need)) return GIVE_UP(t, "out of memory");
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
  if (json_reserve(&t->arena, &t->arena_cap, t->arena_len, len)) return GIVE_UP(t, "out of memory");
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

const unsigned char *json_tally_row(lua_State *L, Tally *t, const unsigned char *p, const unsigned char *end,
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
void json_tally_result(lua_State *L, const Tally *t, int combos) {
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

Tally *json_tally_new(lua_State *L, int names, int arg) {
  luaL_argcheck(L, lua_istable(L, names), arg, "fields must be an array of names");
  int n = (int)luaL_len(L, names);
  luaL_argcheck(L, n >= 1 && n <= TALLY_FIELDS, arg, "fields names 1..16 members");
  Tally *t = vkit_newgcdata(L, sizeof *t, "vkit.json.tally", tally_gc);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, names, i + 1);
    luaL_argcheck(L, lua_type(L, -1) == LUA_TSTRING, arg, "fields must be an array of names");
    t->fields[i].s = lua_tolstring(L, -1, &t->fields[i].len);
    lua_pop(L, 1);
  }
  t->nfields = n;
  t->ws[' '] = t->ws['\t'] = t->ws['\n'] = t->ws['\r'] = 1;
  return t;
}

/* A tally that starts over: what it counts by kept, everything counted
 * dropped. */
void json_tally_reset(Tally *t) {
  Tally was = *t;
  json_tally_free(t);
  memset(t, 0, sizeof *t);
  t->nfields = was.nfields;
  memcpy(t->fields, was.fields, sizeof t->fields);
  memcpy(t->ws, was.ws, sizeof t->ws);
  t->breaks = was.breaks;
}

void json_tally_unread_row(Tally *t) { t->rows--; }
lua_Integer json_tally_rows(const Tally *t) { return t->rows; }
const char *json_tally_why(const Tally *t) { return t->why ? t->why : "?"; }

/* ======================================================================
 * tally_lines: the rows of a JSON Lines file
 * ====================================================================== */

/* The combos table of json_tally_lines, on its stack. */
#define LINES_COMBOS 5

/* One line of a JSON Lines file, without its LF: blank (spaces and tabs,
 * and a CR at its end, each where it is white space here: not a listed
 * line break) or one row; 0, or -1 when the tally gives up.  Inlined: a
 * call per line cost more than its checks. */
static inline __attribute__((always_inline)) int tally_line(lua_State *L, Tally *t, const unsigned char *q,
                                                            const unsigned char *end) {
  while (q < end && (*q == ' ' || (*q == '\t' && t->ws['\t']))) q++;
  if (q == end || (*q == '\r' && q + 1 == end && t->ws['\r'])) return 0;
  if (!(q = json_tally_row(L, t, q, end, LINES_COMBOS, OBJECT_MT_UV))) return -1;
  if (skip_ws_in(t, q, end) != end) return GIVE_UP(t, "trailing bytes after a row");
  return 0;
}

/*
 * tally_lines(path, {fields = {...}, line_breaks, sha256, nofollow,
 * max_line}) -> {rows, combos} | nil, message, code [, detail]: the
 * non-blank lines of a JSON Lines file as tally rows (a line of spaces and
 * tabs is blank).  A line ends at LF, a CR before it white space; with
 * line_breaks (see json_lines.c), a line holding one of them ends the
 * tally there as not-exact, and the CR is white space only if it is not
 * one of them.
 * The file is read in 2 MiB chunks and hashed ahead of the scan on a
 * second thread (csrc/chunks.c; in this thread when under 1 MiB); with
 * sha256, bytes that do not hash to it fail the tally as sha256-mismatch
 * (detail: the digest read).  A file refused as vkit.fs.read refuses it
 * fails with its code; a line over max_line, like any input the scanner
 * does not decide, as not-exact (detail: the row).
 */
int json_tally_lines(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  const char *pin = json_opt_pin(L, 2);
  lua_Integer max_line = vkit_optintfield(L, 2, "max_line", 64 << 20);
  int nofollow = json_opt_flag(L, 2, "nofollow");
  lua_settop(L, 2);
  lua_getfield(L, 2, "fields");   /* 3: the names, anchored here */
  Tally *t = json_tally_new(L, 3, 2); /* 4 */
  json_opt_line_breaks(L, 2, &t->breaks);
  for (int c = 0; c < 256; c++)
    if (t->breaks.first[c]) t->ws[c] = 0;
  lua_newtable(L); /* 5: combos */
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
        if (json_reserve(&carry, &carry_cap, carry_len, (size_t)(stop - p))) { status = GIVE_UP(t, "out of memory"); break; }
        memcpy(carry + carry_len, p, (size_t)(stop - p));
        carry_len += (size_t)(stop - p);
        if (!nl) { p = end; break; }
        line = carry;
        line_end = carry + carry_len;
      }
      p = nl + 1;
      t->line++;
      if ((size_t)(line_end - line) > (size_t)max_line) { t->rows++, status = GIVE_UP(t, "a line over max_line"); break; }
      if ((status = tally_line(L, t, line, line_end))) break;
      carry_len = 0;
    }
  }
  int complete = chunks && vkit_chunks_finish(chunks);
  if (status == 0 && !complete) { status = -2; err = EIO; } /* cannot be: the end was reached */
  if (status == 0 && carry_len) { /* the last line, without a newline */
    t->line++;
    status = tally_line(L, t, carry, carry + carry_len);
  }
  close(fd);
  free(carry);
  char hex[65] = "";
  if (sha) json_final_hex(sha, hex);
  if (status == -2) {
    json_tally_free(t);
    return vkit_fail_errno(L, err, path);
  }
  if (pin && status == 0 && memcmp(hex, pin, 64) != 0) {
    json_tally_free(t);
    return json_push_mismatch(L, pin, hex);
  }
  if (status != 0) {
    json_tally_free(t);
    return push_not_exact(L, t);
  }
  json_tally_result(L, t, LINES_COMBOS);
  json_tally_free(t);
  return 1;
}
