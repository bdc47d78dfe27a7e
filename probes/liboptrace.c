// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace: operations, tasks and waits, fired as USDT probes.
 *
 * Each probe has a semaphore that a tracer arms when it attaches; until then
 * a call tests them and returns. While the batch probe is armed (the fast
 * path, probes/batch.h) each call also appends an event to its thread's
 * buffer; while a per-event probe is armed, that probe fires as well. Ids
 * are made while any probe is armed, so that a tracer of one probe alone
 * sees them. They come from per-thread blocks, so that no call takes a lock
 * or touches a shared cache line but once every OPTRACE_ID_BLOCK ids.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <optrace/optrace.h>

#include "batch.h"
#include "optrace_probes.h"
#include "semaphores.h"
#include "thread.h"
#include "view.h"

#define OPTRACE_ID_BLOCK 4096
/*
 * The traced half of a call, out of line: the untraced half then needs no
 * stack frame and saves no registers (it is only stores and a test). Not
 * cold: GCC optimizes cold code for size and then keeps the fast path's
 * helpers (batch.h) out of line, which cost a traced event 2.5 ns.
 */
#define OPTRACE_TRACED __attribute__((noinline))
/* Tasks whose name a worker's task_begin finds (launches in flight). */
#define TASK_SLOT_BITS 14
#define TASK_SLOTS (1u << TASK_SLOT_BITS)

/* 0 is never an id: it means "not traced". */
static _Atomic uint64_t next_op_block = 1;
static _Atomic uint64_t next_task_block = 1;

/*
 * A task's name and root op's name by task id, for the fast path: a worker's
 * batch then names its task itself, whichever batch reaches the tracer
 * first. A slot is rewritten by a later task; a reader checks the id around
 * its read.
 */
struct task_slot {
	_Atomic uint64_t task;
	_Atomic(const char *) name;
	_Atomic(const char *) root_name;
};

static struct task_slot task_slots[TASK_SLOTS];

static uint64_t next_id(struct id_block *block, _Atomic uint64_t *source)
{
	if (block->next == block->end) {
		block->next =
			atomic_fetch_add_explicit(source, OPTRACE_ID_BLOCK, memory_order_relaxed);
		block->end = block->next + OPTRACE_ID_BLOCK;
	}
	return block->next++;
}

static uint64_t parent_of(const struct optrace_thread_view *view, uint32_t depth)
{
	if (depth == 0 || depth > OPTRACE_STACK_DEPTH)
		return 0;
	return view->ops[depth - 1].op;
}

/*
 * A tracer reads strings from the probe context, where it cannot fault pages
 * in: a literal the runtime never reads itself may sit on a page not yet
 * mapped. Touching it on the traced path maps it.
 */
static void touch_string(const char *s)
{
	if (s)
		(void)*(const volatile char *)s;
}

bool optrace_enabled(void)
{
	return optrace_any_armed();
}

/*
 * Ids come in per-thread blocks that threads use in step: a multiplicative
 * hash keeps the tasks of several issuing threads in different slots.
 */
static struct task_slot *task_slot_of(uint64_t task)
{
	return &task_slots[(task * 0x9e3779b97f4a7c15ull) >> (64 - TASK_SLOT_BITS)];
}

static void remember_task(uint64_t task, const char *name, const char *root_name)
{
	struct task_slot *slot = task_slot_of(task);

	atomic_store_explicit(&slot->task, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&slot->name, name, memory_order_relaxed);
	atomic_store_explicit(&slot->root_name, root_name, memory_order_relaxed);
	atomic_store_explicit(&slot->task, task, memory_order_release);
}

static void recall_task(uint64_t task, const char **name, const char **root_name)
{
	struct task_slot *slot = task_slot_of(task);

	*name = NULL;
	*root_name = NULL;
	if (atomic_load_explicit(&slot->task, memory_order_acquire) != task)
		return;
	*name = atomic_load_explicit(&slot->name, memory_order_relaxed);
	*root_name = atomic_load_explicit(&slot->root_name, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&slot->task, memory_order_relaxed) != task) {
		*name = NULL;
		*root_name = NULL;
	}
}

