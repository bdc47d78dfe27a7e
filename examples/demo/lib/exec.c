// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Execution of an operation's work. Eager work runs on the calling thread.
 * Deferred work becomes one task launch whose points split the extent,
 * points = min(processors of its kind, ceil(volume / 1024)); the operation
 * returns once the launch is queued. A fallback runs the host reference
 * inline when small, or as a one-point HostReference task on a CPU
 * processor when above the eager threshold. A task runs on GPU processors
 * when there are any and the CUDA variant implements its work, else on
 * OpenMP processors when its kind has that variant, else on CPUs.
 */
#include <stdlib.h>

#include <optrace/abi.h>

#include "cuda.h"
#include "exec.h"
#include "kernels.h"
#include "mode.h"
#include "probe.h"
#include "reference.h"
#include "sched.h"

#define POINT_VOLUME 1024

struct task_kind {
	const char *name; /* cuPyNumeric's task names */
	bool has_openmp;
	bool has_gpu; /* for some dtypes: cuda_supports() says */
};

static const struct task_kind task_kinds[WORK__COUNT] = {
	[WORK_FILL] = { "Fill", true, true },
	[WORK_ARANGE] = { "Arange", true, false },
	[WORK_BINARY] = { "BinaryOp", true, true },
	[WORK_UNARY] = { "UnaryOp", true, false },
	[WORK_SUM] = { "ScalarReduction", true, true },
	[WORK_DOT] = { "Dot", false, false }, /* no OpenMP variant: runs on CPUs */
};

static const int proc_variants[PROC__COUNT] = {
	[PROC_CPU] = OPTRACE_VARIANT_CPU,
	[PROC_OMP] = OPTRACE_VARIANT_OPENMP,
	[PROC_GPU] = OPTRACE_VARIANT_GPU,
};

static const char *const host_reference_task = "HostReference";
static const char *const float16_detail = "float16 is not supported; running the host reference";

static uint32_t plan_points(size_t volume, size_t extent, unsigned int procs)
{
	size_t points = (volume + POINT_VOLUME - 1) / POINT_VOLUME;

	if (points > procs)
		points = procs;
	if (points > extent)
		points = extent;
	return points ? (uint32_t)points : 1;
}

/* Before the host touches w's arrays: their pending launches must be done. */
static void wait_host(struct op *op, const struct work *w)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (w->in[i])
			array_wait_host(op->id, w->in[i], false);
	array_wait_host(op->id, w->out, true);
}

static int run_eager(struct op *op, const struct work *w)
{
	union work_value result = { 0 };

	wait_host(op, w);
	kernel_range(w, 0, work_extent(w), &result);
	if (work_reduces(w))
		kernel_store_result(w, result);
	return 0;
}

static int launch(struct op *op, struct work *w, const char *task_name, enum proc_kind kind,
		  int variant, uint32_t points)
{
	bool reference = variant == OPTRACE_VARIANT_HOST_REFERENCE;
	struct launch *l = calloc(1, sizeof(*l));
	uint64_t seq;
	unsigned int i;

	if (l)
		l->work = work_clone(w, points, reference);
	if (!l || !l->work) {
		free(l);
		op_fail(op, "out of memory");
		return -1;
	}
	l->task_name = task_name;
	l->op_name = op->name;
	l->root_name = probe_root_name();
	l->kind = kind;
	l->variant = variant;
	l->points = points;
	l->task_id = probe_task_launch(op->id, task_name, points);
	seq = sched_submit(l);

	/* The caller's arrays: l may be complete and freed by now. */
	for (i = 0; i < 2; i++)
		if (w->in[i])
			array_mark_launch(w->in[i], seq, false);
	array_mark_launch(w->out, seq, true);
	return 0;
}

static int run_deferred(struct op *op, struct work *w)
{
	const struct task_kind *task = &task_kinds[w->kind];
	enum proc_kind kind = PROC_CPU;
	int variant;
	uint32_t points;

	if (task->has_gpu && sched_procs(PROC_GPU) && cuda_supports(w))
		kind = PROC_GPU;
	else if (task->has_openmp && sched_procs(PROC_OMP))
		kind = PROC_OMP;
	variant = proc_variants[kind];
	points = plan_points(work_volume(w), work_extent(w), sched_procs(kind));

	return launch(op, w, task->name, kind, variant, points);
}

int exec_run(struct op *op, struct work *w)
{
	struct mode_choice choice;

	if (work_has_float16(w))
		return exec_fallback_dtype(op, w);
	choice = mode_decide(w);
	op_mode(op, choice.mode, choice.reason);
	if (choice.mode == OPTRACE_MODE_EAGER)
		return run_eager(op, w);
	return run_deferred(op, w);
}

int exec_fallback(struct op *op, struct work *w, int reason, const char *detail)
{
	op_mode(op, OPTRACE_MODE_FALLBACK, OPTRACE_MODE_REASON_FALLBACK);
	op_fallback(op, reason, detail);
	if (mode_fallback_as_task(w))
		return launch(op, w, host_reference_task, PROC_CPU, OPTRACE_VARIANT_HOST_REFERENCE,
			      1);
	wait_host(op, w);
	reference_run(w);
	return 0;
}

int exec_fallback_dtype(struct op *op, struct work *w)
{
	return exec_fallback(op, w, OPTRACE_FALLBACK_UNSUPPORTED_DTYPE, float16_detail);
}
