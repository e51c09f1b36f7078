/*
 * json_pin.c: a reader's bytes checked against a pin.  json.read,
 * json.lines and tally_lines take opts.sha256, the SHA-256 the bytes they
 * read must have: the bytes hashed are the bytes judged, read once, and a
 * read whose bytes do not hold the pin yields nothing but the mismatch.
 */
#include "json.h"
/* The expected SHA-256 of the bytes (opts.sha256, 64 lowercase hex
 * digits), or NULL.  The string stays anchored by the options table. */
const char *json_opt_pin(lua_State *L, int idx) {
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
void json_final_hex(VkitSha256 *h, char hex[65]) {
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
int json_push_mismatch(lua_State *L, const char *pin, const char *hex) {
  lua_pushnil(L);
  lua_pushfstring(L, "sha256-mismatch: expected %s, read %s", pin, hex);
  lua_pushliteral(L, "sha256-mismatch");
  lua_pushstring(L, hex);
  return 4;
}

/* Do len bytes hash to something other than pin?  Then the mismatch is
 * pushed (json_push_mismatch) and 1 returned. */
int json_pin_mismatch(lua_State *L, const void *bytes, size_t len, const char *pin) {
  unsigned char md[32];
  char hex[65];
  if (vkit_sha256(bytes, len, md) != 0) luaL_error(L, VKIT_SHA256_FAILED);
  vkit_hex(md, 32, hex);
  if (memcmp(hex, pin, 64) == 0) return 0;
  json_push_mismatch(L, pin, hex);
  return 1;
}
