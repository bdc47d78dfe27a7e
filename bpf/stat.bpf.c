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

#define LOSS_COUNT STAT_LOSS__COUNT
#include "losses.bpf.h"
#include "stat_state.bpf.h"
#include "stat_handlers.bpf.h"
#include "stat_gpu.bpf.h"

/* ---- the per-event probes ---------------------------------------------------- */

/* On both paths: one hit per process, which announces its rank. */
SEC("usdt")
int USDT_PROBE(rt_init, int abi_version, int rank, int rank_count)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct announced_rank announced = { .rank = rank, .rank_count = rank_count };

	(void)abi_version;
	if (is_target(tgid) && rank_count > 0)
		bpf_map_update_elem(&announced_ranks, &tgid, &announced, BPF_ANY);
	return 0;
}

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
	/*
	 * The walk's own state, here rather than on its stack: the walk and
	 * the global functions it calls share 512 bytes of stack.
	 */
	struct ended_op ended;	/* the operation an op_end just took off the stack */
	struct op_key last_key; /* the walk's last operation row: see struct batch_walk */
	struct optrace_event events[OPTRACE_BATCH_EVENTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_LEVELS);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline bool same_op_key(const struct op_key *a, const struct op_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	_Static_assert(sizeof(struct op_key) % 8 == 0, "compared as words");
	for (unsigned int i = 0; i < sizeof(struct op_key) / 8; i++) {
		if (x[i] != y[i])
			return false;
	}
	return true;
}

/*
 * last_stats: the walk's last operation row (its key in copy->last_key),
 * NULL until there is one. A loop of one operation ends it with the same
 * key again and again, and comparing 56 bytes costs less than hashing them.
 * Per-CPU values stay put for the program's run.
 */
struct batch_walk {
	struct event_place place;
	struct latency *last_stats;
	struct scratch *copy; /* the events copied */
	__u32 first;	      /* index of the first event to count in copy */
};

/*
 * The walk's work is in global functions: the verifier checks each of them
 * once, where the handlers inlined into the walk's loop were checked again
 * for every path through it and every round of the loop (719k instructions
 * and 2 to 3 s a program, before: docs/bench.md, "Start-up"). A global
 * function sees the memory it is given as plain bytes, and the caller's as
 * overwritten: the thread's state comes as an argument of its own, and no
 * memory that holds a pointer is passed.
 */
__noinline int count_batch_event(struct thread_state *state, __u32 tgid, int in_process,
				 const struct optrace_event *event)
{
	struct event_place place = { .tgid = tgid, .in_process = in_process, .state = state };

	if (!state || !event)
		return 0;
	switch (event->kind) {
	case OPTRACE_EVENT_OP_BEGIN:
		on_op_begin(&place, event->time_ns, event->op_begin.op, event->op_begin.parent,
			    event->op_begin.depth, event->op_begin.name);
		break;
	case OPTRACE_EVENT_OP_MODE:
		on_op_mode(&place, event->op_mode.op, event->op_mode.mode, event->op_mode.reason);
		break;
	case OPTRACE_EVENT_OP_FALLBACK:
		on_op_fallback(&place, event->op_fallback.op, event->op_fallback.reason,
			       event->op_fallback.detail);
		break;
	case OPTRACE_EVENT_TASK_LAUNCH:
		on_task_launch(&place, event->task_launch.task, event->task_launch.op,
			       event->task_launch.root_op, event->task_launch.name,
			       event->task_launch.points);
		break;
	case OPTRACE_EVENT_TASK_BEGIN:
		on_task_begin(&place, event->time_ns, event->task_begin.task,
			      event->task_begin.point, event->task_begin.variant,
			      event->task_begin.name, event->task_begin.root_name);
		break;
	case OPTRACE_EVENT_TASK_END:
		on_task_end(&place, event->time_ns, event->task_end.task, event->task_end.point);
		break;
	case OPTRACE_EVENT_WAIT_BEGIN:
		on_wait_begin(&place, event->time_ns, event->wait_begin.wait_kind);
		break;
	case OPTRACE_EVENT_WAIT_END:
		on_wait_end(&place, event->time_ns, event->wait_end.wait_kind);
		break;
	case OPTRACE_EVENT_GPU_LAUNCH:
		on_gpu_launch(&place, (__u32)event->gpu_launch.correlation_id,
			      event->gpu_launch.flags);
		break;
	default:
		count_loss(STAT_LOSS_BATCH_BAD); /* a kind from a newer library, or garbage */
		break;
	}
	return 0;
}

/* An op_end's pop, into ended: 1 if its frame was on top. */
__noinline int pop_batch_op(struct thread_state *state, __u32 tgid,
			    const struct optrace_event *event, struct ended_op *ended)
{
	struct event_place place = { .tgid = tgid, .state = state };

	if (!state || !event || !ended)
		return 0;
	return pop_op(&place, event->time_ns, event->op_end.op, event->op_end.status, ended);
}

/* An ended operation counted in its row: the walk's last row, or looked up. */
static __always_inline void count_batch_op(struct batch_walk *walk, struct scratch *copy)
{
	struct ended_op *ended = &copy->ended;
	struct latency *stats;

	if (walk->last_stats && same_op_key(&copy->last_key, &ended->key)) {
		record_latency(walk->last_stats, ended->duration, ended->self);
		return;
	}
	stats = bpf_map_lookup_elem(&op_stats, &ended->key);
	if (!stats) {
		/* new, or past the preallocated rows: not kept as the last row */
		count_op_elsewhere(&ended->key, ended->duration, ended->self, walk->place.tgid,
				   walk->place.in_process);
		return;
	}
	copy->last_key = ended->key;
	walk->last_stats = stats;
	record_latency(stats, ended->duration, ended->self);
}

static int count_event(__u32 index, struct batch_walk *walk)
{
	struct scratch *copy = walk->copy;
	struct optrace_event *event;
	__u32 at = index + walk->first;

	/* Read in place: the walk has no stack to spare for a copy. */
	if (!copy || at >= OPTRACE_BATCH_EVENTS)
		return 1;
	event = &copy->events[at];
	if (!in_window(event->time_ns))
		return 0;
	if (event->kind != OPTRACE_EVENT_OP_END) {
		count_batch_event(walk->place.state, walk->place.tgid, walk->place.in_process,
				  event);
		return 0;
	}
	if (pop_batch_op(walk->place.state, walk->place.tgid, event, &copy->ended))
		count_batch_op(walk, copy);
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
