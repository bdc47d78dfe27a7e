// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace stat: aggregates liboptrace's probes per process in the kernel.
 * Nothing leaves the kernel per event; userspace reads the maps.
 *
 * Per thread, a stack of open operations (written in place, never deleted
 * per hit) gives each op_end its duration, its self time and its key; the
 * aggregates are per-CPU so that a hit updates them without atomics.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "targets.bpf.h"
#include "usdt_fetch.bpf.h"

#include "bits.bpf.h"
#include "stat.h"

#define MAX_THREADS 16384
#define MAX_OPS 16384
#define MAX_TASKS 65536

_Static_assert((STAT_STACK_MAX & (STAT_STACK_MAX - 1)) == 0, "a power of two, for masks");

struct frame {
	__u64 op;
	__u64 name;
	__u64 start_ns;
	__u64 child_ns;
	__u8 mode;
	__u8 mode_reason;
	__u8 fallback_reason;
};

struct thread_state {
	__u32 depth; /* frames in use */
	__u32 wait_kind;
	__u64 wait_start_ns;
	__u64 task;
	__u64 task_start_ns;
	__u32 task_variant;
	struct frame frames[STAT_STACK_MAX];
};

struct task_info {
	__u64 name;
	__u64 root_name;
};

/*
 * Per thread. Task storage would free it at exit, but costs twice a hash
 * lookup per hit here (measured: docs/bench.md); an LRU map drops threads
 * that are gone when it needs room.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u32);
	__type(value, struct thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, struct string_key); /* the task id in place of an address */
	__type(value, struct task_info);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct op_key);
	__type(value, struct latency);
} op_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct task_key);
	__type(value, struct latency);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct launch_key);
	__type(value, struct launch_stats);
} launch_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct fallback_key);
	__type(value, __u64);
} fallback_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct wait_key);
	__type(value, struct latency);
} wait_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct string_key);
	__type(value, struct string_value);
} strings SEC(".maps");

/* Each traced process's name, noted when its first thread is seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct process_info);
} processes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_LOSS__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

/* Zeroed values too large for the BPF stack, to initialise map entries. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct thread_state);
} zero_thread SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct latency);
} zero_latency SEC(".maps");

static __always_inline void count_loss(__u32 loss)
{
	__u64 *counter = bpf_map_lookup_elem(&losses, &loss);

	if (counter)
		(*counter)++;
}

/* The value at key, created zeroed from zero (a map of one entry) if new. */
static __always_inline void *lookup_or_init(void *map, const void *key, void *zero_map,
					    bool *created)
{
	__u32 index = 0;
	void *value = bpf_map_lookup_elem(map, key), *zero;

	*created = false;
	if (value)
		return value;
	zero = bpf_map_lookup_elem(zero_map, &index);
	if (!zero)
		return NULL;
	/* -EEXIST: another CPU created it first; either way look it up again. */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	*created = true;
	value = bpf_map_lookup_elem(map, key);
	if (!value)
		count_loss(STAT_LOSS_MAP_FULL);
	return value;
}

/* Copies the string at address once per process. */
static __always_inline void copy_string(__u32 tgid, __u64 address)
{
	struct string_key key = { .tgid = tgid, .address = address };
	struct string_value value = {};
	long length;

	if (!address || bpf_map_lookup_elem(&strings, &key))
		return;
	length = bpf_probe_read_user_str(value.text, sizeof(value.text), (void *)address);
	if (length < 0) {
		value.unreadable = 1;
		count_loss(STAT_LOSS_STRING_UNREADABLE);
	} else if (string_was_cut(address, length, sizeof(value.text))) {
		value.truncated = 1;
		count_loss(STAT_LOSS_STRING_TRUNCATED);
	}
	if (bpf_map_update_elem(&strings, &key, &value, BPF_NOEXIST) == -E2BIG)
		count_loss(STAT_LOSS_MAP_FULL);
}

static __always_inline void record_latency(struct latency *stats, __u64 duration_ns, __u64 self_ns)
{
	__u64 slot = duration_ns ? log2_u64(duration_ns) : 0;

	if (slot >= STAT_HIST_SLOTS)
		slot = STAT_HIST_SLOTS - 1;
	stats->hist[slot]++;
	if (!stats->count || duration_ns < stats->min_ns)
		stats->min_ns = duration_ns;
	if (duration_ns > stats->max_ns)
		stats->max_ns = duration_ns;
	stats->count++;
	stats->total_ns += duration_ns;
	stats->self_ns += self_ns;
}

