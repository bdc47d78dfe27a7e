/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * optrace stat's state in the kernel: per thread, the stack of open
 * operations and the task points running there; per process, the
 * aggregates userspace reads (bpf/aggregates.h); and where an event counts
 * (struct event_place). Included by stat.bpf.c only.
 */
#ifndef OPTRACE_BPF_STAT_STATE_BPF_H
#define OPTRACE_BPF_STAT_STATE_BPF_H

#define MAX_THREADS 16384
#define MAX_OPS 16384
#define RESERVE_ROWS 256 /* see task_stats_reserve */
#define MAX_TASKS 65536
#define RUNS_MAX 4 /* task points running on one thread at once, followed */

_Static_assert((STAT_STACK_MAX & (STAT_STACK_MAX - 1)) == 0, "a power of two, for masks");

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

/*
 * The operations' rows are preallocated: a runtime's first batches make
 * hundreds of new rows at once, and rows allocated as they come then fail
 * for a moment (the kernel refills its per-CPU caches of them from a
 * deferred work item), lost as "map full". Preallocated per-CPU rows cost
 * memory on every CPU, though (360 bytes a row each: 16384 rows on 128 CPUs
 * would be 750 MB): optrace sizes op_stats to what fits in 64 MiB on this
 * machine (session/stat_tables.c, stat_preallocated_op_rows), and the rows
 * past those come in op_stats_overflow, allocated as they come (16384 in
 * all), with a reserve as the tables below have.
 *
 * The other aggregates' rows, rarer, are allocated as they come
 * (BPF_F_NO_PREALLOC): a preallocated map of 16384 per-CPU rows takes about
 * 30 ms of the start-up on 2 CPUs. Those rows fail the same way in a burst
 * on a busy machine: each such table has a small reserve (below) that takes
 * them. The per-thread maps stay preallocated (an LRU map must be).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct op_key);
	__type(value, struct latency);
} op_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, MAX_OPS);
	__type(key, struct op_key);
	__type(value, struct latency);
} op_stats_overflow SEC(".maps");

/* The reserve (below) of the rows past op_stats: op_stats_overflow's are allocated as they come. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RESERVE_ROWS);
	__type(key, struct op_key);
	__type(value, struct latency);
} op_stats_reserve SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, MAX_OPS);
	__type(key, struct task_key);
	__type(value, struct latency);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, MAX_OPS);
	__type(key, struct launch_key);
	__type(value, struct launch_stats);
} launch_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, MAX_OPS);
	__type(key, struct wait_key);
	__type(value, struct latency);
} wait_stats SEC(".maps");

/*
 * Each table of rows allocated as they come has a reserve: a few rows,
 * preallocated, that take a new row when the table cannot (the kernel's
 * per-CPU caches of rows ran dry in a burst, before its deferred refill;
 * or the table is full). Userspace adds a reserve's rows to its table's
 * (session/stat_tables.c). RESERVE_ROWS x CPUs rows: 90 KiB per CPU for
 * a table of latencies.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RESERVE_ROWS);
	__type(key, struct task_key);
	__type(value, struct latency);
} task_stats_reserve SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RESERVE_ROWS);
	__type(key, struct launch_key);
	__type(value, struct launch_stats);
} launch_stats_reserve SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, RESERVE_ROWS);
	__type(key, struct wait_key);
	__type(value, struct latency);
} wait_stats_reserve SEC(".maps");

/* Preallocated as op_stats is, for the same bursts; one copy of each, not per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_OPS);
	__type(key, struct string_key);
	__type(value, struct string_value);
} strings SEC(".maps");

/* Each traced process's name, noted when its first thread is seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* see op_stats */
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct process_info);
} processes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct announced_rank);
} announced_ranks SEC(".maps");

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

/* Set by optrace before the load; 0: no quota. */
const volatile __u64 rows_per_process = STAT_ROWS_PER_PROCESS;
const volatile __u64 strings_per_process = STAT_ROWS_PER_PROCESS;

