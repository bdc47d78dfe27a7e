/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path's buffers that threads still hold: read from the process's
 * memory (process_vm_readv) through liboptrace's registry, optrace_batches.
 * A thread that went idle never hands its last events over by itself; a
 * tracer reads them at each interval and at the stop. The process is
 * untrusted and goes on running: every buffer is checked, and one that moved
 * while it was read is left for the thread to hand over.
 */
#ifndef OPTRACE_TRACE_BATCH_READ_H
#define OPTRACE_TRACE_BATCH_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <optrace/abi.h>

/* process_read() and the rest, which the callers of these readers use too. */
#include "trace/process_read.h"

/*
 * One thread's buffered events; return non-zero to stop reading. address is
 * where they lie in the process: the batch probe's first argument, which
 * names the buffer (a sequence is a buffer's, and a buffer outlives its thread).
 */
typedef int (*batch_read_fn)(void *ctx, pid_t pid, uint32_t tid, uint64_t address,
			     uint64_t sequence, uint32_t count, const struct optrace_event *events);

/*
 * Calls fn for every thread of process pid that holds events. Returns the
 * number of buffers read, or a negative errno: -ESRCH (gone), -ENOENT (no
 * liboptrace, or one without the fast path), -EPROTO (a registry that makes
 * no sense).
 */
int batch_read_process(pid_t pid, batch_read_fn fn, void *ctx);

#endif /* OPTRACE_TRACE_BATCH_READ_H */
