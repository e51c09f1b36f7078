/*
 * git_capture.c: frozen snapshots of exact commits.
 *
 *   repo:capture(commit, dest [, paths [, limits]]) -> identity | nil, msg, code
 *   vkit.git.verify_capture(dest, identity)          -> true | nil, msg, code
 *   vkit.git.inventory_digest(inventory)             -> hex | nil, msg, code
 *
 * capture materialises the commit's tree (or only the exact file `paths`)
 * into `dest`, which must not exist (`dest-exists`) and must not be a link
 * (`dest-is-link`).  It creates dest, then directories 0755 and regular files
 * 0644 or 0755 from the Git mode (100644, 100755), and nothing else: the
 * whole inventory is read and checked before anything is written, so a
 * symlink, a submodule or a hostile name (see git_tree.c for the codes)
 * refuses the capture with dest never created.  Files are opened with
 * O_CREAT|O_EXCL|O_NOFOLLOW beneath directory descriptors that were opened
 * with O_NOFOLLOW, so nothing can be written outside dest.  If reading an
 * object fails midway (corrupt-object, missing-object, too-large ...), dest
 * and everything created under it are removed.  Empty directories (a tree
 * with no files below it) are not materialised: a capture is exactly its
 * file inventory.  Blob reading, writing and hashing run on up to four
 * threads, each with its own libgit2 repository handle.
 *
 * The identity is
 *   {commit, tree, complete, inventory_digest,
 *    inventory = {{path, mode, sha256, size, blob}, ...}}  (sorted by path)
 * where complete is false for a `paths` capture.  THE INVENTORY DIGEST is
 * the lowercase hex SHA-256 over one record per file, sorted by the bytes of
 * path (memcmp order):
 *   path || 0x00 || mode || 0x00 || sha256-hex || 0x0a
 * with mode the Git mode as octal text ("100644" or "100755") and sha256-hex
 * the 64 lowercase hex digits of SHA-256 over the file's bytes.  Paths are
 * '/'-separated, relative, NUL-free and unique, so the encoding is
 * injective.  The empty inventory's digest is SHA-256 of the empty string.
 *
 * verify_capture re-reads dest without following links and fails on the
 * first difference in path order: extra-path (any file, directory, link,
 * fifo, socket or device the inventory does not imply), missing-path,
 * kind-mismatch, mode-mismatch (files 0644/0755, directories 0755),
 * hard-link (a file with more than one link), content-mismatch; and
 * inventory-digest-mismatch / invalid-identity when the identity itself is
 * inconsistent.
 */
#include "git.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 4
#define MIN_ENTRIES_PER_THREAD 32

/* ---- safe directory access ------------------------------------------------ */

/* Opens the directory `path[0..len)` beneath root one component at a time,
 * refusing links; -1 with errno set. */
static int open_beneath(int root, const char *path, size_t len) {
  int fd = dup(root);
  const char *p = path, *end = path + len;
  char name[GIT_MAX_NAME + 1];
  while (fd >= 0 && p < end) {
    const char *slash = memchr(p, '/', (size_t)(end - p));
    size_t n = (size_t)((slash ? slash : end) - p);
    if (n > GIT_MAX_NAME) {
      close(fd);
      errno = ENAMETOOLONG;
      return -1;
    }
    memcpy(name, p, n);
    name[n] = '\0';
    int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int saved = errno;
    close(fd);
    errno = saved;
    fd = next;
    p += n + (slash ? 1 : 0);
  }
  return fd;
}

typedef struct {
  char **v;
  size_t n;
} Names;

static int cmp_cstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(Names *ns) {
  for (size_t i = 0; i < ns->n; i++) free(ns->v[i]);
  free(ns->v);
}

/* The sorted entry names of directory dfd (dfd stays open); errno or 0. */
static int read_names(int dfd, Names *out) {
  out->v = NULL;
  out->n = 0;
  int fd = dup(dfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    int err = errno;
    if (fd >= 0) close(fd);
    return err;
  }
  rewinddir(d);
  size_t cap = 0;
  struct dirent *de;
  int err = 0;
  errno = 0;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    if (out->n == cap) {
      char **v = realloc(out->v, (cap = cap ? cap * 2 : 16) * sizeof *v);
      if (!v) { err = ENOMEM; break; }
      out->v = v;
    }
    if (!(out->v[out->n] = strdup(de->d_name))) { err = ENOMEM; break; }
    out->n++;
  }
  if (!err && errno) err = errno;
  closedir(d);
  if (err) {
    names_free(out);
    out->v = NULL;
    out->n = 0;
  }
  else if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_cstr);
  return err;
}

