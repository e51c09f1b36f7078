/*
 * ts.c: vkit.ts, the tree-sitter parse of Rust, Python and TypeScript
 * source (runtime and grammars compiled in from the pinned npm tarballs,
 * see mk/treesitter.mk).
 *
 *   parse(source, {max_bytes = n [, language = "rust"|"python"|"typescript"]})
 *                                   -> tree | nil, message, code
 *       refuses a source longer than max_bytes before parsing ("too-large");
 *       "abi-mismatch" if the runtime cannot load the grammar.  The
 *       language defaults to Rust.
 *   identity([language])            -> {runtime = {...}, grammar = {...}, build}
 *       (the grammar of that language, default Rust)
 *   languages()                     -> {"rust", "python", "typescript"}
 *   tree:root()                     -> node
 *   tree:stats([{max_nodes = n, max_depth = d}])
 *                                   -> {nodes, depth, has_error,
 *                                       [nodes_exceeded_at], [depth_exceeded_at]}
 *   tree:export({max_nodes = n, max_depth = d})
 *                                   -> nested plain tables | nil, message, code
 *   tree:close() (also __gc, __close)
 *   node:kind() node:named() node:range() node:field(name) node:children()
 *   node:named_children() node:child_count() node:parent() node:has_error()
 *   node:is_error() node:is_missing() node:is_extra()
 *
 * Byte offsets are 0-based; ranges are [start, stop).  Counts cover every node,
 * named or anonymous (keywords and punctuation are anonymous nodes); the root
 * has depth 1.  The caller supplies every limit: this module reads no policy
 * and decides nothing about admission.
 */
#include "vkit.h"

#include <stdint.h>
#include <stdlib.h>

#include <tree_sitter/api.h>

#include "ts_identity.h"

#define TREE "vkit.ts.tree"
#define NODE "vkit.ts.node"

/* Every grammar compiled in: its language function and package facts. */
#define DECLARE(lang, package, version, tarball, object) const TSLanguage *tree_sitter_##lang(void);
VKIT_TS_GRAMMARS(DECLARE)
#undef DECLARE

typedef struct {
  const char *name, *package, *version, *tarball_sha256, *object_sha256;
  const TSLanguage *(*language)(void);
} Grammar;

#define ENTRY(lang, package, version, tarball, object) {#lang, package, version, tarball, object, tree_sitter_##lang},
static const Grammar grammars[] = {VKIT_TS_GRAMMARS(ENTRY)};
#undef ENTRY
#define NGRAMMARS (sizeof grammars / sizeof grammars[0])

/* The grammar named by the string at idx (nil: Rust); misuse raises. */
static const Grammar *checkgrammar(lua_State *L, int idx) {
  if (lua_isnoneornil(L, idx)) return &grammars[0];
  const char *name = luaL_checkstring(L, idx);
  for (size_t i = 0; i < NGRAMMARS; i++)
    if (strcmp(grammars[i].name, name) == 0) return &grammars[i];
  luaL_error(L, "no grammar for the language '%s'", name);
  return NULL;
}

typedef struct { TSTree *tree; } Tree;
typedef struct { TSNode node; } Node;

static Tree *checktree(lua_State *L, int idx) {
  Tree *t = luaL_checkudata(L, idx, TREE);
  if (!t->tree) luaL_error(L, "attempt to use a closed tree");
  return t;
}

/* A node keeps its tree alive through user value 1, and dies with it. */
static TSNode checknode(lua_State *L, int idx) {
  Node *n = luaL_checkudata(L, idx, NODE);
  lua_getiuservalue(L, idx, 1);
  Tree *t = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!t || !t->tree) luaL_error(L, "attempt to use a node of a closed tree");
  return n->node;
}

/* Pushes a node userdata sharing the tree userdata at tree_idx. */
static void pushnode(lua_State *L, TSNode node, int tree_idx) {
  tree_idx = lua_absindex(L, tree_idx);
  if (ts_node_is_null(node)) {
    lua_pushnil(L);
    return;
  }
  Node *n = lua_newuserdatauv(L, sizeof *n, 1);
  n->node = node;
  lua_pushvalue(L, tree_idx);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, NODE);
}

