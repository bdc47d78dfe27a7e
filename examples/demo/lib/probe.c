// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe wrappers. liboptrace keeps its own op stack, but its ids are 0 while
 * no tracer is attached, so the runtime keeps a shadow stack per thread: the
 * depth and name that the truth is keyed by, and the modes a composite's
 * helpers chose.
 */
#include <stddef.h>

#include <optrace/optrace.h>

#include "probe.h"
#include "truth.h"

#define PROBE_MAX_DEPTH 64

struct probe_frame {
	uint64_t id;
	const char *name;
	unsigned int helper_modes;
};

static _Thread_local struct probe_frame probe_frames[PROBE_MAX_DEPTH];
static _Thread_local unsigned int probe_depth;

static struct probe_frame *probe_frame_at(unsigned int depth)
{
	if (depth >= PROBE_MAX_DEPTH)
		return NULL;
	return &probe_frames[depth];
}

static struct probe_frame *probe_top(void)
{
	return probe_depth ? probe_frame_at(probe_depth - 1) : NULL;
}

static const char *probe_top_name(void)
{
	struct probe_frame *top = probe_top();

	return top ? top->name : "?";
}

void probe_rt_init(int rank, int rank_count)
{
	optrace_rt_init(rank, rank_count);
}

uint64_t probe_op_begin(const char *name, const char *callsite)
{
	unsigned int depth = probe_depth++;
	struct probe_frame *frame = probe_frame_at(depth);
	uint64_t op;

	truth_count(TRUTH_OP, name, (int)depth, 0, 0);
	op = optrace_op_begin(name, callsite);
	if (frame)
		*frame = (struct probe_frame){ .id = op, .name = name };
	return op;
}

void probe_op_end(uint64_t op, int status)
{
	truth_count(TRUTH_STATUS, probe_top_name(), status, 0, 0);
	if (probe_depth)
		probe_depth--;
	optrace_op_end(op, status);
}

void probe_op_mode(uint64_t op, int mode, int reason)
{
	struct probe_frame *parent = probe_depth >= 2 ? probe_frame_at(probe_depth - 2) : NULL;

	truth_count(TRUTH_MODE, probe_top_name(), mode, reason, 0);
	if (parent && mode >= 0 && mode < 32)
		parent->helper_modes |= 1u << mode;
	optrace_op_mode(op, mode, reason);
}

void probe_op_fallback(uint64_t op, int reason, const char *detail)
{
	truth_count(TRUTH_FALLBACK, probe_top_name(), reason, 0, 0);
	optrace_op_fallback(op, reason, detail);
}

uint64_t probe_current_op(void)
{
	struct probe_frame *top = probe_top();

	return top ? top->id : 0;
}

const char *probe_root_name(void)
{
	return probe_depth ? probe_frames[0].name : "?";
}

unsigned int probe_helper_modes(void)
{
	struct probe_frame *top = probe_top();

	return top ? top->helper_modes : 0;
}

uint64_t probe_task_launch(uint64_t op, const char *task_name, uint32_t points)
{
	truth_count(TRUTH_LAUNCH, task_name, 0, 0, points);
	return optrace_task_launch(op, task_name, points);
}

void probe_task_begin(uint64_t task, const char *task_name, uint32_t point, int variant,
		      uint32_t processor)
{
	truth_count(TRUTH_TASK, task_name, variant, 0, 0);
	optrace_task_begin(task, point, variant, processor);
}

/* The truth counts task_begin; every begin has its end. */
void probe_task_end(uint64_t task, uint32_t point, int status)
{
	optrace_task_end(task, point, status);
}

void probe_wait_begin(uint64_t op, int kind)
{
	truth_count(TRUTH_WAIT, "", kind, 0, 0);
	optrace_wait_begin(op, kind);
}

/* Likewise for waits. */
void probe_wait_end(uint64_t op, int kind)
{
	optrace_wait_end(op, kind);
}