/* Removes everything beneath dfd without following links; errno or 0. */
static int remove_beneath(int dfd, int depth) {
  if (depth > GIT_MAX_PATH / 2) return ELOOP;
  Names ns;
  int err = read_names(dfd, &ns);
  for (size_t i = 0; !err && i < ns.n; i++) {
    struct stat st;
    if (fstatat(dfd, ns.v[i], &st, AT_SYMLINK_NOFOLLOW)) err = errno;
    else if (S_ISDIR(st.st_mode)) {
      int child = openat(dfd, ns.v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) err = errno;
      else {
        err = remove_beneath(child, depth + 1);
        close(child);
        if (!err && unlinkat(dfd, ns.v[i], AT_REMOVEDIR)) err = errno;
      }
    } else if (unlinkat(dfd, ns.v[i], 0)) err = errno;
  }
  names_free(&ns);
  return err;
}

/* ---- the capture ---------------------------------------------------------- */

typedef struct {
  GitInventory *inv;
  GitLimits lim;
  int destfd;
  const char *gitdir;
  atomic_size_t next;
  atomic_size_t limit;       /* entries at or past this index are skipped */
  atomic_llong total;        /* bytes read so far, for max_total_bytes */
  pthread_mutex_t lock;
  size_t err_index;          /* lowest failing entry, guarded by lock */
  GitFail fail;
} Capture;

typedef struct {
  Capture *cap;
  git_repository *repo;      /* owned, except for the calling thread's */
  git_odb *odb;
  int dirfd;                 /* cached parent directory */
  char *dirpath;
  size_t dirlen;
  pthread_t thread;
  int started;
} Worker;

static void capture_failed(Capture *c, size_t i, const GitFail *f) {
  pthread_mutex_lock(&c->lock);
  if (i < c->err_index) {
    c->err_index = i;
    c->fail = *f;
    if (atomic_load(&c->limit) > i) atomic_store(&c->limit, i);
  }
  pthread_mutex_unlock(&c->lock);
}

/* The parent directory of e, from the cache or opened beneath dest. */
static int parent_dir(Worker *w, const GitEntry *e, GitFail *f) {
  const char *slash = strrchr(e->path, '/');
  size_t len = slash ? (size_t)(slash - e->path) : 0;
  if (w->dirfd >= 0 && len == w->dirlen && !memcmp(w->dirpath, e->path, len)) return w->dirfd;
  if (w->dirfd >= 0) close(w->dirfd);
  w->dirfd = open_beneath(w->cap->destfd, e->path, len);
  if (w->dirfd < 0) {
    gitfail_set(f, vkit_errno_name(errno), "opening the directory of %s: %s", e->path, strerror(errno));
    return -1;
  }
  memcpy(w->dirpath, e->path, len);
  w->dirlen = len;
  return w->dirfd;
}

static int check_budget(Capture *c, const GitEntry *e, long long size, GitFail *f) {
  if (c->lim.max_file_bytes >= 0 && size > c->lim.max_file_bytes) {
    gitfail_set(f, "too-large", "%s is %lld bytes, over the limit of %lld", e->path, size,
                (long long)c->lim.max_file_bytes);
    return -1;
  }
  if (c->lim.max_total_bytes >= 0 && atomic_fetch_add(&c->total, size) + size > c->lim.max_total_bytes) {
    gitfail_set(f, "too-large", "the files total more than %lld bytes", (long long)c->lim.max_total_bytes);
    return -1;
  }
  return 0;
}

