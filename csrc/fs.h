/*
 * fs.h: what fs.c and fs_dir.c (both vkit.fs) share.
 */
#ifndef VKIT_FS_H
#define VKIT_FS_H

#include "vkit.h"

/* Pushes the lstat record of name in dirfd ({kind, type, mode, size, nlink,
 * mtime, target?}). */
void vkit_fs_push_stat(lua_State *L, const struct stat *st, int dirfd, const char *name);

/* Atomically replaces name in dirfd with bytes (temp file, fsync, renameat,
 * fsync of the directory), never following a link; 0 or errno. */
int vkit_fs_write_atomic_at(int dirfd, const char *name, const char *bytes, size_t len, mode_t mode);

/* vkit.fs.opendir and the directory handle's class. */
int vkit_fs_opendir(lua_State *L);
void vkit_fs_dir_register(lua_State *L);

#endif