static lua_Integer required_int(lua_State *L, int idx, const char *key) {
  luaL_checktype(L, idx, LUA_TTABLE);
  if (lua_getfield(L, idx, key) == LUA_TNIL) luaL_error(L, "option '%s' is required", key);
  int isnum;
  lua_Integer v = lua_tointegerx(L, -1, &isnum);
  if (!isnum || v < 0) luaL_error(L, "option '%s' must be a non-negative integer", key);
  lua_pop(L, 1);
  return v;
}

/* ---- module functions -------------------------------------------------- */

static int ts_parse(lua_State *L) {
  size_t len;
  const char *src = luaL_checklstring(L, 1, &len);
  lua_Integer max_bytes = required_int(L, 2, "max_bytes");
  lua_getfield(L, 2, "language");
  const Grammar *g = checkgrammar(L, -1);
  lua_pop(L, 1);
  if ((lua_Integer)len > max_bytes)
    return vkit_fail(L, "too-large", "source is %I bytes, over the %I-byte limit",
                     (LUAI_UACINT)len, (LUAI_UACINT)max_bytes);
  if (len > UINT32_MAX) return vkit_fail(L, "too-large", "source exceeds 4 GiB");
  Tree *t = lua_newuserdatauv(L, sizeof *t, 0);
  t->tree = NULL;
  luaL_setmetatable(L, TREE);
  TSParser *parser = ts_parser_new();
  if (!ts_parser_set_language(parser, g->language())) {
    ts_parser_delete(parser);
    return vkit_fail(L, "abi-mismatch", "grammar ABI %d is outside the runtime's range %d..%d",
                     (int)ts_language_abi_version(g->language()),
                     TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION, TREE_SITTER_LANGUAGE_VERSION);
  }
  t->tree = ts_parser_parse_string(parser, NULL, src, (uint32_t)len);
  ts_parser_delete(parser);
  if (!t->tree) return vkit_fail(L, "parse-failed", "tree-sitter returned no tree");
  return 1;
}

static int ts_identity(lua_State *L) {
  const Grammar *g = checkgrammar(L, 1);
  const TSLanguage *lang = g->language();
  lua_createtable(L, 0, 3);
  lua_createtable(L, 0, 6);
  vkit_setfield_str(L, "package", VKIT_TS_RUNTIME_PACKAGE);
  vkit_setfield_str(L, "version", VKIT_TS_RUNTIME_VERSION);
  vkit_setfield_str(L, "tarball_sha256", VKIT_TS_RUNTIME_TARBALL_SHA256);
  vkit_setfield_str(L, "object_sha256", VKIT_TS_RUNTIME_OBJECT_SHA256);
  vkit_setfield_int(L, "language_abi", TREE_SITTER_LANGUAGE_VERSION);
  vkit_setfield_int(L, "min_compatible_abi", TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION);
  lua_setfield(L, -2, "runtime");
  lua_createtable(L, 0, 6);
  vkit_setfield_str(L, "package", g->package);
  vkit_setfield_str(L, "version", g->version);
  vkit_setfield_str(L, "tarball_sha256", g->tarball_sha256);
  vkit_setfield_str(L, "object_sha256", g->object_sha256);
  vkit_setfield_int(L, "abi", ts_language_abi_version(lang));
  vkit_setfield_str(L, "language", ts_language_name(lang) ? ts_language_name(lang) : "");
  lua_setfield(L, -2, "grammar");
  vkit_setfield_str(L, "build", VKIT_TS_BUILD);
  return 1;
}

