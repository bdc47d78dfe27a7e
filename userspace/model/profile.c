// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile_internal.h"

#define UNREADABLE ((char *)1) /* a string the kernel could not read */

struct profile_task {
	uint64_t id;
	uint64_t name;
	struct profile_op *op; /* NULL when not captured */
	struct profile_op *root;
	uint64_t op_name;
	uint64_t root_name;
	uint64_t launch_ns;
	uint32_t points;
	uint32_t ended; /* points that ended */
};

void profile_init(struct profile *profile, const struct profile_consumer *consumer)
{
	memset(profile, 0, sizeof(*profile));
	if (consumer)
		profile->consumer = *consumer;
}

const char *profile_string(const struct profile *profile, uint32_t tgid, uint64_t address)
{
	const char *text;

	if (!address)
		return "(unknown)";
	text = idmap_get(&profile->strings, tgid, address);
	if (text == UNREADABLE)
		return "(unreadable)";
	return text ? text : "(not captured)";
}

struct profile_thread *profile_thread_of(struct profile *profile, uint32_t tgid, uint32_t tid)
{
	struct profile_thread *thread = idmap_get(&profile->threads, tgid, tid);

	if (thread)
		return thread;
	thread = calloc(1, sizeof(*thread));
	if (thread)
		thread->tid = tid;
	if (thread && idmap_put(&profile->threads, tgid, tid, thread)) {
		free(thread);
		thread = NULL;
	}
	return thread;
}

/* ---- GPU attribution ------------------------------------------------------ */

static const struct profile_op *outermost(const struct profile_op *op)
{
	while (op && op->parent)
		op = op->parent;
	return op;
}

/*
 * A run's op and root, taken again from its task (NULL: gone): a point past
 * the task's count finds it gone, and the op it launched maybe freed.
 * Returns the op.
 */
static struct profile_op *refresh_run(const struct profile_task *task, struct profile_run *run)
{
	struct profile_op *op = task ? task->op : NULL;

	run->op = op;
	run->root = op ? task->root : NULL;
	return op;
}

void profile_open_frame(struct profile *profile, struct profile_thread *thread,
			struct profile_run **run, struct profile_op **op)
{
	struct profile_op *top = thread && thread->depth ? thread->stack[thread->depth - 1] : NULL;
	struct profile_run *newest = thread && thread->runs ? &thread->runs->run : NULL;

	*run = NULL;
	*op = top;
	if (!newest || (top && top->begin_ns > newest->begin_ns))
		return;
	*run = newest;
	*op = refresh_run(idmap_get(&profile->tasks, newest->tgid, newest->task), newest);
}

void profile_emit_gpu(struct profile *profile, const struct gpu_activity *activity,
		      const struct gpu_launch *launch, uint32_t tid, struct profile_run *run,
		      struct profile_op *op, bool first)
{
	uint64_t duration = activity->end_ns - activity->start_ns;
	struct profile_gpu gpu = {
		.tgid = activity->tgid,
		.tid = tid,
		.activity = activity,
		.launch = launch,
		.name = gpu_activity_name(profile->gpu, activity),
		.op = op,
		.run = run,
		.first_of_launch = first,
	};

	if (op) {
		gpu.root = run && run->root ? run->root : outermost(op);
		gpu.op_name = op->name;
		gpu.root_name = op->root_name;
		op->gpu_ns += duration;
		op->gpu_count++;
		for (struct profile_op *a = op; a; a = a->parent)
			a->tree_gpu_ns += duration;
		profile->stats.gpu_in_ops++;
	} else if (launch) {
		profile->stats.gpu_outside++;
	} else {
		profile->stats.gpu_unlaunched++;
	}
	if (run) {
		run->gpu_ns += duration;
		run->gpu_count++;
	}
	if (profile->consumer.gpu)
		profile->consumer.gpu(profile->consumer.ctx, profile, &gpu);
}

/* Hands op over once nothing keeps it open; then its parent may be done too. */
void profile_release(struct profile *profile, struct profile_op *op)
{
	while (op && --op->pending == 0) {
		struct profile_op *parent = op->parent;

		if (profile->consumer.op_done)
			profile->consumer.op_done(profile->consumer.ctx, profile, op);
		idmap_remove(&profile->ops, op->tgid, op->id);
		free(op);
		op = parent;
	}
}

