/*
 * git_tree.c: reading Git trees for vkit.git without trusting them.
 *
 * Trees are parsed here from the raw object bytes (libgit2's parser
 * normalises modes and rejects some hostile shapes with a generic error), so
 * every refusal gets its own name:
 *
 *   empty-component   an entry with an empty name
 *   absolute-path     a name starting with '/'
 *   slash-in-name     a name containing '/'
 *   nul-in-path       a NUL byte (only reachable through caller paths)
 *   backslash         a name containing '\'
 *   dot-component     "."
 *   parent-component  ".."
 *   git-component     ".git" in any case, or a name NTFS or HFS+ takes for it
 *                     (trailing dots or spaces, an alternate data stream
 *                     ".git::$INDEX_ALLOCATION", "git~1", ignorable Unicode
 *                     code points): what Git's verify_path refuses
 *   gitmodules-link   a symbolic link named ".gitmodules" or an alias of it
 *   name-too-long     a component over 255 bytes
 *   path-too-long     a full path over 4096 bytes
 *   path-collision    two entries of one tree with the same name (a file and
 *                     a directory, or two files)
 *   unsupported-mode  a mode other than 100644, 100755, 120000, 160000, 40000
 *   symlink, submodule  (when only regular files are wanted)
 *   too-many-entries, too-large   (caller limits)
 *   corrupt-object, missing-object, io-error   (the object store)
 */
#include "git.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- names and paths ----------------------------------------------------- */

/* ---- names Git itself refuses to check out ---------------------------------
 *
 * Git's verify_path() with core.protectNTFS and core.protectHFS (git's path.c
 * is_ntfs_dotgit / is_ntfs_dot_generic, utf8.c is_hfs_dot_generic) refuses a
 * component that a Windows or macOS filesystem would take for ".git": a
 * capture may be copied to such a host, so vkit refuses what Git refuses,
 * from this one table.  Each entry is a dot-name; `links_only` entries are
 * refused only as symbolic links (".gitmodules", whose link Git would
 * follow); `ntfs_short` is its NTFS 8.3 short-name prefix ("git~1" is
 * ".git"'s, matched exactly, the others as Git's fallback hash forms). */
typedef struct {
  const char *name;        /* without the dot */
  const char *ntfs_short;  /* 6-character prefix of the fallback short name, or NULL */
  int links_only;
  const char *code;
} DotName;

static const DotName DOT_NAMES[] = {
  {"git", NULL, 0, "git-component"},
  {"gitmodules", "gi7eba", 1, "gitmodules-link"},
};

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int iprefix(const char *s, size_t n, const char *lowered) {
  size_t m = strlen(lowered);
  if (n < m) return 0;
  for (size_t i = 0; i < m; i++)
    if (lower((unsigned char)s[i]) != lowered[i]) return 0;
  return 1;
}

/* NTFS ignores trailing dots and spaces, and ':' starts an alternate data
 * stream (".git::$INDEX_ALLOCATION" is the directory itself). */
static int ntfs_rest_is_empty(const char *s, size_t n, size_t from) {
  for (size_t i = from; i < n; i++) {
    if (s[i] == ':') return 1;
    if (s[i] != '.' && s[i] != ' ') return 0;
  }
  return 1;
}

static int is_ntfs_alias(const char *s, size_t n, const DotName *d) {
  size_t len = strlen(d->name);
  if (n > 0 && s[0] == '.' && iprefix(s + 1, n - 1, d->name) && ntfs_rest_is_empty(s, n, len + 1)) return 1;
  if (!d->ntfs_short) {
    /* ".git"'s short name is "git~1" exactly (case-insensitive letters). */
    return iprefix(s, n, d->name) && n >= len + 2 && s[len] == '~' && s[len + 1] == '1' &&
           ntfs_rest_is_empty(s, n, len + 2);
  }
  /* The regular short name: the first six letters, then ~1 .. ~4. */
  if (n >= 8) {
    char six[7];
    memcpy(six, d->name, 6);
    six[6] = '\0';
    if (iprefix(s, n, six) && s[6] == '~' && s[7] >= '1' && s[7] <= '4') return ntfs_rest_is_empty(s, n, 8);
  }
  /* The fallback short name: up to six letters of the hash prefix, then ~N. */
  int saw_tilde = 0;
  size_t i;
  for (i = 0; i < 8; i++) {
    if (i >= n) return 0;
    unsigned char c = (unsigned char)s[i];
    if (saw_tilde) {
      if (c < '0' || c > '9') return 0;
    } else if (c == '~') {
      if (++i >= n || s[i] < '1' || s[i] > '9') return 0;
      saw_tilde = 1;
    } else if (i >= 6 || (c & 0x80) || lower(c) != d->ntfs_short[i]) {
      return 0;
    }
  }
  return ntfs_rest_is_empty(s, n, 8);
}

