/*
 * git.h: what the vkit.git source files share.  Only git.c registers the
 * module (luaopen_vkit_git); the others contribute methods through the
 * functions declared here.  Calls go down only (scripts/c-call-graph.lua):
 *
 *   git.c          the module: open, the repository's reading methods,
 *                  and the registration of every method
 *   git_capture.c  capture, verify_capture, inventory_digest
 *   git_write.c    init and the writer methods
 *   git_fetch.c    fetch, copy_commit
 *   git_tree.c     paths, tree walks and lookups, inventories
 *   git_odb.c      the object database with a bounded loose-object reader
 *   git_common.c   failures, exact object ids and commits, the repo handle
 *
 * git.c calls every file below it; capture and write call tree and odb;
 * all call git_common.c, which calls none of them.
 *
 * These files build vkit_git.so (see the Makefile), compiled with
 * -fvisibility=hidden: luaopen_vkit_git is its one exported symbol; the
 * names below stay inside the object (several look like libgit2's own).
 */
#ifndef VKIT_GIT_H
#define VKIT_GIT_H

#include "vkit.h"

#include <git2.h>
#include <stdarg.h>

__attribute__((visibility("default"))) int luaopen_vkit_git(lua_State *L);

#define GIT_REPO_MT "vkit.git.repo"
#define GIT_INVENTORY_MT "vkit.git.inventory"

/* The longest relative path vkit.git accepts or materialises: Linux's
 * PATH_MAX.  It is a property of the filesystem, not a policy. */
#define GIT_MAX_PATH 4096
/* The longest single path component: Linux's NAME_MAX. */
#define GIT_MAX_NAME 255

typedef struct {
  git_repository *repo;  /* NULL once closed */
} Repo;

/* ---- git_common.c ---------------------------------------------------------- */

/* A failure recorded away from the Lua stack (in C loops and worker
 * threads), pushed later as `nil, msg, code`.  code is a static string. */
typedef struct {
  const char *code;
  char msg[1024];
} GitFail;

void gitfail_set(GitFail *f, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records a libgit2 failure `err` while doing `what`: code missing-object
 * for GIT_ENOTFOUND, io-error for an OS error, else corrupt-object. */
void gitfail_git(GitFail *f, int err, const char *what);
int gitfail_push(lua_State *L, const GitFail *f);
/* Records corrupt-object: the entry at path names a `type`, not a blob. */
void gitfail_not_blob(GitFail *f, const char *path, const git_oid *oid, git_object_t type);

Repo *git_checkrepo(lua_State *L, int idx);
/* Pushes a new repo userdata owning r. */
void git_pushrepo(lua_State *L, git_repository *r);

/* 40 lowercase hex digits of an oid into out[41]. */
void git_hexoid(const git_oid *oid, char out[41]);
/* Parses an exact object id (40 lowercase hex digits); 0 or -1 with f set
 * (code `code`). */
int git_parse_exact_oid(const char *s, size_t len, git_oid *out, const char *code, GitFail *f);

/* Resolves an exact commit id: commit and tree oids, or -1 with f set
 * (not-an-exact-commit, corrupt-object, ...). */
int git_resolve_commit(git_repository *repo, const char *hex, size_t len,
                       git_oid *commit, git_oid *tree, GitFail *f);

/* ---- the object database (git_odb.c) --------------------------------------- */

/* Replaces repo's object database with one whose loose-object reader is
 * bounded (git_odb.c); 0 or a libgit2 error code. */
int git_use_safe_odb(git_repository *repo);
/* git_repository_open_ext with the safe object database; 0, or the libgit2
 * error code with the repository freed. */
int git_open_safe(git_repository **out, const char *path, unsigned flags);

/* ---- paths and trees (git_tree.c) ---------------------------------------- */

/* Checks one tree-entry name; NULL when safe, else the refusal code.  Rules:
 * non-empty, no NUL, no '/', no backslash, not "." or "..", not ".git" in any
 * case nor any name Git's verify_path refuses for it under core.protectNTFS
 * and core.protectHFS (git-component), at most GIT_MAX_NAME bytes. */
const char *git_check_name(const char *name, size_t len);
/* What a symbolic link's name must not be besides (".gitmodules" and its
 * NTFS/HFS+ aliases: gitmodules-link); NULL when safe. */
const char *git_check_link_name(const char *name, size_t len);
/* Checks a caller-supplied relative path ("a/b.txt"); NULL or a sentence
 * (into why) saying why it is invalid. */
const char *git_check_path(const char *path, size_t len, char *why, size_t whylen);

/* One listed tree entry: a file, link or submodule, never a directory. */
typedef struct {
  char *path;              /* full relative path, NUL-terminated */
  size_t len;
  unsigned mode;           /* 0100644, 0100755, 0120000, 0160000 */
  git_oid oid;
  long long size;          /* -1 when unknown (submodules; not yet read) */
  unsigned char sha256[32];
} GitEntry;

/* A growable entry list living in a Lua userdata (GIT_INVENTORY_MT), so a
 * Lua error between allocation and return cannot leak it. */
typedef struct {
  GitEntry *v;
  size_t n, cap;
} GitInventory;

GitInventory *git_newinventory(lua_State *L);
int git_inventory_add(GitInventory *inv, const char *path, size_t len, unsigned mode,
                      const git_oid *oid);
void git_inventory_sort(GitInventory *inv);

typedef struct {
  lua_Integer max_entries;     /* tree entries visited; < 0: no limit */
  lua_Integer max_file_bytes;  /* per file;            < 0: no limit */
  lua_Integer max_total_bytes; /* sum of file sizes;   < 0: no limit */
} GitLimits;

/* Reads the limits from the options table at idx (absent: no limits). */
void git_checklimits(lua_State *L, int idx, GitLimits *lim);

enum { GIT_WALK_FILES_ONLY = 1, GIT_WALK_SIZES = 2 };
/* Lists every entry under tree `root` (whose own path is `prefix`, "" for
 * the root) into inv, refusing hostile names, duplicate names, unknown modes
 * and (with GIT_WALK_FILES_ONLY) links and submodules.  Empty directories
 * are not listed.  0 or -1 with f set. */
int git_walk(git_odb *odb, const git_oid *root, const char *prefix, int flags,
             const GitLimits *lim, GitInventory *inv, GitFail *f);

/* Finds `path` (already checked) under tree `root`: mode and oid, or -1
 * with f set (missing-path, path-collision, corrupt-object ...). */
int git_lookup(git_odb *odb, const git_oid *root, const char *path, unsigned *mode,
               git_oid *oid, GitFail *f);

/* "100644" etc. for a mode. */
const char *git_mode_string(unsigned mode);

/* SHA-256 of the sorted inventory records `path NUL mode NUL sha256hex LF`;
 * 0, or ENOMEM. */
int git_inventory_digest(const GitInventory *inv, char hex[65]);

/* ---- methods defined in the other files ---------------------------------- */
int git_repo_capture(lua_State *L);
int git_verify_capture(lua_State *L);
int git_inventory_digest_lua(lua_State *L);
int git_init(lua_State *L);
int git_repo_write_blob(lua_State *L);
int git_repo_write_object(lua_State *L);
int git_repo_write_tree(lua_State *L);
int git_repo_write_tree_raw(lua_State *L);
int git_repo_commit_tree(lua_State *L);
int git_repo_set_ref(lua_State *L);
int git_repo_set_remote(lua_State *L);
int git_repo_fetch(lua_State *L);
int git_repo_copy_commit(lua_State *L);

#endif
