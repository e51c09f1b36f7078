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