static int push(struct profile_thread *thread, struct profile_op *op)
{
	if (thread->depth == thread->capacity) {
		size_t capacity = thread->capacity ? thread->capacity * 2 : 16;
		struct profile_op **stack = realloc(thread->stack, capacity * sizeof(*stack));

		if (!stack)
			return -ENOMEM;
		thread->stack = stack;
		thread->capacity = capacity;
	}
	thread->stack[thread->depth++] = op;
	return 0;
}

static void close_op(struct profile *profile, struct profile_op *op, uint64_t end_ns);

/*
 * Ends whose begin is on the stack above depth never came (a lost record, a
 * runtime that skipped an end): close those operations there, marked cut,
 * so that one loss does not leave their callers open to the capture's end.
 */
static void unwind_to(struct profile *profile, struct profile_thread *thread, size_t depth,
		      uint64_t end_ns)
{
	while (thread->depth > depth) {
		struct profile_op *op = thread->stack[--thread->depth];

		op->cut = true;
		profile->stats.cut_ops++;
		close_op(profile, op, end_ns);
	}
}

static int op_begin(struct profile *profile, const struct record_event *event)
{
	const struct event_op_begin *begin = &event->op_begin;
	struct profile_thread *thread = profile_thread_of(profile, event->tgid, event->tid);
	struct profile_op *op = calloc(1, sizeof(*op)), *top;

	if (!thread || !op)
		goto nomem;
	/* The probe's depth is the runtime's own: deeper open ops missed their end. */
	unwind_to(profile, thread, (size_t)begin->depth, event->timestamp);
	op->tgid = event->tgid;
	op->tid = event->tid;
	op->id = begin->op;
	op->depth = (uint32_t)begin->depth;
	op->name = begin->name;
	op->callsite = begin->callsite;
	op->begin_ns = event->timestamp;
	op->mode = PROFILE_MODE_UNSET;
	op->pending = 1; /* open */
	top = thread->depth ? thread->stack[thread->depth - 1] : NULL;
	if (op->depth == 0) {
		op->root_name = op->name;
	} else if (top && top->id == begin->parent) {
		op->parent = top;
		op->parent_name = top->name;
		op->root_name = top->root_name;
		top->pending++;
	}
	if (idmap_put(&profile->ops, op->tgid, op->id, op) || push(thread, op))
		goto nomem;
	if (profile->consumer.op_begin)
		profile->consumer.op_begin(profile->consumer.ctx, profile, op);
	return 0;

nomem:
	free(op);
	return -ENOMEM;
}

static void close_op(struct profile *profile, struct profile_op *op, uint64_t end_ns)
{
	uint64_t duration = end_ns > op->begin_ns ? end_ns - op->begin_ns : 0;

	op->end_ns = op->begin_ns + duration;
	op->ended = true;
	if (op->parent)
		op->parent->child_ns += duration;
	profile_release(profile, op);
}

static void op_end(struct profile *profile, const struct record_event *event)
{
	struct profile_thread *thread = idmap_get(&profile->threads, event->tgid, event->tid);
	struct profile_op *op;
	size_t at;

	/* Operations end in reverse order of their begins, on their thread. */
	for (at = thread ? thread->depth : 0; at > 0; at--) {
		if (thread->stack[at - 1]->id == event->op_end.op)
			break;
	}
	if (!at) {
		profile->stats.unmatched++;
		return;
	}
	unwind_to(profile, thread, at, event->timestamp);
	op = thread->stack[--thread->depth];
	op->status = (int)event->op_end.status;
	close_op(profile, op, event->timestamp);
}

static void op_mode(struct profile *profile, const struct record_event *event)
{
	struct profile_op *op = idmap_get(&profile->ops, event->tgid, event->op_mode.op);

	if (!op)
		return;
	op->mode = (int)event->op_mode.mode;
	op->mode_reason = (int)event->op_mode.reason;
}

static void op_fallback(struct profile *profile, const struct record_event *event)
{
	struct profile_op *op = idmap_get(&profile->ops, event->tgid, event->op_fallback.op);

	if (!op)
		return;
	op->fallback_reason = (int)event->op_fallback.reason;
	op->fallback_detail = event->op_fallback.detail;
	if (profile->consumer.fallback)
		profile->consumer.fallback(profile->consumer.ctx, profile, op);
}

static bool is_ancestor(const struct profile_op *ancestor, const struct profile_op *op)
{
	for (; op; op = op->parent) {
		if (op == ancestor)
			return true;
	}
	return false;
}