/* op_begin while a probe is armed: the id, the event, the probe, the frame's time. */
static OPTRACE_TRACED uint64_t op_begin_traced(struct optrace_thread_view *view,
					       struct optrace_open_op *frame, uint32_t depth,
					       const char *name, const char *callsite)
{
	struct thread_state *t = &optrace_thread;
	uint64_t op, now = 0;

	op = next_id(&t->ops, &next_op_block);
	touch_string(name);
	touch_string(callsite);
	if (depth == 0)
		t->root_name = name;
	if (OPTRACE_BATCH_ENABLED()) {
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_OP_BEGIN);

		if (event) {
			now = event->time_ns;
			event->op_begin.depth = depth;
			event->op_begin.op = op;
			event->op_begin.parent = parent_of(view, depth);
			event->op_begin.name = (uintptr_t)name;
			event->op_begin.callsite = (uintptr_t)callsite;
			optrace_batch_name(t, name);
			optrace_batch_name(t, callsite);
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_OP_BEGIN_ENABLED())
		OPTRACE_OP_BEGIN(op, parent_of(view, depth), depth, name, callsite);
	if (frame) {
		frame->op = op;
		frame->begin_ns = now ?: optrace_now_ns();
	}
	return op;
}

uint64_t optrace_op_begin(const char *name, const char *callsite)
{
	struct optrace_thread_view *view = optrace_view_of(&optrace_thread);
	uint32_t depth = view->depth++;
	struct optrace_open_op *frame = depth < OPTRACE_STACK_DEPTH ? &view->ops[depth] : NULL;

	/* Kept untraced too: a tracer attaching mid-operation then still sees
	 * the nested operations as helpers, and dump sees what is open. */
	if (frame) {
		frame->op = 0;
		frame->name = (uintptr_t)name;
		frame->callsite = (uintptr_t)callsite;
		frame->begin_ns = 0;
		frame->mode = 0;
	}
	if (optrace_any_armed())
		return op_begin_traced(view, frame, depth, name, callsite);
	return 0;
}

/*
 * The depth after op ends. A runtime that skipped an end (an exception, an
 * early return) would otherwise leave every later operation of the thread
 * a "helper": a traced op found deeper in the stack closes what is above it.
 */
static uint32_t depth_after(const struct optrace_thread_view *view, uint64_t op)
{
	uint32_t depth = view->depth;

	if (op && depth && depth <= OPTRACE_STACK_DEPTH && view->ops[depth - 1].op != op) {
		for (uint32_t i = depth - 1; i-- > 0;) {
			if (view->ops[i].op == op)
				return i;
		}
	}
	return depth ? depth - 1 : 0;
}

static OPTRACE_TRACED void op_end_traced(uint64_t op, int status)
{
	struct thread_state *t = &optrace_thread;

	if (OPTRACE_BATCH_ENABLED()) {
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_OP_END);

		if (event) {
			event->op_end.status = (uint8_t)status;
			event->op_end.op = op;
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_OP_END_ENABLED())
		OPTRACE_OP_END(op, status);
}

void optrace_op_end(uint64_t op, int status)
{
	struct optrace_thread_view *view = optrace_thread.view;

	view->depth = depth_after(view, op);
	if (op && optrace_any_armed())
		op_end_traced(op, status);
}

/* The innermost open operation, if it is op (0: untraced) and in the view. */
static struct optrace_open_op *open_frame(struct optrace_thread_view *view, uint64_t op)
{
	uint32_t depth = view->depth;

	if (!depth || depth > OPTRACE_STACK_DEPTH || view->ops[depth - 1].op != op)
		return NULL;
	return &view->ops[depth - 1];
}

static OPTRACE_TRACED void op_mode_traced(uint64_t op, int mode, int reason)
{
	if (OPTRACE_BATCH_ENABLED()) {
		struct thread_state *t = &optrace_thread;
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_OP_MODE);

		if (event) {
			event->op_mode.mode = (uint8_t)mode;
			event->op_mode.reason = (uint32_t)reason;
			event->op_mode.op = op;
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_OP_MODE_ENABLED())
		OPTRACE_OP_MODE(op, mode, reason);
}

