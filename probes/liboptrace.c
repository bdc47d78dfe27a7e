// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace: operations, tasks and waits, fired as USDT probes.
 *
 * Each probe has a semaphore that a tracer arms when it attaches; until then
 * a call tests it and returns. The per-thread state lives in initial-exec TLS
 * so that reaching it is one instruction, and ids come from per-thread blocks
 * so that no call takes a lock or touches a shared cache line but once every
 * OPTRACE_ID_BLOCK ids.
 */
#include <stdatomic.h>
#include <stdint.h>

#include <optrace/optrace.h>

#include "optrace_probes.h"

/* Deeper operations are still traced; their parent is reported as 0. */
#define OPTRACE_STACK_DEPTH 32
#define OPTRACE_ID_BLOCK 4096

struct id_block {
	uint64_t next;
	uint64_t end;
};

/* Kept small: a dlopen()ed library's static TLS comes from a small surplus. */
struct thread_state {
	uint32_t depth;
	struct id_block ops;
	struct id_block tasks;
	uint64_t stack[OPTRACE_STACK_DEPTH]; /* op ids, 0 while untraced */
};

static __thread struct thread_state thread_state __attribute__((tls_model("initial-exec")));

/* 0 is never an id: it means "not traced". */
static _Atomic uint64_t next_op_block = 1;
static _Atomic uint64_t next_task_block = 1;

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
	return OPTRACE_OP_BEGIN_ENABLED();
}

uint64_t optrace_op_begin(const char *name, const char *callsite)
{
	struct thread_state *t = &thread_state;
	uint32_t depth = t->depth++;
	uint64_t op = 0;

	/* The depth is kept untraced too: a tracer attaching mid-operation
	 * then still sees the nested operations as helpers. */
	if (OPTRACE_OP_BEGIN_ENABLED()) {
		op = next_id(&t->ops, &next_op_block);
		touch_string(name);
		touch_string(callsite);
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
	struct thread_state *t = &thread_state;

	t->depth = depth_after(t, op);
	if (op && OPTRACE_OP_END_ENABLED())
		OPTRACE_OP_END(op, status);
}

void optrace_op_mode(uint64_t op, int mode, int reason)
{
	if (op && OPTRACE_OP_MODE_ENABLED())
		OPTRACE_OP_MODE(op, mode, reason);
}

void optrace_op_fallback(uint64_t op, int reason, const char *detail)
{
	if (op && OPTRACE_OP_FALLBACK_ENABLED()) {
		touch_string(detail);
		OPTRACE_OP_FALLBACK(op, reason, detail);
	}
}

uint64_t optrace_task_launch(uint64_t op, const char *task_name, uint32_t points)
{
	struct thread_state *t = &thread_state;
	uint64_t task, root = op;

	if (!OPTRACE_TASK_LAUNCH_ENABLED())
		return 0;
	if (t->depth)
		root = t->stack[0];
	task = next_id(&t->tasks, &next_task_block);
	touch_string(task_name);
	OPTRACE_TASK_LAUNCH(task, op, root, task_name, points);
	return task;
}

void optrace_task_begin(uint64_t task, uint32_t point, int variant, uint32_t processor)
{
	if (task && OPTRACE_TASK_BEGIN_ENABLED())
		OPTRACE_TASK_BEGIN(task, point, variant, processor);
}

void optrace_task_end(uint64_t task, uint32_t point, int status)
{
	if (task && OPTRACE_TASK_END_ENABLED())
		OPTRACE_TASK_END(task, point, status);
}

void optrace_wait_begin(uint64_t op, int kind)
{
	if (OPTRACE_WAIT_BEGIN_ENABLED())
		OPTRACE_WAIT_BEGIN(op, kind);
}

void optrace_wait_end(uint64_t op, int kind)
{
	if (OPTRACE_WAIT_END_ENABLED())
		OPTRACE_WAIT_END(op, kind);
}
