/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * optrace stat's GPU correlation (--cuda): a CUDA call's launch, seen on the
 * thread that made it, notes there the frame and task point open; CUPTI's
 * activity records for the same correlation id, fired by the collector's
 * thread, are then counted under them, whichever of the two comes first.
 * Included by stat.bpf.c only, after stat_state.bpf.h.
 */
#ifndef OPTRACE_BPF_STAT_GPU_BPF_H
#define OPTRACE_BPF_STAT_GPU_BPF_H

#include <optrace/gpu.h>

#define MAX_CORRELATIONS 65536 /* CUDA calls whose activities are in flight */

_Static_assert(sizeof(struct gpu_correlation) <= sizeof(struct latency),
	       "zeroed from zero_latency");
_Static_assert(sizeof(struct gpu_totals) <= sizeof(struct latency), "zeroed from zero_latency");

/* LRU: a call whose activities never come (dropped) leaves when room is needed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_CORRELATIONS);
	__type(key, struct gpu_correlation_key);
	__type(value, struct gpu_correlation);
} gpu_correlations SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, MAX_OPS);
	__type(key, struct gpu_key);
	__type(value, struct gpu_totals);
} gpu_stats SEC(".maps");

/* gpu_stats' reserve, as task_stats_reserve is task_stats'. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RESERVE_ROWS);
	__type(key, struct gpu_key);
	__type(value, struct gpu_totals);
} gpu_stats_reserve SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, 4096);
	__type(key, struct gpu_drop_key);
	__type(value, __u64);
} gpu_drops SEC(".maps");

static __always_inline void count_gpu_drops(__u32 tgid, __u32 source, __u64 count)
{
	struct gpu_drop_key key = { .tgid = tgid, .source = source };
	__u64 *counter;
	bool created;

	counter = lookup_or_init(&gpu_drops, &key, &zero_latency, &created);
	if (counter)
		*counter += count;
}

/*
 * Where a launch on the thread counts: the innermost frame open there, a
 * task point running (its variant, and the operation that launched its
 * task) or else an operation; as report's model finds it.
 */
static __always_inline void where_launched(struct event_place *place, struct gpu_key *key)
{
	struct thread_state *state = place->state;
	struct running *run = NULL;
	struct frame *top = NULL;
	__u32 depth, count;

	if (!state)
		return;
	depth = state->depth;
	if (depth > 0 && depth <= STAT_STACK_MAX &&
	    state->frames[(depth - 1) & (STAT_STACK_MAX - 1)].op)
		top = &state->frames[(depth - 1) & (STAT_STACK_MAX - 1)];
	count = state->running_count;
	if (count > 0 && count <= RUNS_MAX)
		run = &state->running[(count - 1) & (RUNS_MAX - 1)];
	if (run && (!top || top->start_ns <= run->start_ns)) {
		struct string_key task_id = { .tgid = place->tgid, .address = run->task };
		struct task_info *info = bpf_map_lookup_elem(&tasks, &task_id);

		key->variant = run->variant;
		if (info) {
			key->root_name = info->root_name;
			key->op_name = info->op_name;
		} else {
			key->root_name = run->root_name;
			key->op_name = run->root_name ? STAT_OP_NOT_SEEN : 0;
		}
		return;
	}
	if (!top)
		return;
	key->root_name = state->frames[0].op ? state->frames[0].name : top->name;
	key->op_name = top->name == key->root_name ? 0 : top->name;
}

static __always_inline void add_gpu(struct event_place *place, struct gpu_key *key,
				    struct gpu_totals *totals)
{
	struct gpu_totals *stats;
	bool created;

	stats = lookup_or_init_in(&gpu_stats, NULL, &gpu_stats_reserve, key, &zero_latency,
				  &created);
	if (!stats) {
		count_gpu_drops(key->tgid, STAT_GPU_DROP_MAP_FULL,
				totals->kernels + totals->copies + totals->memsets);
		return;
	}
	stats->kernels += totals->kernels;
	stats->copies += totals->copies;
	stats->memsets += totals->memsets;
	stats->gpu_ns += totals->gpu_ns;
	stats->bytes += totals->bytes;
	stats->invalid_times += totals->invalid_times;
	if (totals->max_ns > stats->max_ns)
		stats->max_ns = totals->max_ns;
	if (created) {
		copy_string(place->tgid, key->root_name, place->in_process);
		if (key->op_name != STAT_OP_NOT_SEEN)
			copy_string(place->tgid, key->op_name, place->in_process);
	}
}

