/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * optrace stat's handlers, one per event kind: the per-event probes and the
 * fast path's batch walk both call them, so that both count alike.
 * Included by stat.bpf.c only, after stat_state.bpf.h.
 */
#ifndef OPTRACE_BPF_STAT_HANDLERS_BPF_H
#define OPTRACE_BPF_STAT_HANDLERS_BPF_H

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

/* An operation that ended: its row's key and its times, before they are counted. */
struct ended_op {
	struct op_key key;
	__u64 duration;
	__u64 self;
};

/* Takes op's frame off the thread's stack into ended; false if it was not on top. */
static __always_inline bool pop_op(struct event_place *place, __u64 now, __u64 op, int status,
				   struct ended_op *ended)
{
	struct thread_state *state = place->state;
	struct op_key *key = &ended->key;
	struct frame *frame;
	__u32 depth;

	if (!state)
		return false; /* no thread seen: not a target */
	frame = top_frame(state, op);
	if (!frame) {
		count_loss(STAT_LOSS_UNMATCHED);
		return false;
	}
	depth = state->depth - 1;
	__builtin_memset(key, 0, sizeof(*key));
	key->tgid = place->tgid;
	ended->duration = now - frame->start_ns;
	ended->self = ended->duration > frame->child_ns ? ended->duration - frame->child_ns : 0;
	key->depth = depth;
	key->name = frame->name;
	key->mode = frame->mode;
	key->mode_reason = frame->mode_reason;
	key->fallback_reason = frame->fallback_reason;
	key->fallback_detail = frame->fallback_detail;
	key->status = status;
	frame->op = 0;
	state->depth = depth;
	if (depth > 0) {
		struct frame *parent = &state->frames[(depth - 1) & (STAT_STACK_MAX - 1)];

		parent->child_ns += ended->duration;
		if (parent->op)
			key->parent_name = parent->name;
		if (state->frames[0].op)
			key->root_name = state->frames[0].name;
	}
	return true;
}

static __always_inline void copy_op_strings(const struct event_place *place,
					    const struct op_key *key)
{
	copy_string(place->tgid, key->name, place->in_process);
	copy_string(place->tgid, key->parent_name, place->in_process);
	copy_string(place->tgid, key->root_name, place->in_process);
	copy_string(place->tgid, key->fallback_detail, place->in_process);
}

/*
 * A row not in its table (task, launch, wait): found in the table's reserve,
 * or made (within the process's quota) in the table or, when the table
 * cannot take it, in its reserve; counted there. Functions of their own,
 * verified once (as count_op_elsewhere). 1 if the row is new: the caller
 * copies its strings (a string's copy on the stack here would take the
 * batch walk's chain of calls past the verifier's 512 bytes).
 */
__noinline int count_run_elsewhere(const struct task_key *key, __u64 duration)
{
	struct latency *stats;
	bool created;

	if (!key)
		return 0;
	stats = lookup_or_init_row(&task_stats, NULL, &task_stats_reserve, key, &zero_latency,
				   &created);
	if (!stats)
		return 0;
	record_latency(stats, duration, duration);
	return created;
}

__noinline int count_launch_elsewhere(const struct launch_key *key, __u32 points)
{
	struct launch_stats *stats;
	bool created;

	if (!key)
		return 0;
	/* Per-CPU values: a zeroed one, from any map's zero that is as large. */
	stats = lookup_or_init_row(&launch_stats, NULL, &launch_stats_reserve, key, &zero_latency,
				   &created);
	if (!stats)
		return 0;
	stats->count++;
	stats->points += points;
	return created;
}

__noinline int count_wait_elsewhere(const struct wait_key *key, __u64 duration)
{
	struct latency *stats;
	bool created;

	if (!key)
		return 0;
	stats = lookup_or_init_row(&wait_stats, NULL, &wait_stats_reserve, key, &zero_latency,
				   &created);
	if (!stats)
		return 0;
	record_latency(stats, duration, duration);
	return created;
}