static __always_inline void note_process(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct process_info info = {};

	if (bpf_map_lookup_elem(&processes, &tgid))
		return;
	BPF_CORE_READ_STR_INTO(&info.comm, task, group_leader, comm);
	bpf_map_update_elem(&processes, &tgid, &info, BPF_NOEXIST);
}

static __always_inline struct thread_state *current_thread(bool create)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct thread_state *state;
	bool created;

	if (!create)
		return bpf_map_lookup_elem(&threads, &tid);
	state = lookup_or_init(&threads, &tid, &zero_thread, &created);
	if (!state)
		count_loss(STAT_LOSS_THREADS_FULL);
	if (created)
		note_process();
	return state;
}

/* The open frame of op on this thread: the top one, as operations nest. */
static __always_inline struct frame *top_frame(struct thread_state *state, __u64 op)
{
	__u32 top;

	if (!state || state->depth == 0)
		return NULL;
	top = state->depth - 1;
	if (top >= STAT_STACK_MAX)
		return NULL;
	top &= STAT_STACK_MAX - 1; /* for the verifier */
	return state->frames[top].op == op ? &state->frames[top] : NULL;
}

SEC("usdt")
int USDT_PROBE(op_begin, __u64 op, __u64 parent, __u32 depth, __u64 name)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct thread_state *state;
	struct frame *frame;

	if (!is_target(tgid))
		return 0;
	state = current_thread(true);
	if (!state)
		return 0;
	if (depth >= STAT_STACK_MAX) {
		count_loss(STAT_LOSS_TOO_DEEP);
		return 0;
	}
	/* The probe's depth is the truth: it also covers ops begun untraced. */
	frame = &state->frames[depth & (STAT_STACK_MAX - 1)];
	frame->op = op;
	frame->name = name;
	frame->child_ns = 0;
	frame->mode = STAT_MODE_UNSET;
	frame->mode_reason = 0;
	frame->fallback_reason = 0;
	if (!parent && depth > 0)
		state->frames[(depth - 1) & (STAT_STACK_MAX - 1)].op = 0; /* began untraced */
	state->depth = depth + 1;
	frame->start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int USDT_PROBE(op_mode, __u64 op, int mode, int reason)
{
	struct frame *frame = top_frame(current_thread(false), op);

	if (frame) {
		frame->mode = mode;
		frame->mode_reason = reason;
	}
	return 0;
}

SEC("usdt")
int USDT_PROBE(op_fallback, __u64 op, int reason, __u64 detail)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct frame *frame = top_frame(current_thread(false), op);
	struct fallback_key key = { .tgid = tgid, .reason = reason, .detail = detail };
	__u64 *count, one = 1;
	long err;

	if (!frame)
		return 0;
	frame->fallback_reason = reason;
	key.name = frame->name;
	count = bpf_map_lookup_elem(&fallback_stats, &key);
	if (count) {
		(*count)++;
		return 0;
	}
	err = bpf_map_update_elem(&fallback_stats, &key, &one, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* Another CPU created it meanwhile: count in ours. */
		count = bpf_map_lookup_elem(&fallback_stats, &key);
		if (count)
			(*count)++;
		return 0;
	}
	if (err == -E2BIG)
		count_loss(STAT_LOSS_MAP_FULL);
	copy_string(tgid, detail);
	return 0;
}

SEC("usdt")
int USDT_PROBE(op_end, __u64 op, int status)
{
	__u64 now = bpf_ktime_get_ns(), duration, self;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct thread_state *state = current_thread(false);
	struct frame *frame = top_frame(state, op);
	struct op_key key = { .tgid = tgid };
	struct latency *stats;
	__u32 depth;
	bool created;

	if (!frame) {
		if (state && is_target(tgid))
			count_loss(STAT_LOSS_UNMATCHED);
		return 0;
	}
	depth = state->depth - 1;
	duration = now - frame->start_ns;
	self = duration > frame->child_ns ? duration - frame->child_ns : 0;
	key.depth = depth;
	key.name = frame->name;
	key.mode = frame->mode;
	key.mode_reason = frame->mode_reason;
	key.fallback_reason = frame->fallback_reason;
	key.status = status;
	frame->op = 0;
	state->depth = depth;
	if (depth > 0) {
		struct frame *parent = &state->frames[(depth - 1) & (STAT_STACK_MAX - 1)];

		parent->child_ns += duration;
		if (parent->op)
			key.parent_name = parent->name;
		if (state->frames[0].op)
			key.root_name = state->frames[0].name;
	}

	stats = lookup_or_init(&op_stats, &key, &zero_latency, &created);
	if (!stats)
		return 0;
	record_latency(stats, duration, self);
	if (created) {
		copy_string(tgid, key.name);
		copy_string(tgid, key.parent_name);
		copy_string(tgid, key.root_name);
	}
	return 0;
}