/*
 * Takes what waits in a launched correlation, whoever comes last: the
 * launch, or an activity that added while the launch took the rest. Each
 * field is exchanged with 0, so that every unit is counted once; both
 * sides set their part (launched, the counts) before they read the other's.
 */
static __always_inline void drain(struct event_place *place, struct gpu_correlation *entry)
{
	struct gpu_totals *stats;
	struct gpu_key key;
	__u64 max_ns;
	bool created;

	if (!(entry->waiting.kernels | entry->waiting.copies | entry->waiting.memsets |
	      entry->waiting.gpu_ns | entry->waiting.bytes | entry->waiting.invalid_times |
	      entry->waiting.max_ns))
		return;
	key = entry->key;
	stats = lookup_or_init_in(&gpu_stats, NULL, &gpu_stats_reserve, &key, &zero_latency,
				  &created);
	if (!stats) {
		count_gpu_drops(key.tgid, STAT_GPU_DROP_MAP_FULL,
				__sync_lock_test_and_set(&entry->waiting.kernels, 0) +
					__sync_lock_test_and_set(&entry->waiting.copies, 0) +
					__sync_lock_test_and_set(&entry->waiting.memsets, 0));
		return;
	}
	stats->kernels += __sync_lock_test_and_set(&entry->waiting.kernels, 0);
	stats->copies += __sync_lock_test_and_set(&entry->waiting.copies, 0);
	stats->memsets += __sync_lock_test_and_set(&entry->waiting.memsets, 0);
	stats->gpu_ns += __sync_lock_test_and_set(&entry->waiting.gpu_ns, 0);
	stats->bytes += __sync_lock_test_and_set(&entry->waiting.bytes, 0);
	stats->invalid_times += __sync_lock_test_and_set(&entry->waiting.invalid_times, 0);
	max_ns = __sync_lock_test_and_set(&entry->waiting.max_ns, 0);
	if (max_ns > stats->max_ns)
		stats->max_ns = max_ns;
	if (created) {
		copy_string(place->tgid, key.root_name, place->in_process);
		if (key.op_name != STAT_OP_NOT_SEEN)
			copy_string(place->tgid, key.op_name, place->in_process);
	}
}

/*
 * A CUDA call that launches, in its thread's order: its correlation id's
 * frame. Made zeroed (pending) and then launched, as when activities came
 * first: the batch walk has no stack left for a whole entry.
 */
static __always_inline void on_gpu_launch(struct event_place *place, __u32 correlation_id,
					  __u32 flags)
{
	struct gpu_correlation_key id = { .tgid = place->tgid, .correlation_id = correlation_id };
	struct gpu_correlation *entry;
	__u32 zero = 0;
	void *zeroed;

	entry = bpf_map_lookup_elem(&gpu_correlations, &id);
	if (!entry) {
		zeroed = bpf_map_lookup_elem(&zero_latency, &zero);
		if (!zeroed)
			return;
		bpf_map_update_elem(&gpu_correlations, &id, zeroed, BPF_NOEXIST);
		entry = bpf_map_lookup_elem(&gpu_correlations, &id);
		if (!entry) {
			count_gpu_drops(place->tgid, STAT_GPU_DROP_MAP_FULL, 1);
			return;
		}
	}
	/* Launched already: the runtime's call, then the driver's, with one id. */
	if (entry->launched)
		return;
	entry->flags = flags;
	entry->key.tgid = place->tgid;
	entry->key.variant = STAT_GPU_NO_VARIANT;
	entry->key.root_name = 0;
	entry->key.op_name = 0;
	where_launched(place, &entry->key);
	__sync_lock_test_and_set(&entry->launched, 1);
	drain(place, entry);
}

/* A fetching atomic (a full barrier on every architecture) that reads *word. */
static __always_inline __u32 read_ordered(__u32 *word)
{
	return __sync_fetch_and_or(word, 0);
}

/* Raises *max to value, against concurrent raises. */
static __always_inline void raise_max(__u64 *max, __u64 value)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		__u64 seen = *max;

		if (value <= seen || __sync_val_compare_and_swap(max, seen, value) == seen)
			return;
	}
}