/* The next code point of s[*i..n) that HFS+ does not ignore; 0 at the end
 * or at malformed UTF-8 (as Git's next_hfs_char, which stops there). */
static unsigned long next_hfs_char(const char *s, size_t n, size_t *i) {
  for (;;) {
    if (*i >= n) return 0;
    unsigned char c = (unsigned char)s[*i];
    unsigned long cp;
    size_t extra;
    if (c < 0x80) cp = c, extra = 0;
    else if ((c & 0xE0) == 0xC0) cp = c & 0x1F, extra = 1;
    else if ((c & 0xF0) == 0xE0) cp = c & 0x0F, extra = 2;
    else if ((c & 0xF8) == 0xF0) cp = c & 0x07, extra = 3;
    else return 0;
    if (extra && *i + extra >= n) return 0;
    for (size_t k = 1; k <= extra; k++) {
      unsigned char cc = (unsigned char)s[*i + k];
      if ((cc & 0xC0) != 0x80) return 0;
      cp = (cp << 6) | (cc & 0x3F);
    }
    *i += extra + 1;
    switch (cp) {
      case 0x200c: case 0x200d: case 0x200e: case 0x200f:             /* zero-width (non-)joiners, marks */
      case 0x202a: case 0x202b: case 0x202c: case 0x202d: case 0x202e: /* embeddings, overrides */
      case 0x206a: case 0x206b: case 0x206c: case 0x206d: case 0x206e: case 0x206f: /* shaping controls */
      case 0xfeff:                                                     /* zero-width no-break space */
        continue;
      default:
        return cp;
    }
  }
}

/* HFS+ ignores those code points and folds case: "\u200c.Git" is ".git". */
static int is_hfs_alias(const char *s, size_t n, const DotName *d) {
  size_t i = 0;
  if (next_hfs_char(s, n, &i) != '.') return 0;
  for (const char *p = d->name; *p; p++) {
    unsigned long c = next_hfs_char(s, n, &i);
    if (c > 127 || (unsigned long)lower((int)c) != (unsigned char)*p) return 0;
  }
  return next_hfs_char(s, n, &i) == 0;
}

/* The code of the table entry the name is an alias of, or NULL; links_only
 * entries count only when `link`. */
static const char *dot_name_alias(const char *s, size_t n, int link) {
  for (size_t k = 0; k < sizeof DOT_NAMES / sizeof DOT_NAMES[0]; k++) {
    const DotName *d = &DOT_NAMES[k];
    if (d->links_only && !link) continue;
    if (is_ntfs_alias(s, n, d) || is_hfs_alias(s, n, d)) return d->code;
  }
  return NULL;
}

const char *git_check_name(const char *s, size_t n) {
  if (n == 0) return "empty-component";
  if (memchr(s, '\0', n)) return "nul-in-path";
  if (s[0] == '/') return "absolute-path";
  if (memchr(s, '/', n)) return "slash-in-name";
  if (memchr(s, '\\', n)) return "backslash";
  if (n == 1 && s[0] == '.') return "dot-component";
  if (n == 2 && s[0] == '.' && s[1] == '.') return "parent-component";
  const char *alias = dot_name_alias(s, n, 0);
  if (alias) return alias;
  if (n > GIT_MAX_NAME) return "name-too-long";
  return NULL;
}