static int capture_entry(Worker *w, GitEntry *e, GitFail *f) {
  Capture *c = w->cap;
  int limited = c->lim.max_file_bytes >= 0 || c->lim.max_total_bytes >= 0;
  int err;
  if (limited) {
    /* The header gives the size without inflating the blob. */
    size_t size;
    git_object_t type;
    if ((err = git_odb_read_header(&size, &type, w->odb, &e->oid))) {
      gitfail_git(f, err, e->path);
      return -1;
    }
    if (check_budget(c, e, (long long)size, f)) return -1;
  }
  git_odb_object *obj;
  if ((err = git_odb_read(&obj, w->odb, &e->oid))) {
    gitfail_git(f, err, e->path);
    return -1;
  }
  int rc = -1;
  const char *data = git_odb_object_data(obj);
  size_t size = git_odb_object_size(obj);
  if (git_odb_object_type(obj) != GIT_OBJECT_BLOB) {
    gitfail_not_blob(f, e->path, &e->oid, git_odb_object_type(obj));
    goto done;
  }
  e->size = (long long)size;
  if (vkit_sha256(data, size, e->sha256)) {
    gitfail_set(f, "EIO", "SHA-256 failed for %s (OpenSSL or memory)", e->path);
    goto done;
  }
  int dfd = parent_dir(w, e, f);
  if (dfd < 0) goto done;
  const char *slash = strrchr(e->path, '/');
  const char *name = slash ? slash + 1 : e->path;
  int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    gitfail_set(f, vkit_errno_name(errno), "creating %s: %s", e->path, strerror(errno));
    goto done;
  }
  err = vkit_write_all(fd, data, size);
  if (!err && fchmod(fd, e->mode == 0100755 ? 0755 : 0644)) err = errno;
  if (close(fd) && !err) err = errno;
  if (err) {
    gitfail_set(f, vkit_errno_name(err), "writing %s: %s", e->path, strerror(err));
    goto done;
  }
  rc = 0;
done:
  git_odb_object_free(obj);
  return rc;
}

static void *worker_run(void *arg) {
  Worker *w = arg;
  Capture *c = w->cap;
  GitFail f;
  for (;;) {
    size_t i = atomic_fetch_add(&c->next, 1);
    if (i >= atomic_load(&c->limit)) break;
    if (capture_entry(w, &c->inv->v[i], &f)) capture_failed(c, i, &f);
  }
  if (w->dirfd >= 0) close(w->dirfd);
  w->dirfd = -1;
  return NULL;
}

static int worker_init(Worker *w, Capture *c, git_repository *shared) {
  memset(w, 0, sizeof *w);
  w->cap = c;
  w->dirfd = -1;
  if (!(w->dirpath = malloc(GIT_MAX_PATH + 1))) return -1;
  if (shared) w->repo = shared;
  else if (git_open_safe(&w->repo, c->gitdir, GIT_REPOSITORY_OPEN_NO_SEARCH)) return -1;
  if (git_repository_odb(&w->odb, w->repo)) return -1;
  return 0;
}

static void worker_free(Worker *w, git_repository *shared) {
  git_odb_free(w->odb);
  if (w->repo && w->repo != shared) git_repository_free(w->repo);
  free(w->dirpath);
}

/* Creates every directory the (sorted) inventory implies, 0755, each
 * beneath its parent's descriptor; errno or 0, with the path in f. */