static int task_launch(struct profile *profile, const struct record_event *event)
{
	const struct event_task_launch *launch = &event->task_launch;
	struct profile_task *task = calloc(1, sizeof(*task));

	if (!task)
		return -ENOMEM;
	task->id = launch->task;
	task->op = idmap_get(&profile->ops, event->tgid, launch->op);
	/*
	 * The root must be the op's ancestor, alive as long as the op is; an id
	 * the runtime got wrong (another thread's op) would dangle.
	 */
	task->root = task->op ? idmap_get(&profile->ops, event->tgid, launch->root_op) : NULL;
	if (task->root && !is_ancestor(task->root, task->op))
		task->root = (struct profile_op *)outermost(task->op);
	task->name = launch->name;
	task->points = (uint32_t)launch->points;
	task->launch_ns = event->timestamp;
	task->op_name = task->op ? task->op->name : 0;
	task->root_name = task->root ? task->root->name : 0;
	if (!task->points) {
		free(task);
		return 0;
	}
	if (idmap_put(&profile->tasks, event->tgid, task->id, task)) {
		free(task);
		return -ENOMEM;
	}
	/* The op stays until the task's points have run: its title says where. */
	if (task->op)
		task->op->pending++;
	if (profile->consumer.task_launch)
		profile->consumer.task_launch(profile->consumer.ctx, profile, event->tgid,
					      task->name, task->op, task->root_name, task->points);
	return 0;
}

static void task_begin(struct profile *profile, const struct record_event *event)
{
	struct profile_thread *thread = profile_thread_of(profile, event->tgid, event->tid);
	struct profile_task *task = idmap_get(&profile->tasks, event->tgid, event->task_begin.task);
	struct run_node *node;
	struct profile_run *run;

	if (!thread)
		return;
	if (!task) {
		profile->stats.unmatched++;
		return;
	}
	node = calloc(1, sizeof(*node));
	if (!node)
		return;
	/* Running points by task id, whatever thread ends them. */
	node->task_next = idmap_get(&profile->running, event->tgid, task->id);
	if (idmap_put(&profile->running, event->tgid, task->id, node)) {
		free(node);
		return;
	}
	node->thread = thread;
	node->thread_next = thread->runs;
	if (thread->runs)
		thread->runs->thread_prev = node;
	thread->runs = node;
	run = &node->run;
	run->tgid = event->tgid;
	run->tid = event->tid;
	run->task = task->id;
	run->task_name = task->name;
	run->point = (uint32_t)event->task_begin.point;
	run->variant = (int)event->task_begin.variant;
	run->processor = (uint32_t)event->task_begin.processor;
	run->launch_ns = task->launch_ns;
	run->begin_ns = event->timestamp;
	run->op = task->op;
	run->root = task->op ? task->root : NULL;
	run->op_name = task->op_name;
	run->root_name = task->root_name;
}

/* A point ended (or was cut): count it up the op's chain, hand it over. */
static void finish_run(struct profile *profile, struct profile_run *run, uint64_t end_ns)
{
	struct profile_task *task = idmap_get(&profile->tasks, run->tgid, run->task);
	struct profile_op *op = refresh_run(task, run);

	run->end_ns = end_ns > run->begin_ns ? end_ns : run->begin_ns;
	if (op && run->variant >= 0 && run->variant < OPTRACE_VARIANT__COUNT) {
		op->points[run->variant]++;
		for (struct profile_op *a = op; a; a = a->parent)
			a->tree_points[run->variant]++;
	}
	for (struct profile_op *a = op; a; a = a->parent) {
		a->tree_runs++;
		a->tree_task_ns += run->end_ns - run->begin_ns;
	}
	if (profile->consumer.task_run)
		profile->consumer.task_run(profile->consumer.ctx, profile, run);
	run->task = 0;
	if (!task)
		return;
	if (++task->ended < task->points)
		return;
	idmap_remove(&profile->tasks, run->tgid, task->id);
	free(task);
	if (op)
		profile_release(profile, op);
}

/* Takes node out of its task's running points and its thread's open runs. */
static void unlink_run(struct profile *profile, struct run_node *node)
{
	uint32_t tgid = node->run.tgid;
	uint64_t task = node->run.task;
	struct run_node *first = idmap_get(&profile->running, tgid, task);

	if (first == node) {
		if (node->task_next)
			idmap_put(&profile->running, tgid, task, node->task_next);
		else
			idmap_remove(&profile->running, tgid, task);
	} else {
		for (struct run_node *n = first; n; n = n->task_next) {
			if (n->task_next == node) {
				n->task_next = node->task_next;
				break;
			}
		}
	}
	if (node->thread_prev)
		node->thread_prev->thread_next = node->thread_next;
	else
		node->thread->runs = node->thread_next;
	if (node->thread_next)
		node->thread_next->thread_prev = node->thread_prev;
}