/* What a refused name has, for messages: "<where> has <noun>". */
static const char *name_noun(const char *code) {
  if (!strcmp(code, "empty-component")) return "an empty component";
  if (!strcmp(code, "nul-in-path")) return "a NUL byte";
  if (!strcmp(code, "absolute-path")) return "a leading '/'";
  if (!strcmp(code, "backslash")) return "a backslash";
  if (!strcmp(code, "dot-component")) return "a '.' component";
  if (!strcmp(code, "parent-component")) return "a '..' component";
  if (!strcmp(code, "git-component")) return "a '.git' component (or a name Windows or macOS takes for '.git')";
  if (!strcmp(code, "gitmodules-link")) return "a symbolic link named as '.gitmodules'";
  if (!strcmp(code, "name-too-long")) return "a component over 255 bytes";
  return "a '/' inside a name";
}

const char *git_check_link_name(const char *s, size_t n) {
  return dot_name_alias(s, n, 1);
}

const char *git_check_path(const char *path, size_t len, char *why, size_t whylen) {
  if (len == 0) {
    snprintf(why, whylen, "the path is empty");
    return why;
  }
  if (len > GIT_MAX_PATH) {
    snprintf(why, whylen, "the path is longer than %d bytes", GIT_MAX_PATH);
    return why;
  }
  if (path[0] == '/') {
    snprintf(why, whylen, "the path is absolute");
    return why;
  }
  const char *end = path + len, *p = path;
  for (;;) {
    const char *slash = memchr(p, '/', (size_t)(end - p));
    const char *stop = slash ? slash : end;
    const char *code = git_check_name(p, (size_t)(stop - p));
    if (code) {
      snprintf(why, whylen, "the path has %s", name_noun(code));
      return why;
    }
    if (!slash) return NULL;
    p = slash + 1;
  }
}

const char *git_mode_string(unsigned mode) {
  switch (mode) {
    case 0100644: return "100644";
    case 0100755: return "100755";
    case 0120000: return "120000";
    case 0160000: return "160000";
    case 0040000: return "40000";
    default: return "?";
  }
}

/* Only Git's canonical spellings are accepted: a verifier must not guess
 * what "100664" or "040000" meant. */
static unsigned parse_mode(const char *s, size_t n) {
  static const struct { const char *text; unsigned mode; } known[] = {
      {"100644", 0100644}, {"100755", 0100755}, {"120000", 0120000},
      {"160000", 0160000}, {"40000", 0040000}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strlen(known[i].text) == n && !memcmp(known[i].text, s, n)) return known[i].mode;
  return 0;
}

/* ---- raw tree parsing ---------------------------------------------------- */

typedef struct {
  const char *name;
  size_t namelen;
  const char *mode;
  size_t modelen;
  git_oid oid;
} RawEntry;

/* Next entry of tree bytes: 1, 0 at the end, -1 when malformed. */
static int tree_next(const char **pp, const char *end, RawEntry *e) {
  const char *p = *pp;
  if (p >= end) return 0;
  const char *sp = memchr(p, ' ', (size_t)(end - p));
  if (!sp || sp == p) return -1;
  const char *nul = memchr(sp + 1, '\0', (size_t)(end - sp - 1));
  if (!nul || end - (nul + 1) < GIT_OID_RAWSZ) return -1;
  e->mode = p;
  e->modelen = (size_t)(sp - p);
  e->name = sp + 1;
  e->namelen = (size_t)(nul - sp - 1);
  git_oid_fromraw(&e->oid, (const unsigned char *)nul + 1);
  *pp = nul + 1 + GIT_OID_RAWSZ;
  return 1;
}

/* Reads a tree object (hash-verified by libgit2); NULL with f set. */
static git_odb_object *read_tree(git_odb *odb, const git_oid *oid, const char *path, GitFail *f) {
  git_odb_object *obj;
  char hex[41];
  git_hexoid(oid, hex);
  int err = git_odb_read(&obj, odb, oid);
  if (err) {
    char what[128];
    snprintf(what, sizeof what, "reading tree %s", hex);
    gitfail_git(f, err, what);
    return NULL;
  }
  if (git_odb_object_type(obj) != GIT_OBJECT_TREE) {
    gitfail_set(f, "corrupt-object", "%s%s%s is a %s where a tree was expected", hex,
                *path ? " at " : "", path, git_object_type2string(git_odb_object_type(obj)));
    git_odb_object_free(obj);
    return NULL;
  }
  return obj;
}