/* A kernel, copy or memset of process tgid (run in it: the collector's thread). */
static __always_inline void on_gpu_activity(__u32 tgid, struct gpu_totals *one,
					    __u32 correlation_id, __u32 runtime_correlation_id)
{
	struct event_place place = { .tgid = tgid, .in_process = true };
	struct gpu_correlation_key id = { .tgid = tgid, .correlation_id = correlation_id };
	struct gpu_correlation *entry;
	__u32 zero = 0;
	void *zeroed;

	entry = bpf_map_lookup_elem(&gpu_correlations, &id);
	if (!entry && runtime_correlation_id) {
		id.correlation_id = runtime_correlation_id;
		entry = bpf_map_lookup_elem(&gpu_correlations, &id);
		if (!entry)
			id.correlation_id = correlation_id;
	}
	if (!entry) {
		/* Before its launch: it waits in a zeroed (pending) entry. */
		zeroed = bpf_map_lookup_elem(&zero_latency, &zero);
		if (!zeroed)
			return;
		bpf_map_update_elem(&gpu_correlations, &id, zeroed, BPF_NOEXIST);
		entry = bpf_map_lookup_elem(&gpu_correlations, &id);
		if (!entry) {
			count_gpu_drops(tgid, STAT_GPU_DROP_MAP_FULL, 1);
			return;
		}
	}
	if (read_ordered(&entry->launched)) {
		struct gpu_key key = entry->key;
		bool many = entry->flags & OPTRACE_GPU_LAUNCH_MANY;

		add_gpu(&place, &key, one);
		/* Its one activity came: the entry's room goes to calls in flight. */
		if (!many)
			bpf_map_delete_elem(&gpu_correlations, &id);
		return;
	}
	__sync_fetch_and_add(&entry->waiting.gpu_ns, one->gpu_ns);
	__sync_fetch_and_add(&entry->waiting.bytes, one->bytes);
	__sync_fetch_and_add(&entry->waiting.invalid_times, one->invalid_times);
	raise_max(&entry->waiting.max_ns, one->max_ns);
	__sync_fetch_and_add(&entry->waiting.kernels, one->kernels);
	__sync_fetch_and_add(&entry->waiting.copies, one->copies);
	__sync_fetch_and_add(&entry->waiting.memsets, one->memsets);
	if (read_ordered(&entry->launched))
		drain(&place, entry);
}

/* The record at address, of the type its probe fires for; false if unusable. */
static __always_inline bool read_gpu_activity(__u64 address, __u8 type, struct gpu_totals *one,
					      __u32 *correlation_id, __u32 *runtime_correlation_id,
					      __u64 *start_ns)
{
	union {
		struct optrace_gpu_head head;
		struct optrace_gpu_kernel kernel;
		struct optrace_gpu_memcpy memcpy;
		struct optrace_gpu_memset memset;
	} record;
	__u32 size = type == OPTRACE_GPU_REC_KERNEL   ? sizeof(record.kernel)
		     : type == OPTRACE_GPU_REC_MEMCPY ? sizeof(record.memcpy)
						      : sizeof(record.memset);
	__u64 start, end;

	if (bpf_probe_read_user(&record, size, (void *)address) || record.head.type != type ||
	    record.head.version < 1 || record.head.size < size)
		return false;
	*runtime_correlation_id = 0;
	if (type == OPTRACE_GPU_REC_KERNEL) {
		one->kernels = 1;
		start = record.kernel.start_ns;
		end = record.kernel.end_ns;
		*correlation_id = record.kernel.correlation_id;
	} else if (type == OPTRACE_GPU_REC_MEMCPY) {
		one->copies = 1;
		start = record.memcpy.start_ns;
		end = record.memcpy.end_ns;
		one->bytes = record.memcpy.bytes;
		*correlation_id = record.memcpy.correlation_id;
		*runtime_correlation_id = record.memcpy.runtime_correlation_id;
	} else {
		one->memsets = 1;
		start = record.memset.start_ns;
		end = record.memset.end_ns;
		one->bytes = record.memset.bytes;
		*correlation_id = record.memset.correlation_id;
	}
	if ((record.head.flags & OPTRACE_GPU_F_TIME_INVALID) || end < start) {
		one->invalid_times = 1;
	} else {
		one->gpu_ns = one->max_ns = end - start;
		*start_ns = start;
	}
	return true;
}

static __always_inline int gpu_activity_probe(__u64 address, __u8 type)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, correlation_id, runtime_correlation_id;
	struct gpu_totals one = {};
	__u64 start_ns = 0;

	if (!is_target(tgid))
		return 0;
	if (!read_gpu_activity(address, type, &one, &correlation_id, &runtime_correlation_id,
			       &start_ns)) {
		count_gpu_drops(tgid, STAT_GPU_DROP_MALFORMED, 1);
		return 0;
	}
	/* What ran on the device until the stop, as the operations are counted. */
	if (start_ns > stop_ns)
		return 0;
	on_gpu_activity(tgid, &one, correlation_id, runtime_correlation_id);
	return 0;
}

#endif /* OPTRACE_BPF_STAT_GPU_BPF_H */
