/*
 * fs.h: the files of vkit.fs, and what each offers the one above it.
 *
 *   fs.c         the module: path functions; registers the directory class
 *   fs_dir.c     directory handles (opendir, dir:*)
 *   fs_common.c  what both share: the stat record, the atomic write
 *
 * Calls go down only (scripts/c-call-graph.lua): fs.c -> fs_dir.c ->
 * fs_common.c, and fs.c -> fs_common.c.
 */
#ifndef VKIT_FS_H
#define VKIT_FS_H

#include "vkit.h"

/* ---- fs_common.c ---- */

/* Pushes the lstat record of name in dirfd ({kind, type, mode, size, nlink,
 * mtime, target?}). */
void vkit_fs_push_stat(lua_State *L, const struct stat *st, int dirfd, const char *name);

/* Atomically replaces name in dirfd with bytes (temp file, fsync, renameat,
 * fsync of the directory), never following a link; 0 or errno. */
int vkit_fs_write_atomic_at(int dirfd, const char *name, const char *bytes, size_t len, mode_t mode);

/* ---- fs_dir.c ---- */

/* vkit.fs.opendir and the directory handle's class. */
int vkit_fs_opendir(lua_State *L);
void vkit_fs_dir_register(lua_State *L);

#endif
