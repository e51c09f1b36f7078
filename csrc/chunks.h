/*
 * chunks.h: a file read in chunks, ahead of its reader, on a second thread
 * that also hashes every chunk (csrc/chunks.c).
 */
#ifndef VKIT_CHUNKS_H
#define VKIT_CHUNKS_H

#include <stddef.h>

#include "vkit.h"

typedef struct VkitChunks VkitChunks;

/* Starts reading fd from its offset to its end in chunks of `chunk` bytes
 * (each read full but the last), on a second thread when `ahead` and one
 * can be had, else in the caller's thread as it asks.  With sha, every
 * chunk is also hashed into it, in file order, while the caller reads it.
 * Each chunk has `room` bytes before it for the tail of the one before
 * (vkit_chunks_next_after).  NULL when out of memory. */
VkitChunks *vkit_chunks_start(int fd, size_t chunk, size_t room, int ahead, VkitSha256 *sha);

/* The next chunk, in file order: 1 and its bytes (valid until the next
 * call), 0 at the end of the file, or -1 and *err on a read error.  The
 * chunk handed out before is given back. */
int vkit_chunks_next(VkitChunks *c, const unsigned char **data, size_t *len, int *err);

/* The same, with the tail_len bytes at tail (the end of the chunk at hand)
 * copied to just before the next chunk's bytes, so that a token the chunk
 * cut reads on whole: *data is the tail followed by the chunk, *last set
 * when it is the file's last (at the end, the tail alone, *len = tail_len).
 * A tail longer than the room is refused: -1, *err = ENOBUFS. */
int vkit_chunks_next_after(VkitChunks *c, const unsigned char *tail, size_t tail_len, const unsigned char **data,
                           size_t *len, int *last, int *err);

/* Stops reading (the thread finishes what it is doing), frees everything;
 * 1 when every byte to the end of the file was read and hashed. */
int vkit_chunks_finish(VkitChunks *c);

#endif
