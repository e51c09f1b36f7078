/*
 * json_decode.c: the one strict JSON reader (vkit.json.decode, and the
 * parse under json.read and json.lines).
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
 */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

char json_null; /* the decoder makes null; the module exports it, the writers know it */
/* Stands, while its object is parsed, for a member a projection drops. */
static char dropped_sentinel;
#define PUSH_DROPPED(L) lua_pushlightuserdata(L, &dropped_sentinel)
#define IS_DROPPED(L, i) (lua_type(L, i) == LUA_TLIGHTUSERDATA && lua_touserdata(L, i) == &dropped_sentinel)

#define ARRAY_BATCH 32  /* elements held on the stack (see parse_array) */

/* Bytes a string scan must stop at: the quote, the backslash, control
 * characters (refused) and the first byte of every multi-byte sequence
 * (validated). */
const unsigned char json_string_stop[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(1), R16(1),                                   /* 0x00-0x1F */
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   /* 0x20-0x2F: '"' */
    R16(0), R16(0),                                   /* 0x30-0x4F */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,   /* 0x50-0x5F: '\\' */
    R16(0), R16(0),                                   /* 0x60-0x7F */
    R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1), R16(1)};
#undef R16

int json_perr(Parser *ps, const unsigned char *at, const char *code, const char *fmt, ...) {
  va_list ap;
  ps->code = code;
  ps->offset = (size_t)(at - ps->start);
  va_start(ap, fmt);
  vsnprintf(ps->message, sizeof ps->message, fmt, ap);
  va_end(ap);
  return -1;
}

int json_hex4(const unsigned char *p, uint32_t *out) {
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
    if (c < 0x20) return json_perr(ps, ps->p, "invalid-json", "raw control character in string");
    if (c < 0x80) { ps->p++; continue; }
    uint32_t cp;
    size_t n = utf8_decode(ps->p, ps->end, &cp);
    if (!n) return json_perr(ps, ps->p, "invalid-utf8", "invalid UTF-8 in string");
    ps->p += n;
  }
  if (ps->p >= ps->end) return json_perr(ps, open, "invalid-json", "unterminated string");
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
      if (!n) return json_perr(ps, ps->p, "invalid-utf8", "invalid UTF-8 in string");
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
    if (c < 0x20) return json_perr(ps, ps->p, "invalid-json", "raw control character in string");
    const unsigned char *esc = ps->p; /* c is the backslash */
    if (ps->end - ps->p < 2) return json_perr(ps, esc, "invalid-json", "unterminated escape");
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
        if (ps->end - ps->p < 4 || !json_hex4(ps->p, &cp))
          return json_perr(ps, esc, "invalid-json", "bad \\u escape");
        ps->p += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return json_perr(ps, esc, "invalid-json", "lone low surrogate \\u%04X", (unsigned)cp);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' || !json_hex4(ps->p + 2, &lo) ||
              lo < 0xDC00 || lo > 0xDFFF)
            return json_perr(ps, esc, "invalid-json", "lone high surrogate \\u%04X", (unsigned)cp);
          ps->p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        add_utf8(&b, cp);
        break;
      }
      default:
        return json_perr(ps, esc, "invalid-json", "invalid escape \\%c", e >= 0x20 && e < 0x7f ? e : '?');
    }
    run = ps->p;
  }
  return json_perr(ps, open, "invalid-json", "unterminated string");
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
int json_fast_decimal(const unsigned char *s, const unsigned char *p, double *out) {
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
  if (p >= ps->end || *p < '0' || *p > '9') return json_perr(ps, s, "invalid-json", "invalid number");
  if (*p == '0') {
    p++;
    if (p < ps->end && *p >= '0' && *p <= '9') return json_perr(ps, s, "invalid-json", "leading zero in number");
  } else {
    while (p < ps->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < ps->end && *p == '.') {
    integral = 0;
    p++;
    if (p >= ps->end || *p < '0' || *p > '9') return json_perr(ps, s, "invalid-json", "digit expected after '.'");
    while (p < ps->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < ps->end && (*p == 'e' || *p == 'E')) {
    integral = 0;
    p++;
    if (p < ps->end && (*p == '+' || *p == '-')) p++;
    if (p >= ps->end || *p < '0' || *p > '9') return json_perr(ps, s, "invalid-json", "digit expected in exponent");
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
  if (json_fast_decimal(s, p, &fast)) {
    lua_pushnumber(ps->L, fast);
    return 0;
  }
  char small[64];
  char *buf = len < sizeof small ? small : malloc(len + 1);
  if (!buf) return json_perr(ps, s, "invalid-json", "out of memory");
  memcpy(buf, s, len);
  buf[len] = '\0';
  double v = strtod(buf, NULL);
  if (buf != small) free(buf);
  if (isinf(v)) return json_perr(ps, s, "number-out-of-range", "number does not fit a double");
  lua_pushnumber(ps->L, v);
  return 0;
}

static int literal(Parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
    return json_perr(ps, ps->p, "invalid-json", "unexpected character");
  ps->p += n;
  return 0;
}

static int parse_value(Parser *ps);

static int enter(Parser *ps) {
  if (++ps->depth > ps->max_depth)
    return json_perr(ps, ps->p, "too-deep", "nesting deeper than %d", ps->max_depth);
  /* the stack grows down on every target vkit builds for; the frame
   * address, not a local's, which ASan may keep on a heap "fake stack" */
  if (ps->stack_base - (uintptr_t)__builtin_frame_address(0) > ps->stack_budget)
    return json_perr(ps, ps->p, "too-deep", "nesting deeper than the C stack allows (%d levels)", ps->depth - 1);
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

/* The streamed member's array: each element goes to the stream function
 * as it is parsed (or the rows hook reads them all); the member's value is
 * left as a placeholder. */
static int stream_array(Parser *ps) {
  lua_State *L = ps->L;
  lua_Integer i = 0;
  if (ps->rows) {
    if (ps->rows(ps, &i)) return -1;
  } else {
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
      ps->p++;
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
        if (ps->p >= ps->end) return json_perr(ps, ps->p, "invalid-json", "unterminated array");
        if (*ps->p == ']') { ps->p++; break; }
        if (*ps->p != ',') return json_perr(ps, ps->p, "invalid-json", "expected ',' or ']'");
        ps->p++;
      }
    }
  }
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
    if (ps->p >= ps->end) return json_perr(ps, ps->p, "invalid-json", "unterminated array");
    if (*ps->p == ']') {
      ps->p++;
      if (held) collect_array(ps, base, (int)i, (int)i);
      break;
    }
    if (*ps->p != ',') return json_perr(ps, ps->p, "invalid-json", "expected ',' or ']'");
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
    if (ps->p >= ps->end || *ps->p != '"') return json_perr(ps, ps->p, "invalid-json", "object key expected");
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
          return json_perr(ps, key_at, "duplicate-key", "duplicate object key \"%.80s\"", keys[n].s);
    } else {
      lua_pushvalue(L, -1);
      if (lua_rawget(L, base + 1) != LUA_TNIL)
        return json_perr(ps, key_at, "duplicate-key", "duplicate object key \"%.80s\"", lua_tostring(L, -2));
      lua_pop(L, 1);
    }
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') return json_perr(ps, ps->p, "invalid-json", "expected ':'");
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
    if (ps->p >= ps->end) return json_perr(ps, ps->p, "invalid-json", "unterminated object");
    if (*ps->p == '}') {
      ps->p++;
      if (held) collect_object(ps, base, n, kept, dropped_held);
      else if (dropped) remove_dropped(L, base + 1);
      break;
    }
    if (*ps->p != ',') return json_perr(ps, ps->p, "invalid-json", "expected ',' or '}'");
    ps->p++;
  }
  ps->depth--;
  return 0;
}

