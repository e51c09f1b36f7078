/*
 * lua_alloc.h: the Lua state's allocator (csrc/lua_alloc.c).
 */
#ifndef VKIT_LUA_ALLOC_H
#define VKIT_LUA_ALLOC_H

#include <lua.h>

/* luaL_newstate with vkit's allocator (the same panic and warning
 * functions); NULL when out of memory.  lua_close releases everything. */
lua_State *vkit_lua_newstate(void);

#endif
