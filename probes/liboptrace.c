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

#define OPTRACE_ID_BLOCK 4096
/* Tasks whose name a worker's task_begin finds (launches in flight). */
#define TASK_SLOT_BITS 14
#define TASK_SLOTS (1u << TASK_SLOT_BITS)

__thread struct thread_state optrace_thread __attribute__((tls_model("initial-exec")));

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

static uint64_t parent_of(const struct thread_state *t, uint32_t depth)
{
	if (depth == 0 || depth > OPTRACE_STACK_DEPTH)
		return 0;
	return t->stack[depth - 1];
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

uint64_t optrace_op_begin(const char *name, const char *callsite)
{
	struct thread_state *t = &optrace_thread;
	uint32_t depth = t->depth++;
	uint64_t op = 0;

	/* The depth is kept untraced too: a tracer attaching mid-operation
	 * then still sees the nested operations as helpers. */
	if (optrace_any_armed()) {
		op = next_id(&t->ops, &next_op_block);
		touch_string(name);
		touch_string(callsite);
		if (depth == 0)
			t->root_name = name;
		if (OPTRACE_BATCH_ENABLED()) {
			struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_OP_BEGIN);

			if (event) {
				event->op_begin.depth = depth;
				event->op_begin.op = op;
				event->op_begin.parent = parent_of(t, depth);
				event->op_begin.name = (uintptr_t)name;
				event->op_begin.callsite = (uintptr_t)callsite;
				optrace_batch_commit(t, event);
			}
		}
		if (OPTRACE_OP_BEGIN_ENABLED())
			OPTRACE_OP_BEGIN(op, parent_of(t, depth), depth, name, callsite);
	}
	if (depth < OPTRACE_STACK_DEPTH)
		t->stack[depth] = op;
	return op;
}

/*
 * The depth after op ends. A runtime that skipped an end (an exception, an
 * early return) would otherwise leave every later operation of the thread
 * a "helper": a traced op found deeper in the stack closes what is above it.
 */
static uint32_t depth_after(const struct thread_state *t, uint64_t op)
{
	uint32_t depth = t->depth;

	if (op && depth && depth <= OPTRACE_STACK_DEPTH && t->stack[depth - 1] != op) {
		for (uint32_t i = depth - 1; i-- > 0;) {
			if (t->stack[i] == op)
				return i;
		}
	}
	return depth ? depth - 1 : 0;
}

void optrace_op_end(uint64_t op, int status)
{
	struct thread_state *t = &optrace_thread;

	t->depth = depth_after(t, op);
	if (!op)
		return;
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

void optrace_op_mode(uint64_t op, int mode, int reason)
{
	if (!op)
		return;
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
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_OP_FALLBACK_ENABLED())
		OPTRACE_OP_FALLBACK(op, reason, detail);
}

uint64_t optrace_task_launch(uint64_t op, const char *task_name, uint32_t points)
{
	struct thread_state *t = &optrace_thread;
	uint64_t task, root = op;

	if (!optrace_any_armed())
		return 0;
	if (t->depth)
		root = t->stack[0];
	task = next_id(&t->tasks, &next_task_block);
	touch_string(task_name);
	if (OPTRACE_BATCH_ENABLED()) {
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_TASK_LAUNCH);

		remember_task(task, task_name, t->depth && root ? t->root_name : NULL);
		if (event) {
			event->task_launch.points = points;
			event->task_launch.task = task;
			event->task_launch.op = op;
			event->task_launch.name = (uintptr_t)task_name;
			event->task_launch.root_op = root;
			optrace_batch_commit(t, event);
		}
	}
	if (OPTRACE_TASK_LAUNCH_ENABLED())
		OPTRACE_TASK_LAUNCH(task, op, root, task_name, points);
	return task;
}

void optrace_task_begin(uint64_t task, uint32_t point, int variant, uint32_t processor)
{
	if (!task)
		return;
	if (OPTRACE_BATCH_ENABLED()) {
		struct thread_state *t = &optrace_thread;
		struct optrace_event *event = optrace_batch_next(t, OPTRACE_EVENT_TASK_BEGIN);
		const char *name, *root_name;

		if (event) {
			recall_task(task, &name, &root_name);
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
}

void optrace_task_end(uint64_t task, uint32_t point, int status)
{
	if (!task)
		return;
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

/* wait_begin and wait_end: the same fields. */
static void append_wait(uint8_t event_kind, uint64_t op, int kind)
{
	struct thread_state *t = &optrace_thread;
	struct optrace_event *event = optrace_batch_next(t, event_kind);

	if (event) {
		event->wait_begin.wait_kind = (uint8_t)kind;
		event->wait_begin.op = op;
		optrace_batch_commit(t, event);
	}
}

void optrace_wait_begin(uint64_t op, int kind)
{
	if (OPTRACE_BATCH_ENABLED())
		append_wait(OPTRACE_EVENT_WAIT_BEGIN, op, kind);
	if (OPTRACE_WAIT_BEGIN_ENABLED())
		OPTRACE_WAIT_BEGIN(op, kind);
}

void optrace_wait_end(uint64_t op, int kind)
{
	if (OPTRACE_BATCH_ENABLED())
		append_wait(OPTRACE_EVENT_WAIT_END, op, kind);
	if (OPTRACE_WAIT_END_ENABLED())
		OPTRACE_WAIT_END(op, kind);
}
