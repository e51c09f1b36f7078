/*
 * json_encode.c: vkit.json's writers.  encode(v [, {indent = n}]) writes
 * sorted-key JSON; canonical(v) writes RFC 8785 (JCS) bytes: keys sorted
 * by UTF-16 code units, ECMAScript number formatting, minimal escapes;
 * digest(v) is SHA-256 of canonical(v); exact_key(v) is bytes that tell
 * apart exactly the values that differ in type or value (1, 1.0, true;
 * 0.0, -0.0), for comparing, never shown.  Tables without a JSON metatable
 * are arrays when their keys are exactly 1..n and objects when every key
 * is a string; an unmarked empty table is refused because [] and {} hash
 * differently (mark it with array()/object()).
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ======================================================================
 * The output, in a userdata whose __gc frees it if an error unwinds the
 * stack
 * ====================================================================== */

typedef struct { char *data; size_t len, cap; } Out;

static int out_gc(lua_State *L) {
  Out *o = lua_touserdata(L, 1);
  free(o->data);
  o->data = NULL;
  o->len = o->cap = 0;
  return 0;
}

/* Pushes an empty output. */
static Out *new_out(lua_State *L) {
  return vkit_newgcdata(L, sizeof(Out), "vkit.json.out", out_gc);
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
      if (lua_touserdata(L, idx) == &json_null) {
        OUT_LIT(L, o, "null");
        break;
      }
      /* fallthrough */
    default:
      luaL_error(L, "cannot encode a %s as JSON", luaL_typename(L, idx));
  }
}

/* Encodes the value at index 1 (the only one left) into a fresh Out left
 * on the stack top. */
static Out *encode_to_out(lua_State *L, Style *st) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  Out *o = new_out(L);
  encode_value(L, o, 1, st);
  return o;
}

/* Pushes the encoding of the value at index 1 as a string. */
static int push_encoded(lua_State *L, Style *st) {
  Out *o = encode_to_out(L, st);
  lua_pushlstring(L, o->data ? o->data : "", o->len);
  return 1;
}

int json_encode(lua_State *L) {
  Style st = {0, 0, 0};
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer indent = vkit_optintfield(L, 2, "indent", 0);
    luaL_argcheck(L, indent >= 0 && indent <= 16, 2, "indent must be 0..16");
    st.indent = (int)indent;
  }
  return push_encoded(L, &st);
}

int json_canonical(lua_State *L) {
  Style st = {1, 0, 0};
  return push_encoded(L, &st);
}

int json_digest(lua_State *L) {
  Style st = {1, 0, 0};
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
int json_marked_kind(lua_State *L, int idx) {
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
  int kind = json_marked_kind(L, idx);
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

int json_exact_key(lua_State *L) {
  luaL_checkany(L, 1);
  lua_settop(L, 1);
  Out *o = new_out(L);
  exact_key(L, o, 1, 0);
  lua_pushlstring(L, o->data ? o->data : "", o->len);
  return 1;
}
