/*
 * git.c: vkit.git, exact Git objects through libgit2.  No policy, no
 * verdicts: these are primitives and their failure modes.
 *
 *   open(path [, {search = false}])     -> repo | nil, msg, code
 *   init(path [, {bare = false}])       -> repo              (git_write.c)
 *   verify_capture(dest, identity)      -> true | nil, msg, code  (git_capture.c)
 *   inventory_digest(inventory)         -> hex                 (git_capture.c)
 *
 *   repo:commit(oid)          -> {id, tree, parents, author, committer, message}
 *   repo:is_ancestor(a, b)    -> boolean (a == b counts)
 *   repo:read(commit, path, max_bytes) -> {bytes, mode, blob, size}
 *   repo:tree(commit [, prefix [, limits]]) -> sorted {path, mode, blob, size?}...
 *   repo:capture(commit, dest [, paths [, limits]]) -> identity  (git_capture.c)
 *   repo:resolve(rev)         -> full commit id of a revision | nil, msg, code
 *   repo:head(), repo:remote_url(name), repo:refs([prefix]), repo:dirty([{tracked}]),
 *   repo:path(), repo:workdir(), repo:close()
 *   repo:fetch(location, refspecs), repo:copy_commit(src, commit) (git_fetch.c)
 *   writer (git_write.c): write_blob, write_object, write_tree, write_tree_raw,
 *   commit_tree, set_ref, set_remote
 *
 * An exact commit is 40 lowercase hexadecimal digits naming an object that
 * exists and is a commit.  Branch names, tags, HEAD, short or uppercase ids
 * are refused with `not-an-exact-commit` (seed 001: "Branch names and
 * working-tree sources are unsupported"); 64-digit SHA-256 ids are refused
 * too, because libgit2 1.5 reads only SHA-1 repositories.  Every object is
 * read through libgit2's object database, which checks each object's hash
 * as it reads it, so a corrupt object is an error (`corrupt-object`), never
 * wrong bytes.  Blob bytes are the raw object contents: no .gitattributes
 * filters, no line-ending conversion, no LFS.
 */
#include "git.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int luaopen_vkit_json(lua_State *L);

/* ---- the repository handle (checked and pushed by git_common.c) ---------- */

static int repo_close(lua_State *L) {
  Repo *r = luaL_checkudata(L, 1, GIT_REPO_MT);
  if (r->repo) {
    git_repository_free(r->repo);
    r->repo = NULL;
  }
  return 0;
}

static int repo_tostring(lua_State *L) {
  Repo *r = luaL_checkudata(L, 1, GIT_REPO_MT);
  if (r->repo) lua_pushfstring(L, "vkit.git.repo (%s)", git_repository_path(r->repo));
  else lua_pushliteral(L, "vkit.git.repo (closed)");
  return 1;
}

static int git_open(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int search = 0;
  if (!lua_isnoneornil(L, 2)) {
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_getfield(L, 2, "search");
    search = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  git_repository *repo;
  int err = git_open_safe(&repo, path, search ? 0 : GIT_REPOSITORY_OPEN_NO_SEARCH);
  if (err) {
    const git_error *e = git_error_last();
    const char *detail = e && e->message ? e->message : "unknown libgit2 error";
    const char *code = err == GIT_ENOTFOUND ? "not-a-repository"
                       : err == GIT_EOWNER  ? "unsafe-repository"
                                            : "unsupported-repository";
    return vkit_fail(L, code, "%s: %s", path, detail);
  }
  git_pushrepo(L, repo);
  return 1;
}

static void mark_array(lua_State *L) {
  luaL_setmetatable(L, "vkit.json.array");
}

static void push_oid(lua_State *L, const git_oid *oid) {
  char hex[41];
  git_hexoid(oid, hex);
  lua_pushstring(L, hex);
}

static void push_signature(lua_State *L, const git_signature *s) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, s->name);
  lua_setfield(L, -2, "name");
  lua_pushstring(L, s->email);
  lua_setfield(L, -2, "email");
  lua_pushinteger(L, (lua_Integer)s->when.time);
  lua_setfield(L, -2, "time");
  lua_pushinteger(L, s->when.offset);
  lua_setfield(L, -2, "offset");
}

