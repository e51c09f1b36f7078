/*
 * vkit.h: the conventions every vkit C module follows.
 *
 * A module is one file defining `int luaopen_vkit_<name>(lua_State *L)`; the
 * build finds it and main.c preloads it as `vkit.<name>`.  Following
 * liolib/lauxlib:
 *   - misuse by the caller (wrong types, impossible arguments) raises;
 *   - failure of the environment or of the data (missing file, bad bytes)
 *     returns `nil, message, code`, where code is a stable machine name;
 *   - every handle is a userdata with a named metatable, `__gc` and `__close`.
 * C modules never print, never read policies and never decide verdicts.
 */
#ifndef VKIT_H
#define VKIT_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>

#define VKIT_VERSION "0.1.0"

/* Set (from a SIGINT handler) while an interactive chunk is asked to stop
 * (vkit.term's pcall_interruptible, the REPL's Ctrl-C); cleared when the
 * chunk returns.  Primitives that block stop early when it is set: sleep
 * returns, a supervised run is cancelled (its whole tree), so the chunk
 * reaches its next Lua instruction, where the interruption is raised. */
extern volatile sig_atomic_t vkit_interrupt_requested;

/* Push `nil, message, code` and return 3: the failure convention. */
int vkit_fail(lua_State *L, const char *code, const char *fmt, ...)
    ;  /* lua_pushfstring formats: %s %d %I %f %p %c %U %% */

/* `nil, "<what>: <strerror>", "<ERRNO-NAME>"` for a failed system call. */
int vkit_fail_errno(lua_State *L, int err, const char *what);

/* The symbolic name of an errno value ("ENOENT"), or "EUNKNOWN". */
const char *vkit_errno_name(int err);

/* Writes all of bytes, retrying short writes and EINTR; 0 or errno. */
int vkit_write_all(int fd, const void *bytes, size_t len);

/* Lowercase hex of n bytes into out (2n+1 bytes, NUL-terminated). */
void vkit_hex(const unsigned char *bytes, size_t n, char *out);

/* SHA-256 of a file descriptor's remaining bytes, streamed; 0 or errno. */
int vkit_sha256_fd(int fd, unsigned char digest[32], long long *size);

/* SHA-256, OpenSSL's (EVP, csrc/util.c), for every module: the shared
 * modules reach it here, as the executable keeps libcrypto's symbols
 * private.  vkit_sha256: the digest of len bytes; 0, ENOMEM, or EIO (an
 * OpenSSL failure).  The incremental form: vkit_sha256_new (NULL when
 * OpenSSL or memory fails), _update, then _final, which writes the digest
 * and frees the context (0, or EIO when any step failed: the digest is then
 * not to be used); _copy duplicates a context (NULL on failure), _free
 * drops one unfinished. */
typedef struct VkitSha256 VkitSha256;
int vkit_sha256(const void *bytes, size_t len, unsigned char digest[32]);
VkitSha256 *vkit_sha256_new(void);
void vkit_sha256_update(VkitSha256 *ctx, const void *bytes, size_t len);
int vkit_sha256_final(VkitSha256 *ctx, unsigned char digest[32]);
VkitSha256 *vkit_sha256_copy(const VkitSha256 *ctx);
void vkit_sha256_free(VkitSha256 *ctx);

/* The one message for a SHA-256 that could not be computed. */
#define VKIT_SHA256_FAILED "SHA-256 failed (OpenSSL or memory)"

/* OpenSSL's version text ("OpenSSL 3.0.x ..."), for `vkit version`. */
const char *vkit_crypto_version(void);

/* Registers a metatable `name` with methods and __index = methods. */
void vkit_newclass(lua_State *L, const char *name, const luaL_Reg *methods,
                   const luaL_Reg *metamethods);

/* Pushes a zeroed userdata of size bytes whose metatable, `name` (made on
 * first use), has only __gc = gc: memory that an error must not leak. */
void *vkit_newgcdata(lua_State *L, size_t size, const char *name, lua_CFunction gc);

/* t[k] = v for the table on the top of the stack. */
void vkit_setfield_str(lua_State *L, const char *k, const char *v);
void vkit_setfield_int(lua_State *L, const char *k, lua_Integer v);

/* Integer field of table at idx, or def when absent; raises on a bad type. */
lua_Integer vkit_optintfield(lua_State *L, int idx, const char *k, lua_Integer def);

/* Opens path to read a regular file (with nofollow, refusing a symbolic
 * link).  It is opened O_NONBLOCK, so a FIFO cannot hang open(); the
 * flag stays, as it has no effect on a regular file's reads.  Returns the
 * descriptor, with *st filled; or closes what it opened, pushes `nil,
 * message, code` (an errno name, or not-a-regular-file) and returns -1. */
int vkit_open_regular(lua_State *L, const char *path, int nofollow, struct stat *st);

/* The same for name relative to the directory dirfd (AT_FDCWD: the working
 * directory); path is what a failure's message calls the file. */
int vkit_open_regular_at(lua_State *L, int dirfd, const char *name, const char *path, int nofollow, struct stat *st);

/* A whole file's bytes (vkit_read_file), in a userdata whose __gc frees them. */
typedef struct { char *data; size_t len, cap; int mapped; } VkitFileBytes;

/* Reads the regular file at path whole, refusing what vkit.fs.read refuses:
 * an errno name when it cannot be opened, not-a-regular-file for anything
 * but a regular file (or a symbolic link, with nofollow), too-large beyond
 * max bytes (by fstat, or as read if it grows).  The buffer is sized from
 * fstat (from 4 MiB an anonymous mapping advised to use huge pages).
 * Pushes the bytes' userdata and returns it, or pushes `nil, message, code`
 * and returns NULL.  Raises when out of memory. */
VkitFileBytes *vkit_read_file(lua_State *L, const char *path, lua_Integer max, int nofollow);

/* vkit_read_file of name relative to the directory dirfd (see above). */
VkitFileBytes *vkit_read_file_at(lua_State *L, int dirfd, const char *name, const char *path, lua_Integer max,
                                 int nofollow);

/* Frees the bytes now rather than at the userdata's collection. */
void vkit_file_bytes_release(VkitFileBytes *b);

#endif
