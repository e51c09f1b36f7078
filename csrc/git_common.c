/*
 * git_common.c: what every file of vkit.git shares, below them all:
 * failures recorded away from the Lua stack, exact object ids, the
 * resolution of an exact commit, and the repository handle's check and
 * push.  git.c's methods and those of git_tree.c, git_odb.c,
 * git_capture.c, git_write.c and git_fetch.c call down to it; it calls
 * none of them.
 */
#include "git.h"

#include <stdio.h>

/* ---- failures ------------------------------------------------------------ */

void gitfail_set(GitFail *f, const char *code, const char *fmt, ...) {
  va_list ap;
  f->code = code;
  va_start(ap, fmt);
  vsnprintf(f->msg, sizeof f->msg, fmt, ap);
  va_end(ap);
}

void gitfail_git(GitFail *f, int err, const char *what) {
  const git_error *e = git_error_last();
  const char *detail = e && e->message ? e->message : "unknown libgit2 error";
  const char *code = "corrupt-object";
  if (err == GIT_ENOTFOUND) code = "missing-object";
  else if (e && e->klass == GIT_ERROR_OS) code = "io-error";
  else if (e && e->klass == GIT_ERROR_NOMEMORY) code = "ENOMEM";
  gitfail_set(f, code, "%s: %s", what, detail);
}

void gitfail_not_blob(GitFail *f, const char *path, const git_oid *oid, git_object_t type) {
  char hex[41];
  git_hexoid(oid, hex);
  gitfail_set(f, "corrupt-object", "%s points to %s, a %s, not a blob", path, hex, git_object_type2string(type));
}

int gitfail_push(lua_State *L, const GitFail *f) {
  return vkit_fail(L, f->code, "%s", f->msg);
}

/* ---- object ids ---------------------------------------------------------- */

void git_hexoid(const git_oid *oid, char out[41]) { vkit_hex(oid->id, GIT_OID_RAWSZ, out); }

static int is_lower_hex(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
  return 1;
}

int git_parse_exact_oid(const char *s, size_t len, git_oid *out, const char *code, GitFail *f) {
  if (len == 64 && is_lower_hex(s, len)) {
    gitfail_set(f, code, "%.64s is a SHA-256 object id; libgit2 1.5 reads only SHA-1 repositories", s);
    return -1;
  }
  if (len != 40 || !is_lower_hex(s, len)) {
    gitfail_set(f, code, "'%.80s' is not an exact object id (40 lowercase hexadecimal digits)", s);
    return -1;
  }
  git_oid_fromstrn(out, s, len);
  return 0;
}

int git_resolve_commit(git_repository *repo, const char *hex, size_t len, git_oid *commit,
                       git_oid *tree, GitFail *f) {
  git_odb *odb;
  size_t size;
  git_object_t type;
  if (git_parse_exact_oid(hex, len, commit, "not-an-exact-commit", f)) return -1;
  int err = git_repository_odb(&odb, repo);
  if (err) {
    gitfail_git(f, err, "opening the object database");
    return -1;
  }
  err = git_odb_read_header(&size, &type, odb, commit);
  git_odb_free(odb);
  if (err == GIT_ENOTFOUND) {
    gitfail_set(f, "not-an-exact-commit", "commit %s does not exist in this repository", hex);
    return -1;
  }
  if (err) {
    gitfail_git(f, err, hex);
    return -1;
  }
  if (type != GIT_OBJECT_COMMIT) {
    gitfail_set(f, "not-an-exact-commit", "%s is a %s, not a commit", hex, git_object_type2string(type));
    return -1;
  }
  if (tree) {
    git_commit *c;
    if ((err = git_commit_lookup(&c, repo, commit))) {
      gitfail_git(f, err, hex);
      if (!strcmp(f->code, "missing-object")) f->code = "corrupt-object";
      return -1;
    }
    *tree = *git_commit_tree_id(c);
    git_commit_free(c);
  }
  return 0;
}

/* ---- the repository handle ----------------------------------------------- */

Repo *git_checkrepo(lua_State *L, int idx) {
  Repo *r = luaL_checkudata(L, idx, GIT_REPO_MT);
  if (!r->repo) luaL_error(L, "attempt to use a closed repository");
  return r;
}

void git_pushrepo(lua_State *L, git_repository *repo) {
  Repo *r = lua_newuserdatauv(L, sizeof *r, 0);
  r->repo = repo;
  luaL_setmetatable(L, GIT_REPO_MT);
}
