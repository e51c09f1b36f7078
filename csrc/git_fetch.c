/*
 * git_fetch.c: repo:fetch(location, refspecs) for vkit.git, the one way a
 * job-store worker brings a project's objects into its local cache.
 *
 *   repo:fetch(location, {refspec, ...}) -> true | nil, message, code
 *
 * location is anything libgit2 fetches from (a local path, file://,
 * https://, ssh://); the remote is anonymous, so nothing is written to the
 * repository's configuration.  A refspec may name an exact commit as its
 * source ("<40 hex>:refs/vkit/commits/<40 hex>"), which libgit2 1.5 asks
 * the remote for directly.  No FETCH_HEAD is written and tags are fetched
 * only as the refspecs say.  Every object received is checked by libgit2's
 * indexer (its id is the hash of its bytes).  Code: fetch-failed, with
 * libgit2's message.
 */
#include "git.h"

int git_repo_fetch(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  const char *location = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  size_t n = lua_rawlen(L, 3);
  luaL_argcheck(L, n > 0 && n <= 1024, 3, "between 1 and 1024 refspecs");
  char **specs = lua_newuserdatauv(L, sizeof(char *) * n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, 3, (lua_Integer)i + 1);
    specs[i] = (char *)luaL_checkstring(L, -1);
    lua_pop(L, 1); /* the string stays alive in the table */
  }
  git_strarray refspecs = {specs, n};
  git_remote *remote = NULL;
  int err = git_remote_create_anonymous(&remote, r->repo, location);
  if (!err) {
    git_fetch_options opts;
    git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
    opts.update_fetchhead = 0;
    opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
    err = git_remote_fetch(remote, &refspecs, &opts, NULL);
  }
  git_remote_free(remote);
  if (err) {
    const git_error *e = git_error_last();
    return vkit_fail(L, "fetch-failed", "fetching from %s: %s", location, e ? e->message : "unknown error");
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* ---- repo:copy_commit(src_repo, commit) ----------------------------------
 *
 *   repo:copy_commit(src, commit) -> true | nil, message, code
 *
 * Copies an exact commit of another (local) repository, with its whole
 * history and every tree and blob they reach, object by object through
 * both object databases: how a cache gets a commit that no branch or tag
 * holds, which no Git transport serves.  Parents are written before their
 * children and a tree's entries before the tree, so an object present in
 * the destination always has its closure there too (an interrupted copy
 * leaves nothing dangling), and the copy stops descending wherever the
 * destination already has an object.  Codes: not-an-exact-commit,
 * missing-object, corrupt-object, io-error, copy-failed. */

static int copy_object(git_odb *from, git_odb *to, const git_oid *oid, GitFail *f) {
  git_odb_object *obj;
  int err = git_odb_read(&obj, from, oid);
  if (err) {
    gitfail_git(f, err, "reading an object to copy");
    return -1;
  }
  git_oid written;
  err = git_odb_write(&written, to, git_odb_object_data(obj), git_odb_object_size(obj), git_odb_object_type(obj));
  git_odb_object_free(obj);
  if (err) {
    gitfail_git(f, err, "writing a copied object");
    f->code = "copy-failed";
    return -1;
  }
  return 0;
}

static int copy_tree(git_repository *src, git_odb *from, git_odb *to, const git_oid *oid, int depth, GitFail *f) {
  if (git_odb_exists(to, oid)) return 0;
  if (depth > 1024) {
    gitfail_set(f, "corrupt-object", "trees nested deeper than 1024");
    return -1;
  }
  git_tree *tree;
  int err = git_tree_lookup(&tree, src, oid);
  if (err) {
    gitfail_git(f, err, "reading a tree to copy");
    return -1;
  }
  int rc = 0;
  size_t n = git_tree_entrycount(tree);
  for (size_t i = 0; i < n && rc == 0; i++) {
    const git_tree_entry *e = git_tree_entry_byindex(tree, i);
    git_object_t type = git_tree_entry_type(e);
    const git_oid *id = git_tree_entry_id(e);
    if (type == GIT_OBJECT_TREE) rc = copy_tree(src, from, to, id, depth + 1, f);
    else if (type == GIT_OBJECT_BLOB && !git_odb_exists(to, id)) rc = copy_object(from, to, id, f);
    /* a submodule (GIT_OBJECT_COMMIT entry) names a commit of another repository */
  }
  git_tree_free(tree);
  return rc ? rc : copy_object(from, to, oid, f);
}

int git_repo_copy_commit(lua_State *L) {
  Repo *dst = git_checkrepo(L, 1);
  Repo *src = git_checkrepo(L, 2);
  size_t len;
  const char *hex = luaL_checklstring(L, 3, &len);
  GitFail f = {0};
  git_oid commit, tree;
  if (git_resolve_commit(src->repo, hex, len, &commit, &tree, &f)) return gitfail_push(L, &f);
  git_odb *from = NULL, *to = NULL;
  git_revwalk *walk = NULL;
  int err = git_repository_odb(&from, src->repo);
  if (!err) err = git_repository_odb(&to, dst->repo);
  if (!err) err = git_revwalk_new(&walk, src->repo);
  if (!err) err = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE);
  if (!err) err = git_revwalk_push(walk, &commit);
  int rc = 0;
  if (err) {
    gitfail_git(&f, err, "walking the history to copy");
    rc = -1;
  }
  git_oid next;
  while (rc == 0 && (err = git_revwalk_next(&next, walk)) == 0) {
    if (git_odb_exists(to, &next)) continue;
    git_commit *c;
    err = git_commit_lookup(&c, src->repo, &next);
    if (err) {
      gitfail_git(&f, err, "reading a commit to copy");
      rc = -1;
      break;
    }
    rc = copy_tree(src->repo, from, to, git_commit_tree_id(c), 0, &f);
    git_commit_free(c);
    if (rc == 0) rc = copy_object(from, to, &next, &f);
  }
  if (rc == 0 && err != GIT_ITEROVER) {
    gitfail_git(&f, err, "walking the history to copy");
    rc = -1;
  }
  git_revwalk_free(walk);
  git_odb_free(from);
  git_odb_free(to);
  if (rc) return gitfail_push(L, &f);
  lua_pushboolean(L, 1);
  return 1;
}