void optrace_op_mode(uint64_t op, int mode, int reason)
{
	struct optrace_open_op *frame = open_frame(optrace_thread.view, op);

	if (frame) {
		frame->mode = (uint8_t)(mode + 1);
		frame->reason = (uint8_t)reason;
	}
	if (op && optrace_any_armed())
		op_mode_traced(op, mode, reason);
}

void optrace_op_fallback(uint64_t op, int reason, const char *detail)
{
	if (!op)
		return;
	touch_string(detail);
	if (OPTRACE_BATCH_ENABLED()) {
		struct thread_state *t = &optrace_thread;
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_OP_FALLBACK);

		if (event) {
			event->op_fallback.reason = (uint8_t)reason;
			event->op_fallback.op = op;
			event->op_fallback.detail = (uintptr_t)detail;
			optrace_batch_name(t, detail);
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_OP_FALLBACK_ENABLED())
		OPTRACE_OP_FALLBACK(op, reason, detail);
}

uint64_t optrace_current_op(void)
{
	struct optrace_thread_view *view = optrace_view_of(&optrace_thread);
	uint32_t depth = view->depth;

	if (!depth || depth > OPTRACE_STACK_DEPTH)
		return 0;
	return view->ops[depth - 1].op;
}

uint64_t optrace_task_launch(uint64_t op, const char *task_name, uint32_t points)
{
	struct thread_state *t = &optrace_thread;
	struct optrace_thread_view *view = optrace_view_of(t);
	uint64_t task, root = op;

	if (!optrace_any_armed()) {
		/* An id of its own kind, its name kept: dump names a stuck task of a job never
		 * traced. */
		task = next_id(&t->tasks, &next_task_block) | OPTRACE_TASK_UNTRACED;
		remember_task(task, task_name, NULL);
		return task;
	}
	if (view->depth)
		root = view->ops[0].op;
	task = next_id(&t->tasks, &next_task_block);
	touch_string(task_name);
	/* for a worker's batch and its view, which name the task themselves */
	remember_task(task, task_name, view->depth && root ? t->root_name : NULL);
	if (OPTRACE_BATCH_ENABLED()) {
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_TASK_LAUNCH);

		if (event) {
			event->task_launch.points = points;
			event->task_launch.task = task;
			event->task_launch.op = op;
			event->task_launch.name = (uintptr_t)task_name;
			optrace_batch_name(t, task_name);
			event->task_launch.root_op = root;
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_TASK_LAUNCH_ENABLED())
		OPTRACE_TASK_LAUNCH(task, op, root, task_name, points);
	return task;
}

/* A slot for a point that begins running on the thread (the oldest if all are used). */
static struct optrace_running_point *free_point(struct optrace_thread_view *view)
{
	for (int i = 0; i < OPTRACE_VIEW_POINTS; i++) {
		if (!view->points[i].used)
			return &view->points[i];
	}
	return &view->points[0];
}

static OPTRACE_TRACED void task_begin_traced(struct optrace_running_point *running, uint64_t task,
					     uint32_t point, int variant, uint32_t processor)
{
	struct thread_state *t = &optrace_thread;
	const char *name = NULL, *root_name = NULL;
	uint64_t now = 0;

	recall_task(task, &name, &root_name);
	running->name = (uintptr_t)name;
	if (OPTRACE_BATCH_ENABLED()) {
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_TASK_BEGIN);

		if (event) {
			now = event->time_ns;
			event->task_begin.variant = (uint8_t)variant;
			event->task_begin.point = point;
			event->task_begin.task = task;
			event->task_begin.processor = processor;
			event->task_begin.name = (uintptr_t)name;
			event->task_begin.root_name = (uintptr_t)root_name;
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_TASK_BEGIN_ENABLED())
		OPTRACE_TASK_BEGIN(task, point, variant, processor);
	running->begin_ns = now ?: optrace_now_ns();
}