static int ts_languages(lua_State *L) {
  lua_createtable(L, (int)NGRAMMARS, 0);
  for (size_t i = 0; i < NGRAMMARS; i++) {
    lua_pushstring(L, grammars[i].name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* ---- tree -------------------------------------------------------------- */

static int tree_close(lua_State *L) {
  Tree *t = luaL_checkudata(L, 1, TREE);
  if (t->tree) {
    ts_tree_delete(t->tree);
    t->tree = NULL;
  }
  return 0;
}

static int tree_root(lua_State *L) {
  Tree *t = checktree(L, 1);
  pushnode(L, ts_tree_root_node(t->tree), 1);
  return 1;
}

/* Every node once, in preorder, with a cursor: no recursion, no allocation.
 * With {max_nodes = n, max_depth = d} it also reports where each limit is
 * first exceeded: the start byte of node n + 1 in preorder and of the first
 * node at depth d + 1, so a refusal can name its place. */
static int tree_stats(lua_State *L) {
  Tree *t = checktree(L, 1);
  lua_Integer lim_nodes = -1, lim_depth = -1;
  if (!lua_isnoneornil(L, 2)) {
    lim_nodes = required_int(L, 2, "max_nodes");
    lim_depth = required_int(L, 2, "max_depth");
  }
  TSNode root = ts_tree_root_node(t->tree);
  TSTreeCursor c = ts_tree_cursor_new(root);
  lua_Integer nodes = 1, depth = 1, max_depth = 1, over_nodes = -1, over_depth = -1;
  for (;;) {
    if (ts_tree_cursor_goto_first_child(&c)) {
      depth++;
    } else {
      int done = 0;
      while (!ts_tree_cursor_goto_next_sibling(&c)) {
        if (!ts_tree_cursor_goto_parent(&c)) {
          done = 1;
          break;
        }
        depth--;
      }
      if (done) break;
    }
    nodes++;
    if (depth > max_depth) max_depth = depth;
    if (nodes == lim_nodes + 1)
      over_nodes = ts_node_start_byte(ts_tree_cursor_current_node(&c));
    if (depth == lim_depth + 1 && over_depth < 0)
      over_depth = ts_node_start_byte(ts_tree_cursor_current_node(&c));
  }
  ts_tree_cursor_delete(&c);
  lua_createtable(L, 0, 5);
  vkit_setfield_int(L, "nodes", nodes);
  vkit_setfield_int(L, "depth", max_depth);
  lua_pushboolean(L, ts_node_has_error(root));
  lua_setfield(L, -2, "has_error");
  if (over_nodes >= 0) vkit_setfield_int(L, "nodes_exceeded_at", over_nodes);
  if (over_depth >= 0) vkit_setfield_int(L, "depth_exceeded_at", over_depth);
  return 1;
}

/* Pushes {kind, named, start, stop, children = {}, [field], [error], ...}. */
static void push_plain(lua_State *L, const TSTreeCursor *c) {
  TSNode n = ts_tree_cursor_current_node(c);
  const char *field = ts_tree_cursor_current_field_name(c);
  lua_createtable(L, 0, 8);
  vkit_setfield_str(L, "kind", ts_node_type(n));
  lua_pushboolean(L, ts_node_is_named(n));
  lua_setfield(L, -2, "named");
  vkit_setfield_int(L, "start", ts_node_start_byte(n));
  vkit_setfield_int(L, "stop", ts_node_end_byte(n));
  if (field) vkit_setfield_str(L, "field", field);
  if (ts_node_is_error(n)) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "error");
  }
  if (ts_node_is_missing(n)) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "missing");
  }
  if (ts_node_is_extra(n)) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "extra");
  }
  lua_createtable(L, (int)ts_node_child_count(n), 0);
  lua_setfield(L, -2, "children");
}

/* Appends the node table on top of the stack to the children of the node
 * table just below (at parent_idx) and leaves the child on top. */
static void append_child(lua_State *L, int parent_idx) {
  lua_getfield(L, parent_idx, "children");
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

/* The whole tree as plain Lua tables, built with a cursor and an explicit
 * stack of node tables on the Lua stack (one slot per level). */
static int tree_export(lua_State *L) {
  Tree *t = checktree(L, 1);
  lua_Integer max_nodes = required_int(L, 2, "max_nodes");
  lua_Integer max_depth = required_int(L, 2, "max_depth");
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(t->tree));
  int base = lua_gettop(L);
  lua_Integer nodes = 1, depth = 1;
  const char *code = NULL;
  push_plain(L, &c);
  for (;;) {
    if (ts_tree_cursor_goto_first_child(&c)) {
      if (++depth > max_depth) { code = "too-deep"; break; }
      if (++nodes > max_nodes) { code = "too-many-nodes"; break; }
      if (!lua_checkstack(L, 4)) { code = "too-deep"; break; }
      push_plain(L, &c);
      append_child(L, -2);
      continue;
    }
    int done = 0;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = 1;
        break;
      }
      lua_pop(L, 1);
      depth--;
    }
    if (done) break;
    if (++nodes > max_nodes) { code = "too-many-nodes"; break; }
    lua_pop(L, 1);
    push_plain(L, &c);
    append_child(L, -2);
  }
  ts_tree_cursor_delete(&c);
  if (code) {
    lua_settop(L, base);
    if (!strcmp(code, "too-deep"))
      return vkit_fail(L, code, "tree deeper than %I levels", (LUAI_UACINT)max_depth);
    return vkit_fail(L, code, "tree has more than %I nodes", (LUAI_UACINT)max_nodes);
  }
  lua_settop(L, base + 1);
  return 1;
}