static void end_run(struct profile *profile, struct run_node *node, uint64_t end_ns)
{
	unlink_run(profile, node);
	/* Its GPU work is still to come: handed over with it. */
	if (node->holds) {
		node->done = true;
		node->done_ns = end_ns;
		return;
	}
	finish_run(profile, &node->run, end_ns);
	free(node);
}

void profile_complete_run(struct profile *profile, struct run_node *node)
{
	finish_run(profile, &node->run, node->done_ns);
	free(node);
}

static void task_end(struct profile *profile, const struct record_event *event)
{
	struct run_node *node = idmap_get(&profile->running, event->tgid, event->task_end.task);
	uint32_t point = (uint32_t)event->task_end.point;

	/* The point of that task, on any thread; the one begun first if twice. */
	struct run_node *match = NULL;

	for (; node; node = node->task_next) {
		if (node->run.point == point)
			match = node;
	}
	if (!match) {
		profile->stats.unmatched++;
		return;
	}
	match->run.status = (int)event->task_end.status;
	end_run(profile, match, event->timestamp);
}

static bool on_stack(const struct profile_thread *thread, const struct profile_op *op)
{
	for (size_t i = 0; op && i < thread->depth; i++) {
		if (thread->stack[i] == op)
			return true;
	}
	return false;
}

static void wait_begin(struct profile *profile, const struct record_event *event)
{
	struct profile_thread *thread = profile_thread_of(profile, event->tgid, event->tid);

	if (!thread)
		return;
	memset(&thread->wait, 0, sizeof(thread->wait));
	thread->wait.tgid = event->tgid;
	thread->wait.tid = event->tid;
	thread->wait.kind = (int)event->wait.kind;
	thread->wait.begin_ns = event->timestamp;
	/* Inside the operations open on this thread: the user's call, and the innermost. */
	if (thread->depth) {
		thread->wait.root = thread->stack[0];
		thread->wait.root_name = thread->stack[0]->root_name;
		thread->wait.op = thread->stack[thread->depth - 1];
		if (thread->wait.op->depth)
			thread->wait.op_name = thread->wait.op->name;
	}
}

static void wait_end(struct profile *profile, const struct record_event *event)
{
	struct profile_thread *thread = idmap_get(&profile->threads, event->tgid, event->tid);

	if (!thread || !thread->wait.begin_ns || thread->wait.kind != (int)event->wait.kind) {
		profile->stats.unmatched++;
		return;
	}
	thread->wait.end_ns = event->timestamp;
	/* Operations that ended meanwhile (an end lost or misordered) are gone. */
	if (!on_stack(thread, thread->wait.op))
		thread->wait.op = NULL;
	if (!on_stack(thread, thread->wait.root))
		thread->wait.root = NULL;
	if (profile->consumer.wait)
		profile->consumer.wait(profile->consumer.ctx, profile, &thread->wait);
	thread->wait.begin_ns = 0;
}

static int add_string(struct profile *profile, const struct record_string *record)
{
	char *old = idmap_get(&profile->strings, record->tgid, record->address), *text;
	size_t length = strnlen(record->text, sizeof(record->text));

	if (record->unreadable) {
		text = UNREADABLE;
	} else {
		/* Kept as sent; a truncated one says so. */
		text = malloc(length + 4);
		if (!text)
			return -ENOMEM;
		memcpy(text, record->text, length);
		strcpy(text + length, record->truncated ? "..." : "");
	}
	if (idmap_put(&profile->strings, record->tgid, record->address, text)) {
		if (text != UNREADABLE)
			free(text);
		return -ENOMEM;
	}
	if (old && old != UNREADABLE)
		free(old);
	return 0;
}

static void note_time(struct profile *profile, uint64_t timestamp)
{
	if (!profile->stats.first_ns || timestamp < profile->stats.first_ns)
		profile->stats.first_ns = timestamp;
	if (timestamp > profile->stats.last_ns)
		profile->stats.last_ns = timestamp;
}

