/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What legion_records.c gives the writer's pieces above it (legion_spans.c,
 * legion_prof_log.c) besides the records of output/legion_prof.h: a task run's
 * checks and its TaskInfo, for spans, and the descriptors a file needs at
 * its close. Callers use output/legion_prof.h.
 */
#ifndef OPTRACE_OUTPUT_LEGION_RECORDS_H
#define OPTRACE_OUTPUT_LEGION_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "output/legion_prof.h"

/* create <= ready <= start <= stop: start kept, the others moved to it. */
void legion_prof_order_times(uint64_t *create, uint64_t *ready, uint64_t *start, uint64_t *stop);
/*
 * Checks what a task run refers to and declares its kinds; on success the
 * op and fevent numbers are ready to be claimed.
 */
int legion_prof_check_task(struct legion_prof *prof, const struct legion_prof_task *task, bool gpu,
			   uint64_t *op, uint64_t *fevent);
int legion_prof_write_task_info(struct legion_prof *prof, const struct legion_prof_task *task);
/* At least two colourable descriptors, which the reader's colour generator needs. */
int legion_prof_complete_descriptors(struct legion_prof *prof);

#endif /* OPTRACE_OUTPUT_LEGION_RECORDS_H */