SEC("usdt")
int USDT_PROBE(task_launch, __u64 task, __u64 op, __u64 root_op, __u64 name, __u32 points)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct string_key task_key = { .tgid = tgid, .address = task };
	struct thread_state *state;
	struct task_info info = { .name = name };
	struct launch_key key = { .tgid = tgid, .name = name };
	struct launch_stats *stats, first = { .count = 1, .points = points };
	long err;

	if (!is_target(tgid))
		return 0;
	state = current_thread(false);
	if (state && state->depth > 0 && state->frames[0].op == root_op)
		info.root_name = state->frames[0].name;
	key.root_name = info.root_name;
	if (bpf_map_update_elem(&tasks, &task_key, &info, BPF_ANY))
		count_loss(STAT_LOSS_MAP_FULL);

	stats = bpf_map_lookup_elem(&launch_stats, &key);
	if (stats) {
		stats->count++;
		stats->points += points;
		return 0;
	}
	err = bpf_map_update_elem(&launch_stats, &key, &first, BPF_NOEXIST);
	if (err == -EEXIST) {
		/* Another CPU created it meanwhile (per-CPU values: ours is 0). */
		stats = bpf_map_lookup_elem(&launch_stats, &key);
		if (stats) {
			stats->count++;
			stats->points += points;
		}
		return 0;
	}
	if (err == -E2BIG)
		count_loss(STAT_LOSS_MAP_FULL);
	copy_string(tgid, name);
	copy_string(tgid, info.root_name);
	return 0;
}

SEC("usdt")
int USDT_PROBE(task_begin, __u64 task, __u32 point, int variant)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct thread_state *state;

	if (!is_target(tgid))
		return 0;
	state = current_thread(true);
	if (!state)
		return 0;
	state->task = task;
	state->task_variant = variant;
	state->task_start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int USDT_PROBE(task_end, __u64 task)
{
	__u64 now = bpf_ktime_get_ns(), duration;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct string_key task_id = { .tgid = tgid, .address = task };
	struct thread_state *state = current_thread(false);
	struct task_key key = { .tgid = tgid };
	struct task_info *info;
	struct latency *stats;
	bool created;

	if (!state || state->task != task) {
		if (is_target(tgid))
			count_loss(STAT_LOSS_UNMATCHED);
		return 0;
	}
	duration = now - state->task_start_ns;
	state->task = 0;
	key.variant = state->task_variant;
	info = bpf_map_lookup_elem(&tasks, &task_id);
	if (info) {
		key.name = info->name;
		key.root_name = info->root_name;
	}
	stats = lookup_or_init(&task_stats, &key, &zero_latency, &created);
	if (stats)
		record_latency(stats, duration, duration);
	return 0;
}

SEC("usdt")
int USDT_PROBE(wait_begin, __u64 op, int kind)
{
	struct thread_state *state;

	if (!is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	state = current_thread(true);
	if (!state)
		return 0;
	state->wait_kind = kind;
	state->wait_start_ns = bpf_ktime_get_ns();
	return 0;
}

SEC("usdt")
int USDT_PROBE(wait_end, __u64 op, int kind)
{
	__u64 now = bpf_ktime_get_ns(), duration;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct thread_state *state = current_thread(false);
	struct wait_key key = { .tgid = tgid, .kind = kind };
	struct latency *stats;
	bool created;

	if (!state || !state->wait_start_ns || state->wait_kind != (__u32)kind)
		return 0;
	duration = now - state->wait_start_ns;
	state->wait_start_ns = 0;
	if (state->depth > 0 && state->frames[0].op)
		key.root_name = state->frames[0].name;
	stats = lookup_or_init(&wait_stats, &key, &zero_latency, &created);
	if (stats)
		record_latency(stats, duration, duration);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