static int parse_value(Parser *ps) {
  skip_ws(ps);
  if (ps->p >= ps->end) return json_perr(ps, ps->p, "invalid-json", "unexpected end of input");
  switch (*ps->p) {
    case '{': return parse_object(ps);
    case '[': return parse_array(ps);
    case '"': return parse_string(ps);
    case 't': if (literal(ps, "true")) return -1; lua_pushboolean(ps->L, 1); return 0;
    case 'f': if (literal(ps, "false")) return -1; lua_pushboolean(ps->L, 0); return 0;
    case 'n': if (literal(ps, "null")) return -1; PUSH_NULL(ps->L); return 0;
    default:
      if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) return parse_number(ps);
      return json_perr(ps, ps->p, "invalid-json", "unexpected character");
  }
}

void json_parser_init(Parser *ps, lua_State *L, const char *s, size_t len, int max_depth) {
  memset(ps, 0, offsetof(Parser, keys)); /* keys[] is written before it is read */
  ps->streamed = -1;
  ps->L = L;
  ps->start = ps->p = (const unsigned char *)s;
  ps->end = ps->start + len;
  ps->max_depth = max_depth;
}

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

int json_decode_buffer(Parser *ps, int array_mt, int object_mt, int key_cache) {
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
    json_perr(ps, ps->p, "invalid-json", "trailing bytes after the JSON value");
  }
  lua_settop(L, top);
  return -1;
}

int json_push_parse_error(lua_State *L, const Parser *ps) {
  lua_pushnil(L);
  lua_pushfstring(L, "%s at byte %d: %s", ps->code, (int)ps->offset, ps->message);
  lua_pushstring(L, ps->code);
  lua_pushinteger(L, (lua_Integer)ps->offset);
  return 4;
}

int json_opt_depth(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return DEFAULT_MAX_DEPTH;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_Integer d = vkit_optintfield(L, idx, "max_depth", DEFAULT_MAX_DEPTH);
  luaL_argcheck(L, d >= 1 && d <= MAX_DEPTH_CAP, idx, "max_depth must be 1..4096");
  return (int)d;
}

int json_opt_flag(lua_State *L, int idx, const char *k) {
  if (!lua_istable(L, idx)) return 0;
  lua_getfield(L, idx, k);
  int on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on;
}

/* decode(s [, {max_depth}]): the value, or nil, message, code, byte_offset. */
int json_decode(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  int max_depth = json_opt_depth(L, 2);
  Parser ps;
  json_parser_init(&ps, L, s, len, max_depth);
  if (json_decode_buffer(&ps, ARRAY_MT_UV, OBJECT_MT_UV, 0) == 0) return 1;
  return json_push_parse_error(L, &ps);
}