/*
 * Whether process tgid may have one more row (strings: one more string),
 * counted if so, and its refusal counted if not. A process not noted (the
 * processes map full) has no quota.
 */
static __always_inline bool within_quota(__u32 tgid, bool string)
{
	struct process_info *process = bpf_map_lookup_elem(&processes, &tgid);
	__u64 quota = string ? strings_per_process : rows_per_process;
	__u64 *used;

	if (!process || !quota)
		return true;
	used = string ? &process->strings : &process->rows;
	if (*used >= quota) {
		__sync_fetch_and_add(&process->refused, 1);
		return false;
	}
	__sync_fetch_and_add(used, 1);
	return true;
}

/* Creates key's row in map and looks it up: *created unless another CPU made it at once. */
static __always_inline void *create_in(void *map, const void *key, void *zero, bool *created)
{
	*created = !bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* The value at key in the first of map, more and reserve (NULL: none) that has it. */
static __always_inline void *lookup_in(void *map, void *more, void *reserve, const void *key)
{
	void *value = bpf_map_lookup_elem(map, key);

	if (!value && more)
		value = bpf_map_lookup_elem(more, key);
	if (!value && reserve)
		value = bpf_map_lookup_elem(reserve, key);
	return value;
}

/*
 * Key's row, zeroed from zero_map (a map of one entry), in the first of
 * map, more and reserve (NULL: none) that can take it; *created if this
 * call made it (not another CPU at once).
 */
static __always_inline void *create_in_first(void *map, void *more, void *reserve, const void *key,
					     void *zero_map, bool *created)
{
	__u32 index = 0;
	void *value, *zero = bpf_map_lookup_elem(zero_map, &index);

	*created = false;
	if (!zero)
		return NULL;
	value = create_in(map, key, zero, created);
	if (!value && more)
		value = create_in(more, key, zero, created);
	if (!value && reserve)
		value = create_in(reserve, key, zero, created);
	if (!value)
		count_loss(STAT_LOSS_MAP_FULL);
	return value;
}

/*
 * The value at key in the first of map, more and reserve that has it, or
 * else made there (create_in_first). Without quota: within_quota's caller
 * checks it.
 */
static __always_inline void *lookup_or_init_in(void *map, void *more, void *reserve,
					       const void *key, void *zero_map, bool *created)
{
	void *value = lookup_in(map, more, reserve, key);

	*created = false;
	return value ?: create_in_first(map, more, reserve, key, zero_map, created);
}

/* The value at key, created zeroed from zero (a map of one entry) if new. */
static __always_inline void *lookup_or_init(void *map, const void *key, void *zero_map,
					    bool *created)
{
	return lookup_or_init_in(map, NULL, NULL, key, zero_map, created);
}

/*
 * A row within_quota counted and this call did not make (another CPU made
 * it at once, or no table could take it): not the process's. One attempt:
 * a read's reset of the count meanwhile wins.
 */
static __always_inline void quota_give_back(__u32 tgid)
{
	struct process_info *process = bpf_map_lookup_elem(&processes, &tgid);
	__u64 used;

	if (!process || !rows_per_process)
		return;
	used = process->rows;
	if (used)
		__sync_val_compare_and_swap(&process->rows, used, used - 1);
}

/*
 * A row of one of the four aggregate tables (or of its overflow or
 * reserve: see lookup_or_init_in), whose keys start with the tgid: a new
 * one within its process's quota.
 */
static __always_inline void *lookup_or_init_row(void *map, void *more, void *reserve,
						const void *key, void *zero_map, bool *created)
{
	__u32 tgid = *(const __u32 *)key;
	void *value = lookup_in(map, more, reserve, key);

	*created = false;
	if (value)
		return value;
	if (!within_quota(tgid, false))
		return NULL;
	value = create_in_first(map, more, reserve, key, zero_map, created);
	if (!*created)
		quota_give_back(tgid);
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

	if (!address || !readable || bpf_map_lookup_elem(&strings, &key) ||
	    !within_quota(tgid, true))
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

#endif /* OPTRACE_BPF_STAT_STATE_BPF_H */
