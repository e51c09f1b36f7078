/*
 * json.c: vkit.json, the one strict JSON reader and the canonical writer.
 *
 * The module's parts, one file each (json.h lists them): the decoder
 * (json_decode.c: decode), the writers (json_encode.c: encode, canonical,
 * digest, exact_key), json.read (json_read.c), JSON Lines (json_lines.c:
 * lines), tallies (json_tally.c: tally_lines, and json.read's tally).
 * Here: the module's table, the array and object metatables that mark a
 * table's JSON kind, array(), object() and kind().
 */
#include "json.h"

#define ARRAY_MT "vkit.json.array"
#define OBJECT_MT "vkit.json.object"

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
      if (lua_touserdata(L, 1) == &json_null) { lua_pushliteral(L, "null"); return 1; }
      break;
    case LUA_TTABLE:
      lua_settop(L, 1);
      switch (json_marked_kind(L, 1)) {
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
  json_lines_register(L);
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