static int make_dirs(int destfd, const GitInventory *inv, GitFail *f) {
  int *fds = malloc((GIT_MAX_PATH / 2 + 2) * sizeof *fds);
  size_t *ends = malloc((GIT_MAX_PATH / 2 + 2) * sizeof *ends);
  int depth = 0, err = 0;
  if (!fds || !ends) {
    free(fds);
    free(ends);
    return ENOMEM;
  }
  fds[0] = destfd;
  ends[0] = 0;
  const char *cur = "";  /* the directory path fds[depth] stands for */
  for (size_t i = 0; i < inv->n && !err; i++) {
    const char *path = inv->v[i].path;
    const char *last = strrchr(path, '/');
    size_t plen = last ? (size_t)(last - path) : 0;
    /* pop until fds[depth] is an ancestor of (or equal to) the parent */
    while (depth > 0 && !(ends[depth] <= plen && !memcmp(cur, path, ends[depth]) &&
                          (plen == ends[depth] || path[ends[depth]] == '/'))) {
      close(fds[depth]);
      depth--;
    }
    cur = path;
    while (ends[depth] < plen) {
      size_t start = ends[depth] ? ends[depth] + 1 : 0;
      const char *slash = memchr(path + start, '/', plen - start);
      size_t end = slash ? (size_t)(slash - path) : plen;
      char name[GIT_MAX_NAME + 1];
      memcpy(name, path + start, end - start);
      name[end - start] = '\0';
      int fd = -1;
      if (mkdirat(fds[depth], name, 0700) ||
          (fd = openat(fds[depth], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
          fchmod(fd, 0755)) {
        err = errno;
        if (fd >= 0) close(fd);
        gitfail_set(f, vkit_errno_name(err), "creating the directory %.*s: %s", (int)end, path, strerror(err));
        break;
      }
      fds[++depth] = fd;
      ends[depth] = end;
    }
  }
  while (depth > 0) close(fds[depth--]);
  free(fds);
  free(ends);
  return err;
}

static int run_workers(Capture *c, git_repository *shared, GitFail *f) {
  Worker ws[MAX_THREADS];
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n = cpus > 1 ? (size_t)cpus : 1;
  if (n > MAX_THREADS) n = MAX_THREADS;
  if (n > c->inv->n / MIN_ENTRIES_PER_THREAD + 1) n = c->inv->n / MIN_ENTRIES_PER_THREAD + 1;
  if (worker_init(&ws[0], c, shared)) {
    worker_free(&ws[0], shared);
    gitfail_git(f, -1, "opening the object database");
    return -1;
  }
  size_t started = 1;
  for (; started < n; started++) {
    /* a worker that cannot start only costs parallelism */
    if (worker_init(&ws[started], c, NULL) ||
        pthread_create(&ws[started].thread, NULL, worker_run, &ws[started])) {
      worker_free(&ws[started], NULL);
      break;
    }
  }
  worker_run(&ws[0]);
  for (size_t i = 1; i < started; i++) pthread_join(ws[i].thread, NULL);
  for (size_t i = 0; i < started; i++) worker_free(&ws[i], i ? NULL : shared);
  if (c->err_index != (size_t)-1) {
    *f = c->fail;
    return -1;
  }
  return 0;
}

static void push_identity(lua_State *L, const git_oid *commit, const git_oid *tree,
                          const GitInventory *inv, int complete) {
  char hex[65];
  lua_createtable(L, 0, 5);
  git_hexoid(commit, hex);
  lua_pushstring(L, hex);
  lua_setfield(L, -2, "commit");
  git_hexoid(tree, hex);
  lua_pushstring(L, hex);
  lua_setfield(L, -2, "tree");
  lua_pushboolean(L, complete);
  lua_setfield(L, -2, "complete");
  if (git_inventory_digest(inv, hex)) luaL_error(L, "not enough memory for the inventory digest");
  lua_pushstring(L, hex);
  lua_setfield(L, -2, "inventory_digest");
  lua_createtable(L, (int)inv->n, 0);
  for (size_t i = 0; i < inv->n; i++) {
    const GitEntry *e = &inv->v[i];
    lua_createtable(L, 0, 5);
    lua_pushlstring(L, e->path, e->len);
    lua_setfield(L, -2, "path");
    lua_pushstring(L, git_mode_string(e->mode));
    lua_setfield(L, -2, "mode");
    vkit_hex(e->sha256, 32, hex);
    lua_pushstring(L, hex);
    lua_setfield(L, -2, "sha256");
    lua_pushinteger(L, e->size);
    lua_setfield(L, -2, "size");
    git_hexoid(&e->oid, hex);
    lua_pushstring(L, hex);
    lua_setfield(L, -2, "blob");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  luaL_setmetatable(L, "vkit.json.array");
  lua_setfield(L, -2, "inventory");
}

/* Raises unless every element of the paths array at idx is a string, so
 * that list_paths cannot raise while it holds libgit2 resources. */
static void check_path_strings(lua_State *L, int idx) {
  lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_geti(L, idx, i) != LUA_TSTRING) luaL_error(L, "paths[%d] must be a string", (int)i);
    lua_pop(L, 1);
  }
}

/* The exact file paths of a `paths` capture, each a regular file. */
static int list_paths(lua_State *L, int idx, git_odb *odb, const git_oid *tree, const GitLimits *lim,
                      GitInventory *inv, GitFail *f) {
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  if (lim->max_entries >= 0 && n > lim->max_entries) {
    gitfail_set(f, "too-many-entries", "%lld paths requested, over the limit of %lld", (long long)n,
                (long long)lim->max_entries);
    return -1;
  }
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    size_t len;
    const char *path = lua_tolstring(L, -1, &len);  /* strings, checked by the caller */
    char why[128];
    unsigned mode;
    git_oid oid;
    if (git_check_path(path, len, why, sizeof why)) {
      gitfail_set(f, "invalid-path", "'%.200s': %s", path, why);
      return -1;
    }
    if (git_lookup(odb, tree, path, &mode, &oid, f)) return -1;
    if (mode == 0040000) gitfail_set(f, "not-a-file", "%s is a directory", path);
    else if (mode == 0120000) gitfail_set(f, "symlink", "%s is a symbolic link", path);
    else if (mode == 0160000) gitfail_set(f, "submodule", "%s is a submodule (gitlink)", path);
    if (mode == 0040000 || mode == 0120000 || mode == 0160000) return -1;
    if (git_inventory_add(inv, path, len, mode, &oid)) {
      gitfail_set(f, "ENOMEM", "out of memory");
      return -1;
    }
    lua_pop(L, 1);
  }
  git_inventory_sort(inv);
  for (size_t i = 1; i < inv->n; i++)
    if (!strcmp(inv->v[i - 1].path, inv->v[i].path)) {
      gitfail_set(f, "duplicate-path", "%s is listed twice", inv->v[i].path);
      return -1;
    }
  return 0;
}