static int cmp_names(const void *a, const void *b) {
  const RawEntry *x = a, *y = b;
  size_t n = x->namelen < y->namelen ? x->namelen : y->namelen;
  int c = memcmp(x->name, y->name, n);
  return c ? c : (x->namelen > y->namelen) - (x->namelen < y->namelen);
}

/* Parses a whole tree into a new array (caller frees), refusing malformed
 * bytes and duplicate names.  count may be 0 (an empty tree). */
static RawEntry *parse_tree(git_odb_object *obj, const char *path, size_t *count, GitFail *f) {
  const char *p = git_odb_object_data(obj), *end = p + git_odb_object_size(obj);
  size_t n = 0, cap = 16;
  RawEntry *v = malloc(cap * sizeof *v);
  if (!v) goto oom;
  for (;;) {
    if (n == cap) {
      RawEntry *nv = realloc(v, (cap *= 2) * sizeof *v);
      if (!nv) goto oom;
      v = nv;
    }
    int r = tree_next(&p, end, &v[n]);
    if (r == 0) break;
    if (r < 0) {
      char hex[41];
      git_hexoid(git_odb_object_id(obj), hex);
      gitfail_set(f, "corrupt-object", "tree %s%s%s is malformed", hex, *path ? " at " : "", path);
      free(v);
      return NULL;
    }
    n++;
  }
  /* Duplicate names (two files, or a file and a directory) would make the
   * materialised tree depend on write order. */
  RawEntry *sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (!sorted) goto oom;
  memcpy(sorted, v, n * sizeof *v);
  qsort(sorted, n, sizeof *sorted, cmp_names);
  for (size_t i = 1; i < n; i++) {
    if (!cmp_names(&sorted[i - 1], &sorted[i])) {
      gitfail_set(f, "path-collision", "%s%s%.*s appears twice in one tree", path, *path ? "/" : "",
                  (int)(sorted[i].namelen > 512 ? 512 : sorted[i].namelen), sorted[i].name);
      free(sorted);
      free(v);
      return NULL;
    }
  }
  free(sorted);
  *count = n;
  return v;
oom:
  free(v);
  gitfail_set(f, "ENOMEM", "out of memory parsing a tree");
  return NULL;
}

/* ---- inventories --------------------------------------------------------- */

static int inventory_gc(lua_State *L) {
  GitInventory *inv = luaL_checkudata(L, 1, GIT_INVENTORY_MT);
  for (size_t i = 0; i < inv->n; i++) free(inv->v[i].path);
  free(inv->v);
  inv->v = NULL;
  inv->n = inv->cap = 0;
  return 0;
}

GitInventory *git_newinventory(lua_State *L) {
  return vkit_newgcdata(L, sizeof(GitInventory), GIT_INVENTORY_MT, inventory_gc);
}

int git_inventory_add(GitInventory *inv, const char *path, size_t len, unsigned mode,
                      const git_oid *oid) {
  if (inv->n == inv->cap) {
    size_t cap = inv->cap ? inv->cap * 2 : 64;
    GitEntry *v = realloc(inv->v, cap * sizeof *v);
    if (!v) return -1;
    inv->v = v;
    inv->cap = cap;
  }
  GitEntry *e = &inv->v[inv->n];
  memset(e, 0, sizeof *e);
  if (!(e->path = malloc(len + 1))) return -1;
  memcpy(e->path, path, len);
  e->path[len] = '\0';
  e->len = len;
  e->mode = mode;
  e->oid = *oid;
  e->size = -1;
  inv->n++;
  return 0;
}

static int cmp_entries(const void *a, const void *b) {
  const GitEntry *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->path, y->path, n);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

void git_inventory_sort(GitInventory *inv) {
  if (inv->n > 1) qsort(inv->v, inv->n, sizeof *inv->v, cmp_entries);
}

