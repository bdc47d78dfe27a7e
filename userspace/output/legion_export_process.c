// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the Legion export's parts share (legion_export_internal.h): the
 * processes by tgid, their processors, the time since the capture's start,
 * the first error. Below legion_export.c and its parts alike, which call it
 * and which it never calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "output/legion_prof.h"
#include "output/legion_export_internal.h"

uint64_t legion_export_since_zero(const struct exporter *exporter, uint64_t ns)
{
	return ns > exporter->header->monotonic_ns ? ns - exporter->header->monotonic_ns : 0;
}

void legion_export_note_error(struct exporter *exporter, int err)
{
	keep_first_error(&exporter->error, err);
}

struct process *legion_export_process_of(struct exporter *exporter, uint32_t tgid, bool add)
{
	uintptr_t index = (uintptr_t)idmap_get(&exporter->by_tgid, tgid, 0);
	struct process *grown;

	if (index)
		return &exporter->processes[index - 1];
	if (!add || exporter->process_count == MAX_PROCESSES)
		return NULL;
	grown = realloc(exporter->processes, (exporter->process_count + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	exporter->processes = grown;
	memset(&grown[exporter->process_count], 0, sizeof(*grown));
	grown[exporter->process_count].tgid = tgid;
	grown[exporter->process_count].rank = -1;
	exporter->process_count++;
	if (idmap_put(&exporter->by_tgid, tgid, 0, (void *)(uintptr_t)exporter->process_count))
		return NULL;
	return &exporter->processes[exporter->process_count - 1];
}

/* A process announces its rank before its first operation. */
int legion_export_proc_desc(struct exporter *exporter, struct process *process,
			    enum legion_prof_proc_kind kind, uint64_t *proc)
{
	int err = legion_prof_proc_desc(process->prof, kind, NULL, proc);

	if (err == -ERANGE && !exporter->procs_said) {
		exporter->procs_said = true;
		diag("process %u has more threads and GPUs to draw than the %d processors Legion "
		     "Prof has for a process (Realm's 12-bit processor index): export it with "
		     "--perfetto or --chrome, which have no such limit",
		     process->tgid, LEGION_PROF_PROCS_MAX);
	}
	return err;
}
