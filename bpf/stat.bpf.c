// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace stat: aggregates liboptrace's probes per process in the kernel.
 * Nothing leaves the kernel per event; userspace reads the maps.
 *
 * Per thread, a stack of open operations (written in place, never deleted
 * per hit) gives each op_end its duration, its self time and its key; the
 * aggregates are per-CPU so that a hit updates them without atomics.
 *
 * Events come one per probe hit (the per-event probes, timed here) or by
 * the batch (the fast path, timed by liboptrace); both go through the same
 * handlers, so the aggregates are the same.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "targets.bpf.h"
#include "usdt_fetch.bpf.h"

#include "batch.bpf.h"
#include "bits.bpf.h"
#include "aggregates.h"
#include <optrace/gpu.h>

#define MAX_THREADS 16384
#define MAX_OPS 16384
#define MAX_TASKS 65536
#define MAX_CORRELATIONS 65536 /* CUDA calls whose activities are in flight */
#define RUNS_MAX 4	       /* task points running on one thread at once, followed */

_Static_assert((STAT_STACK_MAX & (STAT_STACK_MAX - 1)) == 0, "a power of two, for masks");
_Static_assert(sizeof(struct gpu_correlation) <= sizeof(struct latency),
	       "zeroed from zero_latency");
_Static_assert(sizeof(struct gpu_totals) <= sizeof(struct latency), "zeroed from zero_latency");

struct frame {
	__u64 op;
	__u64 name;
	__u64 start_ns;
	__u64 child_ns;
	__u8 mode;
	__u8 mode_reason;
	__u8 fallback_reason;
	__u64 fallback_detail;
};

/* A task point running on a thread: where a GPU launch there counts. */
struct running {
	__u64 task;
	__u64 start_ns;
	__u64 root_name; /* from the fast path's task_begin, if the launch was not seen */
	__u32 point;
	__u32 variant;
};

struct thread_state {
	__u32 depth; /* frames in use */
	__u32 wait_kind;
	__u32 running_count; /* points in running, the newest last */
	__u32 tid;	     /* this thread */
	struct running running[RUNS_MAX];
	__u64 wait_start_ns;
	__u64 next_sequence; /* the fast path: the next event expected, 0 before the first */
	__u64 buffer;	     /* whose sequence that is: a new thread may reuse the tid */
	struct frame frames[STAT_STACK_MAX];
};

struct task_info {
	__u64 name;
	__u64 root_name;
	__u64 op_name; /* the helper that launched it, or 0 */
};

/*
 * A task point running: (process, task, point), not a thread's slot. A
 * runtime's scheduler may begin several points on one thread before it ends
 * them, and a point may end on another thread than the one it began on
 * (user-level threads that migrate, as Realm's).
 */
struct run_key {
	__u32 tgid;
	__u32 point;
	__u64 task;
};

struct run_info {
	__u64 start_ns;
	__u64 name; /* from the fast path's task_begin; 0: ask the tasks map */
	__u64 root_name;
	__u32 variant;
	__u32 tid; /* the thread it began on */
	/*
	 * Not 0: the end came first (at end_ns). On the fast path the thread
	 * that ends a point may hand its batch over before the thread that
	 * began it. The end waits here, counted as unmatched until its begin
	 * comes.
	 */
	__u64 end_ns;
};

/*
 * Per thread, keyed by process and thread (a batch names its thread itself).
 * Task storage would free it at exit, but costs twice a hash lookup per hit
 * here (measured: docs/bench.md); an LRU map drops threads that are gone
 * when it needs room.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_THREADS);
	__type(key, __u64);
	__type(value, struct thread_state);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, struct string_key); /* the task id in place of an address */
	__type(value, struct task_info);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, struct run_key);
	__type(value, struct run_info);
} runs SEC(".maps");

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

/* LRU: a call whose activities never come (dropped) leaves when room is needed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_CORRELATIONS);
	__type(key, struct gpu_correlation_key);
	__type(value, struct gpu_correlation);
} gpu_correlations SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct gpu_key);
	__type(value, struct gpu_totals);
} gpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct gpu_drop_key);
	__type(value, __u64);
} gpu_drops SEC(".maps");

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

/*
 * Copies the string at address once per process. From a batch handed over
 * by another process (inject_batch), the string cannot be read here: optrace
 * reads it from the process itself.
 */