int git_inventory_digest(const GitInventory *inv, char hex[65]) {
  VkitSha256 *ctx = vkit_sha256_new();
  unsigned char md[32];
  char sha[65];
  if (!ctx) return ENOMEM;
  for (size_t i = 0; i < inv->n; i++) {
    const GitEntry *e = &inv->v[i];
    const char *mode = git_mode_string(e->mode);
    vkit_hex(e->sha256, 32, sha);
    vkit_sha256_update(ctx, e->path, e->len);
    vkit_sha256_update(ctx, "", 1);
    vkit_sha256_update(ctx, mode, strlen(mode));
    vkit_sha256_update(ctx, "", 1);
    vkit_sha256_update(ctx, sha, 64);
    vkit_sha256_update(ctx, "\n", 1);
  }
  int err = vkit_sha256_final(ctx, md);
  if (err) return err;
  vkit_hex(md, 32, hex);
  return 0;
}

void git_checklimits(lua_State *L, int idx, GitLimits *lim) {
  lim->max_entries = lim->max_file_bytes = lim->max_total_bytes = -1;
  if (lua_isnoneornil(L, idx)) return;
  luaL_checktype(L, idx, LUA_TTABLE);
  lim->max_entries = vkit_optintfield(L, idx, "max_entries", -1);
  lim->max_file_bytes = vkit_optintfield(L, idx, "max_file_bytes", -1);
  lim->max_total_bytes = vkit_optintfield(L, idx, "max_total_bytes", -1);
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct {
  git_odb_object *obj;
  RawEntry *entries;
  size_t count, next;
  size_t pathlen;  /* length of this tree's path in the path buffer */
} Frame;

typedef struct {
  Frame *v;
  size_t n, cap;
} Stack;

static void stack_free(Stack *s) {
  for (size_t i = 0; i < s->n; i++) {
    free(s->v[i].entries);
    git_odb_object_free(s->v[i].obj);
  }
  free(s->v);
}

static int stack_push(Stack *s, git_odb *odb, const git_oid *oid, char *path, size_t pathlen,
                      GitFail *f) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    Frame *v = realloc(s->v, cap * sizeof *v);
    if (!v) {
      gitfail_set(f, "ENOMEM", "out of memory walking a tree");
      return -1;
    }
    s->v = v;
    s->cap = cap;
  }
  path[pathlen] = '\0';
  Frame *fr = &s->v[s->n];
  if (!(fr->obj = read_tree(odb, oid, path, f))) return -1;
  if (!(fr->entries = parse_tree(fr->obj, path, &fr->count, f))) {
    git_odb_object_free(fr->obj);
    return -1;
  }
  fr->next = 0;
  fr->pathlen = pathlen;
  s->n++;
  return 0;
}

/* Sizes come from object headers, so listing never inflates a whole blob. */
static int entry_size(git_odb *odb, GitEntry *e, GitFail *f) {
  size_t len;
  git_object_t type;
  int err = git_odb_read_header(&len, &type, odb, &e->oid);
  if (err) {
    char what[GIT_MAX_PATH + 64];
    snprintf(what, sizeof what, "reading the blob of %s", e->path);
    gitfail_git(f, err, what);
    return -1;
  }
  if (type != GIT_OBJECT_BLOB) {
    gitfail_not_blob(f, e->path, &e->oid, type);
    return -1;
  }
  e->size = (long long)len;
  return 0;
}

