/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Thin wrappers around liboptrace: each fires the probe call and counts it
 * in the ground truth, traced or not, so that the truth is exactly what a
 * tracer attached from the start would see. The runtime calls liboptrace
 * only through these.
 */
#ifndef DEMO_PROBE_H
#define DEMO_PROBE_H

#include <stdint.h>

void probe_rt_init(int rank, int rank_count);

uint64_t probe_op_begin(const char *name, const char *callsite);
void probe_op_end(uint64_t op, int status);
void probe_op_mode(uint64_t op, int mode, int reason);
void probe_op_fallback(uint64_t op, int reason, const char *detail);

/* The innermost open operation of this thread, 0 when none (or untraced). */
uint64_t probe_current_op(void);

/* The name of this thread's outermost open operation (depth 0), or "?". */
const char *probe_root_name(void);

/* The modes announced by the direct helpers of the innermost operation, as
 * a bit mask over enum optrace_mode. */
unsigned int probe_helper_modes(void);

uint64_t probe_task_launch(uint64_t op, const char *task_name, uint32_t points);
void probe_task_begin(uint64_t task, const char *task_name, uint32_t point, int variant,
		      uint32_t processor);
void probe_task_end(uint64_t task, uint32_t point, int status);

void probe_wait_begin(uint64_t op, int kind);
void probe_wait_end(uint64_t op, int kind);

#endif /* DEMO_PROBE_H */