/*
 * An ended operation whose row is not in op_stats: counted in its row in
 * op_stats_overflow or op_stats_reserve, or in a new one (within its
 * process's quota) in the first of the three that can take it. A function
 * of its own, verified once: the paths that inline the common case, a row
 * op_stats has, stay as small for the verifier as they were.
 */
__noinline int count_op_elsewhere(const struct op_key *key, __u64 duration, __u64 self, __u32 tgid,
				  int in_process)
{
	struct event_place place = { .tgid = tgid, .in_process = in_process };
	struct latency *stats;
	bool created;

	if (!key)
		return 0;
	stats = lookup_or_init_row(&op_stats, &op_stats_overflow, &op_stats_reserve, key,
				   &zero_latency, &created);
	if (!stats)
		return 0;
	record_latency(stats, duration, self);
	if (created)
		copy_op_strings(&place, key);
	return 0;
}

static __always_inline void on_op_end(struct event_place *place, __u64 now, __u64 op, int status)
{
	struct ended_op ended;
	struct latency *stats;

	if (!pop_op(place, now, op, status, &ended))
		return;
	stats = bpf_map_lookup_elem(&op_stats, &ended.key);
	if (!stats) {
		count_op_elsewhere(&ended.key, ended.duration, ended.self, place->tgid,
				   place->in_process);
		return;
	}
	record_latency(stats, ended.duration, ended.self);
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

	if (state && state->depth > 0 && state->frames[0].op == root_op)
		info.root_name = state->frames[0].name;
	/* A helper launched it: the op on top, not the one the user called. */
	if (launcher && launcher != &state->frames[0])
		info.op_name = launcher->name;
	key.root_name = info.root_name;
	key.op_name = info.op_name;
	if (bpf_map_update_elem(&tasks, &task_key, &info, BPF_ANY))
		count_loss(STAT_LOSS_MAP_FULL);

	stats = bpf_map_lookup_elem(&launch_stats, &key);
	if (!stats) {
		if (count_launch_elsewhere(&key, points)) {
			copy_string(place->tgid, name, place->in_process);
			copy_string(place->tgid, info.root_name, place->in_process);
			copy_string(place->tgid, info.op_name, place->in_process);
		}
		return;
	}
	stats->count++;
	stats->points += points;
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

	/* The helper only from the launch, if counted (a batch may come first). */
	info = bpf_map_lookup_elem(&tasks, &task_id);
	if (info && !key.name) {
		key.name = info->name;
		key.root_name = info->root_name;
	}
	key.op_name = info && info->name == key.name ? info->op_name : STAT_OP_NOT_SEEN;
	stats = bpf_map_lookup_elem(&task_stats, &key);
	if (!stats) {
		if (count_run_elsewhere(&key, duration)) {
			copy_string(place->tgid, key.name, place->in_process);
			copy_string(place->tgid, key.root_name, place->in_process);
			if (key.op_name != STAT_OP_NOT_SEEN)
				copy_string(place->tgid, key.op_name, place->in_process);
		}
		return;
	}
	record_latency(stats, duration, duration);
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

	if (!state || !state->wait_start_ns || state->wait_kind != (__u32)kind)
		return;
	duration = now - state->wait_start_ns;
	state->wait_start_ns = 0;
	if (state->depth > 0 && state->frames[0].op)
		key.root_name = state->frames[0].name;
	if (state->depth > 1 && state->depth <= STAT_STACK_MAX)
		key.op_name = state->frames[(state->depth - 1) & (STAT_STACK_MAX - 1)].name;
	stats = bpf_map_lookup_elem(&wait_stats, &key);
	if (!stats) {
		if (count_wait_elsewhere(&key, duration)) {
			copy_string(place->tgid, key.root_name, place->in_process);
			copy_string(place->tgid, key.op_name, place->in_process);
		}
		return;
	}
	record_latency(stats, duration, duration);
}

#endif /* OPTRACE_BPF_STAT_HANDLERS_BPF_H */