int git_walk(git_odb *odb, const git_oid *root, const char *prefix, int flags,
             const GitLimits *lim, GitInventory *inv, GitFail *f) {
  char *path = malloc(GIT_MAX_PATH + 1);
  Stack s = {0};
  long long visited = 0, total = 0;
  int rc = -1;
  if (!path) {
    gitfail_set(f, "ENOMEM", "out of memory walking a tree");
    return -1;
  }
  size_t plen = strlen(prefix);
  memcpy(path, prefix, plen);
  if (stack_push(&s, odb, root, path, plen, f)) goto done;
  while (s.n) {
    Frame *fr = &s.v[s.n - 1];
    if (fr->next == fr->count) {
      free(fr->entries);
      git_odb_object_free(fr->obj);
      s.n--;
      continue;
    }
    RawEntry *e = &fr->entries[fr->next++];
    size_t base = fr->pathlen;
    path[base] = '\0';
    const char *at = base ? path : "the root";
    if (lim->max_entries >= 0 && ++visited > lim->max_entries) {
      gitfail_set(f, "too-many-entries", "the tree has more than %lld entries",
                  (long long)lim->max_entries);
      goto done;
    }
    const char *code = git_check_name(e->name, e->namelen);
    if (code) {
      gitfail_set(f, code, "%.300s has an entry with %s: '%.*s'", at, name_noun(code),
                  (int)(e->namelen > 300 ? 300 : e->namelen), e->name);
      goto done;
    }
    size_t len = base + (base ? 1 : 0) + e->namelen;
    if (len > GIT_MAX_PATH) {
      gitfail_set(f, "path-too-long", "a path in %.200s is longer than %d bytes", at, GIT_MAX_PATH);
      goto done;
    }
    if (base) path[base] = '/';
    memcpy(path + base + (base ? 1 : 0), e->name, e->namelen);
    path[len] = '\0';
    unsigned mode = parse_mode(e->mode, e->modelen);
    if (!mode) {
      gitfail_set(f, "unsupported-mode", "%s has the unsupported mode '%.*s'", path,
                  (int)(e->modelen > 16 ? 16 : e->modelen), e->mode);
      goto done;
    }
    if (mode == 0040000) {
      if (stack_push(&s, odb, &e->oid, path, len, f)) goto done;
      continue;
    }
    const char *link_code = mode == 0120000 ? git_check_link_name(e->name, e->namelen) : NULL;
    if (link_code) {
      gitfail_set(f, link_code, "%s is %s", path, name_noun(link_code));
      goto done;
    }
    if ((flags & GIT_WALK_FILES_ONLY) && mode == 0120000) {
      gitfail_set(f, "symlink", "%s is a symbolic link", path);
      goto done;
    }
    if ((flags & GIT_WALK_FILES_ONLY) && mode == 0160000) {
      gitfail_set(f, "submodule", "%s is a submodule (gitlink)", path);
      goto done;
    }
    if (git_inventory_add(inv, path, len, mode, &e->oid)) {
      gitfail_set(f, "ENOMEM", "out of memory listing a tree");
      goto done;
    }
    GitEntry *ge = &inv->v[inv->n - 1];
    if ((flags & GIT_WALK_SIZES) && mode != 0160000) {
      if (entry_size(odb, ge, f)) goto done;
      if (lim->max_file_bytes >= 0 && ge->size > lim->max_file_bytes) {
        gitfail_set(f, "too-large", "%s is %lld bytes, over the limit of %lld", path, ge->size,
                    (long long)lim->max_file_bytes);
        goto done;
      }
      total += ge->size;
      if (lim->max_total_bytes >= 0 && total > lim->max_total_bytes) {
        gitfail_set(f, "too-large", "the files total more than %lld bytes",
                    (long long)lim->max_total_bytes);
        goto done;
      }
    }
  }
  rc = 0;
done:
  stack_free(&s);
  free(path);
  return rc;
}

int git_lookup(git_odb *odb, const git_oid *root, const char *path, unsigned *mode, git_oid *oid,
               GitFail *f) {
  git_oid cur = *root;
  const char *p = path;
  for (;;) {
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    int prefix = (int)(p - path);
    git_odb_object *obj = read_tree(odb, &cur, "", f);
    if (!obj) return -1;
    size_t count;
    RawEntry *entries = parse_tree(obj, "", &count, f);
    if (!entries) {
      git_odb_object_free(obj);
      return -1;
    }
    const RawEntry *hit = NULL;
    for (size_t i = 0; i < count; i++)
      if (entries[i].namelen == n && !memcmp(entries[i].name, p, n)) hit = &entries[i];
    unsigned m = hit ? parse_mode(hit->mode, hit->modelen) : 0;
    if (hit) cur = hit->oid;
    free(entries);
    git_odb_object_free(obj);
    if (!hit) {
      gitfail_set(f, "missing-path", "%.*s does not exist at this commit", prefix + (int)n, path);
      return -1;
    }
    if (!m) {
      gitfail_set(f, "unsupported-mode", "%.*s has an unsupported mode", prefix + (int)n, path);
      return -1;
    }
    if (!slash) {
      *mode = m;
      *oid = cur;
      return 0;
    }
    if (m != 0040000) {
      gitfail_set(f, "missing-path", "%s does not exist at this commit: %.*s is not a directory",
                  path, prefix + (int)n, path);
      return -1;
    }
    p = slash + 1;
  }
}
