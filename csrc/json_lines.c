/*
 * json_lines.c: JSON Lines read row by row (vkit.json.lines), and the line
 * breaks a caller names besides LF.
 *
 * A row ends at LF; a CR before it is JSON white space, dropped.  What
 * else ends a line is the caller's to say, as data (opts.line_breaks, a
 * list of byte sequences): a caller that must cut rows where another
 * program would names those sequences, and a row holding one is then not
 * read here - json.lines reports it with code "line-break", a tally gives
 * up at it - and the caller reads the file by its own rules.  Nothing here
 * knows whose rule a set is.
 */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>

/* ======================================================================
 * Line breaks
 * ====================================================================== */

/* The sequences' first bytes are limited to what a row's scan stops at
 * anyway - control characters (LF aside: it always ends a line) and bytes
 * of 0x80 and up - so that a tally looks for them only where it already
 * looks (white space, a string's control and multi-byte characters) and
 * its loop over plain bytes stays as it is. */
void json_opt_line_breaks(lua_State *L, int idx, LineBreaks *b) {
  memset(b, 0, sizeof *b);
  if (!lua_istable(L, idx) || lua_getfield(L, idx, "line_breaks") == LUA_TNIL) {
    if (lua_istable(L, idx)) lua_pop(L, 1);
    return;
  }
  luaL_argcheck(L, lua_istable(L, -1), idx, "line_breaks must be an array of byte strings");
  int n = (int)luaL_len(L, -1);
  luaL_argcheck(L, n <= LINE_BREAKS_MAX, idx, "line_breaks names at most 16 sequences");
  for (int i = 0; i < n; i++) {
    size_t len = 0;
    const unsigned char *s = NULL;
    if (lua_rawgeti(L, -1, i + 1) == LUA_TSTRING) s = (const unsigned char *)lua_tolstring(L, -1, &len);
    luaL_argcheck(L, s && len >= 1 && len <= LINE_BREAK_BYTES, idx, "a line break is a string of 1..8 bytes");
    luaL_argcheck(L, (s[0] < 0x20 && s[0] != '\n') || s[0] >= 0x80, idx,
                  "a line break begins with a control character other than LF or a byte of 0x80 and up");
    b->seq[i].len = (unsigned char)len;
    memcpy(b->seq[i].bytes, s, len);
    b->first[s[0]] = 1;
    lua_pop(L, 1);
  }
  b->n = n;
  lua_pop(L, 1);
}

int json_line_break_at(const LineBreaks *b, const unsigned char *p, const unsigned char *end) {
  for (int i = 0; i < b->n; i++)
    if (b->seq[i].bytes[0] == *p && (size_t)(end - p) >= b->seq[i].len &&
        memcmp(p, b->seq[i].bytes, b->seq[i].len) == 0)
      return 1;
  return 0;
}

/* The first of b's line breaks in s[0..len), or NULL. */
static const char *first_line_break(const LineBreaks *b, const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  for (; p < end; p++)
    if (b->first[*p] && json_line_break_at(b, p, end)) return (const char *)p;
  return NULL;
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
  LineBreaks breaks;   /* opts.line_breaks: a line holding one is not read */
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
      json_final_hex(r->hash, hex);
      r->hash = NULL;
      if (memcmp(hex, r->pin, 64) != 0) {
        lua_pushinteger(L, r->lineno + 1);
        return 1 + json_push_mismatch(L, r->pin, hex); /* lineno, nil, message, code, actual */
      }
    }
    return 0;
  }
  if (r->hash) vkit_sha256_update(r->hash, r->line, (size_t)n);
  r->lineno++;
  lua_pushinteger(L, r->lineno);
  size_t len = (size_t)n;
  if (len > 0 && r->line[len - 1] == '\n') len--;
  const char *at = r->breaks.n ? first_line_break(&r->breaks, r->line, len) : NULL;
  if (at) {
    lua_pushnil(L);
    lua_pushfstring(L, "line %d: a listed line break at byte %d", (int)r->lineno, (int)(at - r->line));
    lua_pushliteral(L, "line-break");
    return 4;
  }
  if (len > 0 && r->line[len - 1] == '\r') len--;
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
  json_parser_init(&ps, L, r->line, len, r->max_depth);
  if (json_decode_buffer(&ps, lua_upvalueindex(3), lua_upvalueindex(4), lua_upvalueindex(2)) == 0) return 2;
  lua_pushnil(L);
  lua_pushfstring(L, "line %d: %s at byte %d: %s", (int)r->lineno, ps.code, (int)ps.offset, ps.message);
  lua_pushstring(L, ps.code);
  return 4;
}

/* lines(path [, {max_depth, max_line, nofollow, sha256, line_breaks}]) ->
 * iterator, nil, nil, handle */
int json_lines(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int max_depth = json_opt_depth(L, 2);
  lua_Integer max_line = lua_istable(L, 2) ? vkit_optintfield(L, 2, "max_line", 64 << 20) : 64 << 20;
  const char *pin = json_opt_pin(L, 2);
  int nofollow = json_opt_flag(L, 2, "nofollow");
  Lines *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, LINES);
  r->max_depth = max_depth;
  r->max_line = (size_t)max_line;
  json_opt_line_breaks(L, 2, &r->breaks);
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

void json_lines_register(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", lines_close}, {"__close", lines_close}, {NULL, NULL}};
  static const luaL_Reg no_methods[] = {{NULL, NULL}};
  vkit_newclass(L, LINES, no_methods, meta);
}
