// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spans: a task run whose end is not known yet, holding user ranges. The
 * core keeps the stack of ranges (legion_prof_core.c); here each range
 * becomes its Provenance and ApplicationCallInfo as it ends, and the span
 * its TaskInfo. Section numbers refer to docs/legion-format.md.
 */
#include <errno.h>

#include "output/legion_prof.h"
#include "output/legion_prof_core.h"
#include "output/legion_records.h"

int legion_prof_span_begin(struct legion_prof *prof, struct legion_prof_task *task,
			   struct legion_prof_span **span)
{
	struct legion_prof_task run = *task;
	uint64_t op, fevent;
	int err;

	if (prof->error)
		return prof->error;
	err = legion_prof_check_task(prof, task, false, &op, &fevent);
	if (err)
		return err;
	run.stop = run.start;
	legion_prof_order_times(&run.create, &run.ready, &run.start, &run.stop);
	err = legion_prof_span_link(prof, &run, span);
	if (err)
		return err;
	err = legion_prof_take_fevent(prof, &(*span)->task.fevent, fevent);
	if (err) {
		legion_prof_span_unlink(*span);
		return err;
	}
	/* the op and fevent are the span's from now on */
	legion_prof_claim_set_take(&prof->op_runs, op);
	*task = (*span)->task;
	return 0;
}

int legion_prof_range_end(struct legion_prof_span *span, const char *title, uint64_t stop)
{
	struct legion_prof *prof = span->prof;
	uint64_t start, provenance;
	unsigned char *p;
	int err;

	err = legion_prof_range_pop(span, &start, &stop);
	if (err)
		return err;
	/* the Provenance must come before the range (§2.6) */
	err = legion_prof_provenance(prof, title, &provenance);
	if (err)
		return err;
	p = legion_prof_record_begin(prof, APPLICATION_CALL_INFO_ID);
	if (!p)
		return prof->error;
	p = put_u64(p, provenance);
	p = put_u64(p, start);
	p = put_u64(p, stop);
	p = put_u64(p, span->task.proc_id);
	return legion_prof_record_end(prof, put_u64(p, span->task.fevent));
}

int legion_prof_span_end(struct legion_prof_span *span, uint64_t stop)
{
	struct legion_prof *prof = span->prof;
	int err = 0, range_err;

	span->dropped = 0;
	while (span->depth && !prof->error) {
		range_err = legion_prof_range_end(span, "(unfinished)", 0);
		err = err ? err : range_err;
	}
	/* the ranges written need this TaskInfo, whatever failed: the reader looks it up */
	span->task.stop = max_u64(min_u64(stop, TIME_MAX), span->frames[0].children_stop);
	if (!prof->error)
		err = legion_prof_write_task_info(prof, &span->task) ?: err;
	legion_prof_span_unlink(span);
	return prof->error ? prof->error : err;
}
