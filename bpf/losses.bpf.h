/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loss counters of a BPF object: a per-CPU array of LOSS_COUNT
 * counters (the including file defines it: its enum's __COUNT), summed by
 * userspace. Every drop is counted where it happens, never inferred.
 */
#ifndef OPTRACE_BPF_LOSSES_BPF_H
#define OPTRACE_BPF_LOSSES_BPF_H

#ifndef LOSS_COUNT
#error "define LOSS_COUNT, the number of loss counters, before including losses.bpf.h"
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LOSS_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

static __always_inline void count_losses(__u32 loss, __u64 count)
{
	__u64 *counter = bpf_map_lookup_elem(&losses, &loss);

	if (counter)
		*counter += count;
}

static __always_inline void count_loss(__u32 loss)
{
	count_losses(loss, 1);
}

#endif /* OPTRACE_BPF_LOSSES_BPF_H */
