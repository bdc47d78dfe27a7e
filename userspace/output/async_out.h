/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writing a large output on a thread of its own: the exporter fills one
 * buffer while the other goes to the file, so that formatting and the
 * kernel's copy into the page cache overlap (the Chrome export writes
 * about 94 bytes per event, and on two cores that halves its time).
 */
#ifndef OPTRACE_OUTPUT_ASYNC_OUT_H
#define OPTRACE_OUTPUT_ASYNC_OUT_H

#include <stddef.h>

#define ASYNC_OUT_BUFFER (1u << 20)

struct async_out;

/*
 * Starts writing to fd (which stays the caller's); *buffer is the first
 * buffer to fill, ASYNC_OUT_BUFFER bytes. 0 or -errno.
 */
int async_out_open(struct async_out **out, int fd, char **buffer);

/*
 * Hands over buffer, holding used bytes, to be written; returns the next
 * one to fill, once the write before is done (so that at most one buffer
 * waits). Never NULL.
 */
char *async_out_swap(struct async_out *out, char *buffer, size_t used);

/* Writes what is left, stops the thread, frees. The first error, or 0. */
int async_out_close(struct async_out *out, char *buffer, size_t used);

#endif /* OPTRACE_OUTPUT_ASYNC_OUT_H */
