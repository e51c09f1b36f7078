/*
 * git_write.c: the vkit.git writer, so specs and examples build real
 * repositories without shelling out to git.
 *
 *   vkit.git.init(path [, {bare = false}]) -> repo (HEAD -> refs/heads/main)
 *   repo:write_blob(bytes)                 -> oid
 *   repo:write_object(type, bytes)         -> oid  (raw, unvalidated)
 *   repo:write_tree({{path=, bytes= | blob=, mode=}, ...}) -> tree oid
 *   repo:write_tree_raw({{name=, mode=, oid=}, ...})      -> tree oid
 *   repo:commit_tree{tree=, parents=, message=, author=, committer=, ref=}
 *                                          -> commit oid
 *   repo:set_ref(name, oid)                -> true  ("HEAD" detaches HEAD)
 *   repo:set_remote(name, url)             -> true
 *
 * write_tree is strict: paths must pass the same rules capture applies,
 * modes are "100644" (default), "100755", "120000" or "160000" (a gitlink's
 * `blob` is the submodule commit id), and a file colliding with a directory
 * is refused.  write_tree_raw is the opposite, for hostile specs: it writes
 * the entries in the given order with any name, any mode text and any object
 * id (which need not exist), without libgit2's tree validation.
 * commit_tree requires an existing tree and parent commits (libgit2's strict
 * object creation); write_object builds anything else.  Signatures default
 * to `vkit <vkit@example.invalid>` at 1700000000 +0000, so ids are
 * reproducible; an absent committer is the author.
 * Malformed arguments raise; libgit2 failures return nil, message,
 * "write-failed".
 */
#include "git.h"

#include <git2/sys/commit.h>

#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_NAME "vkit"
#define DEFAULT_EMAIL "vkit@example.invalid"
#define DEFAULT_TIME 1700000000

static int write_failed(lua_State *L, int err, const char *what) {
  GitFail f;
  gitfail_git(&f, err, what);
  return vkit_fail(L, "write-failed", "%s", f.msg);
}

static void push_oid(lua_State *L, const git_oid *oid) {
  char hex[41];
  git_hexoid(oid, hex);
  lua_pushstring(L, hex);
}

/* An object id argument that must be exact; raises otherwise. */
static void check_oid(lua_State *L, int idx, const char *what, git_oid *out) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  GitFail f;
  if (!s || git_parse_exact_oid(s, len, out, "", &f)) luaL_error(L, "%s: %s", what, s ? f.msg : "not a string");
}

int git_init(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int bare = 0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "bare");
    bare = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  git_repository_init_options opts;
  git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
  opts.flags = GIT_REPOSITORY_INIT_MKPATH | (bare ? GIT_REPOSITORY_INIT_BARE : 0);
  opts.initial_head = "main";
  git_repository *repo;
  int err = git_repository_init_ext(&repo, path, &opts);
  if (!err && (err = git_use_safe_odb(repo))) git_repository_free(repo);
  if (err) {
    GitFail f;
    gitfail_git(&f, err, path);
    return vkit_fail(L, "init-failed", "%s", f.msg);
  }
  git_pushrepo(L, repo);
  return 1;
}

static int write_raw(lua_State *L, Repo *r, const void *data, size_t len, git_object_t type) {
  git_odb *odb;
  git_oid oid;
  int err = git_repository_odb(&odb, r->repo);
  if (err) return write_failed(L, err, "opening the object database");
  err = git_odb_write(&oid, odb, data, len, type);
  git_odb_free(odb);
  if (err) return write_failed(L, err, "writing an object");
  push_oid(L, &oid);
  return 1;
}

int git_repo_write_blob(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t len;
  const char *bytes = luaL_checklstring(L, 2, &len);
  return write_raw(L, r, bytes, len, GIT_OBJECT_BLOB);
}

int git_repo_write_object(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  static const char *const types[] = {"blob", "tree", "commit", "tag", NULL};
  static const git_object_t codes[] = {GIT_OBJECT_BLOB, GIT_OBJECT_TREE, GIT_OBJECT_COMMIT, GIT_OBJECT_TAG};
  int t = luaL_checkoption(L, 2, NULL, types);
  size_t len;
  const char *bytes = luaL_checklstring(L, 3, &len);
  return write_raw(L, r, bytes, len, codes[t]);
}

int git_repo_write_tree_raw(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer n = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 2, i);
    int e = lua_gettop(L);
    luaL_argcheck(L, lua_istable(L, e), 2, "entries must be tables");
    lua_getfield(L, e, "name");
    lua_getfield(L, e, "mode");
    lua_getfield(L, e, "oid");
    size_t nlen, mlen;
    const char *name = lua_tolstring(L, e + 1, &nlen);
    const char *mode = lua_tolstring(L, e + 2, &mlen);
    git_oid oid;
    if (!name || !mode) luaL_error(L, "entry %d needs a string name and mode", (int)i);
    check_oid(L, e + 3, "oid", &oid);
    /* The buffer sits below the entry on the stack, so build the record
     * first and add it once the entry's values are popped. */
    lua_pushlstring(L, mode, mlen);
    lua_pushliteral(L, " ");
    lua_pushlstring(L, name, nlen);
    lua_pushlstring(L, "", 1);
    lua_pushlstring(L, (const char *)oid.id, GIT_OID_RAWSZ);
    lua_concat(L, 5);
    lua_replace(L, e);
    lua_settop(L, e);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  size_t len;
  const char *data = lua_tolstring(L, -1, &len);
  return write_raw(L, r, data, len, GIT_OBJECT_TREE);
}