static int repo_commit(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t len;
  const char *hex = luaL_checklstring(L, 2, &len);
  git_oid oid;
  GitFail f;
  if (git_resolve_commit(r->repo, hex, len, &oid, NULL, &f)) return gitfail_push(L, &f);
  git_commit *c;
  int err = git_commit_lookup(&c, r->repo, &oid);
  if (err) {
    gitfail_git(&f, err, hex);
    return gitfail_push(L, &f);
  }
  lua_createtable(L, 0, 6);
  push_oid(L, &oid);
  lua_setfield(L, -2, "id");
  push_oid(L, git_commit_tree_id(c));
  lua_setfield(L, -2, "tree");
  unsigned n = git_commit_parentcount(c);
  lua_createtable(L, (int)n, 0);
  for (unsigned i = 0; i < n; i++) {
    push_oid(L, git_commit_parent_id(c, i));
    lua_rawseti(L, -2, i + 1);
  }
  mark_array(L);
  lua_setfield(L, -2, "parents");
  push_signature(L, git_commit_author(c));
  lua_setfield(L, -2, "author");
  push_signature(L, git_commit_committer(c));
  lua_setfield(L, -2, "committer");
  const char *msg = git_commit_message_raw(c);
  lua_pushstring(L, msg ? msg : "");
  lua_setfield(L, -2, "message");
  git_commit_free(c);
  return 1;
}

/* ---- ancestry ------------------------------------------------------------ */

/* A set of object ids (open addressing; ids are uniformly distributed). */
typedef struct {
  git_oid *keys;
  unsigned char *used;
  size_t cap, n;
} OidSet;

static size_t oid_slot(const OidSet *s, const git_oid *oid) {
  size_t h;
  memcpy(&h, oid->id, sizeof h);
  size_t i = h & (s->cap - 1);
  while (s->used[i] && !git_oid_equal(&s->keys[i], oid)) i = (i + 1) & (s->cap - 1);
  return i;
}

/* 1 when added, 0 when present, -1 out of memory. */
static int oidset_add(OidSet *s, const git_oid *oid) {
  if (2 * (s->n + 1) > s->cap) {
    OidSet g = {NULL, NULL, s->cap ? s->cap * 2 : 1024, 0};
    if (!(g.keys = malloc(g.cap * sizeof *g.keys)) || !(g.used = calloc(g.cap, 1))) {
      free(g.keys);
      return -1;
    }
    for (size_t i = 0; i < s->cap; i++)
      if (s->used[i]) {
        size_t j = oid_slot(&g, &s->keys[i]);
        g.keys[j] = s->keys[i];
        g.used[j] = 1;
        g.n++;
      }
    free(s->keys);
    free(s->used);
    *s = g;
  }
  size_t i = oid_slot(s, oid);
  if (s->used[i]) return 0;
  s->keys[i] = *oid;
  s->used[i] = 1;
  s->n++;
  return 1;
}

/* Is `a` reachable from `b` through parent links?  A breadth-first walk of
 * b's history (libgit2 1.5's git_graph_descendant_of leaks when a parent is
 * missing).  1, 0, or -1 with f set when a commit cannot be read. */
