/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fast path seen from BPF: liboptrace's batch probe hands over a thread's
 * buffered events (include/optrace/abi.h). The process is untrusted: a batch
 * is read with bounds, and every event it claims but cannot give is counted.
 */
#ifndef OPTRACE_BPF_BATCH_BPF_H
#define OPTRACE_BPF_BATCH_BPF_H

typedef __u8 uint8_t;
typedef __u16 uint16_t;
typedef __u32 uint32_t;
typedef __u64 uint64_t;
typedef __s32 int32_t;

#include <optrace/abi.h>

/*
 * Set by optrace: events stamped before start_ns (left in a buffer by an
 * earlier tracer) or after stop_ns (the stop is one instant) are not counted.
 */
__u64 start_ns = 0;
__u64 stop_ns = ~0ull;

static __always_inline bool in_window(__u64 time_ns)
{
	return time_ns >= start_ns && time_ns <= stop_ns;
}

/*
 * Event index of a batch at address events, in user memory: the process's
 * (the batch probe) or optrace's own (stat's inject_batch).
 */
static __always_inline int read_event(struct optrace_event *event, __u64 events, __u32 index)
{
	return bpf_probe_read_user(event, sizeof(*event),
				   (void *)(events + (__u64)index * sizeof(*event)));
}

#endif /* OPTRACE_BPF_BATCH_BPF_H */