int profile_feed(struct profile *profile, const void *record, size_t size)
{
	const struct record_event *event = record;

	profile->stats.records++;
	if (size < sizeof(*event)) {
		profile->stats.malformed++;
		return 0;
	}
	note_time(profile, event->timestamp);
	if (profile->attribution)
		profile->attribution->before(profile, event);
	switch (event->type) {
	case RECORD_STRING:
		if (size < sizeof(struct record_string)) {
			profile->stats.malformed++;
			return 0;
		}
		return add_string(profile, record);
	case RECORD_NAME:
		if (profile_names_add(&profile->names, record, size) == -EINVAL)
			profile->stats.malformed++;
		return 0;
	case RECORD_CLOCK:
		return 0; /* the replay's, to place captures on one timeline */
	case RECORD_RT_INIT:
		if (profile_names_set_rank(&profile->names, event->tgid, (int)event->rt_init.rank,
					   (int)event->rt_init.rank_count))
			return -ENOMEM;
		if (profile->consumer.rt_init)
			profile->consumer.rt_init(profile->consumer.ctx, profile, event->tgid,
						  (int)event->rt_init.rank,
						  (int)event->rt_init.rank_count);
		return 0;
	case RECORD_OP_BEGIN:
		return op_begin(profile, event);
	case RECORD_OP_END:
		op_end(profile, event);
		return 0;
	case RECORD_OP_MODE:
		op_mode(profile, event);
		return 0;
	case RECORD_OP_FALLBACK:
		op_fallback(profile, event);
		return 0;
	case RECORD_TASK_LAUNCH:
		return task_launch(profile, event);
	case RECORD_TASK_BEGIN:
		task_begin(profile, event);
		return 0;
	case RECORD_TASK_END:
		task_end(profile, event);
		return 0;
	case RECORD_WAIT_BEGIN:
		wait_begin(profile, event);
		return 0;
	case RECORD_WAIT_END:
		wait_end(profile, event);
		return 0;
	case RECORD_GPU_LAUNCH:
	case RECORD_GPU:
	case RECORD_GPU_NAME:
	case RECORD_GPU_DROPPED:
		/* As they come; or read ahead, into profile->gpu, and passed by. */
		return profile->attribution ? profile->attribution->record(profile, event, size)
					    : 0;
	default:
		profile->stats.malformed++;
		return 0;
	}
}

void profile_finish(struct profile *profile)
{
	uint64_t end_ns = profile->stats.last_ns;

	/*
	 * As it came: calls whose activity did not come let their frames go.
	 * Read ahead: launches after the last record go to the frames still open.
	 */
	if (profile->attribution)
		profile->attribution->flush(profile);
	/* Runs first: they hold their operations open. */
	for (size_t i = 0; i < profile->threads.capacity; i++) {
		struct profile_thread *thread = profile->threads.slots[i].value;

		while (thread && thread->runs) {
			thread->runs->run.cut = true;
			profile->stats.cut_runs++;
			end_run(profile, thread->runs, end_ns);
		}
	}
	/* Points launched that never ran no longer hold their operation. */
	for (size_t i = 0; i < profile->tasks.capacity; i++) {
		struct profile_task *task = profile->tasks.slots[i].value;

		if (!task)
			continue;
		if (task->op)
			profile_release(profile, task->op);
		free(task);
	}
	idmap_free(&profile->tasks);
	/* Open operations, innermost first. */
	for (size_t i = 0; i < profile->threads.capacity; i++) {
		struct profile_thread *thread = profile->threads.slots[i].value;

		while (thread && thread->depth) {
			struct profile_op *op = thread->stack[--thread->depth];

			op->cut = true;
			profile->stats.cut_ops++;
			close_op(profile, op, end_ns);
		}
	}
	if (profile->attribution)
		profile->attribution->finish(profile);
}

void profile_free(struct profile *profile)
{
	if (profile->attribution)
		profile->attribution->free(profile);
	profile->attribution = NULL;
	for (size_t i = 0; i < profile->threads.capacity; i++) {
		struct profile_thread *thread = profile->threads.slots[i].value;

		if (!thread)
			continue;
		while (thread->runs) {
			struct run_node *node = thread->runs;

			thread->runs = node->thread_next;
			free(node);
		}
		free(thread->stack);
		free(thread);
	}
	for (size_t i = 0; i < profile->ops.capacity; i++)
		free(profile->ops.slots[i].value);
	for (size_t i = 0; i < profile->tasks.capacity; i++)
		free(profile->tasks.slots[i].value);
	for (size_t i = 0; i < profile->strings.capacity; i++) {
		if (profile->strings.slots[i].value != UNREADABLE)
			free(profile->strings.slots[i].value);
	}
	idmap_free(&profile->threads);
	idmap_free(&profile->ops);
	idmap_free(&profile->tasks);
	idmap_free(&profile->running);
	idmap_free(&profile->strings);
	idmap_free(&profile->gpu_claimed);
	profile_names_free(&profile->names);
}