/* ---- write_tree through an in-memory index -------------------------------- */

static unsigned check_mode(lua_State *L, int idx, lua_Integer i) {
  const char *m = luaL_optstring(L, idx, "100644");
  if (!strcmp(m, "100644")) return 0100644;
  if (!strcmp(m, "100755")) return 0100755;
  if (!strcmp(m, "120000")) return 0120000;
  if (!strcmp(m, "160000")) return 0160000;
  return (unsigned)luaL_error(L, "entry %d: unknown mode '%s'", (int)i, m);
}

static int cmp_cstr(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuses duplicate paths and a file that is also a directory prefix
 * (libgit2's index would silently replace one with the other). */
static void check_collisions(lua_State *L, const char **paths, size_t n) {
  qsort(paths, n, sizeof *paths, cmp_cstr);
  for (size_t i = 0; i < n; i++) {
    if (i && !strcmp(paths[i - 1], paths[i])) luaL_error(L, "duplicate path '%s'", paths[i]);
    char prefix[GIT_MAX_PATH + 1];
    snprintf(prefix, sizeof prefix, "%s", paths[i]);
    for (char *s = strrchr(prefix, '/'); s; s = strrchr(prefix, '/')) {
      *s = '\0';
      const char *key = prefix;
      if (bsearch(&key, paths, n, sizeof *paths, cmp_cstr))
        luaL_error(L, "'%s' is both a file and a directory", prefix);
    }
  }
}

typedef struct {
  git_index *index;
  const char **paths;
} TreeBuild;

static void treebuild_free(TreeBuild *t) {
  if (t->index) git_index_free(t->index);
  free(t->paths);
  t->index = NULL;
  t->paths = NULL;
}

static int treebuild_gc(lua_State *L) {
  treebuild_free(lua_touserdata(L, 1));
  return 0;
}

int git_repo_write_tree(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 2);
  TreeBuild *t = lua_newuserdatauv(L, sizeof *t, 0);
  t->index = NULL;
  t->paths = NULL;
  if (luaL_newmetatable(L, "vkit.git.treebuild")) {
    lua_pushcfunction(L, treebuild_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  int tb = lua_gettop(L);
  if (!(t->paths = calloc((size_t)n + 1, sizeof *t->paths))) return luaL_error(L, "out of memory");
  int err = git_index_new(&t->index);
  if (err) return write_failed(L, err, "creating an index");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 2, i);
    int e = lua_gettop(L);
    luaL_argcheck(L, lua_istable(L, e), 2, "entries must be tables");
    lua_getfield(L, e, "path");
    lua_getfield(L, e, "mode");
    lua_getfield(L, e, "bytes");
    lua_getfield(L, e, "blob");
    size_t plen;
    const char *path = lua_tolstring(L, e + 1, &plen);
    if (!path) luaL_error(L, "entry %d needs a string path", (int)i);
    char why[128];
    if (git_check_path(path, plen, why, sizeof why)) luaL_error(L, "entry %d: '%s': %s", (int)i, path, why);
    unsigned mode = check_mode(L, e + 2, i);
    int has_bytes = !lua_isnil(L, e + 3), has_blob = !lua_isnil(L, e + 4);
    if (has_bytes == has_blob) luaL_error(L, "entry %d needs exactly one of bytes and blob", (int)i);
    if (mode == 0160000 && has_bytes) luaL_error(L, "entry %d: a gitlink takes a commit id as blob", (int)i);
    git_index_entry ie;
    memset(&ie, 0, sizeof ie);
    if (has_blob) {
      check_oid(L, e + 4, "blob", &ie.id);
    } else {
      size_t blen;
      const char *bytes = luaL_checklstring(L, e + 3, &blen);
      if ((err = git_blob_create_from_buffer(&ie.id, r->repo, bytes, blen)))
        return write_failed(L, err, path);
    }
    ie.mode = mode;
    ie.path = path;
    if ((err = git_index_add(t->index, &ie))) return write_failed(L, err, path);
    t->paths[i - 1] = path;  /* anchored by the entries table */
    lua_settop(L, tb);
  }
  check_collisions(L, t->paths, (size_t)n);
  git_oid oid;
  if ((err = git_index_write_tree_to(&oid, t->index, r->repo))) return write_failed(L, err, "writing the tree");
  treebuild_free(t);
  push_oid(L, &oid);
  return 1;
}

/* ---- commits, references, remotes ---------------------------------------- */

typedef struct {
  const char *name, *email;
  lua_Integer time, offset;
} SigArgs;

/* Reads the signature table field `field` of idx over the defaults in s
 * (raising on bad types).  The strings stay anchored by the table. */
static void sig_args(lua_State *L, int idx, const char *field, SigArgs *s) {
  int t = lua_getfield(L, idx, field);
  if (t != LUA_TNIL) {
    luaL_argcheck(L, t == LUA_TTABLE, idx, "author and committer must be tables");
    int sig = lua_gettop(L);
    lua_getfield(L, sig, "name");
    lua_getfield(L, sig, "email");
    if (!lua_isnil(L, -2)) s->name = luaL_checkstring(L, -2);
    if (!lua_isnil(L, -1)) s->email = luaL_checkstring(L, -1);
    s->time = vkit_optintfield(L, sig, "time", s->time);
    s->offset = vkit_optintfield(L, sig, "offset", s->offset);
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
}

int git_repo_commit_tree(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  git_oid tree, parents[64];
  const git_oid *pp[64];
  lua_getfield(L, 2, "tree");
  check_oid(L, -1, "tree", &tree);
  lua_pop(L, 1);
  size_t np = 0;
  if (lua_getfield(L, 2, "parents") != LUA_TNIL) {
    luaL_argcheck(L, lua_istable(L, -1), 2, "parents must be an array");
    lua_Integer n = luaL_len(L, -1);
    luaL_argcheck(L, n <= 64, 2, "at most 64 parents");
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, -1, i);
      check_oid(L, -1, "parent", &parents[np]);
      pp[np] = &parents[np];
      np++;
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  lua_getfield(L, 2, "message");
  const char *message = luaL_optstring(L, -1, "");
  lua_getfield(L, 2, "ref");
  const char *ref = luaL_optstring(L, -1, NULL);
  SigArgs as = {DEFAULT_NAME, DEFAULT_EMAIL, DEFAULT_TIME, 0};
  SigArgs cs = as;
  sig_args(L, 2, "author", &as);
  lua_getfield(L, 2, "committer");
  if (lua_isnil(L, -1)) cs = as;  /* an absent committer is the author */
  lua_pop(L, 1);
  sig_args(L, 2, "committer", &cs);
  git_signature *author = NULL, *committer = NULL;
  int err = git_signature_new(&author, as.name, as.email, (git_time_t)as.time, (int)as.offset);
  if (!err) err = git_signature_new(&committer, cs.name, cs.email, (git_time_t)cs.time, (int)cs.offset);
  if (err) {
    git_signature_free(author);
    return write_failed(L, err, "making a signature");
  }
  git_oid oid;
  err = git_commit_create_from_ids(&oid, r->repo, NULL, author, committer, NULL, message, &tree, np, pp);
  git_signature_free(author);
  git_signature_free(committer);
  if (err) return write_failed(L, err, "creating a commit");
  if (ref) {
    git_reference *out;
    if ((err = git_reference_create(&out, r->repo, ref, &oid, 1, NULL))) return write_failed(L, err, ref);
    git_reference_free(out);
  }
  push_oid(L, &oid);
  return 1;
}

int git_repo_set_ref(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  const char *name = luaL_checkstring(L, 2);
  git_oid oid;
  check_oid(L, 3, "target", &oid);
  int err;
  if (!strcmp(name, "HEAD")) {
    err = git_repository_set_head_detached(r->repo, &oid);
  } else {
    git_reference *out;
    err = git_reference_create(&out, r->repo, name, &oid, 1, NULL);
    if (!err) git_reference_free(out);
  }
  if (err) return write_failed(L, err, name);
  lua_pushboolean(L, 1);
  return 1;
}

/* Written as configuration, as `git remote add` does (remote.<name>.url and
 * a default fetch refspec); see repo_remote_url for why not git_remote_*. */
int git_repo_set_remote(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  const char *name = luaL_checkstring(L, 2);
  const char *url = luaL_checkstring(L, 3);
  int valid = 0;
  if (git_remote_name_is_valid(&valid, name) || !valid) return luaL_error(L, "invalid remote name '%s'", name);
  const char *url_key = lua_pushfstring(L, "remote.%s.url", name);
  const char *fetch_key = lua_pushfstring(L, "remote.%s.fetch", name);
  const char *refspec = lua_pushfstring(L, "+refs/heads/*:refs/remotes/%s/*", name);
  git_config *cfg;
  git_config_entry *entry = NULL;
  int err = git_repository_config(&cfg, r->repo);
  if (err) return write_failed(L, err, "opening the configuration");
  err = git_config_set_string(cfg, url_key, url);
  if (!err && git_config_get_entry(&entry, cfg, fetch_key) == GIT_ENOTFOUND)
    err = git_config_set_string(cfg, fetch_key, refspec);
  git_config_entry_free(entry);
  git_config_free(cfg);
  if (err) return write_failed(L, err, name);
  lua_pushboolean(L, 1);
  return 1;
}