/* Creates dest (mode 0700 while it fills); its descriptor, or -1 with f set. */
static int make_dest(const char *dest, GitFail *f) {
  struct stat st;
  if (lstat(dest, &st) == 0) {
    if (S_ISLNK(st.st_mode)) gitfail_set(f, "dest-is-link", "%s is a symbolic link", dest);
    else gitfail_set(f, "dest-exists", "%s already exists", dest);
    return -1;
  }
  if (errno != ENOENT) {
    gitfail_set(f, vkit_errno_name(errno), "%s: %s", dest, strerror(errno));
    return -1;
  }
  if (mkdir(dest, 0700)) {
    int err = errno;
    if (err == EEXIST) gitfail_set(f, "dest-exists", "%s already exists", dest);
    else gitfail_set(f, vkit_errno_name(err), "creating %s: %s", dest, strerror(err));
    return -1;
  }
  int fd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) gitfail_set(f, vkit_errno_name(errno), "opening %s: %s", dest, strerror(errno));
  return fd;
}

int git_repo_capture(lua_State *L) {
  Repo *r = git_checkrepo(L, 1);
  size_t clen;
  const char *hex = luaL_checklstring(L, 2, &clen);
  const char *dest = luaL_checkstring(L, 3);
  int with_paths = !lua_isnoneornil(L, 4);
  if (with_paths) {
    luaL_checktype(L, 4, LUA_TTABLE);
    check_path_strings(L, 4);
  }
  GitLimits lim;
  git_checklimits(L, 5, &lim);
  GitInventory *inv = git_newinventory(L);
  GitFail f;
  git_oid commit, tree;
  if (git_resolve_commit(r->repo, hex, clen, &commit, &tree, &f)) return gitfail_push(L, &f);
  git_odb *odb;
  int err = git_repository_odb(&odb, r->repo);
  if (err) {
    gitfail_git(&f, err, "opening the object database");
    return gitfail_push(L, &f);
  }
  /* Everything is listed and checked before dest exists. */
  int rc = with_paths ? list_paths(L, 4, odb, &tree, &lim, inv, &f)
                      : git_walk(odb, &tree, "", GIT_WALK_FILES_ONLY, &lim, inv, &f);
  git_odb_free(odb);
  if (rc) return gitfail_push(L, &f);
  git_inventory_sort(inv);
  int destfd = make_dest(dest, &f);
  if (destfd < 0) return gitfail_push(L, &f);
  Capture c;
  memset(&c, 0, sizeof c);
  c.inv = inv;
  c.lim = lim;
  c.destfd = destfd;
  c.gitdir = git_repository_path(r->repo);
  atomic_init(&c.next, 0);
  atomic_init(&c.limit, inv->n);
  atomic_init(&c.total, 0);
  c.err_index = (size_t)-1;
  pthread_mutex_init(&c.lock, NULL);
  rc = make_dirs(destfd, inv, &f) ? -1 : run_workers(&c, r->repo, &f);
  pthread_mutex_destroy(&c.lock);
  if (!rc && fchmod(destfd, 0755)) {
    gitfail_set(&f, vkit_errno_name(errno), "%s: %s", dest, strerror(errno));
    rc = -1;
  }
  if (rc) {
    /* only dest and what this capture created beneath it */
    if (!remove_beneath(destfd, 0)) rmdir(dest);
    close(destfd);
    return gitfail_push(L, &f);
  }
  close(destfd);
  push_identity(L, &commit, &tree, inv, !with_paths);
  return 1;
}