static __always_inline void copy_string(__u32 tgid, __u64 address, bool readable)
{
	struct string_key key = { .tgid = tgid, .address = address };
	struct string_value value = {};
	long length;

	if (!address || !readable || bpf_map_lookup_elem(&strings, &key))
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

static __always_inline void note_process(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct process_info info = {};

	if (bpf_map_lookup_elem(&processes, &tgid))
		return;
	BPF_CORE_READ_STR_INTO(&info.comm, task, group_leader, comm);
	bpf_map_update_elem(&processes, &tgid, &info, BPF_NOEXIST);
}

/* Where events are counted: a process, one of its threads, and whether we run in it. */
struct event_place {
	__u32 tgid;
	bool in_process; /* strings readable, the current task is the process's */
	struct thread_state *state;
};

static __always_inline struct thread_state *thread_of(__u32 tgid, __u32 tid, bool create,
						      bool in_process)
{
	__u64 key = (__u64)tgid << 32 | tid;
	struct thread_state *state;
	bool created;

	if (!create)
		return bpf_map_lookup_elem(&threads, &key);
	state = lookup_or_init(&threads, &key, &zero_thread, &created);
	if (!state)
		count_loss(STAT_LOSS_THREADS_FULL);
	else if (created)
		state->tid = tid;
	if (created && in_process)
		note_process(tgid);
	return state;
}

static __always_inline struct thread_state *current_thread(bool create)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	return thread_of(pid_tgid >> 32, (__u32)pid_tgid, create, true);
}