static int tree_tostring(lua_State *L) {
  Tree *t = luaL_checkudata(L, 1, TREE);
  if (t->tree) lua_pushfstring(L, "vkit.ts.tree (%p)", (void *)t);
  else lua_pushliteral(L, "vkit.ts.tree (closed)");
  return 1;
}

/* ---- node -------------------------------------------------------------- */

static int node_kind(lua_State *L) {
  lua_pushstring(L, ts_node_type(checknode(L, 1)));
  return 1;
}

static int node_named(lua_State *L) {
  lua_pushboolean(L, ts_node_is_named(checknode(L, 1)));
  return 1;
}

static int node_range(lua_State *L) {
  TSNode n = checknode(L, 1);
  lua_pushinteger(L, ts_node_start_byte(n));
  lua_pushinteger(L, ts_node_end_byte(n));
  return 2;
}

static int node_field(lua_State *L) {
  TSNode n = checknode(L, 1);
  size_t len;
  const char *name = luaL_checklstring(L, 2, &len);
  lua_getiuservalue(L, 1, 1);
  pushnode(L, ts_node_child_by_field_name(n, name, (uint32_t)len), -1);
  return 1;
}

static int push_children(lua_State *L, int named_only) {
  TSNode n = checknode(L, 1);
  lua_getiuservalue(L, 1, 1);
  int tree_idx = lua_gettop(L);
  uint32_t count = named_only ? ts_node_named_child_count(n) : ts_node_child_count(n);
  lua_createtable(L, (int)count, 0);
  for (uint32_t i = 0; i < count; i++) {
    pushnode(L, named_only ? ts_node_named_child(n, i) : ts_node_child(n, i), tree_idx);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int node_children(lua_State *L) { return push_children(L, 0); }
static int node_named_children(lua_State *L) { return push_children(L, 1); }

static int node_child_count(lua_State *L) {
  lua_pushinteger(L, ts_node_child_count(checknode(L, 1)));
  return 1;
}

static int node_parent(lua_State *L) {
  TSNode n = checknode(L, 1);
  lua_getiuservalue(L, 1, 1);
  pushnode(L, ts_node_parent(n), -1);
  return 1;
}

#define NODE_PREDICATE(name, fn)                      \
  static int name(lua_State *L) {                     \
    lua_pushboolean(L, fn(checknode(L, 1)));          \
    return 1;                                         \
  }
NODE_PREDICATE(node_has_error, ts_node_has_error)
NODE_PREDICATE(node_is_error, ts_node_is_error)
NODE_PREDICATE(node_is_missing, ts_node_is_missing)
NODE_PREDICATE(node_is_extra, ts_node_is_extra)

static int node_tostring(lua_State *L) {
  TSNode n = checknode(L, 1);
  lua_pushfstring(L, "vkit.ts.node %s [%d, %d)", ts_node_type(n), (int)ts_node_start_byte(n),
                  (int)ts_node_end_byte(n));
  return 1;
}

static const luaL_Reg tree_methods[] = {
  {"root", tree_root}, {"stats", tree_stats}, {"export", tree_export}, {"close", tree_close},
  {NULL, NULL}};
static const luaL_Reg tree_meta[] = {
  {"__gc", tree_close}, {"__close", tree_close}, {"__tostring", tree_tostring}, {NULL, NULL}};
static const luaL_Reg node_methods[] = {
  {"kind", node_kind},         {"named", node_named},
  {"range", node_range},       {"field", node_field},
  {"children", node_children}, {"named_children", node_named_children},
  {"child_count", node_child_count}, {"parent", node_parent},
  {"has_error", node_has_error}, {"is_error", node_is_error},
  {"is_missing", node_is_missing}, {"is_extra", node_is_extra},
  {NULL, NULL}};
static const luaL_Reg node_meta[] = {{"__tostring", node_tostring}, {NULL, NULL}};

static const luaL_Reg ts_funcs[] = {
  {"parse", ts_parse}, {"identity", ts_identity}, {"languages", ts_languages}, {NULL, NULL}};

int luaopen_vkit_ts(lua_State *L) {
  vkit_newclass(L, TREE, tree_methods, tree_meta);
  vkit_newclass(L, NODE, node_methods, node_meta);
  luaL_newlib(L, ts_funcs);
  return 1;
}