/* A thread's first task_begin: its view set up, then the call (kept out of the common path). */
static OPTRACE_TRACED void task_begin_first(uint64_t task, uint32_t point, int variant,
					    uint32_t processor)
{
	optrace_view_setup(&optrace_thread);
	optrace_task_begin(task, point, variant, processor);
}

void optrace_task_begin(uint64_t task, uint32_t point, int variant, uint32_t processor)
{
	struct optrace_running_point *running;

	if (__builtin_expect(optrace_thread.view == &optrace_view_unset, 0))
		return task_begin_first(task, point, variant, processor);
	running = free_point(optrace_thread.view);

	/* Kept untraced too, for dump: a point begun untraced reads no clock,
	 * and looks its name up only if its task was launched untraced. */
	running->task = task;
	running->point = point;
	running->variant = (uint8_t)variant;
	running->processor = processor;
	running->name = 0;
	running->begin_ns = 0;
	if (task & OPTRACE_TASK_UNTRACED) {
		const char *name, *root_name;

		recall_task(task, &name, &root_name);
		running->name = (uintptr_t)name;
	}
	running->used = 1;
	/* A task launched untraced stays so: its launch is in no tracer's view. */
	if (optrace_task_traced(task) && optrace_any_armed())
		task_begin_traced(running, task, point, variant, processor);
}

/* The point's slot on this thread, if it began here. */
static void point_ended(struct optrace_thread_view *view, uint64_t task, uint32_t point)
{
	for (int i = 0; i < OPTRACE_VIEW_POINTS; i++) {
		struct optrace_running_point *running = &view->points[i];

		if (running->used && running->task == task && running->point == point) {
			running->used = 0;
			return;
		}
	}
}

static OPTRACE_TRACED void task_end_traced(uint64_t task, uint32_t point, int status)
{
	if (OPTRACE_BATCH_ENABLED()) {
		struct thread_state *t = &optrace_thread;
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_TASK_END);

		if (event) {
			event->task_end.status = (uint8_t)status;
			event->task_end.point = point;
			event->task_end.task = task;
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_TASK_END_ENABLED())
		OPTRACE_TASK_END(task, point, status);
}

void optrace_task_end(uint64_t task, uint32_t point, int status)
{
	point_ended(optrace_thread.view, task, point);
	if (optrace_task_traced(task) && optrace_any_armed())
		task_end_traced(task, point, status);
}

/* wait_begin and wait_end: the same fields. Returns the event's time, or 0. */
static uint64_t append_wait(uint8_t event_kind, uint64_t op, int kind)
{
	struct thread_state *t = &optrace_thread;
	struct optrace_event *event = optrace_batch_next(t, event_kind);

	if (!event)
		return 0;
	event->wait_begin.wait_kind = (uint8_t)kind;
	event->wait_begin.op = op;
	optrace_batch_commit(t, event);
	return event->time_ns;
}

void optrace_wait_begin(uint64_t op, int kind)
{
	struct optrace_thread_view *view = optrace_view_of(&optrace_thread);
	uint64_t now = 0;

	view->wait_op = op;
	view->wait_kind = (uint8_t)kind;
	view->wait_begin_ns = 0;
	view->waiting = 1;
	if (!optrace_any_armed())
		return;
	if (OPTRACE_BATCH_ENABLED())
		now = append_wait(OPTRACE_EVENT_WAIT_BEGIN, op, kind);
	if (OPTRACE_WAIT_BEGIN_ENABLED())
		OPTRACE_WAIT_BEGIN(op, kind);
	view->wait_begin_ns = now ?: optrace_now_ns();
}

void optrace_wait_end(uint64_t op, int kind)
{
	optrace_thread.view->waiting = 0;
	if (OPTRACE_BATCH_ENABLED())
		append_wait(OPTRACE_EVENT_WAIT_END, op, kind);
	if (OPTRACE_WAIT_END_ENABLED())
		OPTRACE_WAIT_END(op, kind);
}