static int reachable(git_repository *repo, const git_oid *a, const git_oid *b, GitFail *f) {
  OidSet seen = {0};
  git_oid *queue = NULL;
  size_t head = 0, tail = 0, cap = 0;
  int rc = -1;
  if (oidset_add(&seen, b) < 0) goto oom;
  if (!(queue = malloc((cap = 1024) * sizeof *queue))) goto oom;
  queue[tail++] = *b;
  rc = 0;
  while (head < tail && rc == 0) {
    git_oid cur = queue[head++];
    if (git_oid_equal(&cur, a)) {
      rc = 1;
      break;
    }
    git_commit *c;
    int err = git_commit_lookup(&c, repo, &cur);
    if (err) {
      char hex[41], what[96];
      git_hexoid(&cur, hex);
      snprintf(what, sizeof what, "reading commit %s of the history", hex);
      gitfail_git(f, err, what);
      f->code = "corrupt-object";
      rc = -1;
      break;
    }
    unsigned n = git_commit_parentcount(c);
    for (unsigned i = 0; i < n && rc == 0; i++) {
      const git_oid *p = git_commit_parent_id(c, i);
      int added = oidset_add(&seen, p);
      if (added < 0) rc = -2;
      else if (added) {
        if (tail == cap) {
          git_oid *q = realloc(queue, (cap *= 2) * sizeof *queue);
          if (!q) rc = -2;
          else queue = q;
        }
        if (rc == 0) queue[tail++] = *p;
      }
    }
    git_commit_free(c);
  }
  if (rc == -2) goto oom;
  free(queue);
  free(seen.keys);
  free(seen.used);
  return rc;
oom:
  gitfail_set(f, "ENOMEM", "out of memory walking the history");
  free(queue);
  free(seen.keys);
  free(seen.used);
  return -1;
}

static int repo_is_ancestor(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t la, lb;
  const char *a = luaL_checklstring(L, 2, &la);
  const char *b = luaL_checklstring(L, 3, &lb);
  git_oid oa, ob;
  GitFail f;
  if (git_resolve_commit(r->repo, a, la, &oa, NULL, &f) ||
      git_resolve_commit(r->repo, b, lb, &ob, NULL, &f))
    return gitfail_push(L, &f);
  int rc = reachable(r->repo, &oa, &ob, &f);
  if (rc < 0) return gitfail_push(L, &f);
  lua_pushboolean(L, rc);
  return 1;
}

/* Checks argument idx as a relative path; NULL when valid (f set otherwise). */
static const char *check_path_arg(lua_State *L, int idx, size_t *len, GitFail *f) {
  const char *path = luaL_checklstring(L, idx, len);
  char why[128];
  if (git_check_path(path, *len, why, sizeof why)) {
    gitfail_set(f, "invalid-path", "'%.200s': %s", path, why);
    return NULL;
  }
  return path;
}

static int repo_odb(lua_State *L, Repo *r, git_odb **odb) {
  int err = git_repository_odb(odb, r->repo);
  if (err) {
    GitFail f;
    gitfail_git(&f, err, "opening the object database");
    return gitfail_push(L, &f);
  }
  return 0;
}

static int repo_read(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t clen, plen;
  const char *hex = luaL_checklstring(L, 2, &clen);
  luaL_checklstring(L, 3, &plen);
  lua_Integer max = luaL_checkinteger(L, 4);
  luaL_argcheck(L, max >= 0, 4, "max_bytes must be >= 0");
  GitFail f;
  git_oid commit, tree, blob;
  unsigned mode;
  const char *path = check_path_arg(L, 3, &plen, &f);
  if (!path) return gitfail_push(L, &f);
  if (git_resolve_commit(r->repo, hex, clen, &commit, &tree, &f)) return gitfail_push(L, &f);
  git_odb *odb;
  int n = repo_odb(L, r, &odb);
  if (n) return n;
  if (git_lookup(odb, &tree, path, &mode, &blob, &f)) goto fail;
  if (mode == 0040000) {
    gitfail_set(&f, "not-a-file", "%s is a directory", path);
    goto fail;
  }
  if (mode == 0120000) {
    gitfail_set(&f, "symlink", "%s is a symbolic link", path);
    goto fail;
  }
  if (mode == 0160000) {
    gitfail_set(&f, "submodule", "%s is a submodule (gitlink)", path);
    goto fail;
  }
  size_t size;
  git_object_t type;
  int err = git_odb_read_header(&size, &type, odb, &blob);
  if (err) {
    gitfail_git(&f, err, path);
    goto fail;
  }
  if (type != GIT_OBJECT_BLOB) {
    gitfail_not_blob(&f, path, &blob, type);
    goto fail;
  }
  /* Refused from the header, before the blob is inflated. */
  if ((unsigned long long)size > (unsigned long long)max) {
    gitfail_set(&f, "too-large", "%s is %zu bytes, over the limit of %lld", path, size, (long long)max);
    goto fail;
  }
  git_odb_object *obj;
  if ((err = git_odb_read(&obj, odb, &blob))) {
    gitfail_git(&f, err, path);
    goto fail;
  }
  git_odb_free(odb);
  lua_createtable(L, 0, 4);
  lua_pushlstring(L, git_odb_object_data(obj), git_odb_object_size(obj));
  lua_setfield(L, -2, "bytes");
  lua_pushstring(L, git_mode_string(mode));
  lua_setfield(L, -2, "mode");
  push_oid(L, &blob);
  lua_setfield(L, -2, "blob");
  lua_pushinteger(L, (lua_Integer)git_odb_object_size(obj));
  lua_setfield(L, -2, "size");
  git_odb_object_free(obj);
  return 1;
fail:
  git_odb_free(odb);
  return gitfail_push(L, &f);
}

