/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the timeline exports (Chrome JSON, Perfetto protobuf) call their
 * tracks, in one place so that they always agree: a process, a thread, a
 * GPU stream. The text is as it comes: writers sanitise it for their format.
 */
#ifndef OPTRACE_OUTPUT_TRACK_NAMES_H
#define OPTRACE_OUTPUT_TRACK_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/*
 * A traced process, as model/names.h describes it: "optrace-demo 9117 rank
 * 0 of 2" (command and rank when known), "process 9117" when the capture
 * recorded no command. Returns buffer.
 */
const char *track_process_name(const struct profile *profile, uint32_t tgid, char *buffer,
			       size_t size);

/*
 * A thread by its own name and tid, "optrace-demo 9118" or "omp-worker 9120"
 * (its comm, as the recorder read it), else "thread 9118". run, the first
 * task point it ran (or NULL), does not name it: a worker runs every variant.
 * Returns buffer.
 */
const char *track_thread_name(const struct profile *profile, uint32_t tgid, uint32_t tid,
			      const struct profile_run *run, char *buffer, size_t size);

/* A process's GPU stream: "GPU 0 stream 7". Returns buffer. */
const char *track_gpu_name(uint32_t device_id, uint32_t stream_id, char *buffer, size_t size);

/* Where a GPU stream's track sorts among its process's: after the threads, by device, stream. */
uint64_t track_gpu_sort_index(uint32_t device_id, uint32_t stream_id);

#endif /* OPTRACE_OUTPUT_TRACK_NAMES_H */