/* The per-event probes' place: the current thread, created on demand. */
static __always_inline struct event_place current_place(bool create)
{
	struct event_place place = {
		.tgid = bpf_get_current_pid_tgid() >> 32,
		.in_process = true,
	};

	place.state = current_thread(create);
	return place;
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

/* ---- the handlers, one per event kind ---------------------------------------- */

static __always_inline void on_op_begin(struct event_place *place, __u64 now, __u64 op,
					__u64 parent, __u32 depth, __u64 name)
{
	struct thread_state *state = place->state;
	struct frame *frame;

	if (!state)
		return;
	if (depth >= STAT_STACK_MAX) {
		count_loss(STAT_LOSS_TOO_DEEP);
		return;
	}
	/* The probe's depth is the truth: it also covers ops begun untraced. */
	frame = &state->frames[depth & (STAT_STACK_MAX - 1)];
	frame->op = op;
	frame->name = name;
	frame->child_ns = 0;
	frame->mode = STAT_MODE_UNSET;
	frame->mode_reason = 0;
	frame->fallback_reason = 0;
	frame->fallback_detail = 0;
	if (!parent && depth > 0)
		state->frames[(depth - 1) & (STAT_STACK_MAX - 1)].op = 0; /* began untraced */
	state->depth = depth + 1;
	frame->start_ns = now;
}

static __always_inline void on_op_mode(struct event_place *place, __u64 op, int mode, int reason)
{
	struct frame *frame = top_frame(place->state, op);

	if (frame) {
		frame->mode = mode;
		frame->mode_reason = reason;
	}
}

/* Counted with the call, when it ends: see struct fallback_key. */
static __always_inline void on_op_fallback(struct event_place *place, __u64 op, int reason,
					   __u64 detail)
{
	struct frame *frame = top_frame(place->state, op);

	if (frame) {
		frame->fallback_reason = reason;
		frame->fallback_detail = detail;
	}
}

static __always_inline void on_op_end(struct event_place *place, __u64 now, __u64 op, int status)
{
	struct thread_state *state = place->state;
	struct op_key key = { .tgid = place->tgid };
	__u64 duration, self;
	struct latency *stats;
	struct frame *frame;
	__u32 depth;
	bool created;

	if (!state)
		return; /* no thread seen: not a target */
	frame = top_frame(state, op);
	if (!frame) {
		count_loss(STAT_LOSS_UNMATCHED);
		return;
	}
	depth = state->depth - 1;
	duration = now - frame->start_ns;
	self = duration > frame->child_ns ? duration - frame->child_ns : 0;
	key.depth = depth;
	key.name = frame->name;
	key.mode = frame->mode;
	key.mode_reason = frame->mode_reason;
	key.fallback_reason = frame->fallback_reason;
	key.fallback_detail = frame->fallback_detail;
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
		return;
	record_latency(stats, duration, self);
	if (created) {
		copy_string(place->tgid, key.name, place->in_process);
		copy_string(place->tgid, key.parent_name, place->in_process);
		copy_string(place->tgid, key.root_name, place->in_process);
		copy_string(place->tgid, key.fallback_detail, place->in_process);
	}
}

static __always_inline void on_task_launch(struct event_place *place, __u64 task, __u64 op,
					   __u64 root_op, __u64 name, __u32 points)
{
	struct string_key task_key = { .tgid = place->tgid, .address = task };
	struct thread_state *state = place->state;
	struct task_info info = { .name = name };
	struct launch_key key = { .tgid = place->tgid, .name = name };
	struct frame *launcher = top_frame(state, op);
	struct launch_stats *stats;
	bool created;

	if (state && state->depth > 0 && state->frames[0].op == root_op)
		info.root_name = state->frames[0].name;
	/* A helper launched it: the op on top, not the one the user called. */
	if (launcher && launcher != &state->frames[0])
		info.op_name = launcher->name;
	key.root_name = info.root_name;
	key.op_name = info.op_name;
	if (bpf_map_update_elem(&tasks, &task_key, &info, BPF_ANY))
		count_loss(STAT_LOSS_MAP_FULL);

	/* Per-CPU values: a zeroed one, from any map's zero that is as large. */
	stats = lookup_or_init(&launch_stats, &key, &zero_latency, &created);
	if (!stats)
		return;
	stats->count++;
	stats->points += points;
	if (created) {
		copy_string(place->tgid, name, place->in_process);
		copy_string(place->tgid, info.root_name, place->in_process);
		copy_string(place->tgid, info.op_name, place->in_process);
	}
}

/* A point's run, counted under its task's name and the operation the user called. */
static __always_inline void count_run(struct event_place *place, __u64 task, __u64 name,
				      __u64 root_name, __u32 variant, __u64 duration)
{
	struct string_key task_id = { .tgid = place->tgid, .address = task };
	struct task_key key = {
		.tgid = place->tgid, .variant = variant, .name = name, .root_name = root_name
	};
	struct task_info *info;
	struct latency *stats;
	bool created;

	/* The helper only from the launch, if counted (a batch may come first). */
	info = bpf_map_lookup_elem(&tasks, &task_id);
	if (info && !key.name) {
		key.name = info->name;
		key.root_name = info->root_name;
	}
	key.op_name = info && info->name == key.name ? info->op_name : STAT_OP_NOT_SEEN;
	stats = lookup_or_init(&task_stats, &key, &zero_latency, &created);
	if (!stats)
		return;
	record_latency(stats, duration, duration);
	if (created) {
		copy_string(place->tgid, key.name, place->in_process);
		copy_string(place->tgid, key.root_name, place->in_process);
		if (key.op_name != STAT_OP_NOT_SEEN)
			copy_string(place->tgid, key.op_name, place->in_process);
	}
}

/* A point begins running on the thread: GPU launches there are its. */
static __always_inline void running_push(struct thread_state *state, struct run_key *key,
					 struct run_info *run)
{
	struct running *slot;
	__u32 count;

	if (!state)
		return;
	count = state->running_count;
	if (count >= RUNS_MAX) {
		/* The oldest is forgotten: launches find the newer ones. */
		for (int i = 0; i < RUNS_MAX - 1; i++)
			state->running[i] = state->running[i + 1];
		count = RUNS_MAX - 1;
	}
	slot = &state->running[count & (RUNS_MAX - 1)];
	slot->task = key->task;
	slot->start_ns = run->start_ns;
	slot->root_name = run->root_name;
	slot->point = key->point;
	slot->variant = run->variant;
	state->running_count = count + 1;
}

/* The point ended (maybe on another thread): off the stack of the one it began on. */
static __always_inline void running_remove(struct event_place *place, struct run_key *key,
					   __u32 tid)
{
	/* Mostly it ends where it began: no lookup then. */
	struct thread_state *state = place->state && place->state->tid == tid
					     ? place->state
					     : thread_of(key->tgid, tid, false, false);
	__u32 count, at = RUNS_MAX;

	if (!state)
		return;
	count = state->running_count;
	if (count > RUNS_MAX)
		count = RUNS_MAX;
	for (__u32 i = 0; i < RUNS_MAX; i++) {
		if (i < count && state->running[i].task == key->task &&
		    state->running[i].point == key->point)
			at = i;
	}
	if (at == RUNS_MAX)
		return;
	for (__u32 i = 0; i < RUNS_MAX - 1; i++) {
		if (i >= at && i + 1 < count)
			state->running[i] = state->running[i + 1];
	}
	state->running_count = count - 1;
}

/*
 * The begin and the end of a point may be counted at once on two CPUs (two
 * threads' batches): whoever inserts first waits for the other, who finds
 * it on -EEXIST and counts the run.
 */
static __always_inline void on_task_begin(struct event_place *place, __u64 now, __u64 task,
					  __u32 point, int variant, __u64 name, __u64 root_name)
{
	struct run_key key = { .tgid = place->tgid, .point = point, .task = task };
	struct run_info run = {
		.start_ns = now,
		.name = name,
		.root_name = root_name,
		.variant = variant,
		.tid = place->state ? place->state->tid : 0,
	};
	struct run_info *ended;
	long err;

	err = bpf_map_update_elem(&runs, &key, &run, BPF_NOEXIST);
	if (!err) {
		running_push(place->state, &key, &run);
		return;
	}
	if (err != -EEXIST) {
		count_loss(STAT_LOSS_MAP_FULL);
		return;
	}
	ended = bpf_map_lookup_elem(&runs, &key);
	if (ended && ended->end_ns) {
		__u64 end_ns = ended->end_ns;

		bpf_map_delete_elem(&runs, &key);
		count_losses(STAT_LOSS_UNMATCHED, (__u64)-1); /* matched after all */
		count_run(place, task, name, root_name, variant, end_ns > now ? end_ns - now : 0);
		return;
	}
	/* Begun twice: the later wins, off the stack of the thread of the first. */
	if (ended)
		running_remove(place, &key, ended->tid);
	bpf_map_update_elem(&runs, &key, &run, BPF_ANY);
	running_push(place->state, &key, &run);
}

/* Counts the run begun at key, if its begin came; true if it did. */
static __always_inline bool end_run(struct event_place *place, struct run_key *key, __u64 now)
{
	struct run_info *run = bpf_map_lookup_elem(&runs, key);
	__u64 name, root_name, duration;
	__u32 variant, tid;

	if (!run || run->end_ns)
		return false;
	duration = now > run->start_ns ? now - run->start_ns : 0;
	name = run->name;
	root_name = run->root_name;
	variant = run->variant;
	tid = run->tid;
	bpf_map_delete_elem(&runs, key);
	running_remove(place, key, tid);
	count_run(place, key->task, name, root_name, variant, duration);
	return true;
}

static __always_inline void on_task_end(struct event_place *place, __u64 now, __u64 task,
					__u32 point)
{
	struct run_key key = { .tgid = place->tgid, .point = point, .task = task };
	struct run_info waiting = { .end_ns = now ?: 1 };
	long err;

	if (end_run(place, &key, now))
		return;
	/* Its begin may still come (another thread's batch), or never. */
	err = bpf_map_update_elem(&runs, &key, &waiting, BPF_NOEXIST);
	if (err == -EEXIST && end_run(place, &key, now))
		return;
	if (err && err != -EEXIST)
		count_loss(STAT_LOSS_MAP_FULL);
	count_loss(STAT_LOSS_UNMATCHED);
}

static __always_inline void on_wait_begin(struct event_place *place, __u64 now, int kind)
{
	struct thread_state *state = place->state;

	if (!state)
		return;
	state->wait_kind = kind;
	state->wait_start_ns = now;
}

static __always_inline void on_wait_end(struct event_place *place, __u64 now, int kind)
{
	struct thread_state *state = place->state;
	struct wait_key key = { .tgid = place->tgid, .kind = kind };
	struct latency *stats;
	__u64 duration;
	bool created;

	if (!state || !state->wait_start_ns || state->wait_kind != (__u32)kind)
		return;
	duration = now - state->wait_start_ns;
	state->wait_start_ns = 0;
	if (state->depth > 0 && state->frames[0].op)
		key.root_name = state->frames[0].name;
	if (state->depth > 1 && state->depth <= STAT_STACK_MAX)
		key.op_name = state->frames[(state->depth - 1) & (STAT_STACK_MAX - 1)].name;
	stats = lookup_or_init(&wait_stats, &key, &zero_latency, &created);
	if (!stats)
		return;
	record_latency(stats, duration, duration);
	if (created) {
		copy_string(place->tgid, key.root_name, place->in_process);
		copy_string(place->tgid, key.op_name, place->in_process);
	}
}

/* ---- GPU activity (--cuda) ---------------------------------------------------- */

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

	stats = lookup_or_init(&gpu_stats, key, &zero_latency, &created);
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
	stats = lookup_or_init(&gpu_stats, &key, &zero_latency, &created);
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

/* A kernel, copy or memset of process tgid (run in it: the collector's thread). */
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

/* ---- the per-event probes ---------------------------------------------------- */

SEC("usdt")
int USDT_PROBE(op_begin, __u64 op, __u64 parent, __u32 depth, __u64 name)
{
	__u64 now = bpf_ktime_get_ns();
	struct event_place place;

	if (!is_target(bpf_get_current_pid_tgid() >> 32) || !in_window(now))
		return 0;
	place = current_place(true);
	on_op_begin(&place, now, op, parent, depth, name);
	return 0;
}

SEC("usdt")
int USDT_PROBE(op_mode, __u64 op, int mode, int reason)
{
	struct event_place place = current_place(false);

	on_op_mode(&place, op, mode, reason);
	return 0;
}

SEC("usdt")
int USDT_PROBE(op_fallback, __u64 op, int reason, __u64 detail)
{
	struct event_place place = current_place(false);

	on_op_fallback(&place, op, reason, detail);
	return 0;
}

SEC("usdt")
int USDT_PROBE(op_end, __u64 op, int status)
{
	__u64 now = bpf_ktime_get_ns();
	struct event_place place = current_place(false);

	if (in_window(now))
		on_op_end(&place, now, op, status);
	return 0;
}

SEC("usdt")
int USDT_PROBE(task_launch, __u64 task, __u64 op, __u64 root_op, __u64 name, __u32 points)
{
	struct event_place place;

	if (!is_target(bpf_get_current_pid_tgid() >> 32) || !in_window(bpf_ktime_get_ns()))
		return 0;
	place = current_place(false);
	on_task_launch(&place, task, op, root_op, name, points);
	return 0;
}

SEC("usdt")
int USDT_PROBE(task_begin, __u64 task, __u32 point, int variant)
{
	__u64 now = bpf_ktime_get_ns();
	struct event_place place;

	if (!is_target(bpf_get_current_pid_tgid() >> 32) || !in_window(now))
		return 0;
	place = current_place(true);
	on_task_begin(&place, now, task, point, variant, 0, 0);
	return 0;
}

SEC("usdt")
int USDT_PROBE(task_end, __u64 task, __u32 point)
{
	__u64 now = bpf_ktime_get_ns();
	struct event_place place;

	if (!is_target(bpf_get_current_pid_tgid() >> 32) || !in_window(now))
		return 0;
	place = current_place(false);
	on_task_end(&place, now, task, point);
	return 0;
}

SEC("usdt")
int USDT_PROBE(wait_begin, __u64 op, int kind)
{
	__u64 now = bpf_ktime_get_ns();
	struct event_place place;

	if (!is_target(bpf_get_current_pid_tgid() >> 32) || !in_window(now))
		return 0;
	place = current_place(true);
	on_wait_begin(&place, now, kind);
	return 0;
}

SEC("usdt")
int USDT_PROBE(wait_end, __u64 op, int kind)
{
	__u64 now = bpf_ktime_get_ns();
	struct event_place place = current_place(false);

	if (in_window(now))
		on_wait_end(&place, now, kind);
	return 0;
}

/* ---- the optrace_gpu probes (loaded with --cuda) -------------------------------- */

SEC("usdt")
int USDT_PROBE(gpu_kernel, __u64 record)
{
	return gpu_activity_probe(record, OPTRACE_GPU_REC_KERNEL);
}

SEC("usdt")
int USDT_PROBE(gpu_memcpy, __u64 record)
{
	return gpu_activity_probe(record, OPTRACE_GPU_REC_MEMCPY);
}

SEC("usdt")
int USDT_PROBE(gpu_memset, __u64 record)
{
	return gpu_activity_probe(record, OPTRACE_GPU_REC_MEMSET);
}

/* The per-event path's launches (the fast path has them in its batches). */
SEC("usdt")
int USDT_PROBE(gpu_launch, __u32 correlation_id, __u32 api_kind, __u32 flags)
{
	struct event_place place;

	(void)api_kind;
	if (!is_target(bpf_get_current_pid_tgid() >> 32) || !in_window(bpf_ktime_get_ns()))
		return 0;
	place = current_place(true);
	on_gpu_launch(&place, correlation_id, flags);
	return 0;
}

/* count [, source]: a library from before the source counts CUPTI's buffers. */
SEC("usdt")
int gpu_dropped(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 args[2] = {};

	if (!is_target(tgid) || (usdt_fetch(ctx, args, 2) && usdt_fetch(ctx, args, 1)))
		return 0;
	count_gpu_drops(tgid,
			args[1] < OPTRACE_GPU_DROP__COUNT ? (__u32)args[1]
							  : STAT_GPU_DROP_ACTIVITY_BUFFER,
			args[0]);
	return 0;
}

/* ---- the fast path ------------------------------------------------------------ */

/*
 * A batch is copied at once into one of this CPU's scratch spaces, and
 * counted from there. A program preempted on this CPU may hold one: busy
 * says so, and the batch takes the next. With every one taken (programs
 * nested SCRATCH_LEVELS deep on one CPU), its events are counted lost.
 */
#define SCRATCH_LEVELS 4
struct scratch {
	__u32 busy;
	__u32 pad;
	struct optrace_event events[OPTRACE_BATCH_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct batch_walk {
	struct event_place place;
	struct scratch *copy; /* the events copied */
	__u32 first;	      /* index of the first event to count in copy */
};

static int count_event(__u32 index, struct batch_walk *walk)
{
	struct event_place *place = &walk->place;
	struct optrace_event *event;
	__u32 at = index + walk->first;

	/* Read in place: the walk has no stack to spare for a copy. */
	if (!walk->copy || at >= OPTRACE_BATCH_EVENTS)
		return 1;
	event = &walk->copy->events[at];
	if (!in_window(event->time_ns))
		return 0;
	switch (event->kind) {
	case OPTRACE_EVENT_OP_BEGIN:
		on_op_begin(place, event->time_ns, event->op_begin.op, event->op_begin.parent,
			    event->op_begin.depth, event->op_begin.name);
		break;
	case OPTRACE_EVENT_OP_END:
		on_op_end(place, event->time_ns, event->op_end.op, event->op_end.status);
		break;
	case OPTRACE_EVENT_OP_MODE:
		on_op_mode(place, event->op_mode.op, event->op_mode.mode, event->op_mode.reason);
		break;
	case OPTRACE_EVENT_OP_FALLBACK:
		on_op_fallback(place, event->op_fallback.op, event->op_fallback.reason,
			       event->op_fallback.detail);
		break;
	case OPTRACE_EVENT_TASK_LAUNCH:
		on_task_launch(place, event->task_launch.task, event->task_launch.op,
			       event->task_launch.root_op, event->task_launch.name,
			       event->task_launch.points);
		break;
	case OPTRACE_EVENT_TASK_BEGIN:
		on_task_begin(place, event->time_ns, event->task_begin.task,
			      event->task_begin.point, event->task_begin.variant,
			      event->task_begin.name, event->task_begin.root_name);
		break;
	case OPTRACE_EVENT_TASK_END:
		on_task_end(place, event->time_ns, event->task_end.task, event->task_end.point);
		break;
	case OPTRACE_EVENT_WAIT_BEGIN:
		on_wait_begin(place, event->time_ns, event->wait_begin.wait_kind);
		break;
	case OPTRACE_EVENT_WAIT_END:
		on_wait_end(place, event->time_ns, event->wait_end.wait_kind);
		break;
	case OPTRACE_EVENT_GPU_LAUNCH:
		on_gpu_launch(place, (__u32)event->gpu_launch.correlation_id,
			      event->gpu_launch.flags);
		break;
	default:
		count_loss(STAT_LOSS_BATCH_BAD); /* a kind from a newer library, or garbage */
		break;
	}
	return 0;
}

/*
 * Counts a batch of thread tid of process tgid: count events at address
 * events, the first with the thread's sequence number sequence. Events the
 * thread's state already counted (a buffer handed over twice) are skipped;
 * a jump forward is counted as missing.
 */
static __always_inline int count_batch(__u32 tgid, __u32 tid, __u64 buffer, __u64 events,
				       __u32 count, __u64 sequence, bool in_process)
{
	struct batch_walk walk = {
		.place = { .tgid = tgid, .in_process = in_process },
	};
	struct thread_state *state;
	__u64 skip = 0, size;

	if (count == 0 || count > OPTRACE_BATCH_EVENTS) {
		count_losses(STAT_LOSS_BATCH_BAD, count ? count : 1);
		return 0;
	}
	state = thread_of(tgid, tid, true, in_process);
	if (!state)
		return 0;
	if (state->buffer != buffer) {
		state->buffer = buffer;
		state->next_sequence = 0;
	}
	/*
	 * Two CPUs may count the same thread at once (its own hand-over, and
	 * optrace's read of it while idle, or the exit-time hand-over): the
	 * one that moves next_sequence counts the events it moved it past.
	 */
	for (int attempt = 0;; attempt++) {
		__u64 expected = state->next_sequence;

		skip = 0;
		if (expected > sequence) {
			skip = expected - sequence;
			if (skip >= count)
				return 0;
		}
		if (__sync_val_compare_and_swap(&state->next_sequence, expected,
						sequence + count) == expected) {
			if (expected && sequence > expected)
				count_losses(STAT_LOSS_BATCH_GAP, sequence - expected);
			break;
		}
		if (attempt == 2)
			return 0; /* counted by the others meanwhile */
	}
	walk.place.state = state;
#pragma unroll
	for (__u32 level = 0; level < SCRATCH_LEVELS; level++) {
		__u32 key = level;

		walk.copy = bpf_map_lookup_elem(&scratch, &key);
		if (!walk.copy || __sync_val_compare_and_swap(&walk.copy->busy, 0, 1))
			continue;
		size = (__u64)count * sizeof(struct optrace_event);
		/* From the process, or (inject_batch) from optrace's own memory. */
		if (size > sizeof(walk.copy->events) ||
		    bpf_probe_read_user(walk.copy->events, size, (void *)events)) {
			walk.copy->busy = 0;
			count_losses(STAT_LOSS_BATCH_BAD, count);
			return 0;
		}
		walk.first = (__u32)skip;
		bpf_loop(count - (__u32)skip, count_event, &walk, 0);
		walk.copy->busy = 0;
		return 0;
	}
	count_losses(STAT_LOSS_BATCH_BAD, count - (__u32)skip);
	return 0;
}

SEC("usdt")
int USDT_PROBE(batch, __u64 events, __u32 count, __u32 tid, __u64 sequence)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!is_target(tgid))
		return 0;
	return count_batch(tgid, tid, events, events, count, sequence, true);
}

/*
 * A buffer optrace read from an idle thread at the stop (it was never handed
 * over): run by optrace through BPF_PROG_TEST_RUN, its events in optrace's
 * own memory; the process's strings are read by optrace.
 */
SEC("syscall")
int inject_batch(struct stat_injected_batch *batch)
{
	return count_batch(batch->tgid, batch->tid, batch->buffer, batch->events, batch->count,
			   batch->sequence, false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