static int repo_tree(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t clen, plen = 0;
  const char *hex = luaL_checklstring(L, 2, &clen);
  const char *prefix = luaL_optlstring(L, 3, "", &plen);
  GitLimits lim;
  git_checklimits(L, 4, &lim);
  GitFail f;
  git_oid commit, tree;
  if (plen && !check_path_arg(L, 3, &plen, &f)) return gitfail_push(L, &f);
  if (git_resolve_commit(r->repo, hex, clen, &commit, &tree, &f)) return gitfail_push(L, &f);
  GitInventory *inv = git_newinventory(L);
  git_odb *odb;
  int n = repo_odb(L, r, &odb);
  if (n) return n;
  int rc = 0;
  if (plen) {
    unsigned mode;
    rc = git_lookup(odb, &tree, prefix, &mode, &tree, &f);
    if (!rc && mode != 0040000) {
      gitfail_set(&f, "not-a-tree", "%s is not a directory", prefix);
      rc = -1;
    }
  }
  if (!rc) rc = git_walk(odb, &tree, prefix, GIT_WALK_SIZES, &lim, inv, &f);
  git_odb_free(odb);
  if (rc) return gitfail_push(L, &f);
  git_inventory_sort(inv);
  lua_createtable(L, (int)inv->n, 0);
  for (size_t i = 0; i < inv->n; i++) {
    const GitEntry *e = &inv->v[i];
    lua_createtable(L, 0, 4);
    lua_pushlstring(L, e->path, e->len);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, git_mode_string(e->mode));
    lua_setfield(L, -2, "mode");
    push_oid(L, &e->oid);
    lua_setfield(L, -2, "blob");
    if (e->size >= 0) {
      lua_pushinteger(L, e->size);
      lua_setfield(L, -2, "size");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  mark_array(L);
  return 1;
}

static int repo_head(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  git_oid oid;
  int err = git_reference_name_to_id(&oid, r->repo, "HEAD");
  if (err == GIT_ENOTFOUND || err == GIT_EUNBORNBRANCH)
    return vkit_fail(L, "unborn-head", "HEAD does not point to a commit yet");
  if (err) {
    GitFail f;
    gitfail_git(&f, err, "resolving HEAD");
    f.code = "bad-head";
    return gitfail_push(L, &f);
  }
  push_oid(L, &oid);
  return 1;
}

/* resolve(rev): the full commit id a Git revision names (HEAD, a branch or
 * tag, main~1, a unique abbreviated id; git rev-parse's syntax), peeled to
 * a commit.  For the command line only: the library's exact-commit rule
 * (not-an-exact-commit) stands everywhere else.  Codes: not-found,
 * ambiguous (a prefix of several objects), invalid-revision (not revision
 * syntax), not-a-commit (a tree or blob). */
static int repo_resolve(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  const char *rev = luaL_checkstring(L, 2);
  git_object *obj = NULL, *commit = NULL;
  int err = git_revparse_single(&obj, r->repo, rev);
  if (err) {
    const git_error *e = git_error_last();
    const char *detail = e && e->message ? e->message : "unknown libgit2 error";
    /* libgit2 calls a hex word under 4 digits an ambiguous prefix; Git
     * itself says it names nothing. */
    if (err == GIT_ENOTFOUND || (err == GIT_EAMBIGUOUS && strstr(detail, "too short")))
      return vkit_fail(L, "not-found", "%s: no such revision", rev);
    if (err == GIT_EAMBIGUOUS) return vkit_fail(L, "ambiguous", "%s: ambiguous revision (%s)", rev, detail);
    if (err == GIT_EINVALIDSPEC) return vkit_fail(L, "invalid-revision", "%s: not a revision (%s)", rev, detail);
    GitFail f;
    gitfail_git(&f, err, rev);
    return gitfail_push(L, &f);
  }
  err = git_object_peel(&commit, obj, GIT_OBJECT_COMMIT);
  git_object_t type = git_object_type(obj);
  git_object_free(obj);
  if (err) return vkit_fail(L, "not-a-commit", "%s names a %s, not a commit", rev, git_object_type2string(type));
  push_oid(L, git_object_id(commit));
  git_object_free(commit);
  return 1;
}

/* Remotes are read from the configuration directly: libgit2 1.5's remote
 * API matches config keys with a regex whose non-matches leak (pcre2 match
 * data), and a URL is all vkit needs. */
static int repo_remote_url(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  const char *name = luaL_checkstring(L, 2);
  int valid = 0;
  if (git_remote_name_is_valid(&valid, name) || !valid)
    return vkit_fail(L, "missing-remote", "'%s' is not a valid remote name", name);
  git_config *cfg;
  int err = git_repository_config_snapshot(&cfg, r->repo);
  if (err) {
    GitFail f;
    gitfail_git(&f, err, "reading the configuration");
    f.code = "bad-config";
    return gitfail_push(L, &f);
  }
  const char *key = lua_pushfstring(L, "remote.%s.url", name);
  const char *url = NULL;
  err = git_config_get_string(&url, cfg, key);
  if (!err) lua_pushstring(L, url);
  git_config_free(cfg);
  if (err) return vkit_fail(L, "missing-remote", "no remote named '%s'", name);
  return 1;
}

static int cmp_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* refs([prefix]): sorted {name, target | symbolic}; prefix filters names. */
static int repo_refs(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t plen = 0;
  const char *prefix = luaL_optlstring(L, 2, "", &plen);
  git_strarray names = {0};
  int err = git_reference_list(&names, r->repo);
  if (err) {
    GitFail f;
    gitfail_git(&f, err, "listing references");
    f.code = "bad-refs";
    return gitfail_push(L, &f);
  }
  /* git_reference_list is unordered; byte order makes the output stable. */
  qsort(names.strings, names.count, sizeof *names.strings, cmp_strings);
  lua_createtable(L, 0, 0);
  lua_Integer k = 0;
  for (size_t i = 0; i < names.count; i++) {
    const char *name = names.strings[i];
    if (strncmp(name, prefix, plen)) continue;
    git_reference *ref;
    if (git_reference_lookup(&ref, r->repo, name)) continue;
    lua_createtable(L, 0, 2);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
    if (git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC) {
      lua_pushstring(L, git_reference_symbolic_target(ref));
      lua_setfield(L, -2, "symbolic");
    } else {
      push_oid(L, git_reference_target(ref));
      lua_setfield(L, -2, "target");
    }
    git_reference_free(ref);
    lua_rawseti(L, -2, ++k);
  }
  git_strarray_dispose(&names);
  mark_array(L);
  return 1;
}

static int repo_dirty(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  if (git_repository_is_bare(r->repo))
    return vkit_fail(L, "bare-repository", "a bare repository has no working tree");
  git_status_options opts;
  git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_SORT_CASE_SENSITIVELY | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  /* repo:dirty{tracked = true}: changes to tracked files only (staged or not) */
  if (lua_istable(L, 2) && lua_getfield(L, 2, "tracked") != LUA_TNIL && lua_toboolean(L, -1))
    opts.flags &= ~(unsigned)(GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS);
  git_status_list *list;
  int err = git_status_list_new(&list, r->repo, &opts);
  if (err) {
    GitFail f;
    gitfail_git(&f, err, "reading the working tree status");
    f.code = "status-failed";
    return gitfail_push(L, &f);
  }
  size_t n = git_status_list_entrycount(list);
  lua_createtable(L, (int)n, 0);
  lua_Integer k = 0;
  for (size_t i = 0; i < n; i++) {
    const git_status_entry *e = git_status_byindex(list, i);
    const git_diff_delta *d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
    if (!d || e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) continue;
    const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;
    lua_pushstring(L, p);
    lua_rawseti(L, -2, ++k);
  }
  git_status_list_free(list);
  mark_array(L);
  return 1;
}

static int repo_path(lua_State *L) {
  lua_pushstring(L, git_repository_path(git_checkrepo(L, 1)->repo));
  return 1;
}

static int repo_workdir(lua_State *L) {
  const char *w = git_repository_workdir(git_checkrepo(L, 1)->repo);
  if (w) lua_pushstring(L, w);
  else lua_pushnil(L);
  return 1;
}

static const luaL_Reg repo_methods[] = {
    {"commit", repo_commit},
    {"is_ancestor", repo_is_ancestor},
    {"read", repo_read},
    {"tree", repo_tree},
    {"capture", git_repo_capture},
    {"head", repo_head},
    {"resolve", repo_resolve},
    {"remote_url", repo_remote_url},
    {"refs", repo_refs},
    {"dirty", repo_dirty},
    {"path", repo_path},
    {"workdir", repo_workdir},
    {"write_blob", git_repo_write_blob},
    {"write_object", git_repo_write_object},
    {"write_tree", git_repo_write_tree},
    {"write_tree_raw", git_repo_write_tree_raw},
    {"commit_tree", git_repo_commit_tree},
    {"set_ref", git_repo_set_ref},
    {"set_remote", git_repo_set_remote},
    {"fetch", git_repo_fetch},
    {"copy_commit", git_repo_copy_commit},
    {"close", repo_close},
    {NULL, NULL}};

static const luaL_Reg repo_meta[] = {
    {"__gc", repo_close}, {"__close", repo_close}, {"__tostring", repo_tostring}, {NULL, NULL}};

static const luaL_Reg git_funcs[] = {
    {"open", git_open},
    {"init", git_init},
    {"verify_capture", git_verify_capture},
    {"inventory_digest", git_inventory_digest_lua},
    {NULL, NULL}};

/*
 * libgit2 is initialised when vkit.git is first opened, not at start: its
 * initialisation parses the system CA bundle (about half the instructions of
 * a cold `vkit vac verify`), which every command that never touches Git
 * would otherwise pay.  libgit2 counts its initialisations; each Lua state
 * holds one, in a registry sentinel whose __gc releases it when the state
 * closes.  Repository handles can only be made after the sentinel, and Lua
 * 5.4 runs finalizers at close in reverse order of marking, so every handle
 * is freed before libgit2 shuts down.
 */
#define LIBGIT2_SENTINEL "vkit.libgit2"

static int libgit2_release(lua_State *L) {
  git_libgit2_shutdown();
  return 0;
}

static void hold_libgit2(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, LIBGIT2_SENTINEL) == LUA_TNIL) {
    if (git_libgit2_init() < 0) {
      const git_error *e = git_error_last();
      luaL_error(L, "cannot initialise libgit2: %s", e ? e->message : "unknown error");
    }
    lua_newuserdatauv(L, 0, 0);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, libgit2_release);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, LIBGIT2_SENTINEL);
  }
  lua_pop(L, 1);
}

int luaopen_vkit_git(lua_State *L) {
  hold_libgit2(L);
  /* Arrays returned here carry vkit.json's array metatable so that empty
   * ones still encode as []. */
  luaL_requiref(L, "vkit.json", luaopen_vkit_json, 0);
  lua_pop(L, 1);
  vkit_newclass(L, GIT_REPO_MT, repo_methods, repo_meta);
  luaL_newlib(L, git_funcs);
  return 1;
}