/* ---- identities ---------------------------------------------------------- */

static int unhex(const char *s, unsigned char *out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int v = 0;
    for (int k = 0; k < 2; k++) {
      char ch = s[2 * i + k];
      int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    out[i] = (unsigned char)v;
  }
  return 0;
}

/* Reads an inventory array {{path, mode, sha256}, ...} into inv, sorted;
 * -1 with f set (code `code`) when a record is malformed or repeated. */
static int read_inventory(lua_State *L, int idx, GitInventory *inv, const char *code, GitFail *f) {
  if (!lua_istable(L, idx)) {
    gitfail_set(f, code, "the inventory is not an array");
    return -1;
  }
  lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, idx, i);
    if (!lua_istable(L, -1)) {
      gitfail_set(f, code, "inventory record %lld is not a table", (long long)i);
      return -1;
    }
    lua_getfield(L, -1, "path");
    lua_getfield(L, -2, "mode");
    lua_getfield(L, -3, "sha256");
    size_t plen, hlen;
    const char *path = lua_type(L, -3) == LUA_TSTRING ? lua_tolstring(L, -3, &plen) : NULL;
    const char *mode = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    const char *sha = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &hlen) : NULL;
    char why[128];
    unsigned m = mode && !strcmp(mode, "100644") ? 0100644 : mode && !strcmp(mode, "100755") ? 0100755 : 0;
    git_oid zero;
    memset(&zero, 0, sizeof zero);
    if (!path || git_check_path(path, plen, why, sizeof why)) {
      gitfail_set(f, code, "inventory record %lld has an invalid path", (long long)i);
      return -1;
    }
    if (!m) {
      gitfail_set(f, code, "%s: the mode must be \"100644\" or \"100755\"", path);
      return -1;
    }
    if (git_inventory_add(inv, path, plen, m, &zero)) {
      gitfail_set(f, "ENOMEM", "out of memory");
      return -1;
    }
    if (!sha || hlen != 64 || unhex(sha, inv->v[inv->n - 1].sha256, 32)) {
      gitfail_set(f, code, "%s: sha256 must be 64 lowercase hex digits", path);
      return -1;
    }
    lua_pop(L, 4);
  }
  git_inventory_sort(inv);
  for (size_t i = 1; i < inv->n; i++)
    if (!strcmp(inv->v[i - 1].path, inv->v[i].path)) {
      gitfail_set(f, code, "%s appears twice in the inventory", inv->v[i].path);
      return -1;
    }
  return 0;
}

int git_inventory_digest_lua(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  GitInventory *inv = git_newinventory(L);
  GitFail f;
  if (read_inventory(L, 1, inv, "invalid-inventory", &f)) return gitfail_push(L, &f);
  char hex[65];
  if (git_inventory_digest(inv, hex)) return luaL_error(L, "not enough memory for the inventory digest");
  lua_pushstring(L, hex);
  return 1;
}

/* ---- verification --------------------------------------------------------- */

typedef struct {
  char *path;
  mode_t mode;
  nlink_t nlink;
  off_t size;
} DiskEntry;

typedef struct {
  DiskEntry *v;
  size_t n, cap;
} Disk;

static int disk_gc(lua_State *L) {
  Disk *d = lua_touserdata(L, 1);
  for (size_t i = 0; i < d->n; i++) free(d->v[i].path);
  free(d->v);
  d->v = NULL;
  d->n = 0;
  return 0;
}

static int disk_add(Disk *d, const char *path, const struct stat *st) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 64;
    DiskEntry *v = realloc(d->v, cap * sizeof *v);
    if (!v) return ENOMEM;
    d->v = v;
    d->cap = cap;
  }
  if (!(d->v[d->n].path = strdup(path))) return ENOMEM;
  d->v[d->n].mode = st->st_mode;
  d->v[d->n].nlink = st->st_nlink;
  d->v[d->n].size = st->st_size;
  d->n++;
  return 0;
}

/* Lists everything beneath dfd (whose path is buf[0..len)) without
 * following links; a path too long to be captured is listed, not entered. */
static int scan(int dfd, char *buf, size_t len, Disk *d) {
  Names ns;
  int err = read_names(dfd, &ns);
  for (size_t i = 0; !err && i < ns.n; i++) {
    size_t nlen = strlen(ns.v[i]);
    size_t plen = len + (len ? 1 : 0) + nlen;
    struct stat st;
    if (fstatat(dfd, ns.v[i], &st, AT_SYMLINK_NOFOLLOW)) {
      err = errno;
      break;
    }
    if (plen > GIT_MAX_PATH) {
      /* cannot be in any inventory: list a truncated path as extra */
      st.st_mode = S_IFREG | 07777;
      memcpy(buf + len + (len ? 1 : 0), ns.v[i], GIT_MAX_PATH - len - (len ? 1 : 0));
      plen = GIT_MAX_PATH;
    } else {
      memcpy(buf + len + (len ? 1 : 0), ns.v[i], nlen);
    }
    if (len) buf[len] = '/';
    buf[plen] = '\0';
    if ((err = disk_add(d, buf, &st))) break;
    if (S_ISDIR(st.st_mode) && plen < GIT_MAX_PATH) {
      int child = openat(dfd, ns.v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) err = errno;
      else {
        err = scan(child, buf, plen, d);
        close(child);
      }
    }
    buf[len] = '\0';
  }
  names_free(&ns);
  return err;
}

static int cmp_disk(const void *a, const void *b) {
  return strcmp(((const DiskEntry *)a)->path, ((const DiskEntry *)b)->path);
}

static const char *kind_name(mode_t m) {
  if (S_ISREG(m)) return "file";
  if (S_ISDIR(m)) return "directory";
  if (S_ISLNK(m)) return "symbolic link";
  if (S_ISFIFO(m)) return "fifo";
  if (S_ISSOCK(m)) return "socket";
  if (S_ISCHR(m)) return "character device";
  if (S_ISBLK(m)) return "block device";
  return "special file";
}

/* Compares one regular file's bytes with the expected digest. */
static int check_content(int destfd, const DiskEntry *de, const GitEntry *e, GitFail *f) {
  const char *slash = strrchr(e->path, '/');
  int dfd = open_beneath(destfd, e->path, slash ? (size_t)(slash - e->path) : 0);
  int fd = dfd < 0 ? -1
                   : openat(dfd, slash ? slash + 1 : e->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  if (dfd >= 0) close(dfd);
  struct stat st;
  unsigned char md[32];
  if (!err && fstat(fd, &st)) err = errno;
  if (!err && (!S_ISREG(st.st_mode) || st.st_size != de->size)) {
    close(fd);
    gitfail_set(f, "content-mismatch", "%s changed while it was verified", e->path);
    return -1;
  }
  if (!err) err = vkit_sha256_fd(fd, md, NULL);
  if (fd >= 0) close(fd);
  if (err) {
    gitfail_set(f, vkit_errno_name(err), "reading %s: %s", e->path, strerror(err));
    return -1;
  }
  if (memcmp(md, e->sha256, 32)) {
    gitfail_set(f, "content-mismatch", "%s: the bytes differ from the capture", e->path);
    return -1;
  }
  return 0;
}

/* Is `dir` a proper directory prefix of some inventory path?  Inventory
 * paths are sorted, so the first path >= "dir/" decides. */
static int implied_dir(const GitInventory *inv, const char *dir) {
  size_t len = strlen(dir);
  size_t lo = 0, hi = inv->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const char *p = inv->v[mid].path;
    int c = strncmp(p, dir, len);
    if (c == 0) c = (unsigned char)p[len] < (unsigned char)'/' ? -1 : 0;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < inv->n && !strncmp(inv->v[lo].path, dir, len) && inv->v[lo].path[len] == '/';
}

static int find_file(const GitInventory *inv, const char *path) {
  size_t lo = 0, hi = inv->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = strcmp(inv->v[mid].path, path);
    if (!c) return (int)mid;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/* The first difference in path order between the disk and the inventory. */
static int compare(int destfd, const Disk *d, const GitInventory *inv, GitFail *f) {
  size_t i = 0, j = 0;
  /* directories are implied; walk files (j) and disk entries (i) together */
  while (i < d->n || j < inv->n) {
    const DiskEntry *de = i < d->n ? &d->v[i] : NULL;
    const GitEntry *e = j < inv->n ? &inv->v[j] : NULL;
    int c = !de ? 1 : !e ? -1 : strcmp(de->path, e->path);
    if (c > 0) {
      gitfail_set(f, "missing-path", "%s: the captured file is missing", e->path);
      return -1;
    }
    if (c < 0) {
      /* a disk entry that is not an inventory file: only implied dirs pass */
      if (S_ISDIR(de->mode) && implied_dir(inv, de->path)) {
        if ((de->mode & 07777) != 0755) {
          gitfail_set(f, "mode-mismatch", "%s: directory mode %04o, expected 0755", de->path,
                      (unsigned)(de->mode & 07777));
          return -1;
        }
        i++;
        continue;
      }
      if (find_file(inv, de->path) < 0 && !implied_dir(inv, de->path))
        gitfail_set(f, "extra-path", "%s: an extra %s that the capture does not list", de->path,
                    kind_name(de->mode));
      else
        gitfail_set(f, "kind-mismatch", "%s: a %s where a directory was captured", de->path,
                    kind_name(de->mode));
      return -1;
    }
    if (!S_ISREG(de->mode)) {
      gitfail_set(f, "kind-mismatch", "%s: a %s where a file was captured", de->path, kind_name(de->mode));
      return -1;
    }
    unsigned want = e->mode == 0100755 ? 0755 : 0644;
    if ((de->mode & 07777) != want) {
      gitfail_set(f, "mode-mismatch", "%s: mode %04o, expected %04o", de->path, (unsigned)(de->mode & 07777), want);
      return -1;
    }
    if (de->nlink != 1) {
      gitfail_set(f, "hard-link", "%s has %lu links; a captured file has one", de->path, (unsigned long)de->nlink);
      return -1;
    }
    if (check_content(destfd, de, e, f)) return -1;
    i++;
    j++;
  }
  return 0;
}

int git_verify_capture(lua_State *L) {
  const char *dest = luaL_checkstring(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  GitFail f;
  GitInventory *inv = git_newinventory(L);
  int inv_idx = lua_gettop(L);
  lua_getfield(L, 2, "inventory");
  if (read_inventory(L, lua_gettop(L), inv, "invalid-identity", &f)) return gitfail_push(L, &f);
  lua_settop(L, inv_idx);
  lua_getfield(L, 2, "inventory_digest");
  const char *claimed = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  char hex[65];
  if (git_inventory_digest(inv, hex)) return luaL_error(L, "not enough memory for the inventory digest");
  if (!claimed) return vkit_fail(L, "invalid-identity", "the identity has no inventory_digest");
  if (strcmp(claimed, hex))
    return vkit_fail(L, "inventory-digest-mismatch",
                     "the inventory digests to %s, not the identity's %s", hex, claimed);
  struct stat st;
  if (lstat(dest, &st)) return vkit_fail_errno(L, errno, dest);
  if (S_ISLNK(st.st_mode)) return vkit_fail(L, "dest-is-link", "%s is a symbolic link", dest);
  if (!S_ISDIR(st.st_mode)) return vkit_fail(L, "kind-mismatch", "%s is not a directory", dest);
  if ((st.st_mode & 07777) != 0755) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
    return vkit_fail(L, "mode-mismatch", "%s: directory mode %s, expected 0755", dest, mode);
  }
  int destfd = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (destfd < 0) return vkit_fail_errno(L, errno, dest);
  Disk *d = lua_newuserdatauv(L, sizeof *d, 0);
  memset(d, 0, sizeof *d);
  if (luaL_newmetatable(L, "vkit.git.disk")) {
    lua_pushcfunction(L, disk_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  char *buf = malloc(GIT_MAX_PATH + 1);
  int err = buf ? scan(destfd, (buf[0] = '\0', buf), 0, d) : ENOMEM;
  free(buf);
  if (err) {
    close(destfd);
    return vkit_fail_errno(L, err, dest);
  }
  if (d->n > 1) qsort(d->v, d->n, sizeof *d->v, cmp_disk);
  int rc = compare(destfd, d, inv, &f);
  close(destfd);
  if (rc) return gitfail_push(L, &f);
  lua_pushboolean(L, 1);
  return 1;
}
